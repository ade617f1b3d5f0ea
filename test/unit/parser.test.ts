import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { pageRecord, type PageRecord } from '../../schemas/pages.ts';
import { linksRecord } from '../../schemas/links.ts';
import type { FrontierRecord } from '../../schemas/frontier.ts';
import { extractPage, type Extracted } from '../../services/parser/extract.ts';
import { countTokens, hammingDistance, isSameContent, md5Hex, simhash } from '../../services/common/fingerprint.ts';
import { classify, needsLanguageDetector, pageToRecords, parseRetryAfter, parseXRobotsTag } from '../../services/parser/outcome.ts';
import { hostOf } from '../../services/common/url.ts';
import { decodeHtml, parseCommand, type ParseReport } from '../../services/parser/cli.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '..', 'fixtures', 'pages');
const ARTICLE_URL = 'https://news.example.com/articles/quiet-harbour';
const PAGE = 'http://example.com/dir/page.html';

function urls(ex: Extracted): string[] {
  return ex.links.map((l) => l.url);
}

function linkOf(ex: Extracted, url: string) {
  const l = ex.links.find((x) => x.url === url);
  assert.ok(l, `missing link ${url}; have ${urls(ex).join(', ')}`);
  return l;
}

// ───────────────────────────── extraction ─────────────────────────────

test('extract: link sources a, area, link rel, frame, iframe, meta refresh', () => {
  const html = `<html><head>
    <link rel="stylesheet" href="/style.css"><link rel="icon" href="/favicon.ico">
    <link rel="alternate stylesheet" href="/alt.css"><link rel="preload" href="/font.woff2">
    <link rel="alternate" hreflang="de" href="/de/page"><link rel="next" href="page2.html">
    <link rel="prev" href="page0.html"><link rel="canonical" href="/canon">
    <meta http-equiv="refresh" content="3; url='/moved'">
  </head><body>
    <a href="/a">A</a><a name="anchor-only">no href</a>
    <map><area href="/area" alt="Area text"></map>
    <frameset><frame src="/frame"></frameset><iframe src="/iframe"></iframe>
    <img src="/img.png"><script src="/app.js"></script>
  </body></html>`;
  const ex = extractPage(html, PAGE);
  assert.deepEqual(urls(ex).sort(), [
    'http://example.com/a',
    'http://example.com/area',
    'http://example.com/de/page',
    'http://example.com/dir/page0.html',
    'http://example.com/dir/page2.html',
    'http://example.com/frame',
    'http://example.com/iframe',
    'http://example.com/moved',
  ]);
  assert.equal(linkOf(ex, 'http://example.com/a').tag, 'a');
  assert.equal(linkOf(ex, 'http://example.com/area').tag, 'area');
  assert.equal(linkOf(ex, 'http://example.com/area').anchor, 'Area text');
  assert.equal(linkOf(ex, 'http://example.com/de/page').tag, 'link');
  assert.equal(linkOf(ex, 'http://example.com/frame').tag, 'frame');
  assert.equal(linkOf(ex, 'http://example.com/iframe').tag, 'iframe');
  assert.equal(linkOf(ex, 'http://example.com/moved').tag, 'refresh');
  // canonical is reported on its own, not as a link
  assert.equal(ex.canonical, 'http://example.com/canon');
  assert.equal(ex.invalidLinks, 0);
});

test('extract: <base href> — first wins, relative to the page, applies to links before it too', () => {
  const html = `<a href="early">e</a><base href="/base/"><base href="http://other.example/"><a href="late">l</a>
    <a href="/root">r</a><a href="//cdn.example.org/x">c</a><link rel="canonical" href="canon">`;
  const ex = extractPage(html, PAGE);
  assert.equal(ex.baseUrl, 'http://example.com/base/');
  assert.deepEqual(urls(ex), [
    'http://example.com/base/early',
    'http://example.com/base/late',
    'http://example.com/root',
    'http://cdn.example.org/x',
  ]);
  assert.equal(ex.canonical, 'http://example.com/base/canon');

  // an unusable base is ignored; the next valid one is taken
  const ex2 = extractPage('<base href="javascript:void(0)"><base href="http://[bad"><base href="https://b.example/d/"><a href="x">x</a>', PAGE);
  assert.equal(ex2.baseUrl, 'https://b.example/d/');
  assert.deepEqual(urls(ex2), ['https://b.example/d/x']);

  const ex3 = extractPage('<a href="x">x</a>', PAGE);
  assert.equal(ex3.baseUrl, PAGE);
});

test('extract: rel nofollow / ugc / sponsored, any case, as whole tokens; dedupe keeps first, nofollow only if all are', () => {
  const html = `
    <a href="/n1" rel="nofollow">1</a>
    <a href="/n2" rel="NOFOLLOW noopener">2</a>
    <a href="/n3" rel="ugc">3</a>
    <a href="/n4" rel="noreferrer sponsored">4</a>
    <a href="/f1" rel="nofollower">5</a>
    <a href="/f2" rel="noopener">6</a>
    <a href="/mixed" rel="nofollow">first</a><a href="/mixed">second</a>
    <a href="/all" rel="nofollow">x</a><a href="/all#frag" rel="ugc">y</a>
    <link rel="next nofollow" href="/n5">`;
  const ex = extractPage(html, PAGE);
  for (const u of ['/n1', '/n2', '/n3', '/n4', '/n5', '/all']) assert.equal(linkOf(ex, 'http://example.com' + u).nofollow, true, u);
  for (const u of ['/f1', '/f2', '/mixed']) assert.equal(linkOf(ex, 'http://example.com' + u).nofollow, false, u);
  assert.equal(linkOf(ex, 'http://example.com/mixed').anchor, 'first');
  assert.equal(ex.links.filter((l) => l.url === 'http://example.com/all').length, 1);
  assert.equal(ex.nofollowAll, false);
});

test('extract: robots meta — robots and the bot token, noindex/nofollow/none; other bots ignored', () => {
  const cases: [string, boolean, boolean, string?][] = [
    ['<meta name="robots" content="noindex">', true, false],
    ['<meta name="robots" content="nofollow">', false, true],
    ['<meta name="ROBOTS" content="NOINDEX, NOFOLLOW">', true, true],
    ['<meta name="robots" content="none">', true, true],
    ['<meta name="robots" content="index,follow">', false, false],
    ['<meta name="robots" content="all">', false, false],
    ['<meta name="meguri" content="nofollow">', false, true],
    ['<meta name="googlebot" content="noindex,nofollow">', false, false],
    ['<meta name="mybot" content="noindex">', true, false, 'MyBot'],
    ['<meta name="meguri" content="noindex">', false, false, 'mybot'],
    ['<meta name="robots">', false, false],
    ['<meta content="noindex">', false, false],
  ];
  for (const [meta, noindex, nofollow, bot] of cases) {
    const ex = extractPage(`<html><head>${meta}</head><body><a href="/x">x</a></body></html>`, PAGE, bot ? { botToken: bot } : {});
    assert.equal(ex.noindex, noindex, meta);
    assert.equal(ex.nofollowAll, nofollow, meta);
    // links are still reported; following them is the caller's decision
    assert.equal(ex.links.length, 1);
  }
});

