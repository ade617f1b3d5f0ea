import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveState } from '../../services/dashboard/live-state.ts';
import { tableLookup, parseTableEntry } from '../../services/common/country.ts';
import { worldMapSvg } from '../../services/dashboard/world-map.ts';

test('live state: counters, throughput window, servers per country, pending requests, recent changes', () => {
  const s = new LiveState(tableLookup(['127.0.0.1=JP', '127.0.0.2=US'].map(parseTableEntry)), 10_000);
  s.onRequest(5);
  s.onPage({ url: 'http://a.test/', status: 200, bytes: 100, serverIp: '127.0.0.1', at: 1_000 });
  s.onPage({ url: 'http://a.test/x', status: 200, bytes: 50, serverIp: '127.0.0.1', at: 9_000 });
  s.onPage({ url: 'http://b.test/', status: 503, bytes: 10, serverIp: '127.0.0.2', at: 9_500 });
  s.onPage({ url: 'http://c.test/', status: 0, bytes: 0, at: 9_600 });
  for (let i = 0; i < 25; i++) s.onChange({ url: `http://a.test/${i}`, kind: 'new', at: i });
  const snap = s.snapshot(12_000);
  assert.equal(snap.pages, 4);
  assert.equal(snap.errors, 2);
  assert.equal(snap.bytes, 160);
  assert.equal(snap.pagesPerSecond, 0.3, 'three pages in the last 10 s');
  assert.equal(snap.servers, 3);
  assert.equal(snap.serversActive, 3);
  assert.equal(snap.requested, 5);
  assert.equal(snap.pending, 1);
  assert.deepEqual(snap.countries, { JP: { pages: 2, servers: 1 }, US: { pages: 1, servers: 1 } });
  assert.deepEqual(snap.unknown, { pages: 1, servers: 1 });
  assert.equal(snap.changes.length, 20);
  assert.equal(snap.changes[0]!.url, 'http://a.test/24', 'newest first');
  assert.equal(s.snapshot(30_000).serversActive, 0);
});

test('the world map has a path per country with its alpha-2 code', () => {
  const svg = worldMapSvg();
  for (const cc of ['JP', 'US', 'DE', 'BR', 'AU']) assert.match(svg, new RegExp(`<path class="country" data-cc="${cc}" d="M[0-9.,LMZ]+"`));
  assert.ok((svg.match(/class="country"/g) ?? []).length > 150);
  assert.doesNotMatch(svg, /https?:\/\/(?!www\.w3\.org)/, 'no external reference');
});
