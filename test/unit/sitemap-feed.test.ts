import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { parseFeedDate, parseRfc822Date, parseW3cDate } from '../../services/parser/dates.ts';
import { XmlStream } from '../../services/parser/xml-stream.ts';
import { MAX_FEED_ITEMS, parseFeed } from '../../services/parser/feed.ts';
import { SITEMAP_MAX_URLS, SitemapParser, parseSitemap } from '../../services/parser/sitemap.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string): string => readFileSync(path.join(here, '..', 'fixtures', 'feeds', name), 'utf8');

test('W3C datetimes: every precision the protocol allows, zones, and impossible dates', () => {
  assert.equal(parseW3cDate('2024'), Date.UTC(2024, 0, 1));
  assert.equal(parseW3cDate('2024-05'), Date.UTC(2024, 4, 1));
  assert.equal(parseW3cDate('2024-05-14'), Date.UTC(2024, 4, 14));
  assert.equal(parseW3cDate('2024-05-14T09:30+09:00'), Date.UTC(2024, 4, 14, 0, 30));
  assert.equal(parseW3cDate('2024-05-14T09:30:15.25Z'), Date.UTC(2024, 4, 14, 9, 30, 15, 250));
  assert.equal(parseW3cDate(' 2024-05-14T09:30:15-05:00 '), Date.UTC(2024, 4, 14, 14, 30, 15));
  assert.equal(parseW3cDate('2024-05-14T09:30:15'), Date.UTC(2024, 4, 14, 9, 30, 15), 'no zone: UTC');
  assert.equal(parseW3cDate('2024-02-30'), undefined);
  assert.equal(parseW3cDate('2024-13-01'), undefined);
  assert.equal(parseW3cDate('yesterday'), undefined);
  assert.equal(parseW3cDate(''), undefined);
});

test('RFC 822 dates as RSS writes them', () => {
  assert.equal(parseRfc822Date('Tue, 14 May 2024 06:30:00 +0900'), Date.UTC(2024, 4, 13, 21, 30));
  assert.equal(parseRfc822Date('14 May 2024 06:30 GMT'), Date.UTC(2024, 4, 14, 6, 30));
  assert.equal(parseRfc822Date('Wed, 02 Oct 02 08:00:00 EST'), Date.UTC(2002, 9, 2, 13));
  assert.equal(parseRfc822Date('Thu, 31 Apr 2024 00:00:00 GMT'), undefined);
  assert.equal(parseFeedDate('2024-05-14T00:00:00Z'), Date.UTC(2024, 4, 14));
  assert.equal(parseFeedDate('Tue, 14 May 2024 00:00:00 GMT'), Date.UTC(2024, 4, 14));
  assert.equal(parseFeedDate('soon'), undefined);
});

test('XmlStream reports mismatched, unclosed and extra elements, accepts self-closing ones and CDATA', () => {
  const run = (doc: string, split = 3): { events: string[]; error?: string } => {
    const events: string[] = [];
    const s = new XmlStream({ open: (e) => events.push(`+${e.prefix}:${e.name}`), close: (e, _p, t) => events.push(`-${e.name}=${t.trim()}`) });
    for (let i = 0; i < doc.length; i += split) s.write(doc.slice(i, i + split));
    const err = s.end();
    return err === undefined ? { events } : { events, error: err.message };
  };
  assert.deepEqual(run('<a><x:b k="1"/><c><![CDATA[1 < 2 & 3]]></c><d>a &amp; b</d></a>'), {
    events: ['+:a', '+x:b', '-b=', '+:c', '-c=1 < 2 & 3', '+:d', '-d=a & b', '-a='],
  });
  assert.match(run('<a><b></a>').error ?? '', /closed by the end tag/);
  assert.match(run('<a><b>text').error ?? '', /not closed/);
  assert.match(run('<a/><b/>').error ?? '', /second root/);
  assert.match(run('hello').error ?? '', /before the root/);
  assert.match(run('<a/>tail').error ?? '', /after the root/);
  assert.match(run('').error ?? '', /no root/);
  assert.equal(run('<?xml version="1.0"?>\n<!-- x -->\n<a>\n</a>\n').error, undefined);
});

test('RSS 2.0: links, guid permalinks, relative links, dates, ttl; items without a link are counted', () => {
  const r = parseFeed(fixture('rss2.xml'), 'https://blog.example.jp/feed.xml', {}, 17);
  assert.equal(r.error, undefined);
  assert.equal(r.format, 'rss');
  assert.equal(r.title, 'Harbour Notes');
  assert.equal(r.ttlMs, 90 * 60_000);
  assert.deepEqual(
    r.items.map((i) => [i.url, i.id, i.date]),
    [
      ['https://blog.example.jp/2024/05/fog.html', 'post-1042', Date.UTC(2024, 4, 13, 21, 30)],
      ['https://blog.example.jp/2024/05/nets.html', 'https://blog.example.jp/2024/05/nets.html', Date.UTC(2024, 4, 12, 8)],
      ['https://blog.example.jp/2024/05/tide.html', 'https://blog.example.jp/2024/05/tide.html', Date.UTC(2024, 4, 10, 12)],
    ],
  );
  assert.equal(r.items[1]?.title, 'Boats & <b>nets</b>');
  assert.equal(r.invalidLinks, 1);
});

