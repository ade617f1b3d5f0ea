import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countSentences, languageByScript, summarizePage, tldOf } from '../../services/analyze/page-summary.ts';
import { ServerGraphBuilder, serverPageRank } from '../../services/analyze/rank.ts';
import { qualityFactors, qualityScore } from '../../services/analyze/quality.ts';
import { axisMeans, profileScores, profileValues } from '../../services/analyze/profile.ts';
import { databaseLookup, parseTable, parseTableEntry, tableLookup } from '../../services/common/country.ts';
import { log2Bins } from '../../services/analyze/histogram.ts';
import { csvLine } from '../../services/analyze/csv.ts';
import { radarChart } from '../../services/analyze/charts.ts';

const page = (body: string, url = 'http://www.example.jp/a/b.html', extra: Record<string, unknown> = {}) =>
  summarizePage({ url, status: 200, fetchedAt: 1000, contentType: 'text/html; charset=utf-8', bodyText: body, ...extra });

test('a page summary counts images, internal and outbound links per host, and skips nofollow', () => {
  const s = page(
    `<html lang="en-GB"><body><img src=a.png><IMG src=b.png>
     <a href="/x">x</a><a href="c.html">c</a><a href="#top">top</a><a href="mailto:a@b">m</a>
     <a href="http://other.example.com/">o</a><a href="https://OTHER.example.com/y">o2</a>
     <a href="http://third.example.org/" rel="nofollow">n</a><a href="http://[::1">bad</a></body></html>`,
  )!;
  assert.equal(s.host, 'www.example.jp');
  assert.equal(s.tld, 'jp');
  assert.equal(s.lang, 'en');
  assert.equal(s.images, 2);
  assert.equal(s.internal, 2);
  assert.deepEqual(s.outbound, { 'other.example.com': 2 });
  assert.equal(s.dynamic, false);
  assert.equal(s.pathDepth, 2);
  assert.equal(s.md5.length, 32);
});

test('meta robots nofollow drops every link; query strings and CGI paths are dynamic pages', () => {
  const s = page('<meta name="robots" content="noindex, nofollow"><a href="http://x.test/">x</a><a href="/y">y</a>', 'http://a.test/cgi-bin/q.cgi?x=12345')!;
  assert.equal(s.internal, 0);
  assert.deepEqual(s.outbound, {});
  assert.equal(s.dynamic, true);
  assert.equal(s.queryLength, 7);
  assert.equal(page('<p>x</p>', 'http://a.test/list.php')!.dynamic, true);
});

test('only 200 HTML answers are analysed pages', () => {
  assert.equal(summarizePage({ url: 'http://a.test/', status: 404, fetchedAt: 1, contentType: 'text/html', bodyText: 'x' }), undefined);
  assert.equal(summarizePage({ url: 'http://a.test/x.png', status: 200, fetchedAt: 1, contentType: 'image/png', bodyBytes: Buffer.from('x') }), undefined);
  assert.equal(summarizePage({ url: 'http://a.test/', status: 200, fetchedAt: 1, contentType: 'text/html' }), undefined);
});

test('language: declared lang, then Content-Language, then the script of the text', () => {
  assert.equal(page('<html lang="ja"><p>hello</p>')!.lang, 'ja');
  assert.equal(page('<p>hello</p>', 'http://a.test/', { headers: { 'content-language': 'de-DE, en' } })!.lang, 'de');
  assert.equal(page('<p>これはひらがなのぶんしょうです。</p>')!.lang, 'ja');
  assert.equal(languageByScript('한국어 문장입니다'), 'ko');
  assert.equal(languageByScript('Привет, как дела'), 'ru');
  assert.equal(languageByScript('plain latin words'), 'unknown');
});

test('sentences: only those of at least the minimum length count, script text is ignored', () => {
  assert.equal(countSentences('Short one. This sentence is clearly long enough to be counted here. Another long sentence follows right after it!', 40), 2);
  const s = page(`<p>${'A long sentence with many words in it for the score. '.repeat(3)}</p><script>var x = "${'not text. '.repeat(20)}";</script>`)!;
  assert.equal(s.sentences, 3);
});

test('tldOf: last label, address literals grouped', () => {
  assert.equal(tldOf('www.example.co.jp'), 'jp');
  assert.equal(tldOf('localhost'), 'localhost');
  assert.equal(tldOf('192.0.2.1'), '(ip)');
});

test('server PageRank: links within a host are not edges; the top server has 10; a known 3-node answer', () => {
  const b = new ServerGraphBuilder();
  b.link('a', 'b');
  b.link('a', 'a', 5);
  b.link('b', 'c');
  b.link('c', 'a');
  const r = serverPageRank(b.graph);
  assert.equal(r.edges, 3);
  // A directed 3-cycle: every server has the same rank.
  for (const s of r.ranks) assert.ok(Math.abs(s.score - 10) < 1e-9);
  // A star: everyone links to hub; hub links nowhere (dangling). Closed form with n = 4, d = 0.85.
  const star = new ServerGraphBuilder();
  for (const x of ['x', 'y', 'z']) star.link(x, 'hub');
  const s = serverPageRank(star.graph);
  assert.equal(s.ranks[0]!.host, 'hub');
  const leaf = s.ranks[1]!.probability;
  const hub = s.ranks[0]!.probability;
  // leaf = (1-d)/4 + d*hub/4 ; hub = (1-d)/4 + d*hub/4 + d*3*leaf
  assert.ok(Math.abs(leaf - (0.15 / 4 + (0.85 * hub) / 4)) < 1e-9);
  assert.ok(Math.abs(hub - (leaf + 0.85 * 3 * leaf)) < 1e-9);
  assert.ok(Math.abs(s.ranks[1]!.score - (10 * leaf) / hub) < 1e-9);
});