test('extract: canonical — first valid one, fragment dropped; absent → null', () => {
  const ex = extractPage('<link rel="canonical" href="https://Example.com/c#x"><link rel="canonical" href="/second">', PAGE);
  assert.equal(ex.canonical, 'https://example.com/c');
  assert.equal(extractPage('<p>x</p>', PAGE).canonical, null);
  assert.equal(extractPage('<link rel="canonical" href="mailto:x@y">', PAGE).canonical, null);
});

test('extract: title — collapsed, entities decoded, capped at 1024, svg titles ignored; lang', () => {
  const ex = extractPage(
    '<html lang=" en-GB "><head><title>\n  Fish &amp; Chips\t&mdash;  a   history </title></head><body><title>Second</title></body></html>',
    PAGE,
  );
  assert.equal(ex.title, 'Fish & Chips — a history');
  assert.equal(ex.lang, 'en-GB');

  const svgFirst = extractPage('<svg><title>icon</title></svg><title>Real</title>', PAGE);
  assert.equal(svgFirst.title, 'Real');

  const long = extractPage(`<title>${'word '.repeat(1000)}</title>`, PAGE);
  assert.ok(long.title !== null && long.title.length <= 1024);

  const none = extractPage('<p>no title</p>', PAGE);
  assert.equal(none.title, null);
  assert.equal(none.lang, null);

  const unclosed = extractPage('<title>Never closed', PAGE);
  assert.equal(unclosed.title, 'Never closed');
});

test('extract: anchor text — collapsed, img alt included, capped at 256, first non-empty kept', () => {
  const ex = extractPage(
    `<a href="/a">  Read
        <b>more</b> <img src="x.png" alt="about tides"> </a>
     <a href="/long">${'long '.repeat(200)}</a>
     <a href="/img"><img src="i.png"></a><a href="/img">Images</a>
     <a href="/card"><div>Card title</div><p>Card text</p></a>`,
    PAGE,
  );
  assert.equal(linkOf(ex, 'http://example.com/card').anchor, 'Card title Card text');
  assert.equal(linkOf(ex, 'http://example.com/a').anchor, 'Read more about tides');
  assert.ok(linkOf(ex, 'http://example.com/long').anchor.length <= 256);
  assert.equal(linkOf(ex, 'http://example.com/img').anchor, 'Images');
});

test('extract: invalid and skipped links are counted, never thrown', () => {
  const huge = 'http://example.com/' + 'x'.repeat(100_000);
  const html = `
    <a href="http://[::1">bad ipv6</a><a href="http://exa mple.com/">space</a><a href="http://[::1">again</a>
    <a href="${huge}">huge</a>
    <a href="javascript:void(0)">js</a><a href="mailto:a@b.c">mail</a><a href="">empty</a><a href="#top">self</a>
    <a href="tel:123">tel</a><a href="/ok">ok</a>`;
  const ex = extractPage(html, PAGE);
  assert.deepEqual(urls(ex), ['http://example.com/ok']);
  assert.equal(ex.invalidLinks, 4);
  assert.equal(ex.skippedLinks, 5);
});

test('extract: malformed HTML never throws and still yields links', () => {
  const inputs = [
    '<a href="/a">unclosed <b>tags <i>everywhere',
    '</div></span></p></a><a href="/b">after stray closers</a>',
    '<a href="/c" <a href="/d">x</a>',
    '<a href=/unquoted title=x>y</a>',
    '<a href="/unterminated>text</a><p>more',
    '<<<>>><a href="/e">e</a><!-- unclosed comment <a href="/hidden">',
    '<form><form><a href="/f">f</a></form></form>',
    '<table><tr><td><a href="/g">g</td></tr></table></a>',
    '\u0000\uFFFD<a\u0000 href="/h">\uD800</a>',
    '<script>document.write("<a href=\'/no\'>")</script><a href="/i">i</a>',
    '<![CDATA[ <a href="/cdata"> ]]><a href="/j">j</a>',
    '',
    '<',
    '<a',
    '<a href',
    '<a href=',
  ];
  for (const html of inputs) {
    let ex: Extracted | undefined;
    assert.doesNotThrow(() => {
      ex = extractPage(html, PAGE);
    }, html);
    assert.ok(ex);
  }
  assert.deepEqual(urls(extractPage(inputs[1]!, PAGE)), ['http://example.com/b']);
  assert.deepEqual(urls(extractPage(inputs[3]!, PAGE)), ['http://example.com/unquoted']);
  assert.ok(urls(extractPage(inputs[9]!, PAGE)).every((u) => !u.endsWith('/no')));
});

test('extract: huge attribute and deeply nested tags stay cheap', () => {
  const hugeAttr = `<div data-x="${'y'.repeat(5_000_000)}"><a href="/after">after</a></div>`;
  let t = performance.now();
  const ex = extractPage(hugeAttr, PAGE);
  assert.deepEqual(urls(ex), ['http://example.com/after']);
  assert.ok(performance.now() - t < 2000, 'huge attribute took too long');

  const depth = 5000;
  const nested = '<div>'.repeat(depth) + '<a href="/deep">deep</a>' + '</div>'.repeat(depth);
  t = performance.now();
  const ex2 = extractPage(nested, PAGE);
  assert.deepEqual(urls(ex2), ['http://example.com/deep']);
  assert.equal(ex2.text, 'deep');
  const unclosed = '<span><b>'.repeat(depth) + '<a href="/u">u</a>';
  assert.deepEqual(urls(extractPage(unclosed, PAGE)), ['http://example.com/u']);
  assert.ok(performance.now() - t < 5000, 'deep nesting took too long');
});