test('RSS 1.0 (RDF): items beside the channel, rdf:about as link and id, sy:update hints', () => {
  const r = parseFeed(fixture('rdf.xml'), 'https://news.example.jp/index.rdf');
  assert.equal(r.error, undefined);
  assert.equal(r.format, 'rdf');
  assert.equal(r.title, '地域ニュース');
  assert.equal(r.ttlMs, 30 * 60_000);
  assert.deepEqual(
    r.items.map((i) => [i.url, i.id, i.date, i.title]),
    [
      ['https://news.example.jp/a/1', 'https://news.example.jp/a/1', Date.UTC(2024, 4, 14), '港の祭り'],
      ['https://news.example.jp/a/2', 'https://news.example.jp/a/2', Date.UTC(2024, 4, 13), '市議会'],
    ],
  );
});

test('Atom: the HTML alternate link, xml:base on feed and entry, updated before published', () => {
  const r = parseFeed(fixture('atom.xml'), 'https://dev.example.org/journal/atom.xml');
  assert.equal(r.error, undefined);
  assert.equal(r.format, 'atom');
  assert.equal(r.title, 'Field journal');
  assert.deepEqual(
    r.items.map((i) => [i.url, i.id, i.date]),
    [
      ['https://dev.example.org/journal/2024/tide', 'tag:dev.example.org,2024:7', Date.UTC(2024, 4, 14, 9, 59)],
      ['https://dev.example.org/notes/n1', 'tag:dev.example.org,2024:8', Date.UTC(2024, 4, 2, 5)],
    ],
  );
});

test('feeds: an HTML page and broken XML are errors with no items', () => {
  const html = parseFeed('<html><body><a href="/x">x</a></body></html>', 'https://a.example/feed');
  assert.equal(html.error?.code, 'MEGURI_ERR_FEED_FORMAT');
  assert.deepEqual(html.items, []);
  const broken = parseFeed('<rss><channel><item><link>https://a.example/1</link></item><item><link>https://a.example/2</channel></rss>', 'https://a.example/feed');
  assert.equal(broken.error?.code, 'MEGURI_ERR_FEED_XML');
  assert.deepEqual(broken.items, []);
});

test('feeds: at most MAX_FEED_ITEMS items are kept', () => {
  const items = Array.from({ length: MAX_FEED_ITEMS + 5 }, (_, i) => `<item><link>https://a.example/p${i}</link></item>`).join('');
  const r = parseFeed(`<rss><channel>${items}</channel></rss>`, 'https://a.example/feed');
  assert.equal(r.items.length, MAX_FEED_ITEMS);
  assert.equal(r.truncated, true);
});

const URLSET = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>https://shop.example.com/items?id=1&amp;color=red</loc>
    <lastmod>2024-05-14T10:00:00+00:00</lastmod>
    <changefreq>Daily</changefreq>
    <priority>0.9</priority>
    <image:image><image:loc>https://cdn.example.net/1.jpg</image:loc></image:image>
  </url>
  <url><loc> https://shop.example.com/about#team </loc><priority>1.7</priority><changefreq>sometimes</changefreq><lastmod>bad</lastmod></url>
  <url><loc>https://elsewhere.example.org/page</loc></url>
  <url><loc>javascript:alert(1)</loc></url>
  <url><lastmod>2024-01-01</lastmod></url>
