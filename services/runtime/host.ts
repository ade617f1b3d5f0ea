/**
 * Process-level lifecycle of a service: the health/metrics HTTP server and graceful shutdown.
 * /healthz answers 200 while every service runs (503 once one stopped on a fatal error); /readyz 200 once every assigned partition's state is
 * restored; /metrics is Prometheus text. SIGTERM/SIGINT: stop consuming, finish and commit the batch
 * in progress, close stores, leave the group, close the transport — then exit.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './logger.ts';
import type { Registry } from 'prom-client';

export interface HostedService {
  readonly name: string;
  isReady(): boolean;
  /** False once the service stopped on a fatal error (e.g. its consumer crashed for good). */
  isAlive?(): boolean;
  readonly metrics: { readonly registry: Registry };
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(services: readonly HostedService[], port: number, host: string, logger: Logger): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      const dead = services.filter((s) => s.isAlive?.() === false).map((s) => s.name);
      if (dead.length === 0) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      else res.writeHead(503, { 'content-type': 'text/plain' }).end(`stopped on a fatal error: ${dead.join(', ')}\n`);
    } else if (path === '/readyz') {
      const notReady = services.filter((s) => !s.isReady()).map((s) => s.name);
      if (notReady.length === 0) res.writeHead(200, { 'content-type': 'text/plain' }).end('ready\n');
      else res.writeHead(503, { 'content-type': 'text/plain' }).end(`not ready: ${notReady.join(', ')}\n`);
    } else if (path === '/metrics') {
      Promise.all(services.map((s) => s.metrics.registry.metrics()))
        .then((texts) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(texts.join('\n')))
        .catch((err: unknown) => res.writeHead(500).end(String(err)));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  logger.info({ port: actual, host }, 'health and metrics server listening');
  return {
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Runs `shutdown` once on SIGTERM/SIGINT, then exits. A second signal, or the timeout, exits at once.
 */
export function onShutdownSignal(shutdown: () => Promise<void>, logger: Logger, timeoutMs: number): void {
  let shuttingDown = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down gracefully');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, 'graceful shutdown timed out');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