test('extract: main text drops chrome, scripts and boilerplate classes; words split at blocks only', () => {
  const html = `<html><body class="has-sidebar nav-open">
    <header>Site name</header><nav>Home News</nav>
    <div class="cookie-notice">We use cookies</div>
    <div id="main-menu">Menu item</div>
    <div class="ad-slot">Buy now</div><div class="Ads">Buy more</div>
    <div role="navigation">Role nav</div><div role="banner">Role banner</div>
    <div class="breadcrumbs">Home › Travel</div>
    <main><article class="story">
      <h1>Head<b>line</b></h1><p>First para.</p><p>Second<br>line</p>
      <p class="shadow headers loading">kept: not whole boilerplate tokens</p>
      <script>var hidden = 1;</script><style>p { color: red }</style><noscript>enable js</noscript>
      <template>tmpl</template><svg><text>svg text</text></svg>
      <form>form text<button>Go</button><select><option>opt</option></select><label>Name</label><textarea>ta</textarea></form>
      <p hidden>hidden para</p>
    </article></main>
    <aside>Related</aside><footer>Copyright</footer>
  </body></html>`;
  const ex = extractPage(html, PAGE);
  const words = ex.text.split(/\s+/);
  assert.deepEqual(words, ['Headline', 'First', 'para.', 'Second', 'line', 'kept:', 'not', 'whole', 'boilerplate', 'tokens', 'form', 'text']);
});

test('extract: a page wrapped in one <form> (WebForms style) keeps its main text', () => {
  const ex = extractPage('<body><form id="aspnetForm"><nav>Menu</nav><div class="content"><p>Real content here.</p></div><input type="submit"></form></body>', PAGE);
  assert.equal(ex.text.trim(), 'Real content here.');
});

test('extract: meta refresh parsing', () => {
  const target = (content: string) => urls(extractPage(`<meta http-equiv="Refresh" content="${content}">`, PAGE));
  assert.deepEqual(target("0; url='/a'"), ['http://example.com/a']);
  assert.deepEqual(target('5;URL=/b'), ['http://example.com/b']);
  assert.deepEqual(target('1.5, /c'), ['http://example.com/c']);
  assert.deepEqual(target('0 ; url = &quot;/d&quot;'), ['http://example.com/d']);
  assert.deepEqual(target('30'), []);
  assert.deepEqual(target('nonsense'), []);
  assert.deepEqual(target('url=/no-delay'), []);
});

test('extract: when everything is boilerplate, the visible text is used for the fingerprint', () => {
  const ex = extractPage('<nav>Only navigation here</nav><script>x()</script><footer>and a footer</footer>', PAGE);
  assert.equal(ex.text.replace(/\s+/g, ' '), 'Only navigation here and a footer');
});

test('extract: maxLinks and maxTextChars caps', () => {
  const html = Array.from({ length: 50 }, (_, i) => `<p><a href="/p${i}">paragraph number ${i}</a></p>`).join('');
  const ex = extractPage(html, PAGE, { maxLinks: 10, maxTextChars: 100 });
  assert.equal(ex.links.length, 10);
  assert.ok(ex.text.length <= 100);
});

test('extract: server aliases apply to links', () => {
  const ex = extractPage('<a href="http://www.example.com/x">x</a>', PAGE, { aliases: { 'www.example.com': 'example.com' } });
  assert.deepEqual(urls(ex), ['http://example.com/x']);
});

// ───────────────────────────── fingerprints ─────────────────────────────

test('md5Hex', () => {
  assert.equal(md5Hex(''), 'd41d8cd98f00b204e9800998ecf8427e');
  assert.equal(md5Hex('abc'), '900150983cd24fb0d6963f7d28e17f72');
  assert.equal(md5Hex('caf\u00e9'), md5Hex(Buffer.from('caf\u00e9', 'utf8')));
});

test('simhash: format, determinism, insensitivity to case, punctuation, whitespace and numbers', () => {
  const fp = simhash('The quick brown fox jumps over the lazy dog');
  assert.match(fp, /^[0-9a-f]{16}$/);
  assert.equal(simhash('The quick brown fox jumps over the lazy dog'), fp);
  assert.equal(simhash('  the QUICK, brown fox — jumps over... the lazy DOG!  '), fp);
  assert.equal(simhash(''), '0000000000000000');
  assert.equal(simhash(' ... !!! '), '0000000000000000');
  assert.equal(simhash('Updated 1 May 2024 at 08:30'), simhash('Updated 17 May 2025 at 19:05'));
  assert.notEqual(simhash('one'), simhash('two'));
  assert.notEqual(simhash('alpha beta gamma delta'), simhash('delta gamma beta alpha'));
});

test('simhash values are pinned: a stored fingerprint stays comparable with one a later version computes', () => {
  // Changing the tokens, hashes or counting changes these, and every stored page would then look changed.
  assert.equal(simhash('The quick brown fox jumps over the lazy dog'), 'c6225a90f4681ac5');
  assert.equal(simhash('\u6e2f\u306e\u671d \u6771\u4eac\u30bf\u30ef\u30fc'), '4428ae806a038108');
  assert.equal(simhash('one two'), '400906040a21282c');
  assert.equal(simhash(readFileSync(new URL('../fixtures/pages/article.html', import.meta.url), 'utf8')), '31aa15565de5297c');
});

test('simhash tokens: words, digits, accented letters; CJK characters one token each', () => {
  assert.equal(countTokens('hello world'), 2);
  assert.equal(countTokens('naïve café über'), 3);
  assert.equal(countTokens('covid19 2024-05-01'), 4);
  assert.equal(countTokens('港の朝'), 3);
  assert.equal(countTokens('東京タワー abc'), 6);
  assert.equal(countTokens('𠀋𠀌'), 2); // supplementary-plane ideographs (surrogate pairs)
  assert.equal(countTokens('한국어 문장'), 2);
  assert.equal(countTokens('a\u00a0b\u2014c'), 3);
});

test('hammingDistance and isSameContent', () => {
  assert.equal(hammingDistance('0000000000000000', '0000000000000000'), 0);
  assert.equal(hammingDistance('0000000000000000', 'ffffffffffffffff'), 64);
  assert.equal(hammingDistance('8000000000000001', '0000000000000000'), 2);
  assert.equal(hammingDistance('00000000000000ff', '0000000000000f0f'), 8);
  assert.equal(hammingDistance('ABCDEF0123456789', 'abcdef0123456789'), 0);
  assert.throws(() => hammingDistance('xyz', '0000000000000000'), RangeError);
  assert.equal(isSameContent('0000000000000007', '0000000000000000'), true);
  assert.equal(isSameContent('000000000000000f', '0000000000000000'), false);
  assert.equal(isSameContent('000000000000000f', '0000000000000000', 4), true);
});

async function article(): Promise<string> {
  return readFile(path.join(fixtures, 'article.html'), 'utf8');
}

function fpOf(html: string): string {
  return simhash(extractPage(html, ARTICLE_URL).text);
}

