import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_URL_LENGTH,
  hostKey,
  hostKeyAfter,
  hostOf,
  isDynamicUrl,
  normalizePercentEncoding,
  normalizeUrl,
  siteOf,
  urlResolver,
  type RejectReason,
} from '../../services/common/url.ts';

type Case = [raw: string, base: string | undefined, expected: string | { reject: RejectReason }];

const BASE = 'http://example.com/dir/page.html?x=1';

const cases: Case[] = [
  // case
  ['HTTP://EXAMPLE.COM/', undefined, 'http://example.com/'],
  ['http://Example.Com/Path/To', undefined, 'http://example.com/Path/To'],
  ['HtTpS://WWW.Example.org', undefined, 'https://www.example.org/'],
  // ports
  ['http://example.com:80/a', undefined, 'http://example.com/a'],
  ['https://example.com:443/a', undefined, 'https://example.com/a'],
  ['http://example.com:443/a', undefined, 'http://example.com:443/a'],
  ['https://example.com:8443/', undefined, 'https://example.com:8443/'],
  ['http://example.com:/a', undefined, 'http://example.com/a'],
  ['http://example.com:99999/', undefined, { reject: 'invalid' }],
  // fragments, empty query, empty path
  ['http://example.com/a#section', undefined, 'http://example.com/a'],
  ['http://example.com/a?b=1#c', undefined, 'http://example.com/a?b=1'],
  ['http://example.com/a?', undefined, 'http://example.com/a'],
  ['http://example.com', undefined, 'http://example.com/'],
  ['http://example.com?q', undefined, 'http://example.com/?q'],
  // dot segments
  ['http://example.com/a/./b/../c', undefined, 'http://example.com/a/c'],
  ['http://example.com/../../a', undefined, 'http://example.com/a'],
  ['http://example.com/a/%2e%2E/b', undefined, 'http://example.com/b'],
  ['http://example.com/a/b/..', undefined, 'http://example.com/a/'],
  // percent-encoding
  ['http://example.com/%7euser', undefined, 'http://example.com/~user'],
  ['http://example.com/%41%62%2D%5f%2e', undefined, 'http://example.com/Ab-_.'],
  ['http://example.com/a%2fb%3Fc%3d', undefined, 'http://example.com/a%2Fb%3Fc%3D'],
  ['http://example.com/?q=%7e%26%3d%2b', undefined, 'http://example.com/?q=~%26%3D%2B'],
  ['http://example.com/a b', undefined, 'http://example.com/a%20b'],
  ['http://example.com/caf\u00e9', undefined, 'http://example.com/caf%C3%A9'],
  ['http://example.com/%c3%a9', undefined, 'http://example.com/%C3%A9'],
  ['http://example.com/100%', undefined, 'http://example.com/100%'],
  ['http://example.com/%zz%4', undefined, 'http://example.com/%zz%4'],
  // IDN and hosts
  ['http://B\u00fccher.example/', undefined, 'http://xn--bcher-kva.example/'],
  ['http://\u4f8b\u3048.jp/', undefined, 'http://xn--r8jz45g.jp/'],
  ['http://example.com./a', undefined, 'http://example.com/a'],
  ['http://user:secret@example.com/a', undefined, 'http://example.com/a'],
  ['http://0x7f.0.0.1/', undefined, 'http://127.0.0.1/'],
  ['http://[::1]:8080/x', undefined, 'http://[::1]:8080/x'],
  ['http://[::1', undefined, { reject: 'invalid' }],
  ['http://exa mple.com/', undefined, { reject: 'invalid' }],
  ['http://', undefined, { reject: 'invalid' }],
  // Names DNS cannot carry: a label over 63 octets, a name over 253.
  [`http://a${'b'.repeat(63)}.example/`, undefined, { reject: 'invalid' }],
  [`http://${'abcdefghi.'.repeat(26)}example/`, undefined, { reject: 'invalid' }],
  [`http://${'b'.repeat(63)}.example/`, undefined, `http://${'b'.repeat(63)}.example/`],
  ['http://a<b.com/', undefined, { reject: 'invalid' }],
  // schemes
  ['javascript:alert(1)', BASE, { reject: 'scheme' }],
  ['JavaScript:void(0)', BASE, { reject: 'scheme' }],
  ['mailto:someone@example.com', BASE, { reject: 'scheme' }],
  ['tel:+441234', BASE, { reject: 'scheme' }],
  ['data:text/html,hi', BASE, { reject: 'scheme' }],
  ['ftp://example.com/file', undefined, { reject: 'scheme' }],
  ['', BASE, { reject: 'empty' }],
  ['  \n\t ', BASE, { reject: 'empty' }],
  // relative and protocol-relative
  ['other.html', BASE, 'http://example.com/dir/other.html'],
  ['../up.html', BASE, 'http://example.com/up.html'],
  ['/abs', BASE, 'http://example.com/abs'],
  ['?y=2', BASE, 'http://example.com/dir/page.html?y=2'],
  ['#frag', BASE, 'http://example.com/dir/page.html?x=1'],
  ['//cdn.example.net/lib.js', BASE, 'http://cdn.example.net/lib.js'],
  ['//cdn.example.net/lib.js', 'https://example.com/', 'https://cdn.example.net/lib.js'],
  ['  /spaced  ', BASE, 'http://example.com/spaced'],
  ['/a\n/b\t/c', BASE, 'http://example.com/a/b/c'],
  ['relative/only', undefined, { reject: 'invalid' }],
  // base href style bases
  ['x', 'http://example.com/base/', 'http://example.com/base/x'],
  ['x', 'http://example.com/base', 'http://example.com/x'],
  // length
  ['http://example.com/' + 'a'.repeat(MAX_URL_LENGTH - 19), undefined, 'http://example.com/' + 'a'.repeat(MAX_URL_LENGTH - 19)],
  ['http://example.com/' + 'a'.repeat(MAX_URL_LENGTH - 18), undefined, { reject: 'too-long' }],
  ['http://example.com/' + 'a'.repeat(1_000_000), undefined, { reject: 'too-long' }],
];

