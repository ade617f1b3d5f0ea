/**
 * Fetcher throughput: pages/s for a 21.8 KB HTML page from a local keep-alive server running in a
 * child process (so it does not share the fetcher's event loop), hosts spread over loopback IPs
 * 127.0.0.1..127.0.0.N through the static resolve map. Only loopback is used.
 * Usage: tsx bench/fetcher.bench.ts [seconds=5] [ips=32] [perIp=2] [identity|gzip]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { decodePageContent } from '../services/common/page-content.ts';
import http from 'node:http';
import type { FrontierRecord } from '../schemas/frontier.ts';
import { createFetcher } from '../services/fetcher/fetch.ts';

const PAGE_BYTES = Math.round(21.8 * 1024);

function page(): Buffer {
  const para = '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. <a href="/x">link</a></p>\n';
  let s = '<!doctype html><html><head><meta charset="utf-8"><title>bench</title></head><body>\n';
  while (s.length < PAGE_BYTES - 20) s += para;
  s = s.slice(0, PAGE_BYTES - 15) + '</body></html>';
  return Buffer.from(s.padEnd(PAGE_BYTES, ' '));
}

/** Child process: one keep-alive server per loopback IP; sends back the ports. */
async function serve(ips: number, encoding: string): Promise<void> {
  const body = encoding === 'gzip' ? gzipSync(page()) : page();
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length };
  if (encoding === 'gzip') headers['content-encoding'] = 'gzip';
  const ports: number[] = [];
  for (let i = 1; i <= ips; i++) {
    const server = http.createServer({ keepAliveTimeout: 30_000 }, (_req, res) => {
      res.writeHead(200, headers);
      res.end(body);
    });
    server.listen(0, `127.0.0.${i}`);
    await once(server, 'listening');
    ports.push((server.address() as { port: number }).port);
  }
  process.send?.({ ports });
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5);
  const ips = Number(process.argv[3] ?? 32);
  const perIp = Number(process.argv[4] ?? 2);
  const encoding = process.argv[5] ?? 'identity';
  const child = fork(fileURLToPath(import.meta.url), ['--serve', String(ips), encoding], { execArgv: ['--import', 'tsx'] });
  const [msg] = (await once(child, 'message')) as [{ ports: number[] }];
  const ports = msg.ports;

  const hostsPerIp = 4;
  const resolve: string[] = [];
  const urls: string[] = [];
  for (let i = 0; i < ips; i++) {
    for (let h = 0; h < hostsPerIp; h++) {
      const host = `h${h}-ip${i + 1}.bench.local`;
      resolve.push(`${host}=127.0.0.${i + 1}`);
      urls.push(`http://${host}:${ports[i]}/page`);
    }
  }
  const f = createFetcher({ resolve, perIpConcurrency: perIp, maxConcurrency: 1024 });
  const concurrency = ips * perIp;
  let seq = 0;
  const req = (url: string): FrontierRecord => ({
    v: 1,
    requestId: `b${++seq}`,
    url,
    host: url.slice(7, url.indexOf(':', 7)),
    reason: 'new',
    score: 1,
    depth: 0,
    cgiHops: 0,
    attempt: 1,
    issuedAt: 0,
  });

  let done = 0;
  let errors = 0;
  let bytes = 0;
  const lat: number[] = [];
  let measuring = false;
  let stop = false;
  const worker = async (w: number): Promise<void> => {
    let i = w;
    while (!stop) {
      // A compressed page comes stored as sent; decoding it here keeps the work per page what it was.
      const rec = decodePageContent(await f.fetch(req(urls[i % urls.length] as string)));
      i += concurrency;
      if (!measuring) continue;
      done++;
      bytes += rec.decodedBytes ?? 0;
      lat.push(rec.timing.totalMs);
      if (rec.error || rec.body?.length !== PAGE_BYTES) errors++;
    }
  };
  const workers = Array.from({ length: concurrency }, (_, w) => worker(w));
  await new Promise((r) => setTimeout(r, 1000)); // warm-up: connections, JIT
  measuring = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  measuring = false;
  stop = true;
  await Promise.all(workers);
  const s = f.stats();
  await f.close();
  child.kill();

  lat.sort((a, b) => a - b);
  const pct = (p: number) => (lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] ?? 0).toFixed(2);
  const rate = done / (elapsed / 1000);
  console.log(`page ${PAGE_BYTES} B (${encoding}), ${ips} IPs x ${hostsPerIp} hosts, ${perIp} per IP, ${concurrency} in flight`);
  console.log(`${Math.round(rate).toLocaleString('en-US')} pages/s, ${((bytes / 1048576) / (elapsed / 1000)).toFixed(1)} MiB/s decoded, errors ${errors}`);
  console.log(`latency ms p50 ${pct(0.5)} p99 ${pct(0.99)}; fetcher CPU ${(((cpu.user + cpu.system) / 1000 / elapsed) * 100).toFixed(0)}% of one core`);
  console.log(`connections new ${s.newConnections}, reused ${s.reusedConnections}`);
}

if (process.argv[2] === '--serve') await serve(Number(process.argv[3]), process.argv[4] ?? 'identity');
else await main();