test('fingerprint: ads, nav, dates, sidebar, cookie banner and footer changes keep distance ≤ 3', async () => {
  const html = await article();
  const base = fpOf(html);
  const variants: Record<string, string> = {
    nav: html.replace('>Politics<', '>Elections 2024<').replace('>Video<', '>Live TV<').replace('/section/sport', '/section/sports'),
    date: html
      .replace('Wednesday, 1 May 2024', 'Thursday, 2 May 2024')
      .replace('1 May 2024, 08:30', '2 May 2024, 17:45')
      .replace('2024-05-01T08:30', '2024-05-02T17:45'),
    ads: html
      .replace('Cheap flights to the coast', 'Win a luxury cruise for two today')
      .replace('click?id=8812', 'click?id=1')
      .replace('Sponsored: holiday cottages', 'Sponsored: new electric cars from the best dealers'),
    sidebar: html.replace('Rail strike ends', 'Heatwave warning issued').replace('Budget vote', 'Election night live'),
    footer: html.replace('&copy; 2024 News Example Ltd.', '&copy; 2025 News Example Group plc.').replace('>Podcasts<', '>Audio<'),
    cookie: html.replace('We use cookies to improve your experience.', 'This site uses cookies and similar technologies for analytics.'),
    scripts: html.replace('window.dataLayer = [', 'window.dataLayer = window.dataLayer || [').replace('color: #333', 'color: #444'),
  };
  for (const [name, v] of Object.entries(variants)) {
    assert.notEqual(v, html, `variant ${name} did not change the page`);
    const d = hammingDistance(base, fpOf(v));
    assert.ok(d <= 3, `${name}: distance ${d}`);
    assert.ok(isSameContent(base, fpOf(v)));
  }
  // several of them at once
  let combined = html;
  combined = combined.replace('>Politics<', '>Elections 2024<').replace('Wednesday, 1 May 2024', 'Thursday, 2 May 2024');
  combined = combined.replace('1 May 2024, 08:30', '2 May 2024, 17:45').replace('Cheap flights to the coast', 'Win a cruise');
  combined = combined.replace('Rail strike ends', 'Heatwave warning').replace('&copy; 2024', '&copy; 2025');
  assert.ok(hammingDistance(base, fpOf(combined)) <= 3);
  assert.notEqual(md5Hex(combined), md5Hex(html), 'md5 still sees the change');
});

/** Replaces every 10th word of every article paragraph (10 % of the main text's words). */
function rewriteTenPercent(html: string, offset: number): string {
  const start = html.indexOf('<article>');
  const end = html.indexOf('</article>');
  let n = 0;
  const body = html.slice(start, end).replace(/<p>([^<]*)/g, (_m, text: string) => {
    const words = text.split(' ').map((w) => (n++ % 10 === offset ? `changed${n}` : w));
    return `<p>${words.join(' ')}`;
  });
  return html.slice(0, start) + body + html.slice(end);
}

test('fingerprint: rewriting 10 % of the main text moves the fingerprint well beyond the threshold', async () => {
  const html = await article();
  const base = fpOf(html);
  const distances: number[] = [];
  for (let offset = 0; offset < 10; offset++) {
    const changed = rewriteTenPercent(html, offset);
    assert.notEqual(changed, html);
    distances.push(hammingDistance(base, fpOf(changed)));
  }
  for (const d of distances) assert.ok(d >= 8, `distances ${distances.join(',')}`);
  assert.equal(isSameContent(base, fpOf(rewriteTenPercent(html, 0))), false);
  // a single changed paragraph sentence of a short page is also a real change
  const short = simhash('The harbour master opened the gates at dawn and the fishing fleet sailed out into the bay.');
  const edited = simhash('The harbour master closed the gates at dusk and the whole fleet stayed in port for the storm.');
  assert.ok(hammingDistance(short, edited) > 3);
});

// ───────────────────────────── outcome ─────────────────────────────

const T0 = 1_714_550_000_000;

function request(over: Partial<FrontierRecord> = {}): FrontierRecord {
  return {
    v: 1,
    requestId: 'req-1',
    url: 'http://example.com/start',
    host: 'example.com',
    reason: 'new',
    score: 1,
    depth: 3,
    cgiHops: 0,
    attempt: 1,
    issuedAt: T0 - 1000,
    ...over,
  };
}

/** Overrides of a test page; a body given as text is stored as its UTF-8 bytes, as the fetcher would. */
type PageOver = Omit<Partial<PageRecord>, 'body'> & { body?: string | Buffer | undefined };

function page(over: PageOver = {}, req: Partial<FrontierRecord> = {}): PageRecord {
  const r = request(req);
  const { body, ...fields } = over;
  const hasBody = 'body' in over;
  const p: PageRecord = {
    v: 1,
    request: r,
    finalUrl: r.url,
    redirects: [],
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    contentType: 'text/html; charset=utf-8',
    body: Buffer.from('<html><head><title>T</title></head><body><p>Hello</p><a href="/a">a</a><a href="/b">b</a></body></html>'),
    bodyTruncated: false,
    bytes: 120,
    decodedBytes: 120,
    timing: { startedAt: T0 - 200, ttfbMs: 50, totalMs: 200 },
    fetchedAt: T0,
    ...fields,
  };
  if (hasBody) {
    if (body === undefined) delete p.body;
    else p.body = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  }
  return pageRecord.parse(p);
}

function checkSchema(res: ReturnType<typeof pageToRecords>): void {
  linksRecord.parse(res.outcome);
  for (const l of res.links) linksRecord.parse(l);
  // The hosts handed on to packLinks are the links' own.
  if (res.hosts !== undefined) assert.deepEqual(res.hosts, res.links.map((l) => hostOf(l.url)));
}

test('outcome: classification table', () => {
  const html = 'text/html; charset=utf-8';
  const cases: [PageOver, string][] = [
    [{ status: 200, contentType: html }, 'ok'],
    [{ status: 203, contentType: 'application/xhtml+xml' }, 'ok'],
    [{ status: 200, contentType: 'TEXT/HTML' }, 'ok'],
    [{ status: 200, contentType: 'application/pdf', body: undefined }, 'not-html'],
    [{ status: 200, contentType: 'text/plain', body: 'plain' }, 'not-html'],
    [{ status: 200, contentType: 'application/json', body: '{}' }, 'not-html'],
    [{ status: 200, contentType: undefined, body: '<!DOCTYPE html><p>sniffed</p>' }, 'ok'],
    [{ status: 200, contentType: undefined, body: '\uFEFF<!-- c --><html><body>x</body></html>' }, 'ok'],
    [{ status: 200, contentType: undefined, body: 'just text' }, 'not-html'],
    [{ status: 204, contentType: html, body: undefined }, 'ok'],
    [{ status: 304 }, 'not-modified'],
    [{ status: 301 }, 'redirect'],
    [{ status: 302 }, 'redirect'],
    [{ status: 308 }, 'redirect'],
    [{ status: 404 }, 'gone'],
    [{ status: 410 }, 'gone'],
    [{ status: 400 }, 'client-error'],
    [{ status: 401 }, 'client-error'],
    [{ status: 403 }, 'client-error'],
    [{ status: 429 }, 'client-error'],
    [{ status: 500 }, 'server-error'],
    [{ status: 503 }, 'server-error'],
    [{ status: 599 }, 'server-error'],
    [{ status: 0, error: { code: 'MEGURI_ERR_TIMEOUT', message: 'timed out' } }, 'error'],
    [{ status: 0 }, 'error'],
    [{ status: 200, error: { code: 'MEGURI_ERR_BODY', message: 'reset mid-body' } }, 'error'],
    [{ status: 101 }, 'error'],
    [{ status: 799 }, 'error'],
  ];
  for (const [over, expected] of cases) {
    const p = page(over);
    assert.equal(classify(p), expected, JSON.stringify(over));
    const res = pageToRecords(p);
    assert.equal(res.outcome.result, expected, JSON.stringify(over));
    checkSchema(res);
    if (expected !== 'ok') assert.equal(res.links.length, 0);
  }
});

