/**
 * The crawl loop end to end on a simulated web of 50 hosts (40 pages each embedded, 25 on Kafka), on one transport: every
 * reachable page allowed by robots fetched exactly once (server access log as ground truth), no
 * disallowed URL requested, never two requests in flight to one host, and the --min-interval gap
 * between requests to a host. One file per transport (test/e2e/crawl*.test.ts), so that the runner
 * can place each by what it costs: on Kafka the crawl mostly waits on commits.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { kafkaBrokers, tempDir, removeDir, uniquePrefix, openTransport, readAll } from './transports.ts';
import type { TransportKind } from './transports.ts';
import { assertFetchedExactlyOnce, assertPolite, resolveEntries } from './crawl-check.ts';

const MIN_INTERVAL_MS = 50;
const PER_IP = 8;
/**
 * Pages per host. A host's requests go one after another, each after the previous one's outcome
 * came back: on Kafka that round trip crosses three services' transactions, and beside two busy
 * test lanes a 40-page host took ~250 s (43 s on a quiet machine), close to the timeout. 25 pages
 * keep ~1,100 pages to check, each exactly once.
 */
const PAGES: Record<TransportKind, number> = { embedded: 40, kafka: 25 };

export function crawlLoopTests(kind: TransportKind): void {
  describe(`crawl loop on ${kind}`, { timeout: 480_000 }, () => {
    const dirs: string[] = [];
    after(() => dirs.forEach(removeDir));

    it(`fetches every reachable allowed page of 50 hosts × ${PAGES[kind]} pages exactly once, politely`, async () => {
      const web = await SimWeb.start({ seed: 11, hosts: 50, pagesPerHost: PAGES[kind], robots: { crawlDelays: [0.1, 0.2] } });
      try {
        const dir = tempDir();
        dirs.push(dir);
        const prefix = kind === 'kafka' ? uniquePrefix() : '';
        const summary = await runCrawl({
          seeds: web.homeUrls(),
          dataDir: dir,
          ...(kind === 'kafka' ? { kafkaBrokers: kafkaBrokers(), topicPrefix: prefix } : {}),
          partitions: 4,
          untilIdle: true,
          // Every simulated host is served from 127.0.0.1, so the per-IP cap (2 by default, its own
          // test is per-ip-cap.test.ts) would hold the whole web to two requests in flight: here it
          // is raised so that the per-host rules are what paces each host.
          scheduler: { minIntervalMs: MIN_INTERVAL_MS, maxDepth: 15, userAgent: 'meguri', politeness: { maxPerIp: PER_IP } },
          fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)', perIpConcurrency: PER_IP },
        });
        const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 15, userAgent: 'meguri' });
        assert.ok(plan.urls.size > 20 * PAGES[kind], `a sizeable web (${plan.urls.size} pages)`);
        assert.ok(plan.disallowed.size > 0, 'robots.txt disallows some of it');
        assertFetchedExactlyOnce(web, plan.urls, plan.disallowed);
        const polite = assertPolite(web, MIN_INTERVAL_MS);
        assert.equal(summary.stoppedBecause, 'idle');
        assert.equal(summary.pagesFetched, plan.urls.size);
        assert.equal(summary.uniqueUrlsFetched, plan.urls.size);
        assert.equal(summary.duplicateFetches, 0);
        assert.equal(summary.hosts, 50);
        assert.equal(summary.robotsFetched, 50, 'robots.txt fetched once per host');
        assert.ok(summary.robotsDisallowedSkipped > 0);
        assert.ok(polite.minObservedGapMs >= MIN_INTERVAL_MS);
        // Subscribers see exactly one "new" page event per page, each pointing at its `pages` record.
        const transport = await openTransport(kind, dir);
        try {
          const changes = (await readAll(transport, `${prefix}changes`)).map((r) => JSON.parse(r.value!) as { url: string; kind: string; page?: { topic: string } });
          assert.equal(changes.length, plan.urls.size);
          assert.equal(new Set(changes.map((c) => c.url)).size, plan.urls.size);
          assert.ok(changes.every((c) => c.kind === 'new' && c.page?.topic === `${prefix}pages`));
        } finally {
          await transport.close();
        }
      } finally {
        await web.close();
      }
    });
  });
}
