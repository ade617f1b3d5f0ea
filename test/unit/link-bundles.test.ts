import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SCHEMA_VERSION, linksRecord, MAX_BUNDLE_TARGETS } from '../../schemas/index.ts';
import type { DiscoveredLink } from '../../schemas/index.ts';
import { linksOf, packLinks, unpackLinks } from '../../services/common/link-bundles.ts';

const base = { v: SCHEMA_VERSION, type: 'link', source: 'http://a.test/p', depth: 2, cgiHops: 0, contribution: 0.25, foundAt: 1000 } as const;
const to = (url: string, extra: Partial<DiscoveredLink> = {}): DiscoveredLink => ({ ...base, url, sameSite: url.startsWith('http://a.test'), ...extra });

test('links are packed per target host and unpack to exactly the links given', () => {
  const links = [to('http://a.test/1', { anchor: 'one' }), to('http://b.test/x'), to('http://a.test/2'), to('http://c.test:8080/'), to('http://a.test/3', { kind: 'feed' }), to('http://c.test:8080/y')];
  const packed = packLinks(links);
  assert.deepEqual(packed.map((r) => [r.key, r.value.type]), [['a.test', 'links'], ['b.test', 'link'], ['c.test:8080', 'links']]);
  for (const r of packed) assert.equal(linksRecord.safeParse(r.value).success, true);
  const back = packed.flatMap((r) => linksOf(r.value));
  const byUrl = (a: { url: string }, b: { url: string }): number => a.url.localeCompare(b.url);
  assert.deepEqual([...back].sort(byUrl), [...links].sort(byUrl));
  // Within a host the page order holds.
  assert.deepEqual(back.filter((l) => l.url.startsWith('http://a.test')).map((l) => l.url), ['http://a.test/1', 'http://a.test/2', 'http://a.test/3']);
});

test('per-target fields survive; links differing in shared fields or carrying a redirect are not mixed', () => {
  const links = [
    to('http://a.test/s1', { via: 'sitemap', contribution: 0.1, lastmod: 5, priority: 0.8, changefreq: 'daily' }),
    to('http://a.test/s2', { via: 'sitemap', contribution: 0.3 }),
    to('http://a.test/s3', { via: 'sitemap', contribution: 0.1 }),
    to('http://a.test/deep', { depth: 3 }),
    to('http://a.test/r', { redirect: [{ url: 'http://a.test/old', status: 301 }] }),
    to('http://a.test/deeper', { depth: 3, startSite: 'a.test' }),
  ];
  const packed = packLinks(links);
  assert.equal(packed.length, 4);
  const bundle = packed.find((r) => r.value.type === 'links')!.value;
  assert.equal(bundle.type, 'links');
  if (bundle.type !== 'links') return;
  assert.equal(bundle.via, 'sitemap');
  assert.deepEqual(bundle.targets[1], { url: 'http://a.test/s2', contribution: 0.3 });
  assert.deepEqual(unpackLinks(bundle), links.slice(0, 3));
  assert.ok(packed.some((r) => r.value.type === 'link' && r.value.redirect !== undefined));
});

test('large groups are cut into bundles of at most MAX_BUNDLE_TARGETS targets', () => {
  const links = Array.from({ length: MAX_BUNDLE_TARGETS * 2 + 5 }, (_, i) => to(`http://a.test/${i}`));
  const packed = packLinks(links);
  assert.deepEqual(packed.map((r) => (r.value.type === 'links' ? r.value.targets.length : 1)), [MAX_BUNDLE_TARGETS, MAX_BUNDLE_TARGETS, 5]);
  assert.deepEqual(packed.flatMap((r) => linksOf(r.value)), links);
  for (const r of packed) assert.equal(linksRecord.safeParse(r.value).success, true);
});

test('a bundle with no targets, or a target that is not an http(s) URL, is not a valid record', () => {
  const bundle = { v: SCHEMA_VERSION, type: 'links', source: 'http://a.test/', depth: 1, cgiHops: 0, contribution: 1, sameSite: true, foundAt: 1 };
  assert.equal(linksRecord.safeParse({ ...bundle, targets: [] }).success, false);
  assert.equal(linksRecord.safeParse({ ...bundle, targets: [{ url: 'ftp://a.test/' }] }).success, false);
  assert.equal(linksRecord.safeParse({ ...bundle, targets: [{ url: 'http://a.test/x' }] }).success, true);
});

test('bundles group exactly the links that agree on host and every shared field, in the order the groups begin', () => {
  // Reference: a group per (host, shared fields written out as a string), in first-appearance order.
  const reference = (links: readonly DiscoveredLink[]): string[][] => {
    const groups = new Map<string, string[]>();
    for (const l of links) {
      if (l.redirect !== undefined) continue;
      const host = new URL(l.url).host;
      const shared = [host, l.source, l.depth, l.cgiHops, l.sameSite ? 1 : 0, l.foundAt, l.propagated ? 1 : 0, l.startSite ?? '', l.via ?? ''].join('\u0000');
      groups.set(shared, [...(groups.get(shared) ?? []), l.url]);
    }
    return [...groups.values()];
  };
  let seed = 7;
  const pick = <T>(xs: readonly T[]): T => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return xs[seed % xs.length]!;
  };
  for (let round = 0; round < 200; round++) {
    const links = Array.from({ length: 1 + (round % 30) }, (_, i): DiscoveredLink => {
      const link: DiscoveredLink = {
        ...base,
        url: `http://${pick(['a.test', 'b.test', 'c.test:81'])}/${round}/${i}`,
        source: pick(['http://a.test/p', 'http://b.test/q']),
        depth: pick([1, 2]),
        cgiHops: pick([0, 0, 1]),
        sameSite: pick([true, false]),
        foundAt: pick([1000, 1000, 2000]),
      };
      const propagated = pick([undefined, true, false]);
      if (propagated !== undefined) link.propagated = propagated;
      const startSite = pick([undefined, '', 'a.test']);
      if (startSite !== undefined) link.startSite = startSite;
      const via = pick([undefined, 'sitemap', '']);
      if (via !== undefined) link.via = via as DiscoveredLink['via'];
      if (pick([0, 0, 0, 0, 0, 1]) === 1) link.redirect = [{ url: `http://a.test/old/${i}`, status: 301 }];
      return link;
    });
    const packed = packLinks(links).filter((r) => r.value.type === 'links' || r.value.redirect === undefined);
    assert.deepEqual(
      packed.map((r) => linksOf(r.value).map((l) => l.url)),
      reference(links),
      `round ${round}`,
    );
    // The hosts a parser passes along (the links' own) change nothing.
    assert.deepEqual(packLinks(links, links.map((l) => new URL(l.url).host)), packLinks(links), `round ${round}, hosts given`);
  }
});