test('normalizeUrl table', () => {
  assert.ok(cases.length >= 30);
  for (const [raw, base, expected] of cases) {
    const got = normalizeUrl(raw, base);
    const label = `${JSON.stringify(raw.length > 80 ? raw.slice(0, 80) + '…' : raw)} base=${base ?? '-'}`;
    if (typeof expected === 'string') {
      assert.deepEqual(got, { ok: true, url: expected }, label);
      // normalising twice changes nothing
      assert.deepEqual(normalizeUrl(expected), { ok: true, url: expected }, `idempotent: ${label}`);
    } else {
      assert.deepEqual(got, { ok: false, reason: expected.reject }, label);
    }
  }
});

test('normalizeUrl: server aliases (Map or record) rewrite the host name, port kept', () => {
  const rec = { 'www.example.com': 'example.com' };
  assert.deepEqual(normalizeUrl('http://WWW.example.com/a', undefined, { aliases: rec }), {
    ok: true,
    url: 'http://example.com/a',
  });
  const map = new Map([['www.example.com', 'example.com']]);
  assert.deepEqual(normalizeUrl('https://www.example.com:8443/a', undefined, { aliases: map }), {
    ok: true,
    url: 'https://example.com:8443/a',
  });
  // inherited object keys are not aliases
  assert.deepEqual(normalizeUrl('http://constructor/', undefined, { aliases: rec }), { ok: true, url: 'http://constructor/' });
});

test('normalizeUrl: custom maxLength and never throws on junk', () => {
  assert.deepEqual(normalizeUrl('http://example.com/abcdef', undefined, { maxLength: 20 }), { ok: false, reason: 'too-long' });
  for (const junk of ['http://%', 'http://[', '::::', '\u0000', 'http://\uFFFF/', '%%%', 'http:////']) {
    assert.doesNotThrow(() => normalizeUrl(junk, BASE));
  }
  assert.equal(normalizeUrl('x', 'not a base').ok, false);
});

test('normalizePercentEncoding', () => {
  assert.equal(normalizePercentEncoding('/plain'), '/plain');
  assert.equal(normalizePercentEncoding('%7e%7E%2f%2F%20'), '~~%2F%2F%20');
  assert.equal(normalizePercentEncoding('%'), '%');
  assert.equal(normalizePercentEncoding('a%4'), 'a%4');
  assert.equal(normalizePercentEncoding('%41%'), 'A%');
});

test('hostOf', () => {
  assert.equal(hostOf('http://example.com/a'), 'example.com');
  assert.equal(hostOf('https://example.com:8443/a?b'), 'example.com:8443');
  assert.equal(hostOf('http://h3.sim.test'), 'h3.sim.test');
  assert.equal(hostOf('HTTP://Example.COM/'), 'example.com');
  assert.equal(hostOf('http://[::1]:8080/'), '[::1]:8080');
  assert.equal(hostOf('http://u:p@example.com/'), 'example.com');
  assert.equal(hostOf('not a url'), '');
});