test('outcome: only an HTML page the parser reads waits for the language detector', () => {
  const robots = page({ contentType: 'text/plain', body: 'User-agent: *\nDisallow: /private' }, { reason: 'robots', url: 'http://example.com/robots.txt' });
  const sitemap = page({ contentType: 'application/xml', body: '<urlset/>' }, { reason: 'sitemap', url: 'http://example.com/sitemap.xml' });
  const feed = page({ contentType: 'application/rss+xml', body: '<rss/>' }, { reason: 'feed', url: 'http://example.com/feed' });
  const redirect = page({ status: 301, headers: { location: 'http://example.com/b' }, body: undefined });
  const missing = page({ status: 404 });
  const pdf = page({ contentType: 'application/pdf', body: '%PDF-1.4' });
  for (const p of [robots, sitemap, feed, redirect, missing, pdf]) assert.equal(needsLanguageDetector(p), false, `${p.request.reason} ${p.status} ${p.contentType}`);
  for (const reason of ['new', 'seed', 'revisit', 'redirect'] as const) assert.equal(needsLanguageDetector(page({}, { reason })), true, reason);
  // An HTML page served with a wrong type is read as HTML, so it is detected too (classify sniffs).
  assert.equal(classify(page({ contentType: '' })), 'ok');
  assert.equal(needsLanguageDetector(page({ contentType: '' })), true);
});

test('outcome: ok page carries md5, fingerprint, title, validators, fetch stats and the page pointer', () => {
  const p = page({
    headers: { 'content-type': 'text/html', etag: 'W/"abc"', 'last-modified': 'Wed, 01 May 2024 08:00:00 GMT' },
    serverIp: '10.0.0.7',
    connectionClosed: true,
  });
  const res = pageToRecords(p, { topic: 'pages', partition: 3, offset: '12345' });
  checkSchema(res);
  const o = res.outcome;
  assert.equal(o.type, 'outcome');
  assert.equal(o.requestId, 'req-1');
  assert.equal(o.url, 'http://example.com/start');
  assert.equal(o.finalUrl, 'http://example.com/start');
  assert.equal(o.reason, 'new');
  assert.equal(o.status, 200);
  assert.equal(o.md5, md5Hex(p.body!));
  assert.match(o.fingerprint!, /^[0-9a-f]{16}$/);
  assert.equal(o.title, 'T');
  assert.deepEqual(o.validators, { etag: 'W/"abc"', lastModified: 'Wed, 01 May 2024 08:00:00 GMT' });
  assert.equal(o.noindex, false);
  assert.equal(o.outDegree, 2);
  assert.deepEqual(o.fetch, { totalMs: 200, ttfbMs: 50, bytes: 120, connectionClosed: true });
  assert.equal(o.serverIp, '10.0.0.7');
  assert.deepEqual(o.page, { topic: 'pages', partition: 3, offset: '12345' });
  assert.equal(o.fetchedAt, T0);
  assert.equal(o.retryAfterMs, undefined);
  assert.equal(o.robots, undefined);
});

test('outcome: the fetcher’s wait for a per-IP slot is not counted as the server’s time', () => {
  const p = page({ body: '<title>T</title>' });
  const res = pageToRecords({ ...p, timing: { ...p.timing, totalMs: 200, queueMs: 150 } });
  assert.equal(res.outcome.fetch.totalMs, 50);
});

test('outcome: links — depth + 1, contribution (score + 1) / outDegree, sameSite, anchor, source, foundAt', () => {
  const body = `<a href="/a">Alpha</a><a href="http://www.example.com/b">Beta</a><a href="https://other.org/c">Gamma</a>
    <a href="/skip" rel="nofollow">skip</a><a href="/a">dup</a><a href="mailto:x@y">m</a>`;
  const res = pageToRecords(page({ body }, { score: 2, depth: 3 }));
  checkSchema(res);
  assert.equal(res.outcome.outDegree, 3);
  // The outcome lists the followed links too, for the scheduler's VR/AR propagation.
  assert.deepEqual(res.outcome.outLinks, ['http://example.com/a', 'http://www.example.com/b', 'https://other.org/c']);
  assert.deepEqual(
    res.links.map((l) => [l.url, l.depth, l.contribution, l.sameSite, l.anchor]),
    [
      ['http://example.com/a', 4, 1, true, 'Alpha'],
      ['http://www.example.com/b', 4, 1, true, 'Beta'],
      ['https://other.org/c', 4, 1, false, 'Gamma'],
    ],
  );
  for (const l of res.links) {
    assert.equal(l.type, 'link');
    assert.equal(l.source, 'http://example.com/start');
    assert.equal(l.foundAt, T0);
    assert.equal(l.cgiHops, 0);
  }
  // a negative score contributes nothing below zero
  const neg = pageToRecords(page({ body: '<a href="/a">a</a><a href="/b">b</a>' }, { score: -5 }));
  assert.deepEqual(
    neg.links.map((l) => l.contribution),
    [0.5, 0.5],
  );
  // link without text has no anchor field
  const bare = pageToRecords(page({ body: '<a href="/x"></a>' }));
  assert.equal(bare.links[0]!.anchor, undefined);
});

