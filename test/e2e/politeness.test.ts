/**
 * Politeness against the simulated web, with the server's access log as ground truth: robots.txt
 * changed mid-crawl takes effect within the re-check interval; a slow host's gaps grow per the
 * dynamic formula; 503 + Retry-After is respected; never more than K concurrent requests per IP;
 * suspend windows and keep-alive windows show in the log; the CGI hop limit and the per-site page cap
 * hold on a calendar trap.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import type { AccessLogEntry, SimWebOptions } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import type { CrawlOptions, CrawlSummary } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { resolveEntries } from '../support/crawl-check.ts';

const dirs: string[] = [];

async function crawl(web: SimWeb, scheduler: CrawlOptions['scheduler'], extra: Partial<CrawlOptions> = {}, fetcher: Record<string, number> = {}): Promise<CrawlSummary> {
  const dir = tempDir();
  dirs.push(dir);
  return runCrawl({
    seeds: web.homeUrls(),
    dataDir: dir,
    partitions: 2,
    untilIdle: true,
    scheduler: { userAgent: 'meguri', ...scheduler },
    fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)', ...fetcher },
    ...extra,
  });
}

function byHost(log: readonly AccessLogEntry[]): Map<string, AccessLogEntry[]> {
  const m = new Map<string, AccessLogEntry[]>();
  for (const e of log) {
    const l = m.get(e.host) ?? [];
    m.set(e.host, l);
    l.push(e);
  }
  for (const l of m.values()) l.sort((a, b) => a.wallMs - b.wallMs);
  return m;
}

const quiet: SimWebOptions['robots'] = { crawlDelays: [0.05], disallowAllShare: 0 };

describe('politeness on the simulated web', { timeout: 300_000 }, () => {
  after(() => dirs.forEach(removeDir));

  it('applies a robots.txt changed mid-crawl within the re-check interval', async () => {
    const web = await SimWeb.start({ seed: 31, hosts: 2, pagesPerHost: 60, robots: quiet });
    try {
      const target = web.hostNames()[0]!;
      let changedAt = 0;
      const recheckMs = 400;
      const timer = setInterval(() => {
        if (changedAt === 0 && web.accessLog().filter((e) => e.host === target && e.path !== '/robots.txt').length >= 10) {
          web.setRobots(target, 'User-agent: *\nDisallow: /\n');
          changedAt = Date.now();
        }
      }, 5);
      await crawl(web, { minIntervalMs: 100, robotsRecheckMs: recheckMs, politeness: { kFactor: 0, suspendEnabled: false } });
      clearInterval(timer);
      assert.ok(changedAt > 0, 'the change happened mid-crawl');
      const late = web.accessLog().filter((e) => e.host === target && e.path !== '/robots.txt' && e.wallMs > changedAt + recheckMs + 300);
      assert.deepEqual(late.map((e) => e.path), [], 'no page of the host requested after the new rules took effect');
      assert.ok(web.accessLog().some((e) => e.host === target && e.path === '/robots.txt' && e.wallMs > changedAt), 'robots.txt re-fetched');
    } finally {
      await web.close();
    }
  });

  it('spaces requests to a slow host per the dynamic interval formula', async () => {
    const web = await SimWeb.start({ seed: 32, hosts: 2, pagesPerHost: 8, robots: quiet, hostOverrides: { 'h0.sim.test': { latencyMs: 300, compression: false }, 'h1.sim.test': { compression: false } } });
    try {
      // targetSpeed 200 KB/s: a 21.8 KB page in ≥ 300 ms is ≤ 73 KB/s → delay ≥ 0.63 × maxDelay1. The
      // fast host stays above the target unless a request takes over 109 ms (a loaded machine), and
      // below 400 ms of delay unless one takes over 180 ms.
      await crawl(web, { minIntervalMs: 50, politeness: { kFactor: 0, suspendEnabled: false, maxDelay1Ms: 1000, targetSpeedBytesPerS: 200_000 } });
      const hosts = byHost(web.accessLog().filter((e) => e.path !== '/robots.txt'));
      const slow = hosts.get('h0.sim.test')!;
      const gapsAfterEnd = slow.slice(1).map((e, i) => e.wallMs - (slow[i]!.wallMs + slow[i]!.durationMs));
      assert.ok(gapsAfterEnd.length >= 5);
      // The first gap follows only one measured request; from then on the ring holds slow requests.
      for (const gap of gapsAfterEnd.slice(1)) assert.ok(gap >= 50 + 0.6 * 1000, `slow host gap ${gap} ms`);
      const fast = hosts.get('h1.sim.test')!;
      const fastGaps = fast.slice(1).map((e, i) => e.wallMs - (fast[i]!.wallMs + fast[i]!.durationMs));
      assert.ok(Math.min(...fastGaps) < 400, 'a fast host is not slowed down');
    } finally {
      await web.close();
    }
  });

  it('does not ask a host that answered 503 + Retry-After before the time given', async () => {
    const web = await SimWeb.start({ seed: 33, hosts: 2, pagesPerHost: 6, robots: quiet, hostOverrides: { 'h0.sim.test': { fail: { retryAfterSec: 1, firstAttempts: 1 } } } });
    try {
      await crawl(web, { minIntervalMs: 0, politeness: { kFactor: 0, suspendEnabled: false, backoffBaseMs: 100, backoffMaxMs: 200 } });
      const log = byHost(web.accessLog()).get('h0.sim.test')!;
      const refused = log.filter((e) => e.status === 503);
      assert.ok(refused.length > 0);
      for (const r of refused) {
        const next = log.find((e) => e.wallMs > r.wallMs);
        if (next) assert.ok(next.wallMs >= r.wallMs + r.durationMs + 1000 - 5, `next request ${next.wallMs - r.wallMs} ms after a 503 with Retry-After: 1`);
      }
    } finally {
      await web.close();
    }
  });

  it('never has more than K requests in flight per IP across the hosts on it', async () => {
    const web = await SimWeb.start({ seed: 34, hosts: 12, pagesPerHost: 8, ips: ['127.0.0.2', '127.0.0.3'], robots: quiet, hostile: { slow: { share: 1, latencyMs: 40 } } });
    try {
      await crawl(web, { minIntervalMs: 0, politeness: { kFactor: 0, suspendEnabled: false } }, {}, { perIpConcurrency: 2 });
      for (const ip of ['127.0.0.2', '127.0.0.3']) {
        const events: [number, number][] = [];
        // Arrival times are whole milliseconds (rounded down): take the latest possible start so a
        // request that began as the previous one ended does not count as an overlap.
        for (const e of web.accessLog().filter((x) => x.localIp === ip)) events.push([e.wallMs + 1, 1], [e.wallMs + e.durationMs, -1]);
        events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        let cur = 0;
        let peak = 0;
        for (const [, d] of events) peak = Math.max(peak, (cur += d));
        assert.ok(peak <= 2, `${peak} concurrent requests on ${ip}`);
        assert.ok(peak >= 1);
      }
    } finally {
      await web.close();
    }
  });

  it('suspends a host after a continuous run, and after the server closes a keep-alive connection', async () => {
    const web = await SimWeb.start({ seed: 35, hosts: 2, pagesPerHost: 25, robots: quiet, hostOverrides: { 'h1.sim.test': { closeAfter: 4 } } });
    try {
      await crawl(web, { minIntervalMs: 20, politeness: { kFactor: 0, suspendEnabled: true, suspendAfterMs: 300, suspendForMs: 600, keepAliveMode: true, keepAliveIntervalMs: 20, keepAliveSuspendMs: 500 } });
      const hosts = byHost(web.accessLog());
      const gaps = (l: AccessLogEntry[]): number[] => l.slice(1).map((e, i) => e.wallMs - l[i]!.wallMs);
      const h0 = gaps(hosts.get('h0.sim.test')!);
      assert.ok(h0.some((g) => g >= 600), 'a suspend window on the continuously crawled host');
      const h1 = hosts.get('h1.sim.test')!;
      // The server closes after 4 requests per connection: the next request waits out the keep-alive suspension.
      const afterClose = h1.filter((e, i) => i > 0 && e.requestOnConnection === 1 && h1[i - 1]!.requestOnConnection >= 4);
      assert.ok(afterClose.length > 0);
      for (const e of afterClose) {
        const prev = h1[h1.indexOf(e) - 1]!;
        assert.ok(e.wallMs - (prev.wallMs + prev.durationMs) >= 500 - 5, `request after a closed connection came ${e.wallMs - prev.wallMs} ms later`);
      }
    } finally {
      await web.close();
    }
  });

  it('bounds a calendar trap with the CGI hop limit and the per-site page cap', async () => {
    const web = await SimWeb.start({ seed: 36, hosts: 2, pagesPerHost: 10, robots: quiet, hostOverrides: { 'h0.sim.test': { calendar: true } } });
    try {
      const summary = await crawl(web, { minIntervalMs: 0, maxCgiHops: 3, politeness: { kFactor: 0, suspendEnabled: false } });
      const cal = web.accessLog().filter((e) => e.host === 'h0.sim.test' && e.path.startsWith('/cal'));
      assert.ok(cal.length > 0 && cal.length <= 2 * 4, `calendar pages fetched: ${cal.length}`);
      assert.ok(summary.stoppedBecause === 'idle');
      const capped = await crawl(web, { minIntervalMs: 0, maxCgiHops: 1000, politeness: { kFactor: 0, suspendEnabled: false, maxPagesPerSite: 15 } });
      assert.equal(capped.stoppedBecause, 'idle', 'the trap did not keep the crawl going');
      assert.ok(capped.pagesFetched <= 15 + 10, `pages fetched with a 15-page cap: ${capped.pagesFetched}`);
    } finally {
      await web.close();
    }
  });
});
