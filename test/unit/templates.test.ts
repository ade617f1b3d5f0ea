/**
 * Trap bounds as pure functions: session/tracking parameters removed in URL normalisation, the URL
 * template key, queue rounds, the query-less form, and the per-site cap's site key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_STRIP_PARAMS, ParamFilter, normalizeUrl, paramFilter, stripUrlParams, urlResolver } from '../../services/common/url.ts';
import { MAX_ROUND, afterFirstFetch, afterNewUrl, decodeEntry, queryLessForm, templateId, templateKey, templateRound, trapEvidence, urlTemplate } from '../../services/scheduler/templates.ts';
import type { TemplateEntry, TrapRules } from '../../services/scheduler/templates.ts';
import { queueKey, queueKeyIsKnown, queueKeyRound, knownQueueKey } from '../../services/scheduler/state.ts';
import { politenessConfig, siteCapKey, underPageCap } from '../../services/scheduler/politeness/index.ts';
import { siteOf } from '../../services/common/url.ts';

const norm = (raw: string, names?: readonly string[]): string => {
  const r = normalizeUrl(raw, undefined, names === undefined ? {} : { stripParams: paramFilter(names) });
  assert.ok(r.ok, `${raw} normalises`);
  return r.url;
};

test('normalisation removes session and tracking parameters from the query and from path parameters', () => {
  const cases: [string, string][] = [
    ['http://a.test/page?sid=123', 'http://a.test/page'],
    ['http://a.test/page?id=7&SID=abc&x=1', 'http://a.test/page?id=7&x=1'],
    ['http://a.test/p?PHPSESSID=deadbeef', 'http://a.test/p'],
    ['http://a.test/p?sessionid=1&session_id=2', 'http://a.test/p'],
    ['http://a.test/p?ASPSESSIONIDQASDFGHJ=ABC&q=2', 'http://a.test/p?q=2'],
    ['http://a.test/p?utm_source=x&utm_medium=y&utm_campaign=z&keep=1', 'http://a.test/p?keep=1'],
    ['http://a.test/p?fbclid=1&gclid=2&msclkid=3&mc_eid=4&mc_cid=5', 'http://a.test/p'],
    ['http://a.test/cart.jsp;jsessionid=0A1B2C3D?item=5', 'http://a.test/cart.jsp?item=5'],
    ['http://a.test/dir;jsessionid=XYZ/page;v=2;JSESSIONID=Q', 'http://a.test/dir/page;v=2'],
    ['http://a.test/p?sid', 'http://a.test/p'],
    ['http://a.test/p?a=1&&sid=2', 'http://a.test/p?a=1&'],
    // names only: a value that looks like a session id is kept, as are look-alike names
    ['http://a.test/p?q=sid%3D1', 'http://a.test/p?q=sid%3D1'],
    ['http://a.test/p?sidebar=1&consider=2', 'http://a.test/p?sidebar=1&consider=2'],
    ['http://a.test/p?utm=1', 'http://a.test/p?utm=1'],
    // percent-encoded unreserved characters are decoded first, so the name still matches
    ['http://a.test/p?utm%5Fsource=1&b=2', 'http://a.test/p?b=2'],
  ];
  for (const [raw, want] of cases) assert.equal(norm(raw), want, raw);
});

test('the parameter list is configurable: a custom list, a prefix, or none', () => {
  assert.equal(norm('http://a.test/p?sid=1&ref=2', ['ref']), 'http://a.test/p?sid=1');
  assert.equal(norm('http://a.test/p?trk_a=1&trk_b=2&c=3', ['trk_*']), 'http://a.test/p?c=3');
  assert.equal(norm('http://a.test/p;jsessionid=1?sid=1', []), 'http://a.test/p;jsessionid=1?sid=1');
  assert.equal(paramFilter([]), ParamFilter.none);
  assert.deepEqual(paramFilter().names, DEFAULT_STRIP_PARAMS);
  for (const name of ['jsessionid', 'phpsessid', 'sid', 'sessionid', 'utm_*', 'fbclid', 'gclid']) assert.ok(DEFAULT_STRIP_PARAMS.includes(name), name);
});

test('stripUrlParams on a normalised URL equals normalising with the same list, and leaves other URLs untouched', () => {
  const filter = paramFilter(['sid', 'utm_*', 'jsessionid']);
  const urls = [
    'http://a.test/',
    'http://a.test/x/y.html',
    'http://a.test/x?sid=1',
    'http://a.test/x?a=1&utm_x=2&b=3',
    'http://a.test/x;jsessionid=5/y?sid=2&c',
    'http://a.test:8080/p;x=1?q=2',
  ];
  for (const url of urls) assert.equal(stripUrlParams(url, filter), norm(url, filter.names), url);
  const plain = 'http://a.test/static/page.html';
  assert.equal(stripUrlParams(plain, filter), plain);
  assert.equal(stripUrlParams('http://a.test/x?sid=1', ParamFilter.none), 'http://a.test/x?sid=1');
});

test('the link resolver strips the same parameters as normalizeUrl', () => {
  const resolve = urlResolver('http://a.test/dir/page.html?sid=9');
  const r = resolve('next.html?sid=10&n=2');
  assert.deepEqual(r, { ok: true, url: 'http://a.test/dir/next.html?n=2' });
  assert.deepEqual(resolve('/a;jsessionid=1'), { ok: true, url: 'http://a.test/a' });
});

test('URL templates: same path shape and parameter names, values and ids ignored', () => {
  const same: [string, string][] = [
    ['http://a.test/item?id=1', 'http://a.test/item?id=99999'],
    ['http://a.test/p/1.html', 'http://a.test/p/2345.html'],
    ['http://a.test/s/a8f3k2j9x0/page', 'http://a.test/s/zz91kd72mq/page'],
    ['http://a.test/s/0f8e2a9c4b7d6e1f/page', 'http://a.test/s/9a7b6c5d4e3f2a1b/page'],
    ['http://a.test/u/123e4567-e89b-12d3-a456-426614174000/', 'http://a.test/u/00000000-0000-4000-8000-000000000000/'],
    ['http://a.test/cal/2024/01/31/', 'http://a.test/cal/1999/12/01/'],
    ['http://a.test/search?b=2&a=1', 'http://a.test/search?a=7&b=8&a=9'],
    ['http://a.test/x;v=1', 'http://a.test/x;v=2'],
    ['http://a.test/t/abcdefghijklmnopqrstuvwxyz', 'http://a.test/t/zyxwvutsrqponmlkjihgfedcba'],
  ];
  for (const [a, b] of same) assert.equal(urlTemplate(a), urlTemplate(b), `${a} ~ ${b}`);
  const different: [string, string][] = [
    ['http://a.test/item?id=1', 'http://a.test/item?page=1'],
    ['http://a.test/item?id=1', 'http://a.test/item'],
    ['http://a.test/p/1.html', 'http://a.test/q/1.html'],
    ['http://a.test/p/1.html', 'http://a.test/p/1.php'],
    ['http://a.test/about', 'http://a.test/contact'],
    ['http://a.test/s/a8f3k2j9x0/page', 'http://a.test/s/a8f3k2j9x0/other'],
    ['http://a.test/blog/hello-world', 'http://a.test/blog/goodbye-world'],
    ['http://a.test/blog/archive', 'http://a.test/blog/articles'],
  ];
  for (const [a, b] of different) assert.notEqual(urlTemplate(a), urlTemplate(b), `${a} ≁ ${b}`);
  assert.equal(urlTemplate('http://a.test/p/12.html'), '/p/{id}.html');
  assert.equal(urlTemplate('http://a.test/p/page-12.html'), '/p/page-#.html');
  // a random hex token that happens to be all digits or all letters is still an id
  assert.equal(urlTemplate('http://a.test/s/902731884512/page'), urlTemplate('http://a.test/s/9a2b31c8d5e2/page'));
  assert.equal(urlTemplate('http://a.test/s/deadbeefcafe/page'), urlTemplate('http://a.test/s/9a2b31c8d5e2/page'));
  assert.equal(urlTemplate('http://a.test/s/a8f3k2j9x0/page?x=1&sid=2'), '/s/{id}/page?sid&x');
  assert.equal(urlTemplate('http://a.test/cart.jsp;jsessionid=ABC12345'), '/cart.jsp;jsessionid');
});

test('template keys are short, per host, and the same for URLs of one template', () => {
  const k1 = templateKey('a.test', 'http://a.test/p/1.html');
  assert.equal(k1, templateKey('a.test', 'http://a.test/p/2.html'));
  assert.notEqual(k1, templateKey('b.test', 'http://b.test/p/1.html'));
  assert.equal(templateId('/p/#.html').length, 16);
  const long = templateKey('a.test', 'http://a.test/' + 'seg/'.repeat(400) + 'x');
  assert.ok(long.length < 'a.test'.length + 20, 'a long template still has a short key');
});

test('template rounds: the first roundSize URLs in round 0, then rounds that double', () => {
  const rounds = Array.from({ length: 40 }, (_, n) => templateRound(n, 4));
  assert.deepEqual(rounds.slice(0, 4), [0, 0, 0, 0]);
  assert.deepEqual(rounds.slice(4, 8), [1, 1, 1, 1]);
  assert.deepEqual(rounds.slice(8, 16), Array(8).fill(2));
  assert.deepEqual(rounds.slice(16, 32), Array(16).fill(3));
  assert.equal(templateRound(1e12, 1), 40);
  assert.ok(templateRound(Number.MAX_VALUE, 1) <= MAX_ROUND);
});

test('queue keys: rounds sort after round 0 and before known URLs; the round survives re-keying', () => {
  const host = 'a.test';
  const keys = [
    knownQueueKey(host, 0.9, 1),
    queueKey(host, 0.1, 2, 2),
    queueKey(host, 5, 3, 1),
    queueKey(host, 0.01, 4),
    queueKey(host, 9, 5, 1),
    queueKey(host, 1, 6),
  ];
  assert.deepEqual(
    [...keys].sort(),
    [queueKey(host, 1, 6), queueKey(host, 0.01, 4), queueKey(host, 9, 5, 1), queueKey(host, 5, 3, 1), queueKey(host, 0.1, 2, 2), knownQueueKey(host, 0.9, 1)],
    'round 0 by score, then round 1 by score, then round 2, then known URLs',
  );
  assert.equal(queueKeyRound(host, queueKey(host, 3, 1, 7)), 7);
  assert.equal(queueKeyRound(host, queueKey(host, 3, 1)), 0);
  assert.ok(queueKeyIsKnown(host, knownQueueKey(host, 0.5, 1)));
  assert.ok(!queueKeyIsKnown(host, queueKey(host, 3, 1, 2)));
});

test('query-less form (Hoshino et al.)', () => {
  assert.equal(queryLessForm('http://a.test/search?q=1'), 'http://a.test/search');
  assert.equal(queryLessForm('http://a.test/search'), 'http://a.test/search');
});

test('per-site cap: distinct pages per host or per registrable domain', () => {
  const byHost = politenessConfig({ maxPagesPerSite: 3 });
  const byDomain = politenessConfig({ maxPagesPerSite: 3, siteCapScope: 'domain' });
  assert.equal(byHost.siteCapScope, 'host');
  assert.equal(siteCapKey('a.example.co.uk:8080', byHost, siteOf), 'a.example.co.uk:8080');
  assert.equal(siteCapKey('a.example.co.uk:8080', byDomain, siteOf), 'example.co.uk');
  assert.equal(siteCapKey('b.example.co.uk', byDomain, siteOf), 'example.co.uk');
  assert.equal(siteCapKey('127.0.0.1:80', byDomain, siteOf), '127.0.0.1');
  assert.ok(underPageCap(2, byHost));
  assert.ok(!underPageCap(3, byHost));
  assert.equal(politenessConfig().maxPagesPerSite, 1_000_000);
});

const near = (a: string, b: string): boolean => a === b;

/** Fetches `pages` pages of a template in turn, each adding `growth` new URLs of it once parsed (all admitted); the trap verdict after each. */
function judge(start: TemplateEntry, fingerprints: (i: number) => string, pages: number, growth: number, rules: TrapRules): { entry: TemplateEntry; verdicts: boolean[] } {
  let entry = start;
  const verdicts: boolean[] = [];
  for (let i = 0; i < pages; i++) {
    entry = afterFirstFetch(entry, fingerprints(i), rules, near);
    verdicts.push(entry.t === 1);
    for (let k = 0; k < growth; k++) entry = afterNewUrl(entry, entry.t !== 1, rules) ?? entry;
  }
  return { entry, verdicts };
}