test('outcome: cgiHops counts consecutive hops out of dynamic pages', () => {
  const body = '<a href="/static.html">s</a><a href="/search?q=1">d</a>';
  // static page: its links restart at 0, whatever the request carried
  const fromStatic = pageToRecords(page({ body }, { url: 'http://example.com/index.html', cgiHops: 4 }));
  assert.deepEqual(
    fromStatic.links.map((l) => l.cgiHops),
    [0, 0],
  );
  // dynamic page reached from a static one (cgiHops 0): its links are one dynamic hop out
  const dyn1 = pageToRecords(page({ body }, { url: 'http://example.com/list?page=2', cgiHops: 0 }));
  assert.deepEqual(
    dyn1.links.map((l) => l.cgiHops),
    [1, 1],
  );
  const dyn3 = pageToRecords(page({ body }, { url: 'http://example.com/cgi-bin/cal.pl', cgiHops: 2 }));
  assert.deepEqual(
    dyn3.links.map((l) => l.cgiHops),
    [3, 3],
  );
  // the page's final URL decides: a dynamic request redirected to a static page resets
  const redirected = pageToRecords(
    page({ body, finalUrl: 'http://example.com/article/5', redirects: [{ url: 'http://example.com/go?id=5', status: 301 }] }, { url: 'http://example.com/go?id=5', cgiHops: 3 }),
  );
  assert.deepEqual(
    redirected.links.map((l) => l.cgiHops),
    [0, 0],
  );
});

test('outcome: links of a redirected page resolve against finalUrl', () => {
  const res = pageToRecords(
    page(
      { finalUrl: 'https://new.example.com/docs/intro', redirects: [{ url: 'http://example.com/old', status: 301 }], body: '<a href="next">n</a><a href="../up">u</a>' },
      { url: 'http://example.com/old' },
    ),
  );
  checkSchema(res);
  assert.equal(res.outcome.url, 'http://example.com/old');
  assert.equal(res.outcome.finalUrl, 'https://new.example.com/docs/intro');
  assert.deepEqual(
    res.links.map((l) => l.url),
    ['https://new.example.com/docs/next', 'https://new.example.com/up'],
  );
  assert.ok(res.links.every((l) => l.source === 'https://new.example.com/docs/intro'));
});

test('outcome: canonical is emitted when different and same-site; not when cross-site or self', () => {
  const mk = (canon: string) => pageToRecords(page({ body: `<link rel="canonical" href="${canon}"><a href="/a">a</a>` }, { url: 'http://example.com/p?utm=1' }));
  const same = mk('/p');
  assert.deepEqual(
    same.links.map((l) => l.url),
    ['http://example.com/a', 'http://example.com/p'],
  );
  assert.equal(same.outcome.outDegree, 2);
  const sub = mk('http://www.example.com/p');
  assert.equal(sub.links.length, 2);
  const cross = mk('https://elsewhere.org/p');
  assert.deepEqual(
    cross.links.map((l) => l.url),
    ['http://example.com/a'],
  );
  const self = mk('http://EXAMPLE.com/p?utm=1#top');
  assert.deepEqual(
    self.links.map((l) => l.url),
    ['http://example.com/a'],
  );
  // already linked: not duplicated
  const linked = pageToRecords(page({ body: '<link rel="canonical" href="/a"><a href="/a">a</a>' }));
  assert.equal(linked.links.length, 1);
});

test('outcome: meta robots and X-Robots-Tag', () => {
  const body = '<a href="/a">a</a><a href="/b">b</a>';
  const metaNofollow = pageToRecords(page({ body: '<meta name="robots" content="nofollow">' + body }));
  assert.equal(metaNofollow.links.length, 0);
  assert.equal(metaNofollow.outcome.outDegree, 0);
  assert.equal(metaNofollow.outcome.noindex, false);
  assert.ok(metaNofollow.outcome.fingerprint);

  const metaNoindex = pageToRecords(page({ body: '<meta name="robots" content="noindex">' + body }));
  assert.equal(metaNoindex.outcome.noindex, true);
  assert.equal(metaNoindex.links.length, 2);

  const hdr = (v: string) => pageToRecords(page({ body, headers: { 'content-type': 'text/html', 'x-robots-tag': v } }));
  assert.equal(hdr('nofollow').links.length, 0);
  assert.equal(hdr('noindex').outcome.noindex, true);
  assert.equal(hdr('noindex').links.length, 2);
  assert.equal(hdr('none').links.length, 0);
  assert.equal(hdr('none').outcome.noindex, true);
  assert.equal(hdr('googlebot: nofollow').links.length, 2);
  assert.equal(hdr('meguri: nofollow').links.length, 0);
  assert.equal(hdr('googlebot: noindex, meguri: nofollow').outcome.noindex, false);
  assert.equal(hdr('unavailable_after: 25 Jun 2030 15:00:00 PST, noindex').outcome.noindex, true);

  assert.deepEqual(parseXRobotsTag('NOINDEX, NOFOLLOW', 'meguri'), { noindex: true, nofollow: true });
  assert.deepEqual(parseXRobotsTag('otherbot: noindex', 'meguri'), { noindex: false, nofollow: false });
  assert.deepEqual(parseXRobotsTag('MyBot: noindex', 'mybot'), { noindex: true, nofollow: false });
  assert.deepEqual(parseXRobotsTag(undefined, 'meguri'), { noindex: false, nofollow: false });
});

test('outcome: Retry-After on 429/503 — seconds or HTTP date relative to fetchedAt', () => {
  const at = (status: number, v: string) => pageToRecords(page({ status, headers: { 'retry-after': v }, body: undefined })).outcome;
  assert.equal(at(429, '120').retryAfterMs, 120_000);
  assert.equal(at(503, ' 0 ').retryAfterMs, 0);
  assert.equal(at(503, new Date(T0 + 90_000).toUTCString()).retryAfterMs, 90_000);
  assert.equal(at(503, new Date(T0 - 90_000).toUTCString()).retryAfterMs, 0);
  assert.equal(at(429, 'soon').retryAfterMs, undefined);
  assert.equal(at(500, '120').retryAfterMs, undefined);
  assert.equal(at(429, '99999999').retryAfterMs, 30 * 24 * 3600 * 1000);
  assert.equal(parseRetryAfter(undefined, T0), undefined);
  assert.equal(parseRetryAfter('1.5', T0), undefined);
  checkSchema(pageToRecords(page({ status: 503, headers: { 'retry-after': '7' } })));
});

