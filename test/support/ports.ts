/** Loopback ports for tests. */
import { createServer } from 'node:net';

/**
 * Ports this process has handed out. A port is free when handed out, but the server it is for may
 * bind it only seconds later (a child process loading its modules); meanwhile the system may hand
 * the same port to the next caller, as it did to a fault campaign's fetcher while a scheduler was
 * still starting (EADDRINUSE, the scheduler gone). Never handing one out twice closes that race
 * between the ports of one test process.
 */
const handedOut = new Set<number>();

function systemPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A loopback port nothing listens on: one the system just handed out and took back, and not one
 * this process handed out before. Free for a server a test starts next, or closed for a test that
 * needs a refused connection.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await systemPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}