test('a template whose pages carry the same text and keep producing URLs proves a trap after the probe; one of distinct pages does not', () => {
  const rules = { trapProbePages: 5, trapDuplicateShare: 0.8, trapNewUrls: 30 };
  // A trap: every page the same, each with 10 new URLs of the template (fresh ids).
  const same = judge({ n: 10 }, () => 'f00d', 6, 10, rules);
  assert.deepEqual(same.verdicts, [false, false, false, false, true, true], 'judged at the fifth page (40 new URLs by then)');
  assert.equal(same.entry.n, 10 + 40, 'ten known at the first fetch, 40 more admitted until the verdict');
  assert.equal(same.entry.g, 40, 'growth counts only the URLs found after the first fetch');
  const distinct = judge({ n: 40 }, (i) => `page${i}`, 20, 10, rules);
  assert.equal(distinct.entry.t, undefined, 'distinct pages never, however many URLs');
  assert.equal(distinct.entry.f, 20);
  assert.equal(distinct.entry.d, 0);
  // Four of five compared pages like the first read as duplicates (0.8); three do not.
  const mixed = (fps: string[]): boolean => judge({ n: 1 }, (i) => fps[i]!, fps.length, 10, rules).entry.t === 1;
  assert.ok(mixed(['a', 'b', 'a', 'a', 'a', 'a']));
  assert.ok(!mixed(['a', 'b', 'c', 'a', 'a', 'a']));
  assert.ok(!mixed(['a', 'a', 'a', 'a']), 'not judged before the probe');
  const never = afterFirstFetch({ n: 500, f: 100, d: 99, p: 'a', g: 499 }, 'a', { ...rules, trapProbePages: 0 }, near);
  assert.equal(never.t, undefined, 'trapProbePages 0 never judges');
});