test('outcome: robots.txt requests hand back status and body, no links', () => {
  const ok = pageToRecords(
    page(
      { contentType: 'text/plain', headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nDisallow: /private\n<a href="/x">' },
      { reason: 'robots', url: 'http://example.com/robots.txt' },
    ),
  );
  checkSchema(ok);
  assert.equal(ok.outcome.result, 'ok');
  assert.equal(ok.outcome.reason, 'robots');
  assert.deepEqual(ok.outcome.robots, { status: 200, body: 'User-agent: *\nDisallow: /private\n<a href="/x">' });
  assert.equal(ok.links.length, 0);
  assert.equal(ok.outcome.outDegree, 0);

  const missing = pageToRecords(page({ status: 404, body: '<h1>Not found</h1>' }, { reason: 'robots', url: 'http://example.com/robots.txt' }));
  assert.equal(missing.outcome.result, 'gone');
  assert.deepEqual(missing.outcome.robots, { status: 404 });

  const failed = pageToRecords(
    page({ status: 0, body: undefined, error: { code: 'MEGURI_ERR_DNS', message: 'nxdomain' } }, { reason: 'robots', url: 'http://example.com/robots.txt' }),
  );
  checkSchema(failed);
  assert.equal(failed.outcome.result, 'error');
  assert.equal(failed.outcome.errorCode, 'MEGURI_ERR_DNS');
  assert.deepEqual(failed.outcome.robots, { status: 0, errorCode: 'MEGURI_ERR_DNS' });
});

test('outcome: not-html, not-modified, errors', () => {
  const pdf = pageToRecords(page({ contentType: 'application/pdf', headers: { etag: '"p"' }, body: '%PDF-1.4 <a href="/x">' }));
  assert.equal(pdf.outcome.result, 'not-html');
  assert.equal(pdf.outcome.md5, md5Hex('%PDF-1.4 <a href="/x">'));
  assert.deepEqual(pdf.outcome.validators, { etag: '"p"' });
  assert.equal(pdf.outcome.fingerprint, undefined);
  assert.equal(pdf.links.length, 0);

  const nm = pageToRecords(page({ status: 304, body: undefined, headers: { etag: '"v2"' } }));
  assert.equal(nm.outcome.result, 'not-modified');
  assert.deepEqual(nm.outcome.validators, { etag: '"v2"' });
  assert.equal(nm.outcome.md5, undefined);

  const err = pageToRecords(page({ status: 0, body: undefined, error: { code: 'MEGURI_ERR_TIMEOUT', message: 't' } }));
  assert.equal(err.outcome.errorCode, 'MEGURI_ERR_TIMEOUT');
  assert.equal(err.outcome.validators, undefined);

  // oversized validators are dropped rather than truncated
  const big = pageToRecords(page({ headers: { 'content-type': 'text/html', etag: 'x'.repeat(2000) } }));
  assert.equal(big.outcome.validators, undefined);
  checkSchema(big);
});

test('outcome: the article fixture end to end', async () => {
  const body = await article();
  const res = pageToRecords(
    page({ body, finalUrl: ARTICLE_URL }, { url: ARTICLE_URL, host: 'news.example.com', score: 0.5, depth: 1 }),
  );
  checkSchema(res);
  assert.equal(res.outcome.result, 'ok');
  assert.equal(res.outcome.title, 'The Quiet Harbour: notes on an old town & its tides');
  const followable = res.extracted!.links.filter((l) => !l.nofollow).length;
  assert.equal(res.outcome.outDegree, followable);
  assert.equal(res.links.length, followable);
  assert.ok(res.links.every((l) => Math.abs(l.contribution - 1.5 / followable) < 1e-12));
  assert.ok(!res.links.some((l) => l.url.startsWith('https://ads.example.net')));
  assert.ok(res.links.some((l) => l.url === 'https://en.wikipedia.org/wiki/Harbour' && !l.sameSite));
  assert.ok(res.links.some((l) => l.url === 'https://news.example.com/articles/tides' && l.sameSite));
  // the page's own ?page=2 continuation is dynamic, but found on a static page: 0 hops
  assert.ok(res.links.every((l) => l.cgiHops === 0 && l.depth === 2));
});

// ───────────────────────────── parse command ─────────────────────────────

async function runCommand(args: Parameters<typeof parseCommand>[0]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await parseCommand(args, (l) => lines.push(l));
  return { code, lines };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meguri-parse-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('parseCommand --json on the article fixture', async () => {
  const file = path.join(fixtures, 'article.html');
  const { code, lines } = await runCommand({ file, url: ARTICLE_URL, json: true });
  assert.equal(code, 0);
  assert.equal(lines.length, 1);
  const report = JSON.parse(lines[0]!) as ParseReport;
  assert.deepEqual(Object.keys(report), ['url', 'title', 'links', 'md5', 'fingerprint', 'canonical', 'noindex', 'lang']);
  assert.equal(report.url, ARTICLE_URL);
  assert.equal(report.title, 'The Quiet Harbour: notes on an old town & its tides');
  assert.equal(report.md5, md5Hex(await readFile(file)));
  assert.match(report.fingerprint, /^[0-9a-f]{16}$/);
  assert.equal(report.fingerprint, fpOf(await article()));
  assert.equal(report.canonical, ARTICLE_URL);
  assert.equal(report.noindex, false);
  assert.equal(report.lang, 'en');
  assert.equal(report.links.length, 54);
  for (const l of report.links) assert.deepEqual(Object.keys(l), ['url', 'nofollow']);
  const flag = (u: string) => report.links.find((l) => l.url === u)?.nofollow;
  assert.equal(flag('https://ads.example.net/click?id=8812'), true);
  assert.equal(flag('https://ads.example.net/click?id=9921'), true);
  assert.equal(flag('https://forum.example.org/t/quiet-harbour'), true);
  assert.equal(flag('https://news.example.com/articles/tides'), false);
  assert.equal(flag('https://news.example.com/feeds/all.rss'), false);
  assert.equal(flag('https://news.example.com/articles/quiet-harbour?page=2'), false);
  assert.equal(flag('https://player.example.com/embed/123'), false);
  assert.ok(report.links.every((l) => /^https?:\/\//.test(l.url)));
  assert.ok(!report.links.some((l) => l.url.includes('not-a-link') || l.url.endsWith('.css') || l.url.endsWith('.ico')));
});

test('parseCommand text mode prints a readable summary', async () => {
  const { code, lines } = await runCommand({ file: path.join(fixtures, 'article.html'), url: ARTICLE_URL, json: false });
  assert.equal(code, 0);
  const text = lines.join('\n');
  assert.match(text, /^Title: +The Quiet Harbour/m);
  assert.match(text, /^Links: +54 \(51 followed, 3 nofollow\)/m);
  assert.match(text, /^ {2}\[nofollow\] https:\/\/ads\.example\.net\/click\?id=8812$/m);
  assert.match(text, /^MD5: +[0-9a-f]{32}$/m);
});

test('parseCommand: meta robots nofollow flags every link; noindex reported', async () => {
  await withDir(async (dir) => {
    const file = path.join(dir, 'p.html');
    await writeFile(file, '<meta name="robots" content="noindex,nofollow"><a href="/a">a</a><a href="/b">b</a>');
    const { code, lines } = await runCommand({ file, url: 'http://example.com/', json: true });
    assert.equal(code, 0);
    const r = JSON.parse(lines[0]!) as ParseReport;
    assert.equal(r.noindex, true);
    assert.deepEqual(r.links, [
      { url: 'http://example.com/a', nofollow: true },
      { url: 'http://example.com/b', nofollow: true },
    ]);
    assert.equal(r.title, null);
  });
});

test('parseCommand decodes Shift_JIS (meta charset), BOM and Content-Type charset', async () => {
  const sjis = await runCommand({ file: path.join(fixtures, 'shift-jis.html'), url: 'http://minato.example.jp/asa', json: true });
  assert.equal(sjis.code, 0);
  const r = JSON.parse(sjis.lines[0]!) as ParseReport;
  assert.equal(r.title, '港の朝 ― 古い町の記録');
  assert.equal(r.lang, 'ja');
  assert.deepEqual(r.links, [
    { url: 'http://minato.example.jp/', nofollow: false },
    { url: 'http://minato.example.jp/tenki', nofollow: false },
    { url: 'http://minato.example.jp/kiji/sakana?id=12', nofollow: false },
    { url: 'http://minato.example.jp/kiji/toudai', nofollow: true },
  ]);

  // a UTF-8 BOM beats a contradicting meta charset
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<meta charset="windows-1252"><title>café</title>', 'utf8')]);
  assert.equal(decodeHtml(bom).text, '<meta charset="windows-1252"><title>café</title>');
  // UTF-16LE with BOM
  const u16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<title>Ünïcödé</title>', 'utf16le')]);
  assert.equal(decodeHtml(u16).text, '<title>Ünïcödé</title>');
  // no BOM, no meta: UTF-8 by default
  assert.equal(decodeHtml(Buffer.from('<title>naïve</title>', 'utf8')).text, '<title>naïve</title>');
  // a transport charset applies when there is no BOM
  const latin = iconv.encode('<title>déjà vu</title>', 'latin1');
  assert.equal(decodeHtml(latin, 'text/html; charset=ISO-8859-1').text, '<title>déjà vu</title>');

  await withDir(async (dir) => {
    const file = path.join(dir, 'bom.html');
    await writeFile(file, bom);
    const out = await runCommand({ file, url: 'http://example.com/', json: true });
    assert.equal((JSON.parse(out.lines[0]!) as ParseReport).title, 'café');
  });
});

test('parseCommand: bad URL → 2, unreadable file → 1', async () => {
  const bad = await runCommand({ file: path.join(fixtures, 'article.html'), url: 'ftp://example.com/', json: true });
  assert.equal(bad.code, 2);
  assert.match(bad.lines[0]!, /^error: /);
  const rel = await runCommand({ file: path.join(fixtures, 'article.html'), url: '/relative', json: false });
  assert.equal(rel.code, 2);
  const missing = await runCommand({ file: path.join(fixtures, 'does-not-exist.html'), url: 'http://example.com/', json: true });
  assert.equal(missing.code, 1);
  assert.match(missing.lines[0]!, /^error: cannot read/);
});

test('outcome: a 3xx sends its target as a redirect link at the same depth, with the chain so far', () => {
  const res = pageToRecords(
    page(
      { status: 301, body: undefined, contentType: undefined, headers: { location: 'HTTP://B.Example.org:80/x#f' }, location: 'http://b.example.org/x', redirects: [{ url: 'http://example.com/start', status: 302 }, { url: 'http://example.com/page', status: 301 }] },
      { url: 'http://example.com/page', reason: 'redirect', depth: 4, cgiHops: 2, score: 2.5, redirects: [{ url: 'http://example.com/start', status: 302 }] },
    ),
  );
  checkSchema(res);
  assert.equal(res.outcome.result, 'redirect');
  assert.equal(res.outcome.location, 'http://b.example.org/x');
  assert.equal(res.outcome.outDegree, 1);
  assert.equal(res.links.length, 1);
  const link = res.links[0]!;
  assert.equal(link.url, 'http://b.example.org/x');
  assert.equal(link.source, 'http://example.com/page');
  assert.equal(link.depth, 4, 'a redirect does not add depth');
  assert.equal(link.cgiHops, 2);
  assert.equal(link.contribution, 3.5, 'the whole score goes to the one target');
  assert.equal(link.sameSite, false);
  assert.deepEqual(link.redirect, [
    { url: 'http://example.com/start', status: 302 },
    { url: 'http://example.com/page', status: 301 },
  ]);
});

test('outcome: a redirect back onto its own chain, or one that ended with an error, sends no link', () => {
  const loop = pageToRecords(
    page(
      { status: 302, body: undefined, location: 'http://example.com/start', redirects: [{ url: 'http://example.com/start', status: 302 }, { url: 'http://example.com/page', status: 302 }] },
      { url: 'http://example.com/page', reason: 'redirect', redirects: [{ url: 'http://example.com/start', status: 302 }] },
    ),
  );
  checkSchema(loop);
  assert.equal(loop.outcome.result, 'redirect');
  assert.equal(loop.links.length, 0);

  const limit = pageToRecords(
    page({ status: 302, body: undefined, redirects: [{ url: 'http://example.com/page', status: 302 }], error: { code: 'MEGURI_ERR_REDIRECT_LIMIT', message: 'more than 5 redirects' } }, { url: 'http://example.com/page' }),
  );
  checkSchema(limit);
  assert.equal(limit.outcome.result, 'error');
  assert.equal(limit.outcome.errorCode, 'MEGURI_ERR_REDIRECT_LIMIT');
  assert.equal(limit.links.length, 0);

  // A 304-less 3xx without Location (e.g. 300 Multiple Choices) is a plain redirect outcome.
  const bare = pageToRecords(page({ status: 300, body: undefined }));
  assert.equal(bare.outcome.result, 'redirect');
  assert.equal(bare.links.length, 0);
});

test('outcome: an address request gives result address with the IP, or an error', () => {
  const ok = pageToRecords(page({ status: 0, body: undefined, contentType: undefined, headers: {}, serverIp: '10.0.0.7' }, { reason: 'address', url: 'http://example.com/robots.txt' }));
  checkSchema(ok);
  assert.equal(ok.outcome.result, 'address');
  assert.equal(ok.outcome.serverIp, '10.0.0.7');
  assert.equal(ok.links.length, 0);
  const failed = pageToRecords(page({ status: 0, body: undefined, headers: {}, error: { code: 'MEGURI_ERR_DNS', message: 'no such name' } }, { reason: 'address', url: 'http://example.com/robots.txt' }));
  assert.equal(failed.outcome.result, 'error');
  assert.equal(failed.outcome.errorCode, 'MEGURI_ERR_DNS');
});
