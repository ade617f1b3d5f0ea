/**
 * Documents larger or stranger than the topics expect, crawled end to end on the simulated web
 * (real sockets on 127.0.0.1, names through the static map):
 *   - a host whose robots.txt is 5 MB (RFC 9309 §2.5: the first 500 KiB must be parsed, the rest may
 *     be ignored): its first rules are obeyed and its allowed pages crawled; a rule found only past
 *     the limit does not apply. It used to make a 2.2 MB outcome that `links` refused, leaving the
 *     host uncrawled;
 *   - an RSS 1.0 feed served as application/rdf+xml, whose items are queued and fetched (its body
 *     used to be dropped by the fetcher).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import type { CrawlSummary } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { tempDir, removeDir, waitFor } from '../support/transports.ts';
import { resolveEntries } from '../support/crawl-check.ts';

const UA = 'meguri/0.1 (+http://meguri.invalid/bot)';
const HTML = 'text/html; charset=utf-8';

function html(title: string, links: string[]): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><p>${title}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
}

describe('large and unusual documents on the simulated web', { timeout: 240_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('a 5 MB robots.txt: its first rules are obeyed and its allowed pages crawled', async () => {
    const web = await SimWeb.start({ seed: 7, hosts: 2, pagesPerHost: 12, sameHostShare: 1, robots: { noRobotsShare: 0, crawlDelayShare: 0 } });
    try {
      const origin = new URL(web.urlOf(0, 0)).origin;
      const head = 'User-agent: *\nDisallow: /private\n';
      const filler: string[] = [head];
      let size = head.length;
      for (let i = 0; size < 5 * 1024 * 1024; i++) {
        const line = `Disallow: /archive/${String(i).padStart(9, '0')}/never-linked\n`;
        filler.push(line);
        size += line.length;
      }
      // Only past the first 500 KiB: not obeyed (the documented limit).
      filler.push('Disallow: /past-the-limit.html\n');
      const robots = filler.join('');
      assert.ok(Buffer.byteLength(robots) > 5_000_000);
      web.setRobots(0, robots);
      web.configureHost(0, {
        documents: {
          '/start.html': { body: html('start', ['/private/secret.html', '/private', '/allowed.html', '/past-the-limit.html', web.urlOf(0, 0)]), contentType: HTML },
          '/allowed.html': { body: html('allowed', []), contentType: HTML },
          '/past-the-limit.html': { body: html('past', []), contentType: HTML },
          '/private/secret.html': { body: html('secret', []), contentType: HTML },
          '/private': { body: html('private', []), contentType: HTML },
        },
      });
      const dir = tempDir();
      dirs.push(dir);
      const summary = await runCrawl({
        seeds: [`${origin}/start.html`, ...web.homeUrls()],
        dataDir: dir,
        partitions: 2,
        untilIdle: true,
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', sitemaps: false, politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: UA },
      });
      assert.equal(summary.stoppedBecause, 'idle');
      assert.equal(summary.deadletters, 0, 'no record was too large for its topic');
      const h0 = web.accessLog().filter((e) => e.host === 'h0.sim.test');
      const paths = new Set(h0.map((e) => e.path));
      assert.ok(paths.has('/robots.txt'));
      assert.deepEqual([...paths].filter((p) => p.startsWith('/private')), [], 'the first rule is obeyed');
      assert.ok(paths.has('/allowed.html'), 'an allowed page was crawled');
      assert.ok(paths.has('/past-the-limit.html'), 'a rule only past the first 500 KiB does not apply');
      // Every generated page of h0 the simulated web says a crawler reaches and may fetch.
      const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 15 });
      const wanted = [...plan.urls].filter((u) => new URL(u).hostname === 'h0.sim.test').map((u) => new URL(u).pathname + new URL(u).search);
      assert.ok(wanted.length >= 5, `h0 has pages to crawl (${wanted.length})`);
      assert.deepEqual(wanted.filter((p) => !paths.has(p)), [], 'every allowed page of h0 was crawled');
      assert.equal(h0.filter((e) => e.path === '/robots.txt').length, 1, 'robots.txt was read once: its rules were kept');
    } finally {
      await web.close();
    }
  });

  it('an RSS 1.0 feed served as application/rdf+xml: its items are queued and fetched', async () => {
    const web = await SimWeb.start({ seed: 8, hosts: 1, pagesPerHost: 3, sameHostShare: 1, robots: { noRobotsShare: 0, crawlDelayShare: 0 } });
    const abort = new AbortController();
    try {
      const origin = new URL(web.urlOf(0, 0)).origin;
      const items = ['/rdf-1.html', '/rdf-2.html', '/rdf-3.html'];
      const rdf = `<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="${origin}/index.rdf"><title>News</title><link>${origin}/</link>
    <items><rdf:Seq>${items.map((p) => `<rdf:li rdf:resource="${origin}${p}"/>`).join('')}</rdf:Seq></items>
  </channel>
  ${items.map((p, i) => `<item rdf:about="${origin}${p}"><title>Item ${i}</title><link>${origin}${p}</link><dc:date>${new Date(Date.now() - i * 3_600_000).toISOString()}</dc:date></item>`).join('\n  ')}
</rdf:RDF>`;
      web.configureHost(0, {
        documents: {
          '/index.rdf': { body: rdf, contentType: 'application/rdf+xml' },
          ...Object.fromEntries(items.map((p) => [p, { body: html(p, []), contentType: HTML }])),
        },
      });
      const dir = tempDir();
      dirs.push(dir);
      const crawl: Promise<CrawlSummary> = runCrawl({
        seeds: [web.urlOf(0, 0)],
        sources: [{ url: `${origin}/index.rdf`, kind: 'feed' }],
        dataDir: dir,
        partitions: 2,
        signal: abort.signal,
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', sitemaps: false, politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: UA },
      });
      const failed = crawl.then(
        () => undefined,
        (err: unknown) => err,
      );
      const fetched = (path: string): boolean => web.accessLog().some((e) => e.host === 'h0.sim.test' && e.path === path && e.status === 200);
      await waitFor('every item of the RDF feed', () => items.every(fetched) || !!abort.signal.aborted, 90_000, 100);
      abort.abort();
      const summary = await crawl;
      assert.equal(await failed, undefined);
      assert.ok(fetched('/index.rdf'), 'the feed was read');
      assert.deepEqual(items.filter((p) => !fetched(p)), [], 'every item was fetched');
      assert.ok(summary.feedItemsNew >= 3, `new feed items: ${summary.feedItemsNew}`);
      assert.equal(summary.feedErrors, 0);
      assert.equal(summary.deadletters, 0);
    } finally {
      abort.abort();
      await web.close();
    }
  });
});
