/**
 * Hostile servers and pages — malformed HTML, a 10 MB body, a gzip bomb, binary served as
 * text/html, invalid URLs in hrefs, a redirect loop, an endless slow body, 5xx, resets and a host
 * that never answers — produce error outcomes (or capped bodies), and the crawl still completes.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { createTransport } from '../../services/runtime/index.ts';
import { linksRecord } from '../../schemas/index.ts';
import type { OutcomeLink } from '../../schemas/index.ts';
import { tempDir, removeDir, readAll } from '../support/transports.ts';
import { pageRequests, resolveEntries, urlKey, pageKey } from '../support/crawl-check.ts';

describe('hostile web', { timeout: 240_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('turns hostile pages into error outcomes and finishes the crawl', async () => {
    const web = await SimWeb.start({
      seed: 23,
      hosts: 12,
      pagesPerHost: 40,
      trickleIntervalMs: 100,
      robots: { crawlDelays: [0.05] },
      hostile: {
        error: { count: 1 },
        reset: { count: 1 },
        hang: { count: 1 },
        pages: { redirectLoop: 0.05, binaryAsHtml: 0.05, malformed: 0.05, huge: 0.03, gzipBomb: 0.03, slowBody: 0.03, invalidLinks: 0.1, png: 0.03 },
      },
    });
    try {
      const dir = tempDir();
      dirs.push(dir);
      const summary = await runCrawl({
        seeds: web.homeUrls(),
        dataDir: dir,
        partitions: 2,
        untilIdle: true,
        // Back-off and parking scaled down so failing hosts finish within the test.
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', requestTimeoutMs: 60_000, politeness: { kFactor: 1, maxDelay1Ms: 100, maxDelay2Ms: 100, backoffBaseMs: 20, backoffMaxMs: 200, parkBaseMs: 300, parkMaxMs: 600 } },
        fetcher: {
          resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }),
          userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)',
          connectTimeoutMs: 1000,
          headersTimeoutMs: 500,
          totalTimeoutMs: 1500,
        },
      });
      assert.equal(summary.stoppedBecause, 'idle');
      const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 15, userAgent: 'meguri' });
      const requested = new Set(pageRequests(web).map((e) => pageKey(e.host, e.path)));
      const missing = [...plan.urls].map(urlKey).filter((k) => !requested.has(k));
      assert.deepEqual(missing, [], 'the rest of the web was crawled in full');

      const transport = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: dir });
      const outcomes = (await readAll(transport, 'links'))
        .map((r) => linksRecord.parse(JSON.parse(r.value!)))
        .filter((v): v is OutcomeLink => v.type === 'outcome');
      await transport.close();
      const codes = new Set(outcomes.map((o) => o.errorCode).filter(Boolean));
      for (const code of ['MEGURI_ERR_REDIRECT_LIMIT', 'MEGURI_ERR_BINARY', 'MEGURI_ERR_TIMEOUT']) assert.ok(codes.has(code), `an outcome with ${code} (got ${[...codes].join(', ')})`);
      assert.ok(outcomes.some((o) => o.result === 'server-error'), 'a 5xx outcome');
      assert.ok(outcomes.some((o) => o.result === 'not-html'), 'a non-HTML outcome');
      assert.ok(codes.has('MEGURI_ERR_RESET') || codes.has('MEGURI_ERR_HEADERS_TIMEOUT'), 'a reset or a host that never answers');
      assert.ok(summary.errors > 0);
      assert.equal(summary.deadletters, 0, 'no record was rejected by any service');
      assert.equal(summary.duplicateFetches, 0);
    } finally {
      await web.close();
    }
  });
});
