/**
 * Redirects go through politeness (docs/politeness.md, "Redirects"): a crawl of the simulated web
 * where h0's pages redirect to another host, into a Disallowed path of h0, and in a loop across
 * two hosts. Seen from the servers' access logs: the target host's robots.txt comes before its
 * first page and its interval holds; the Disallowed target is never requested; the loop ends with
 * every URL of it asked once.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { assertPolite, resolveEntries } from '../support/crawl-check.ts';

const INTERVAL_MS = 700;

describe('redirects through robots.txt and politeness', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('fetches a cross-host target after its robots.txt and within its interval; never a Disallowed target; ends a loop', async () => {
    const web = await SimWeb.start({
      seed: 11,
      hosts: 3,
      pagesPerHost: 6,
      // Links stay on their host: h1 and h2 are reachable only through the redirects below.
      sameHostShare: 1,
      robots: {
        noRobotsShare: 0,
        crawlDelayShare: 0,
        overrides: {
          'h0.sim.test': 'User-agent: *\nDisallow: /private\n',
          'h1.sim.test': 'User-agent: *\nDisallow: /nothing-here\n',
          'h2.sim.test': 'User-agent: *\nAllow: /\n',
        },
      },
    });
    try {
      const path = (host: number, n: number): string => new URL(web.urlOf(host, n)).pathname;
      const [p1, p2, p3] = [path(0, 1), path(0, 2), path(0, 3)];
      web.configureHost('h0.sim.test', {
        redirects: {
          [p1]: { status: 301, location: web.urlOf(1, 0) },
          [p2]: { status: 302, location: '/private/secret.html' },
          [p3]: { status: 307, location: web.urlOf(2, 0) },
        },
      });
      web.configureHost('h2.sim.test', { redirects: { '/': { status: 302, location: web.urlOf(0, 3) } } });

      const dir = tempDir();
      dirs.push(dir);
      const summary = await runCrawl({
        seeds: [web.urlOf(0, 0)],
        dataDir: dir,
        partitions: 2,
        untilIdle: true,
        scheduler: { minIntervalMs: INTERVAL_MS, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      assert.equal(summary.stoppedBecause, 'idle');
      const log = web.accessLog();
      const of = (host: string): string[] => log.filter((e) => e.host === host).sort((a, b) => a.wallMs - b.wallMs).map((e) => e.path);

      // h1: robots.txt first, then its home (the target), then its own pages, politely.
      const h1 = of('h1.sim.test');
      assert.equal(h1[0], '/robots.txt', `h1 asked first for ${h1[0]}`);
      assert.equal(h1[1], '/', 'the redirect target next');
      assert.ok(h1.length >= 4, `h1 crawled from the target on (${h1.join(' ')})`);

      // The Disallowed target on h0 is never requested; its source is asked once.
      const h0 = of('h0.sim.test');
      assert.equal(h0[0], '/robots.txt');
      assert.ok(!h0.some((p) => p.startsWith('/private')), `a Disallowed redirect target was fetched: ${h0.join(' ')}`);
      assert.equal(h0.filter((p) => p === p2).length, 1);

      // The loop h0 p3 → h2 / → h0 p3 ends: each URL asked once, h2 after its robots.txt.
      assert.equal(h0.filter((p) => p === p3).length, 1, 'the loop source is not fetched again');
      assert.deepEqual(of('h2.sim.test'), ['/robots.txt', '/']);

      // Every host's interval holds, the redirect target's included (starts at least the interval apart).
      assertPolite(web, INTERVAL_MS);
    } finally {
      await web.close();
    }
  });
});
