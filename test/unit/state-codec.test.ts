import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOST_KEYS, URL_KEYS, decodeHostState, decodeUrlState, encodeHostState, encodeUrlState, hostStateCodec, urlStateCodec } from '../../services/scheduler/state-codec.ts';
import { STATS_KEY } from '../../services/scheduler/state.ts';
import type { UrlState } from '../../services/scheduler/state.ts';

/** A URL record as the scheduler has always written it (the on-disk format the codec must keep). */
const STORED = {
  st: 'queued',
  d: 2,
  c: 0,
  s: 0.25,
  q: 'a.test\u00000000000000250000\u0000000000000007',
  f: 1_700_000_000_000,
  h: 200,
  m: 'rL0Y20zC-Fzt72VPzMSk2A',
  e: '"abc"',
  l: 'Tue, 14 Nov 2023 22:13:20 GMT',
  p: '0123456789abcdef',
  tp: 'AAABBB',
  tn: 70,
  r: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  n: 1_700_000_600_000,
  w: 600_000,
  v: 1,
  y: 0.125,
  x: 1,
  t: 2,
  rc: [{ url: 'http://a.test/old', status: 301 }],
  o: 'a.test',
  k: 'sitemap',
  a: 0.8,
  lm: 1_699_999_000_000,
  cf: 'daily',
};

test('a stored URL record reads under its fields’ names and writes back to the same keys', () => {
  const u = decodeUrlState(JSON.parse(JSON.stringify(STORED)));
  assert.equal(u.status, 'queued');
  assert.equal(u.lastFetchAt, 1_700_000_000_000);
  assert.equal(u.queuedAsRevisit, true);
  assert.equal(u.paragraphCount, 70);
  assert.deepEqual(u.redirectChain, STORED.rc);
  // Every field has a name: none of the short keys is left over.
  for (const key of Object.keys(STORED)) assert.equal(key in u, false, `short key ${key} decoded`);
  assert.deepEqual(encodeUrlState(u), STORED);
  assert.equal(Object.keys(URL_KEYS).length, Object.keys(STORED).length);
});

test('encoding drops absent fields and keeps unknown ones as they are', () => {
  const u: UrlState = { status: 'done', depth: 0, cgiHops: 0, score: 1, etag: undefined };
  assert.equal(JSON.stringify(urlStateCodec.encode(u, 'http://a.test/')), '{"st":"done","d":0,"c":0,"s":1}');
  // A field written by a newer version survives a read and a write by this one.
  const newer = decodeUrlState({ st: 'done', d: 0, c: 0, s: 1, zz: 3 });
  assert.deepEqual(encodeUrlState(newer), { st: 'done', d: 0, c: 0, s: 1, zz: 3 });
  assert.throws(() => decodeUrlState('done'), /stored URL record is an object/);
});

test('a stored host record reads by name, its overload too; the partition counters pass as they are', () => {
  const stored = {
    queued: 3,
    fetched: 10,
    nextAt: 5,
    ia: 1,
    pol: { b: [], t: [], x: 0, f: 0, n: 0 },
    ks: 0.5,
    al: 'https://b.test',
    pg: 9,
    tk: 2,
    ov: { a: 60_000, k: 'stretch', f: 2, d: 0 },
    sm: 1,
    mk: 1.5,
    rp: [1, 2, 3],
  };
  const h = decodeHostState(JSON.parse(JSON.stringify(stored)));
  assert.equal(h.sitemapsKnown, true);
  assert.deepEqual(h.overload, { allowedIntervalMs: 60_000, remedy: 'stretch', factor: 2, delayMs: 0 });
  assert.equal(h.distinctPages, 9);
  assert.deepEqual(h.politeness, stored.pol);
  assert.deepEqual(encodeHostState(h), stored);
  for (const key of Object.keys(HOST_KEYS)) assert.equal(key in stored, false);
  const stats = { pagesFetched: 4, seq: 9 };
  assert.deepEqual(hostStateCodec.decode(stats, STATS_KEY), stats);
  assert.deepEqual(hostStateCodec.encode(stats, STATS_KEY), stats);
});
