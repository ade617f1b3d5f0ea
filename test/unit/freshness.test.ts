import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixedIntervalForBudget, fixedIntervalPages, measureFreshness } from '../../services/revisit/freshness.ts';

test('versions existed and seen, staleness and stale age of one page', () => {
  // changes at 10 and 30; fetched at 0, 20, 40; window [0, 50]
  const f = measureFreshness([{ changes: [10, 30], fetches: [0, 20, 40] }], 0, 50);
  assert.equal(f.versionsExisted, 3);
  assert.equal(f.versionsSeen, 3);
  assert.equal(f.fetches, 3);
  // stale 10..20 and 30..40 = 20 of 50
  assert.equal(f.staleness, 20 / 50);
  assert.equal(f.meanStaleAgeMs, (100 / 2 + 100 / 2) / 50);
});

test('a page fetched too rarely misses versions and stays stale; an unfetched page only counts as existing', () => {
  const f = measureFreshness(
    [
      { changes: [5, 6, 7], fetches: [0, 8] },
      { changes: [1], fetches: [] },
    ],
    0,
    10,
  );
  assert.equal(f.versionsExisted, 4 + 2);
  assert.equal(f.versionsSeen, 2);
  assert.equal(f.staleness, 3 / 10);
  const none = measureFreshness([{ changes: [], fetches: [0, 5] }], 0, 10);
  assert.equal(none.staleness, 0);
  assert.equal(none.versionsSeen, 1);
});

test('the fixed policy gets the same budget, starting at each page\'s first fetch', () => {
  const pages = [
    { changes: [50], fetches: [0, 10, 20, 30, 40, 60, 80] },
    { changes: [], fetches: [0, 90] },
    { changes: [], fetches: [50] },
  ];
  const { pages: fixed, intervalMs } = fixedIntervalPages(pages, 0, 100);
  const budget = 10;
  const used = fixed.reduce((n, p) => n + p.fetches.length, 0);
  assert.ok(used <= budget, `${used} fetches for a budget of ${budget}`);
  assert.ok(fixed.reduce((n, p) => n + p.fetches.filter((t) => t <= 100).length, 0) >= budget - pages.length, 'close to the budget');
  assert.deepEqual(fixed[2]!.fetches[0], 50);
  assert.equal(fixedIntervalForBudget([0], 100, 3), 34);
  assert.ok(intervalMs > 0);
});

test('adaptive beats fixed on a mix of fast and static pages at equal budget', () => {
  // one page changing every 10, nine never changing; the adaptive schedule spends its budget on the fast one
  const fast = Array.from({ length: 99 }, (_, i) => 10 * (i + 1));
  const adaptive = [{ changes: fast, fetches: Array.from({ length: 100 }, (_, i) => 10 * i + 1) }, ...Array.from({ length: 9 }, () => ({ changes: [], fetches: [0] }))];
  const a = measureFreshness(adaptive, 0, 1000);
  const fixed = measureFreshness(fixedIntervalPages(adaptive, 0, 1000).pages, 0, 1000);
  assert.ok(a.versionsSeen > fixed.versionsSeen, `${a.versionsSeen} vs ${fixed.versionsSeen}`);
  assert.ok(a.staleness < fixed.staleness, `${a.staleness} vs ${fixed.staleness}`);
});
