// Overload remedies (the incremental archive crawler paper) as the scheduler applies them per host: the interval histogram kept
// beside L_i, and stretch / delay making 1/L_i fit the host's politeness interval.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { changePageInterval, emptyPoliteness, loadIndex } from '../../services/scheduler/politeness/index.ts';
import { applyRemedy, histogramChange, intervalBin, remedyFor } from '../../services/scheduler/politeness/remedy.ts';
import type { PolitenessState } from '../../services/scheduler/politeness/index.ts';
import { mulberry32 } from '../../services/revisit/simulate.ts';

const DAY_MS = 86_400_000;

function hostWith(intervalsMs: readonly number[]): PolitenessState {
  let s = emptyPoliteness();
  for (const t of intervalsMs) s = changePageInterval(s, undefined, t);
  return s;
}

test('interval histogram: half-octave bins, sparse, kept in step with L', () => {
  assert.equal(intervalBin(1000), 0);
  assert.equal(intervalBin(1999), 1);
  assert.equal(intervalBin(2000), 2);
  assert.equal(intervalBin(10), 0, 'sub-second intervals share the first bin');
  let h = histogramChange(undefined, undefined, 60_000);
  h = histogramChange(h, undefined, 61_000);
  h = histogramChange(h, 60_000, DAY_MS);
  assert.deepEqual(h, { [String(intervalBin(61_000))]: 1, [String(intervalBin(DAY_MS))]: 1 });
  h = histogramChange(h, 61_000, undefined);
  h = histogramChange(h, DAY_MS, undefined);
  assert.equal(h, undefined, 'an empty histogram is dropped');
  // Through changePageInterval: adding and removing everything leaves no trace.
  const rng = mulberry32(4);
  const ts = Array.from({ length: 500 }, () => Math.round(3_600_000 + rng() * 30 * DAY_MS));
  let s = hostWith(ts);
  assert.equal(Object.values(s.lh ?? {}).reduce((a, b) => a + b, 0), 500);
  assert.ok(JSON.stringify(s.lh).length < 200, 'a few bytes per bin in use');
  for (const t of ts) s = changePageInterval(s, t, undefined);
  assert.equal(s.L, undefined);
  assert.equal(s.lh, undefined);
});

test('a host that can bear its schedule is left alone', () => {
  const s = hostWith([DAY_MS, 2 * DAY_MS]);
  for (const remedy of ['stretch', 'delay', 'none'] as const) {
    const r = remedyFor(s, 10_000, remedy);
    assert.equal(r.overloaded, false);
    assert.equal(applyRemedy(DAY_MS, r), DAY_MS);
  }
  assert.equal(remedyFor(emptyPoliteness(), 10_000, 'stretch').overloaded, false, 'no pages, no load');
  assert.equal(remedyFor(s, 0, 'stretch').overloaded, false, 'no politeness interval, never overloaded');
});

test('stretch and delay make 1/L fit the allowed interval; none only flags', () => {
  // 20,000 pages revisited every 1–10 days need a request every ~19 s; politeness allows one per 90 s.
  const rng = mulberry32(11);
  const ts = Array.from({ length: 20_000 }, () => Math.round(DAY_MS * (1 + 9 * rng())));
  const s = hostWith(ts);
  const allowedMs = 90_000;
  assert.ok(1 / (s.L ?? 0) < 30, `1/L = ${1 / (s.L ?? 0)} s`);

  const stretch = remedyFor(s, allowedMs, 'stretch');
  assert.ok(stretch.overloaded && stretch.factor > 1 && stretch.delayMs === 0);
  const stretched = 1 / loadIndex(ts.map((t) => applyRemedy(t, stretch)));
  assert.ok(stretched >= 89.99 && stretched < 90.5, `stretched 1/L = ${stretched} s`);

  const delay = remedyFor(s, allowedMs, 'delay');
  assert.ok(delay.overloaded && delay.factor === 1 && delay.delayMs > 0);
  const delayed = ts.map((t) => applyRemedy(t, delay));
  const delayedInterval = 1 / loadIndex(delayed);
  // The delay is solved on half-octave bins: within about 1 % of exact.
  assert.ok(delayedInterval >= 88 && delayedInterval < 92, `delayed 1/L = ${delayedInterval} s`);
  // Delay hits the most frequently revisited pages hardest (relative change), stretch all alike.
  const shortest = Math.min(...ts);
  const longest = Math.max(...ts);
  assert.ok(applyRemedy(shortest, delay) / shortest > applyRemedy(longest, delay) / longest);
  assert.ok(Math.abs(applyRemedy(shortest, stretch) / shortest - applyRemedy(longest, stretch) / longest) < 1e-6);

  const none = remedyFor(s, allowedMs, 'none');
  assert.ok(none.overloaded);
  assert.equal(applyRemedy(DAY_MS, none), DAY_MS);
});