test('hostOf answers like the WHATWG parser for every port form', () => {
  const urls = [
    'http://h0.sim.test:45465/p/1.html',
    'http://a.test:80/x',
    'https://a.test:443',
    'https://a.test:80/',
    'http://a.test:080/',
    'http://a.test:/',
    'http://a.test:65535?q',
    'http://a.test:65536/',
    'http://127.0.0.1:8080/x',
    'http://9:8080/',
    'http://0x7f.1:81/',
    'http://a.0:81/',
    'http://A.test:8080/',
    'http://u@a.test:81/',
    'http://a.test:8a/',
    'ftp://a.test:21/',
    'ws://a.test:80/',
    'http://a.test:1:2/',
    'http://]:8/',
    'http://a.0x7f:81/',
    'http://a.0x:81/',
    'http://xn--zz.test:81/',
    'http://xn--nxasmq6b.test:81/',
  ];
  for (const url of urls) {
    let expected = '';
    try {
      expected = new URL(url).host;
    } catch {
      // not a URL: hostOf answers ''
    }
    assert.equal(hostOf(url), expected, url);
  }
});

test('hostKeyAfter answers like hostKey, taking the previous host when the authority repeats', () => {
  const schemes = ['http://', 'https://', 'HTTP://', 'ftp://'];
  const authorities = ['a.test', 'a.test:80', 'a.test:443', 'a.test:8080', 'A.Test:8080', 'u:p@a.test', 'a.test\\x', '[::1]:81', 'a.test:', 'b.test', 'a.tes', 'a.test.', '%41.test', 'xn--nxasmq6b.test', 'a.test:8080@b.test'];
  const tails = ['', '/', '/p/1.html', '?q=1', '#f', '\\p', ' ', '\t/', ':81/', '.x/', '@b.test/'];
  const urls: string[] = [];
  for (const scheme of schemes) for (const authority of authorities) for (const tail of tails) urls.push(scheme + authority + tail);
  const keyOf = (url: string): string | Error => {
    try {
      return hostKey(url);
    } catch (err) {
      return err as Error;
    }
  };
  let shared = 0;
  for (const prevUrl of urls) {
    const prevHost = keyOf(prevUrl);
    if (prevHost instanceof Error) continue;
    for (const url of urls) {
      const expected = keyOf(url);
      let actual: string | Error;
      try {
        actual = hostKeyAfter(url, prevUrl, prevHost);
      } catch (err) {
        actual = err as Error;
      }
      if (expected instanceof Error) assert.ok(actual instanceof Error, `${url} after ${prevUrl}: ${String(actual)}`);
      else assert.equal(actual, expected, `${url} after ${prevUrl}`);
      if (actual === prevHost) shared++;
    }
  }
  // The repeated authorities really take the previous string.
  assert.ok(shared > 1000, `shared ${shared}`);
  assert.equal(hostKeyAfter('http://h1.sim.test:81/b', 'http://h1.sim.test:81/a', 'h1.sim.test:81'), 'h1.sim.test:81');
  // No previous link (the first of a batch): parsed.
  assert.equal(hostKeyAfter('http://h1.sim.test:81/b', '', ''), 'h1.sim.test:81');
  assert.throws(() => hostKeyAfter('not a url', '', ''), TypeError);
});

test('siteOf: registrable domain on known suffixes, full host otherwise', () => {
  assert.equal(siteOf('example.com'), 'example.com');
  assert.equal(siteOf('www.example.com'), 'example.com');
  assert.equal(siteOf('a.b.example.co.uk'), 'example.co.uk');
  assert.equal(siteOf('news.example.com:8080'), 'example.com');
  assert.equal(siteOf('alice.github.io'), 'alice.github.io');
  // simulated web: every host is its own site
  assert.equal(siteOf('h1.sim.test'), 'h1.sim.test');
  assert.notEqual(siteOf('h1.sim.test'), siteOf('h2.sim.test'));
  assert.equal(siteOf('127.0.0.1:3000'), '127.0.0.1');
  assert.equal(siteOf('[::1]:80'), '[::1]');
  assert.equal(siteOf('localhost'), 'localhost');
});