</urlset>`;

test('sitemap urlset: loc, lastmod, changefreq, priority; extensions ignored; foreign and invalid counted', () => {
  const r = parseSitemap(URLSET, 'https://shop.example.com/sitemap.xml');
  assert.equal(r.error, undefined);
  assert.equal(r.kind, 'urlset');
  assert.deepEqual(r.urls, [
    { url: 'https://shop.example.com/items?id=1&color=red', lastmod: Date.UTC(2024, 4, 14, 10), changefreq: 'daily', priority: 0.9 },
    { url: 'https://shop.example.com/about', priority: 1 },
  ]);
  assert.equal(r.foreign, 1);
  assert.equal(r.invalid, 2);
  assert.equal(r.limit, undefined);
  const allowed = parseSitemap(URLSET, 'https://shop.example.com/sitemap.xml', { allowedHosts: ['elsewhere.example.org'] });
  assert.equal(allowed.urls.length, 3);
});

test('sitemap index with namespace prefixes, and the same bytes gzip-compressed', () => {
  const index = `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
    <sm:sitemap><sm:loc>https://a.example/s1.xml.gz</sm:loc><sm:lastmod>2024-05-01</sm:lastmod></sm:sitemap>
    <sm:sitemap><sm:loc>https://a.example/s2.xml</sm:loc></sm:sitemap>
  </sm:sitemapindex>`;
  const expected = [{ url: 'https://a.example/s1.xml.gz', lastmod: Date.UTC(2024, 4, 1) }, { url: 'https://a.example/s2.xml' }];
  const plain = parseSitemap(index, 'https://a.example/sitemap.xml');
  assert.equal(plain.kind, 'index');
  assert.deepEqual(plain.sitemaps, expected);
  assert.deepEqual(plain.urls, []);
  const gz = parseSitemap(gzipSync(Buffer.from(index)), 'https://a.example/sitemap.xml');
  assert.deepEqual(gz.sitemaps, expected);
});

test('text sitemaps: one URL per line, split anywhere across writes', () => {
  const body = '\uFEFFhttps://a.example/one\r\n\nhttps://a.example/two\nnot a url\nhttps://b.example/three\nhttps://a.example/four';
  const p = new SitemapParser('https://a.example/sitemap.txt');
  for (let i = 0; i < body.length; i += 5) p.write(Buffer.from(body.slice(i, i + 5)));
  const r = p.end();
  assert.equal(r.kind, 'text');
  assert.deepEqual(r.urls.map((u) => u.url), ['https://a.example/one', 'https://a.example/two', 'https://a.example/four']);
  assert.equal(r.invalid, 1);
  assert.equal(r.foreign, 1);
});

test('a feed given as a sitemap lists its items with their dates as lastmod', () => {
  const r = parseSitemap(fixture('rss2.xml'), 'https://blog.example.jp/feed.xml');
  assert.equal(r.kind, 'feed');
  assert.equal(r.urls.length, 3);
  assert.equal(r.urls[0]?.lastmod, Date.UTC(2024, 4, 13, 21, 30));
});

test('sitemap limits: 50,000 URLs per file, then bytes; truncated bodies are not XML errors', () => {
  assert.equal(SITEMAP_MAX_URLS, 50_000);
  const many = `<urlset>${Array.from({ length: SITEMAP_MAX_URLS + 10 }, (_, i) => `<url><loc>https://a.example/${i}</loc></url>`).join('')}</urlset>`;
  const r = parseSitemap(many, 'https://a.example/sitemap.xml');
  assert.equal(r.urls.length, SITEMAP_MAX_URLS);
  assert.equal(r.limit, 'urls');
  assert.equal(r.urls.at(-1)?.url, `https://a.example/${SITEMAP_MAX_URLS - 1}`);

  const small = parseSitemap(many, 'https://a.example/sitemap.xml', { maxBytes: 1000 });
  assert.equal(small.limit, 'bytes');
  assert.equal(small.error, undefined);
  assert.ok(small.urls.length > 10 && small.urls.length < 30, `${small.urls.length}`);

  const cut = parseSitemap('<urlset><url><loc>https://a.example/1</loc></url><url><loc>https://a.ex', 'https://a.example/sitemap.xml', { truncated: true });
  assert.equal(cut.error, undefined);
  assert.deepEqual(cut.urls.map((u) => u.url), ['https://a.example/1']);

  const bomb = gzipSync(Buffer.alloc(4096, 0x20));
  assert.equal(parseSitemap(bomb, 'https://a.example/s.xml.gz', { maxBytes: 1024 }).error?.code, 'MEGURI_ERR_SITEMAP_TOO_LARGE');
});

test('sitemap errors: malformed XML, an HTML page, an empty body and a bad gzip stream', () => {
  const bad = parseSitemap('<urlset><url><loc>https://a.example/1</loc></url><url><loc>https://a.example/2</url></urlset>', 'https://a.example/sitemap.xml');
  assert.equal(bad.error?.code, 'MEGURI_ERR_SITEMAP_XML');
  assert.deepEqual(bad.urls, []);
  const unclosed = parseSitemap('<urlset><url><loc>https://a.example/1</loc></url>', 'https://a.example/sitemap.xml');
  assert.equal(unclosed.error?.code, 'MEGURI_ERR_SITEMAP_XML');
  assert.equal(parseSitemap('<!doctype html><html><body>Not found</body></html>', 'https://a.example/sitemap.xml').error?.code, 'MEGURI_ERR_SITEMAP_FORMAT');
  assert.equal(parseSitemap('  \n', 'https://a.example/sitemap.xml').error?.code, 'MEGURI_ERR_SITEMAP_FORMAT');
  const corrupt = gzipSync(Buffer.from('<urlset></urlset>'));
  corrupt[corrupt.length - 6] = (corrupt[corrupt.length - 6] ?? 0) ^ 0xff;
  assert.equal(parseSitemap(corrupt, 'https://a.example/s.xml.gz').error?.code, 'MEGURI_ERR_SITEMAP_XML');
});
