/**
 * Serves the live view: `/` (the page), `/events` (server-sent events, one snapshot every
 * `intervalMs`), `/state` (the snapshot as JSON). Binds 127.0.0.1 unless told otherwise.
 */
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LiveState } from './live-state.ts';
import { dashboardHtml } from './page.ts';

export interface DashboardServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export async function startDashboard(state: LiveState, o: { port?: number; host?: string; intervalMs?: number; title?: string } = {}): Promise<DashboardServer> {
  const html = dashboardHtml(o.title ?? 'meguri: live crawl');
  const clients = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
    } else if (path === '/state') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state.snapshot(Date.now())));
    } else if (path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(`retry: 1000\ndata: ${JSON.stringify(state.snapshot(Date.now()))}\n\n`);
      clients.add(res);
      req.on('close', () => clients.delete(res));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  const timer = setInterval(() => {
    if (clients.size === 0) return;
    const line = `data: ${JSON.stringify(state.snapshot(Date.now()))}\n\n`;
    for (const c of clients) c.write(line);
  }, o.intervalMs ?? 500);
  timer.unref();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${o.host ?? '127.0.0.1'}:${port}/`,
    close: async () => {
      clearInterval(timer);
      for (const c of clients) c.end();
      clients.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