test('weighted server PageRank splits rank by the number of page links', () => {
  const b = new ServerGraphBuilder();
  b.link('a', 'b', 9);
  b.link('a', 'c', 1);
  b.link('b', 'a');
  b.link('c', 'a');
  const plain = serverPageRank(b.graph);
  const weighted = serverPageRank(b.graph, { weighted: true });
  const score = (r: typeof plain, h: string): number => r.ranks.find((x) => x.host === h)!.score;
  assert.ok(Math.abs(score(plain, 'b') - score(plain, 'c')) < 1e-9);
  assert.ok(score(weighted, 'b') > 3 * score(weighted, 'c'));
});

test('quality score: deeper, longer queries and older fetches score lower; more long sentences higher', () => {
  const ctx = { firstFetch: 0, lastFetch: 100 };
  const base = { hostScore: 5, pathDepth: 1, queryLength: 0, fetchedAt: 50, sentences: 5 };
  const q = (p: Partial<typeof base>): number => qualityScore({ ...base, ...p }, ctx);
  assert.ok(q({ pathDepth: 4 }) < q({}));
  assert.ok(q({ queryLength: 80 }) < q({}));
  assert.ok(q({ fetchedAt: 10 }) < q({ fetchedAt: 90 }));
  assert.ok(q({ sentences: 20 }) > q({}));
  assert.ok(q({ hostScore: 10 }) > q({}));
  const f = qualityFactors({ hostScore: 10, pathDepth: 0, queryLength: 0, fetchedAt: 100, sentences: 5 }, ctx);
  assert.deepEqual(f, { rank: 1, depth: 1, cgi: 1, date: 1, text: 0.5 });
  assert.equal(qualityScore({ hostScore: 10, pathDepth: 0, queryLength: 0, fetchedAt: 100, sentences: 5 }, ctx), 90);
});

test('site profile: 50 is the mean, capped at 100, an all-zero axis scores 0', () => {
  const sites = [
    profileValues({ staticPages: 10, dynamicPages: 0, inboundLinks: 2, outboundLinks: 4, internalLinks: 6, images: 0 }),
    profileValues({ staticPages: 30, dynamicPages: 0, inboundLinks: 6, outboundLinks: 0, internalLinks: 2, images: 0 }),
  ];
  const means = axisMeans(sites);
  assert.equal(means.staticPages, 20);
  assert.equal(means.allLinks, 6);
  const s0 = profileScores(sites[0]!, means);
  assert.equal(s0.staticPages, 25);
  assert.equal(s0.outboundLinks, 100);
  assert.equal(s0.images, 0);
  assert.equal(profileScores(means, means).internalLinks, 50);
});

test('geo: table entries first (addresses and CIDR, v4 and v6), then the packaged database', () => {
  const lookup = tableLookup(parseTable('# test web\n127.0.0.2=JP\n192.0.2.0/24 US\n2001:db8::/32=DE\n'), databaseLookup());
  assert.equal(lookup('127.0.0.2'), 'JP');
  assert.equal(lookup('192.0.2.77'), 'US');
  assert.equal(lookup('2001:db8::1'), 'DE');
  assert.equal(lookup('127.0.0.1'), undefined, 'loopback is nowhere');
  assert.equal(lookup('8.8.8.8'), 'US');
  assert.equal(lookup('133.1.1.1'), 'JP');
  assert.equal(lookup('not an ip'), undefined);
  assert.throws(() => parseTableEntry('127.0.0.1=Japan'), /address=country/);
  assert.throws(() => parseTableEntry('300.1.1.1=JP'), /not an IP/);
  assert.throws(() => parseTableEntry('10.0.0.0/40=JP'), /prefix/);
});

test('log2 bins, CSV quoting, radar SVG', () => {
  assert.deepEqual(log2Bins([1, 2, 3, 4, 9, 0]), [
    { from: 1, to: 1, count: 1 },
    { from: 2, to: 3, count: 2 },
    { from: 4, to: 7, count: 1 },
    { from: 8, to: 15, count: 1 },
  ]);
  assert.equal(csvLine(['a,b', 'say "hi"', 3, 0.5, undefined]), '"a,b","say ""hi""",3,0.5,\r\n');
  const svg = radarChart([{ label: 'a', score: 50, value: 1 }, { label: 'b', score: 100, value: 2 }, { label: 'c<d', score: 0, value: 0 }], { title: 'T & U' });
  assert.match(svg, /<polygon class="site"/);
  assert.match(svg, /T &amp; U/);
  assert.match(svg, /c&lt;d/);
});