test('isDynamicUrl', () => {
  const dynamic = [
    'http://example.com/?a=1',
    'http://example.com/list?page=2',
    'http://example.com/cgi-bin/search',
    'http://example.com/CGI-BIN/x.html',
    'http://example.com/run.cgi',
    'http://example.com/index.php',
    'http://example.com/a/b.PHP',
    'http://example.com/script.pl',
    'http://example.com/page.asp',
    'http://example.com/page.aspx',
    'http://example.com/view.jsp',
    'http://example.com/go.do',
    'http://example.com/a;jsessionid=ABC',
  ];
  const statik = [
    'http://example.com/',
    'http://example.com/a/b.html',
    'http://example.com/php/intro.html',
    'http://example.com/cgi-bin-docs/',
    'http://example.com/file.phpx',
    'http://example.com/a.b/c',
    'http://example.com/x?',
    'not a url',
  ];
  for (const u of dynamic) assert.equal(isDynamicUrl(u), true, u);
  for (const u of statik) assert.equal(isDynamicUrl(u), false, u);
});

test('urlResolver gives the same results as normalizeUrl', () => {
  const bases = [BASE, 'https://Example.com:443/a/b/', 'http://www.example.com/x?q#f', 'http://[::1]:8080/', 'not a base'];
  const raws = [
    '/simple/path',
    '/a/./b',
    '/a/../b',
    '/.hidden',
    '//cdn.example.org/x',
    '/with space',
    '/q?x=1',
    '/frag#x',
    '/%7euser',
    'relative',
    'rel/ative.html',
    'rel//x',
    'a..b/c',
    'a/.b',
    'a/b/..',
    '.dot',
    'x:y',
    '~u/x',
    '-a',
    '../up',
    '',
    '#top',
    'https://other.example/',
    'mailto:a@b',
    '/' + 'a'.repeat(3000),
    '/ok-_.~/',
  ];
  const opts = { aliases: { 'www.example.com': 'example.com' } };
  for (const base of bases) {
    for (const o of [undefined, opts]) {
      const resolve = urlResolver(base, o);
      for (const raw of raws) assert.deepEqual(resolve(raw), normalizeUrl(raw, base, o), `${raw} against ${base}`);
    }
  }
});

test('urlResolver agrees with normalizeUrl on thousands of generated links', () => {
  const schemes = ['http://', 'https://', 'HTTP://', '//', 'ftp://', 'http:/', 'http:\\\\', ''];
  const hosts = ['a.test', 'h5.sim.test', 'A.test', 'a.test.', 'a..test', '1.2.3.4', '1.2.3', '01.2.3.4', 'a.0x7f', '0x7f', 'a.7f', 'xn--nxasmq6b.test', 'xn--zz.test', 'a_b.test', '-a-.test', 'user@a.test', 'u:p@a.test', '[::1]', 'a%41.test', 'a b.test', 'é.test', `${'l'.repeat(63)}.test`, `${'l'.repeat(64)}.test`, `${'abcdefghi.'.repeat(25)}test`, `${'abcdefghi.'.repeat(26)}test`, ''];
  const ports = ['', ':8080', ':80', ':443', ':08080', ':65535', ':65536', ':', ':x'];
  const paths = ['/', '/p/1.html', '/p//x', '/a/./b', '/a/../b', '/.well-known/x', '/x/.', '/a%2e/b', '/%7euser', '/q?x=1', '/q?', '/m;jsessionid=1', '/with space', '/tab\there', '/u/ü', '/A-Z_~.x', '', '\\back'];
  const tails = ['', '#', '#frag', '#f r a g', '  ', '\n'];
  const bases = ['http://h1.sim.test:8080/dir/page.html', 'https://example.com/a?b=1', 'http://example.com/', 'http://example.com/d/e/?q=/x/y', 'https://Example.COM:443/a/b;p=1/c'];
  let seed = 17;
  const pick = <T>(xs: readonly T[]): T => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return xs[(seed >>> 8) % xs.length]!;
  };
  for (const base of bases) {
    const resolve = urlResolver(base);
    for (let i = 0; i < 3000; i++) {
      // every 50th a path alone, every 7th one relative to the base's directory (no leading '/')
      const raw = i % 50 === 0 ? pick(tails) + pick(paths) : i % 7 === 0 ? pick(hosts) + pick(paths) + pick(tails) : pick(schemes) + pick(hosts) + pick(ports) + pick(paths) + pick(tails);
      assert.deepEqual(resolve(raw), normalizeUrl(raw, base), `${JSON.stringify(raw)} against ${base}`);
    }
  }
});
