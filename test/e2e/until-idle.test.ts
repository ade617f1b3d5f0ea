/**
 * `--until-idle` ends a crawl whose only remaining work waits on a parked host: here a host whose
 * robots.txt answers 503 (the whole host is disallowed until it answers; RFC 9309). The other hosts
 * are crawled completely, the parked host's page is never requested, and the summary counts the
 * URLs left waiting.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { resolveEntries } from '../support/crawl-check.ts';

describe('--until-idle with a parked host', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('stops once only URLs of a host with an unreachable robots.txt are left, and reports them', async () => {
    const web = await SimWeb.start({ seed: 5, hosts: 4, pagesPerHost: 10, robots: { overrides: { 'h2.sim.test': { status: 503, body: 'maintenance' } } } });
    try {
      const dir = tempDir();
      dirs.push(dir);
      const started = Date.now();
      const summary = await runCrawl({
        seeds: web.homeUrls(),
        dataDir: dir,
        partitions: 2,
        untilIdle: true,
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      assert.equal(summary.stoppedBecause, 'idle');
      assert.ok(Date.now() - started < 60_000, 'did not wait for the robots.txt retry');
      // h2's home page and the pages of h2 linked from the other hosts wait for its robots.txt.
      assert.ok(summary.waitingOnParkedHosts >= 1, `waiting: ${summary.waitingOnParkedHosts}`);
      assert.equal(summary.waitingOnParkedHosts, summary.queued, 'nothing else was left');
      const parkedRequests = web.accessLog().filter((e) => e.host === 'h2.sim.test');
      assert.deepEqual(parkedRequests.map((e) => e.path), ['/robots.txt'], 'only robots.txt was asked of the parked host');
      const others = web.accessLog().filter((e) => e.host !== 'h2.sim.test' && e.path !== '/robots.txt' && e.status === 200);
      assert.ok(others.length >= 20, `the other hosts were crawled (${others.length} pages)`);
    } finally {
      await web.close();
    }
  });

  it('stops once only URLs of a host waiting out a long Retry-After are left', async () => {
    // h1's pages answer 503 with Retry-After: 3600; its robots.txt is served normally.
    const web = await SimWeb.start({ seed: 5, hosts: 3, pagesPerHost: 8, hostOverrides: { 'h1.sim.test': { fail: { status: 503, retryAfterSec: 3600 } } } });
    try {
      const dir = tempDir();
      dirs.push(dir);
      const started = Date.now();
      const summary = await runCrawl({
        seeds: web.homeUrls(),
        dataDir: dir,
        partitions: 2,
        untilIdle: true,
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      assert.equal(summary.stoppedBecause, 'idle');
      assert.ok(Date.now() - started < 60_000, 'did not wait for the Retry-After');
      assert.ok(summary.waitingOnParkedHosts >= 1, `waiting: ${summary.waitingOnParkedHosts}`);
      assert.equal(summary.waitingOnParkedHosts, summary.queued, 'nothing else was left');
      const h1 = web.accessLog().filter((e) => e.host === 'h1.sim.test' && e.path !== '/robots.txt');
      assert.deepEqual(h1.map((e) => e.status), [503], 'one page request, answered 503, and nothing before the Retry-After');
    } finally {
      await web.close();
    }
  });
});
