/**
 * Sitemaps, feeds and language focus on the simulated web (docs/feeds.md), seen from the server's
 * access log. Host h0 serves, besides its generated pages, documents no page links to: a robots.txt
 * naming a sitemap index, whose children are a gzip sitemap and a broken one; an RSS feed given as
 * --feeds-file; an Atom feed announced by a page's <link rel=alternate>; pages reachable only through
 * those; and a Japanese and an English page (listed in the sitemap) each linking to a page of its own.
 *
 * The crawl runs with short base intervals (sitemaps and feeds re-read every few seconds), so it
 * also shows: a new feed item fetched within one feed interval, and a changed <lastmod> bringing a
 * known page's revisit forward.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import type { CrawlSummary } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { resolveEntries } from '../support/crawl-check.ts';

const BASE_MS = 3000;
const EN_TEXT = 'The harbour festival opens on Saturday with music, food stalls and a parade along the old pier. Visitors are asked to use the shuttle buses from the station.';
const JA_TEXT = '港の祭りは土曜日に始まり、音楽や屋台、古い桟橋に沿ったパレードが行われます。来場者は駅からのシャトルバスを利用するようお願いします。';

function html(title: string, text: string, lang: string, extra = ''): string {
  return `<!doctype html><html lang="${lang}"><head><title>${title}</title>${extra}</head><body><main><p>${text}</p></main></body></html>`;
}

function urlset(entries: { loc: string; lastmod?: string }[]): string {
  const items = entries.map((e) => `<url><loc>${e.loc}</loc>${e.lastmod ? `<lastmod>${e.lastmod}</lastmod>` : ''}</url>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${items}\n</urlset>\n`;
}

function rss(origin: string, items: string[]): string {
  const entries = items.map((p, i) => `<item><title>Post ${i}</title><link>${origin}${p}</link><guid>${p}</guid><pubDate>${new Date(Date.now() - i * 3_600_000).toUTCString()}</pubDate></item>`).join('');
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>${origin}/</link>${entries}</channel></rss>`;
}

async function waitFor(what: string, cond: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('sitemaps, feeds and language focus', { timeout: 180_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('fetches pages reachable only through a sitemap index + gzip child, an RSS and an Atom feed; follows links only from the chosen languages; re-reads on schedule', async () => {
    const web = await SimWeb.start({ seed: 5, hosts: 1, pagesPerHost: 4, sameHostShare: 1, robots: { noRobotsShare: 0, crawlDelayShare: 0 } });
    const abort = new AbortController();
    try {
      const origin = new URL(web.urlOf(0, 0)).origin;
      const lastmodAt = (t: number): string => new Date(t).toISOString();
      const pagesSitemap = (lastmod: number): Uint8Array =>
        gzipSync(
          urlset([
            { loc: `${origin}/only-in-sitemap.html`, lastmod: lastmodAt(lastmod) },
            { loc: `${origin}/ja-page.html` },
            { loc: `${origin}/en-page.html` },
          ]),
        );
      const docs: Record<string, { body: string | Uint8Array; contentType: string }> = {
        '/robots.txt': { body: `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap_index.xml\n`, contentType: 'text/plain' },
        '/sitemap_index.xml': {
          body: `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemap-pages.xml.gz</loc></sitemap><sitemap><loc>${origin}/broken-sitemap.xml</loc></sitemap></sitemapindex>`,
          contentType: 'application/xml',
        },
        '/sitemap-pages.xml.gz': { body: pagesSitemap(Date.now() - 86_400_000), contentType: 'application/gzip' },
        '/broken-sitemap.xml': { body: `<urlset><url><loc>${origin}/never-listed.html</loc></url><url><loc>${origin}/x</urlset>`, contentType: 'application/xml' },
        '/only-in-sitemap.html': { body: html('Sitemap only', EN_TEXT, 'en', '<link rel="alternate" type="application/atom+xml" href="/atom.xml">'), contentType: 'text/html; charset=utf-8' },
        '/feed.rss': { body: rss(origin, ['/only-in-rss.html']), contentType: 'application/rss+xml' },
        '/atom.xml': {
          body: `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><entry><title>e</title><link href="${origin}/only-in-atom.html"/><id>urn:e1</id><updated>${lastmodAt(Date.now() - 60_000)}</updated></entry></feed>`,
          contentType: 'application/atom+xml',
        },
        '/only-in-rss.html': { body: html('RSS only', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
        '/only-in-atom.html': { body: html('Atom only', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
        '/ja-page.html': { body: html('日本語', JA_TEXT + '<a href="/from-ja.html">次</a>', 'ja'), contentType: 'text/html; charset=utf-8' },
        '/en-page.html': { body: html('English', EN_TEXT + '<a href="/from-en.html">next</a>', 'en'), contentType: 'text/html; charset=utf-8' },
        '/from-ja.html': { body: html('from ja', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
        '/from-en.html': { body: html('from en', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
        '/new-item.html': { body: html('New item', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
        '/daily.html': { body: html('Top', EN_TEXT + '<a href="/daily-1.html">1</a>', 'en'), contentType: 'text/html; charset=utf-8' },
        '/daily-1.html': { body: html('Story 1', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
        '/daily-2.html': { body: html('Story 2', EN_TEXT, 'en'), contentType: 'text/html; charset=utf-8' },
      };
      web.configureHost('h0.sim.test', { documents: { ...docs } });
      const requests = (path: string): number[] =>
        web
          .accessLog()
          .filter((e) => e.host === 'h0.sim.test' && e.path === path)
          .map((e) => e.wallMs)
          .sort((a, b) => a - b);

      const dir = tempDir();
      dirs.push(dir);
      const crawl: Promise<CrawlSummary> = runCrawl({
        seeds: [web.urlOf(0, 0)],
        sources: [
          { url: `${origin}/feed.rss`, kind: 'feed' },
          { url: `${origin}/daily.html`, kind: 'daily' },
        ],
        languages: ['en'],
        dataDir: dir,
        partitions: 2,
        signal: abort.signal,
        scheduler: {
          minIntervalMs: 50,
          userAgent: 'meguri',
          sitemaps: true,
          sitemapIntervalMs: BASE_MS,
          feedIntervalMs: BASE_MS,
          dailyIntervalMs: BASE_MS,
          politeness: { kFactor: 0, suspendEnabled: false },
        },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      const failed = crawl.then(
        () => undefined,
        (err: unknown) => err,
      );

      // Reachable only through the gzip sitemap (via the index), the RSS feed and the announced Atom feed.
      await waitFor('the pages only sitemaps and feeds list', () => ['/only-in-sitemap.html', '/only-in-rss.html', '/only-in-atom.html', '/en-page.html', '/ja-page.html'].every((p) => requests(p).length > 0), 60_000);
      // Language focus: the English page's link is followed, the Japanese page's is not.
      await waitFor('the English page\'s link', () => requests('/from-en.html').length > 0, 20_000);
      assert.ok(requests('/broken-sitemap.xml').length > 0, 'the broken sitemap was read');
      assert.equal(requests('/never-listed.html').length, 0, 'nothing of a broken sitemap is taken');

      // A daily page is read again every dailyIntervalMs; a link new on it is fetched at once.
      await waitFor('the daily page\'s link', () => requests('/daily-1.html').length > 0, 20_000);
      docs['/daily.html'] = { body: html('Top', EN_TEXT + '<a href="/daily-1.html">1</a><a href="/daily-2.html">2</a>', 'en'), contentType: 'text/html; charset=utf-8' };
      web.configureHost('h0.sim.test', { documents: { ...docs } });
      const dailyChangedAt = Date.now();
      await waitFor('the link new on the daily page', () => requests('/daily-2.html').length > 0, 4 * BASE_MS);
      assert.ok(requests('/daily-2.html')[0]! - dailyChangedAt <= BASE_MS + 1500, 'fetched by the next daily read');
      assert.equal(requests('/daily-1.html').length, 1, 'a link already known is not fetched again');

      // A new item in the RSS feed, added right after a read of the feed: fetched by the next read.
      const feedReads = requests('/feed.rss').length;
      await waitFor('a read of the feed', () => requests('/feed.rss').length > feedReads, 4 * BASE_MS);
      const addedAt = Date.now();
      web.configureHost('h0.sim.test', { documents: { ...docs, '/feed.rss': { body: rss(origin, ['/new-item.html', '/only-in-rss.html']), contentType: 'application/rss+xml' } } });
      await waitFor('the new feed item', () => requests('/new-item.html').length > 0, 8 * BASE_MS);
      const readsSince = requests('/feed.rss').filter((t) => t >= addedAt);
      const itemAt = requests('/new-item.html')[0]!;
      assert.ok(readsSince.length >= 1 && readsSince[0]! <= itemAt, 'the item came from a later read of the feed');
      // Within one feed interval: the read before the item appeared set the next one (twice the last
      // gap at most, after a read without new items), plus the host's politeness gap.
      const reads = requests('/feed.rss').filter((t) => t < addedAt);
      const lastGap = reads.length >= 2 ? reads.at(-1)! - reads.at(-2)! : BASE_MS;
      assert.ok(itemAt - reads.at(-1)! <= Math.min(2 * lastGap, 7 * BASE_MS) + 1500, `new item fetched ${itemAt - reads.at(-1)!} ms after the last read before it (last gap ${lastGap} ms)`);

      // A changed <lastmod> in the gzip sitemap brings the page's revisit forward.
      const before = requests('/only-in-sitemap.html').length;
      web.configureHost('h0.sim.test', {
        documents: { ...docs, '/feed.rss': { body: rss(origin, ['/new-item.html', '/only-in-rss.html']), contentType: 'application/rss+xml' }, '/sitemap-pages.xml.gz': { body: pagesSitemap(Date.now() + 1000), contentType: 'application/gzip' } },
      });
      await waitFor('a revisit after the newer lastmod', () => requests('/only-in-sitemap.html').length > before, 10 * BASE_MS);

      assert.equal(requests('/from-ja.html').length, 0, 'a link of a page outside --languages was followed');
      abort.abort();
      const summary = await crawl;
      assert.equal(await failed, undefined);
      assert.ok(summary.sitemapsFetched >= 3, `sitemaps fetched: ${summary.sitemapsFetched}`);
      assert.ok(summary.sitemapErrors >= 1, 'the broken sitemap is an error outcome');
      assert.ok(summary.feedsFetched >= 3, `feeds fetched: ${summary.feedsFetched}`);
      assert.ok(summary.feedItemsNew >= 3, `feed items: ${summary.feedItemsNew}`);
      assert.ok(summary.offLanguage >= 1);
      assert.ok(summary.sitemapUrls >= 3);
      assert.ok(summary.dailyFetched >= 2, `daily reads: ${summary.dailyFetched}`);
      assert.ok(summary.dailyNewLinks >= 2, `daily links: ${summary.dailyNewLinks}`);
      // Politeness holds for the documents too: one request at a time to h0.
      assert.equal(summary.deadletters, 0);
    } finally {
      abort.abort();
      await web.close();
    }
  });
});
