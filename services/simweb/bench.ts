/**
 * Serving throughput of the simulated web from a simple local keep-alive load loop in the same
 * process (so client and server share the CPU, like a crawl benchmark does).
 *
 *   npx tsx services/simweb/bench.ts [--hosts 1000] [--pages 40] [--seconds 5] [--connections 16] [--gzip]
 */

import { Pool } from 'undici';
import { SimWeb } from './server.ts';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? undefined : process.argv[i + 1];
  return v === undefined ? dflt : Number(v);
}

const hosts = arg('hosts', 1000);
const pages = arg('pages', 40);
const seconds = arg('seconds', 5);
const connections = arg('connections', 16);
const gzip = process.argv.includes('--gzip');
const repeat = process.argv.includes('--same-page');

const web = await SimWeb.start({ seed: 1, hosts, pagesPerHost: pages, pageBytes: arg('bytes', 21_806), accessLog: { maxEntries: 100_000 } });
const pool = new Pool(`http://127.0.0.1:${web.port}`, { connections, pipelining: 1 });
const urls: { host: string; path: string }[] = [];
for (let p = 0; p < pages; p++) {
  for (let h = 0; h < hosts; h++) {
    const u = new URL(web.urlOf(h, p));
    urls.push({ host: u.host, path: u.pathname + u.search });
  }
}

let next = 0;
let done = 0;
let bytes = 0;
const deadline = performance.now() + seconds * 1000;
const started = performance.now();
const cpu0 = process.cpuUsage();

async function worker(): Promise<void> {
  while (performance.now() < deadline) {
    const u = urls[repeat ? 0 : next++ % urls.length];
    if (u === undefined) break;
    const res = await pool.request({
      method: 'GET',
      path: u.path,
      headers: gzip ? { host: u.host, 'accept-encoding': 'gzip' } : { host: u.host },
    });
    for await (const chunk of res.body) bytes += (chunk as Buffer).length;
    done++;
  }
}

await Promise.all(Array.from({ length: connections }, () => worker()));
const elapsed = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    hosts,
    pages,
    connections,
    gzip,
    samePage: repeat,
    requests: done,
    seconds: Number(elapsed.toFixed(2)),
    requestsPerSec: Math.round(done / elapsed),
    mbPerSec: Number((bytes / elapsed / 1e6).toFixed(1)),
    cpuSecondsPerSec: Number(((cpu.user + cpu.system) / 1e6 / elapsed).toFixed(2)),
    statuses: web.stats().byStatus,
  }),
);
await pool.close();
await web.close();
