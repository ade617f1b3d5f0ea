/** Loopback ports for tests. */
import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on: one the system just handed out and took back. Free for a
 * server a test starts next, or closed for a test that needs a refused connection.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
