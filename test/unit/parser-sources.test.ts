import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageRecord, type PageRecord } from '../../schemas/pages.ts';
import { linksRecord } from '../../schemas/links.ts';
import type { FrontierRecord } from '../../schemas/frontier.ts';
import { pageToRecords } from '../../services/parser/outcome.ts';
import { itemIdHash } from '../../services/parser/sources.ts';
import { loadLanguageDetector } from '../../services/parser/language.ts';


before(() => loadLanguageDetector());
const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string): string => readFileSync(path.join(here, '..', 'fixtures', 'feeds', name), 'utf8');
const T0 = Date.UTC(2024, 4, 15);

function page(url: string, body: string, contentType: string, req: Partial<FrontierRecord> = {}, over: Partial<PageRecord> = {}): PageRecord {
  const request: FrontierRecord = { v: 1, requestId: 'r1', url, host: new URL(url).host, reason: 'new', score: 0, depth: 0, cgiHops: 0, attempt: 1, issuedAt: T0 - 500, ...req };
  return pageRecord.parse({
    v: 1,
    request,
    finalUrl: url,
    redirects: [],
    status: 200,
    headers: { 'content-type': contentType },
    contentType,
    // The fetcher carries the bytes as sent; the parser decodes them.
    body: Buffer.from(body, 'utf8'),
    bodyTruncated: false,
    bytes: Buffer.byteLength(body),
    decodedBytes: Buffer.byteLength(body),
    timing: { startedAt: T0 - 200, totalMs: 200 },
    fetchedAt: T0,
    ...over,
  });
}

function records(p: PageRecord, opts: Parameters<typeof pageToRecords>[2] = {}) {
  const res = pageToRecords(p, undefined, opts);
  linksRecord.parse(res.outcome);
  for (const l of res.links) linksRecord.parse(l);
  return res;
}