test('a small site of alike pages is no trap: all its URLs were known before its first page was fetched', () => {
  const rules = { trapProbePages: 10, trapDuplicateShare: 0.8, trapNewUrls: 100 };
  // 12 articles sharing a long body, all linked from the home page: 12 near-duplicate fetches, no growth.
  const articles = judge({ n: 12 }, () => 'same-body', 12, 0, rules);
  assert.deepEqual(articles.verdicts, Array(12).fill(false));
  assert.deepEqual(trapEvidence(articles.entry, rules), { fetched: 12, duplicateShare: 1, newUrls: 0, trap: false });
  // Linked one to the next instead (each article its successor): 11 new URLs in all, far below 100.
  assert.equal(judge({ n: 1 }, () => 'same-body', 12, 1, rules).entry.t, undefined);
  // 300 product variants of one page, listed on a category page first: duplicates, but no growth.
  assert.equal(judge({ n: 300 }, () => 'variant', 300, 0, rules).entry.t, undefined);
});

test('the growth half can come after the probe: a slowly growing duplicate template is judged once it has produced trapNewUrls', () => {
  const rules = { trapProbePages: 10, trapDuplicateShare: 0.8, trapNewUrls: 100 };
  // Each page adds 4 new URLs of the template: 100 new ones after the 26th page.
  const slow = judge({ n: 3 }, () => 'session page', 40, 4, rules);
  assert.equal(slow.verdicts.indexOf(true), 25, `judged at page 26: ${slow.verdicts.join(' ')}`);
  const evidence = trapEvidence({ n: 103, g: 100, f: 26, d: 25, p: 'x' }, rules);
  assert.deepEqual(evidence, { fetched: 26, duplicateShare: 1, newUrls: 100, trap: true });
  assert.equal(trapEvidence({ n: 102, g: 99, f: 26, d: 25, p: 'x' }, rules).trap, false, '99 new URLs are not enough');
  // An entry stored before growth was counted (no g) starts counting at its next fetch.
  const older = afterFirstFetch({ n: 500, f: 20, d: 19, p: 'x' }, 'x', rules, near);
  assert.equal(older.g, 0);
  assert.equal(older.t, undefined);
  // A verdict, once given, is kept.
  const judged: TemplateEntry = { n: 5, t: 1 };
  assert.equal(afterFirstFetch(judged, 'y', rules, near), judged);
});

