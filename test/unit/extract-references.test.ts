import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractPage, extractPageDecoding } from '../../services/parser/extract.ts';

const PAGE = 'http://a.test/dir/page.html';

test('character references in text, titles, anchors and attribute values are decoded as the HTML spec says', () => {
  const html = `<html lang="en&#45;GB"><head><title>Tom &amp; Jerry &copy 2026</title>
    <meta name="robots" content="no&#105;ndex">
    <meta http-equiv="refresh" content="0; url=/next?a=1&amp;b=2">
    <link rel="alternate" type="application/rss+xml" href="/feed?x=1&amp;y=2"></head>
    <body><p>AT&amp;T &lt;b&gt; &#x1F600; &#128; &notit; &ampx; & &# &bogus;</p>
    <a href="/q?a=1&amp;b=2">one &amp; two</a>
    <a href="/r?a=1&copy=2">legacy reference before '=' stays as written</a>
    <a href="/s?a=1&copy;=2">with its semicolon it decodes</a>
    <img alt="x &gt; y"><script>if (a &amp;&amp; b) {}</script></body></html>`;
  const page = extractPage(html, PAGE);
  assert.equal(page.title, 'Tom & Jerry © 2026');
  assert.equal(page.lang, 'en-GB');
  assert.equal(page.noindex, true);
  const urls = page.links.map((l) => l.url);
  assert.ok(urls.includes('http://a.test/next?a=1&b=2'), 'meta refresh');
  assert.ok(urls.includes('http://a.test/feed?x=1&y=2'), 'feed link');
  assert.ok(urls.includes('http://a.test/q?a=1&b=2'));
  assert.ok(urls.includes('http://a.test/r?a=1&copy=2'));
  assert.ok(urls.includes('http://a.test/s?a=1%C2%A9=2'));
  assert.equal(page.links.find((l) => l.url === 'http://a.test/q?a=1&b=2')?.anchor, 'one & two');
  // In text a legacy reference decodes even when a letter follows (&ampx; → &x;); not in attributes.
  assert.match(page.text, /AT&T <b> 😀 € ¬it; &x; & &# &bogus;/);
  assert.doesNotMatch(page.text, /&&/, 'script text is not page text');
});

test('decoding after the tokenizer gives what decoding in it gives, over 600 generated pages', () => {
  const refs = ['&amp;', '&lt;', '&gt;', '&nbsp;', '&copy', '&copy;', '&#65;', '&#x41;', '&#x;', '&#;', '&bogus;', '&amp', '&notit;', '&noti', '&ampx', '&', '&#', '&#x1F600;', '&#0;', '&#128;', '&#xD800;', '&quot;', '&apos;', '&Aacute;', '&aacute', '&=', '&copy=', '&copy1'];
  const words = ['alpha', 'beta', 'AT', 'T', 'x', '=', '?', '1', ' ', '  ', '\n'];
  const tags = ['p', 'div', 'span', 'b', 'nav', 'footer', 'li', 'h1', 'td'];
  let seed = 29;
  const pick = <T>(xs: readonly T[]): T => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return xs[(seed >>> 8) % xs.length]!;
  };
  const text = (n: number): string => Array.from({ length: n }, () => (pick([0, 1]) ? pick(refs) : pick(words))).join('');
  const value = (): string => text(3).replaceAll('"', '');
  for (let round = 0; round < 600; round++) {
    const parts: string[] = [`<html lang="${value()}"><head><title>${text(4)}</title>`];
    if (round % 3 === 0) parts.push(`<meta name="robots" content="${pick(['none', 'no&#105;ndex', 'nofollow&#44;noindex', 'all'])}">`);
    if (round % 5 === 0) parts.push(`<meta http-equiv="refresh" content="0; url=/m?${value()}">`);
    if (round % 4 === 0) parts.push(`<link rel="${pick(['canonical', 'alternate', 'next', 'ca&#110;onical'])}" type="application/rss+xml" href="/l?${value()}">`);
    parts.push('</head><body>');
    for (let i = 0; i < 12; i++) {
      const tag = pick(tags);
      const attrs = pick(['', ` class="${pick(['menu', 'content', 'nav&#97;', 'side&amp;bar'])}"`, ` id="${value()}"`, ` role="${pick(['main', 'navigation', 'navig&#97;tion'])}"`, ' hidden']);
      parts.push(`<${tag}${attrs}>${text(5)}<a href="/p/${i}?${value()}"${pick(['', ' rel="nofollow"', ' rel="no&#102;ollow"'])}>${text(3)}<img alt="${value()}"></a>${text(4)}</${tag}>`);
      if (i % 5 === 0) parts.push(`<script>var s = "${text(2)}";</script><textarea>${text(3)}</textarea>`);
    }
    parts.push('</body></html>');
    const html = parts.join('');
    assert.deepEqual(extractPageDecoding(html, PAGE, {}, false), extractPageDecoding(html, PAGE, {}, true), `round ${round}: ${html}`);
  }
});
