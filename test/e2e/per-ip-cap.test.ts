/**
 * One per-IP cap across fetcher processes: `meguri run scheduler`, two `meguri run fetcher` and a
 * parser on Kafka crawl a simulated web whose hosts all live on one address, with
 * MEGURI_MAX_PER_IP=2. Seen from the server (each request's arrival and end in its access log),
 * that address never has more than two requests in flight, while the crawl does use both.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SimWeb } from '../../services/simweb/index.ts';
import type { AccessLogEntry } from '../../services/simweb/index.ts';
import { kafkaBrokers, tempDir, removeDir, uniquePrefix, waitFor } from '../support/transports.ts';
import { pageRequests, resolveEntries, urlKey, pageKey } from '../support/crawl-check.ts';
import { freePort } from '../support/ports.ts';

const running = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;
const bin = fileURLToPath(new URL('../../bin/meguri.js', import.meta.url));
const CAP = 2;
const HOSTS = 12;

/** Input partitions a service owns, from its /metrics (0 while it is not up yet). */
async function assignedPartitions(port: number): Promise<number> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const m = /^meguri_assigned_partitions(?:\{[^}]*\})? (\d+)/m.exec(text);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Most requests in flight at once per server address (the listen IP a request arrived on). */
function peakInFlightByIp(log: readonly AccessLogEntry[]): Map<string, number> {
  const events = new Map<string, { t: number; d: number }[]>();
  for (const e of log) {
    const list = events.get(e.localIp) ?? [];
    events.set(e.localIp, list);
    list.push({ t: e.wallMs, d: +1 }, { t: e.wallMs + e.durationMs, d: -1 });
  }
  const peaks = new Map<string, number>();
  for (const [ip, list] of events) {
    // An end and a start at the same instant do not overlap.
    list.sort((a, b) => a.t - b.t || a.d - b.d);
    let now = 0;
    let peak = 0;
    for (const ev of list) peak = Math.max(peak, (now += ev.d));
    peaks.set(ip, peak);
  }
  return peaks;
}

describe('per-IP cap across fetcher processes', { timeout: 300_000 }, () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  after(() => {
    for (const c of children) if (running(c)) c.kill('SIGKILL');
    dirs.forEach(removeDir);
  });

  it(`keeps at most ${CAP} requests in flight to one IP with two fetchers`, async () => {
    const slow = Object.fromEntries(Array.from({ length: HOSTS }, (_, i) => [`h${i}.sim.test`, { latencyMs: 120, hostileRobots: true }]));
    const web = await SimWeb.start({ seed: 3, hosts: HOSTS, pagesPerHost: 6, robots: { crawlDelayShare: 0, disallowAllShare: 0 }, hostOverrides: slow });
    try {
      const prefix = uniquePrefix();
      const brokers = kafkaBrokers().join(',');
      const env = {
        ...process.env,
        MEGURI_KAFKA_BROKERS: brokers,
        MEGURI_TOPIC_PREFIX: prefix,
        MEGURI_PARTITIONS: '4',
        MEGURI_LOG_LEVEL: process.env.TEST_CHILD_LOG ?? 'warn',
        MEGURI_HTTP_PORT: '0',
        MEGURI_DNS: 'static',
        MEGURI_RESOLVE: resolveEntries(web).join(','),
        MEGURI_MAX_PER_IP: String(CAP),
      };
      const created = spawnSync(process.execPath, [bin, 'topics', 'create', '--kafka', brokers, '--topic-prefix', prefix, '--partitions', '4'], { env, encoding: 'utf8' });
      assert.equal(created.status, 0, created.stderr);
      const start = (service: string, extra: string[] = []): void => {
        const dataDir = tempDir();
        dirs.push(dataDir);
        children.push(spawn(process.execPath, [bin, 'run', service, '--data', dataDir, ...extra], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
      };
      const fetcherPorts = [await freePort(), await freePort()];
      const ua = ['--user-agent', 'meguri/0.1 (+http://meguri.invalid/bot)'];
      start('scheduler', ['--min-interval', '0', ...ua]);
      for (const port of fetcherPorts) start('fetcher', [...ua, '--http-port', String(port)]);
      start('parser');
      // Let both fetchers own frontier partitions before the first request (each alone would cap
      // only its own share); the cap is asserted whatever the group looks like. Both owning some is
      // the group's end state (one alone would hold all four), so no fixed wait is needed before it.
      const settleUntil = Date.now() + 60_000;
      while (Date.now() < settleUntil && !(await Promise.all(fetcherPorts.map(assignedPartitions))).every((n) => n >= 1)) await new Promise((r) => setTimeout(r, 250));
      const seeded = spawnSync(process.execPath, [bin, 'seed', '--kafka', brokers, '--topic-prefix', prefix, ...web.homeUrls()], { env, encoding: 'utf8' });
      assert.equal(seeded.status, 0, seeded.stderr);

      const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 15, userAgent: 'meguri' });
      const expected = new Set([...plan.urls].map(urlKey));
      const fetchedCount = (): number => new Set(pageRequests(web).map((e) => pageKey(e.host, e.path)).filter((k) => expected.has(k))).size;
      await waitFor('every expected page', () => fetchedCount() === expected.size, 240_000, 200);

      const log = web.accessLog();
      assert.ok(log.every((e) => e.localIp === '127.0.0.1'));
      const peak = peakInFlightByIp(log).get('127.0.0.1') ?? 0;
      assert.ok(peak <= CAP, `127.0.0.1 had ${peak} requests in flight at once (cap ${CAP})`);
      assert.equal(peak, CAP, 'the crawl used the whole cap');
      assert.ok(log.filter((e) => e.path === '/robots.txt').length === HOSTS, 'robots.txt once per host');
    } finally {
      const exits = children.filter(running).map((c) => new Promise((r) => c.once('exit', r)));
      for (const c of children) if (running(c)) c.kill('SIGTERM');
      await Promise.all(exits);
      await web.close();
    }
  });
});