test('URLs over the budget still count as growth, up to trapNewUrls; before the first fetch or after a verdict nothing is written', () => {
  const rules = { trapNewUrls: 3 };
  assert.deepEqual(afterNewUrl({ n: 2 }, true, rules), { n: 3 }, 'before the first fetch: only counted');
  assert.equal(afterNewUrl({ n: 2 }, false, rules), undefined, 'a refusal before the first fetch writes nothing');
  let entry: TemplateEntry = { n: 40, f: 1, d: 0, p: 'a', g: 0 };
  const writes: (TemplateEntry | undefined)[] = [];
  for (let i = 0; i < 5; i++) {
    const next = afterNewUrl(entry, false, rules);
    writes.push(next);
    entry = next ?? entry;
  }
  assert.deepEqual(writes.map((w) => w?.g), [1, 2, 3, undefined, undefined], 'a refused URL is growth until trapNewUrls, then writes stop');
  assert.equal(entry.n, 40, 'refused URLs are not admitted');
  assert.equal(afterNewUrl({ n: 5, g: 1, t: 1 }, false, rules), undefined, 'a trap counts nothing more');
  assert.deepEqual(afterNewUrl({ n: 5, g: 1, t: 1 }, true, rules), { n: 6, g: 1, t: 1 }, "admitted under a host rule's judgeTraps: false");
});

test('template entries: older plain counts still read, junk reads as empty', () => {
  assert.deepEqual(decodeEntry(undefined), { n: 0 });
  assert.deepEqual(decodeEntry('17'), { n: 17 });
  assert.deepEqual(decodeEntry('{"n":3,"f":1,"d":0,"p":"ab"}'), { n: 3, f: 1, d: 0, p: 'ab' });
  assert.deepEqual(decodeEntry('{oops'), { n: 0 });
});