test('a sitemap request: listed URLs become via=sitemap links with lastmod, priority and changefreq', () => {
  const body = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <url><loc>https://a.example/x</loc><lastmod>2024-05-01</lastmod><priority>0.8</priority><changefreq>weekly</changefreq></url>
    <url><loc>https://a.example/y</loc></url>
    <url><loc>https://b.example/z</loc></url>
    <url><loc>https://a.example/future</loc><lastmod>2030-01-01</lastmod></url>
  </urlset>`;
  const { outcome, links } = records(page('https://a.example/sitemap.xml', body, 'application/xml', { reason: 'sitemap' }));
  assert.equal(outcome.result, 'ok');
  assert.equal(outcome.reason, 'sitemap');
  assert.match(outcome.md5 ?? '', /^[0-9a-f]{32}$/);
  assert.deepEqual(outcome.document, { kind: 'sitemap', format: 'urlset', entries: 3, foreign: 1, newest: Date.UTC(2024, 4, 1), oldest: Date.UTC(2024, 4, 1) });
  assert.equal(outcome.outDegree, 3);
  const x = links.find((l) => l.url === 'https://a.example/x')!;
  assert.equal(x.via, 'sitemap');
  assert.equal(x.lastmod, Date.UTC(2024, 4, 1));
  assert.equal(x.priority, 0.8);
  assert.equal(x.changefreq, 'weekly');
  assert.equal(x.depth, 1);
  assert.ok(Math.abs(x.contribution - (2 * 0.8) / 3) < 1e-9);
  const future = links.find((l) => l.url === 'https://a.example/future')!;
  assert.equal(future.lastmod, undefined, 'a date in the future is ignored');
});

test('a sitemap index: children are kind=sitemap links; a bad sitemap is an error outcome with no links', () => {
  const index = '<sitemapindex><sitemap><loc>https://a.example/s1.xml.gz</loc><lastmod>2024-05-02</lastmod></sitemap></sitemapindex>';
  const { outcome, links } = records(page('https://a.example/sitemap.xml', index, 'text/xml', { reason: 'sitemap' }));
  assert.equal(outcome.document?.format, 'index');
  assert.deepEqual(links.map((l) => [l.url, l.kind, l.via, l.lastmod]), [['https://a.example/s1.xml.gz', 'sitemap', undefined, Date.UTC(2024, 4, 2)]]);

  const bad = records(page('https://a.example/sitemap.xml', '<urlset><url><loc>https://a.example/1</url></urlset>', 'application/xml', { reason: 'sitemap' }));
  assert.equal(bad.outcome.result, 'error');
  assert.equal(bad.outcome.errorCode, 'MEGURI_ERR_SITEMAP_XML');
  assert.deepEqual(bad.links, []);
  const html = records(page('https://a.example/sitemap.xml', '<!doctype html><html><body>Not here</body></html>', 'text/html', { reason: 'sitemap' }));
  assert.equal(html.outcome.errorCode, 'MEGURI_ERR_SITEMAP_FORMAT');
  const notFound = records(page('https://a.example/sitemap.xml', 'nope', 'text/html', { reason: 'sitemap' }, { status: 404 }));
  assert.equal(notFound.outcome.result, 'gone');
});

test('a feed request: items become via=feed links dated by the item; the outcome lists item id hashes', () => {
  const { outcome, links } = records(page('https://blog.example.jp/feed.xml', fixture('rss2.xml'), 'application/rss+xml', { reason: 'feed' }));
  assert.equal(outcome.result, 'ok');
  assert.equal(outcome.document?.kind, 'feed');
  assert.equal(outcome.document?.format, 'rss');
  assert.equal(outcome.document?.ttlMs, 90 * 60_000);
  assert.deepEqual(outcome.document?.itemIds, [itemIdHash('post-1042'), itemIdHash('https://blog.example.jp/2024/05/nets.html'), itemIdHash('https://blog.example.jp/2024/05/tide.html')]);
  assert.equal(outcome.document?.newest, Date.UTC(2024, 4, 13, 21, 30));
  assert.equal(outcome.document?.oldest, Date.UTC(2024, 4, 10, 12));
  assert.deepEqual(links.map((l) => [l.url, l.via]), [
    ['https://blog.example.jp/2024/05/fog.html', 'feed'],
    ['https://blog.example.jp/2024/05/nets.html', 'feed'],
    ['https://blog.example.jp/2024/05/tide.html', 'feed'],
  ]);
  const atom = records(page('https://dev.example.org/journal/atom.xml', fixture('atom.xml'), 'application/atom+xml', { reason: 'feed' }));
  assert.equal(atom.outcome.document?.format, 'atom');
  assert.equal(atom.links.length, 2);
  const broken = records(page('https://blog.example.jp/feed.xml', '<html><body>moved</body></html>', 'text/html', { reason: 'feed' }));
  assert.equal(broken.outcome.result, 'error');
  assert.equal(broken.outcome.errorCode, 'MEGURI_ERR_FEED_FORMAT');
});

const JA_PAGE = `<html lang="ja"><head><title>港</title>
  <link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.xml">
  <link rel="alternate" type="application/atom+xml" href="https://blog.example.jp/atom.xml">
  <link rel="alternate" hreflang="en" href="/en/">
</head><body><p>市議会は火曜日の夜に会合を開き、公立図書館の新しい予算について話し合った。週末の開館時間を延ばすことに賛成する住民がいた。</p>
<a href="/next">次へ</a></body></html>`;

test('pages: announced feeds are kind=feed links; lang is detected; language focus keeps the page and drops its links', () => {
  const url = 'https://blog.example.jp/post';
  const { outcome, links } = records(page(url, JA_PAGE, 'text/html; charset=utf-8'));
  assert.equal(outcome.lang, 'ja');
  const byUrl = new Map(links.map((l) => [l.url, l]));
  assert.equal(byUrl.get('https://blog.example.jp/feed.xml')?.kind, 'feed');
  assert.equal(byUrl.get('https://blog.example.jp/atom.xml')?.kind, 'feed');
  assert.equal(byUrl.get('https://blog.example.jp/en/')?.kind, undefined, 'a language alternate is an ordinary link');
  assert.equal(byUrl.get('https://blog.example.jp/next')?.kind, undefined);

  const focusedJa = records(page(url, JA_PAGE, 'text/html'), { languages: ['ja'] });
  assert.equal(focusedJa.links.length, 4);
  assert.equal(focusedJa.outcome.offLanguage, undefined);
  const focusedEn = records(page(url, JA_PAGE, 'text/html'), { languages: ['en', 'de'] });
  assert.equal(focusedEn.outcome.offLanguage, true);
  assert.equal(focusedEn.outcome.lang, 'ja');
  assert.equal(focusedEn.outcome.md5 !== undefined, true, 'the page itself is kept and reported');
  assert.deepEqual(focusedEn.links, []);

  const short = records(page(url, '<html><body><a href="/x">x</a></body></html>', 'text/html', {}, { headers: { 'content-type': 'text/html', 'content-language': 'de-AT' } }), { languages: ['ja'] });
  assert.equal(short.outcome.lang, 'de');
  assert.equal(short.outcome.offLanguage, true);
  const unknown = records(page(url, '<html><body><a href="/x">x</a></body></html>', 'text/html'), { languages: ['ja'] });
  assert.equal(unknown.outcome.lang, undefined);
  assert.equal(unknown.links.length, 1, 'a page of unknown language is followed');
});

test('links found on a daily page are marked via=daily', () => {
  const { links } = records(page('https://news.example.jp/', '<html><body><a href="/a/1">1</a><a href="/a/2">2</a></body></html>', 'text/html', { daily: true, reason: 'revisit' }));
  assert.deepEqual(links.map((l) => l.via), ['daily', 'daily']);
});
