// Revisit logic: estimator accuracy, singular cases, schedule rules, the Cho MLE, selection,
// the server load index and remedies, and the policy comparison on simulated Poisson pages.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  DAY_S,
  DEFAULT_REVISIT_OPTIONS,
  HOUR_S,
  PACKED_STATE_BYTES,
  allocate,
  choEstimateInterval,
  choInitialState,
  choMle,
  choObserve,
  estimateInterval,
  initialState,
  nextInterval,
  packState,
  serializeState,
  unpackState,
  update,
  type RevisitState,
} from '../../services/revisit/estimator.ts';
import {
  alphaFromScore,
  changeProbability,
  checkLoad,
  delayIntervals,
  emptyLoad,
  loadAdd,
  loadChange,
  loadOf,
  loadRemove,
  loadValue,
  requiredDelay,
  selectionProbability,
  stretchFactor,
  stretchIntervals,
  topByGamma,
} from '../../services/revisit/selection.ts';
import { comparePolicies, mulberry32 } from '../../services/revisit/simulate.ts';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

type Spacing = 'regular' | 'irregular' | 'own';

/**
 * Accesses a Poisson page (mean change interval meanS) `visits` times and returns the state.
 * Regular visits come every `visitS` (default 1/λ).
 */
function history(meanS: number, visits: number, spacing: Spacing, rng: () => number, visitS = meanS): RevisitState {
  let t = 0;
  let nextChange = -Math.log(1 - rng()) * meanS;
  let s = initialState(0);
  for (let v = 0; v < visits; v++) {
    // regular: every visitS; irregular: uniform in [0.25, 2.5]/λ; own: the estimator's own schedule.
    const dt = spacing === 'regular' ? visitS : spacing === 'irregular' ? meanS * (0.25 + 2.25 * rng()) : nextInterval(s, rng).interval;
    t += dt;
    let changed = false;
    while (nextChange <= t) {
      changed = true;
      nextChange += -Math.log(1 - rng()) * meanS;
    }
    s = update(s, { at: t, changed });
  }
  return s;
}

function medianError(meanS: number, spacing: Spacing, seed: number): number {
  const rng = mulberry32(seed);
  const errs: number[] = [];
  for (let trial = 0; trial < 400; trial++) {
    const est = estimateInterval(history(meanS, 20, spacing, rng));
    // A singular history has no estimate: count it as a total miss rather than drop it.
    errs.push(est == null ? 1 : Math.abs(est - meanS) / meanS);
  }
  return median(errs);
}

const RATES_IN_RANGE = [12 * HOUR_S, DAY_S, 7 * DAY_S];

// With 20 regular visits the estimate of one rate takes few discrete values, so its median error
// jumps between ≈ 0.16 and ≈ 0.28 as λ·Δ moves; pooled over the rates inside the visit range it is
// ≈ 0.20 (about the floor of any estimator that sees only changed / unchanged per visit).
test('equation (4): median relative error of 1/λ̂ ≤ 25 % after 20 regular visits, for rates inside the visit range', () => {
  for (const seed of [42, 43]) {
    const rng = mulberry32(seed);
    const visit = DAY_S;
    const errs: number[] = [];
    for (let trial = 0; trial < 1000; trial++) {
      // 1/λ log-uniform between half and twice the visit interval.
      const meanS = visit * Math.exp(Math.log(0.5) + rng() * Math.log(4));
      const est = estimateInterval(history(meanS, 20, 'regular', rng, visit));
      errs.push(est == null ? 1 : Math.abs(est - meanS) / meanS);
    }
    const med = median(errs);
    assert.ok(med <= 0.25, `seed ${seed}: median relative error ${med.toFixed(3)}`);
  }
  // Each single rate stays within 30 % too.
  for (const meanS of RATES_IN_RANGE) {
    const med = medianError(meanS, 'regular', 42);
    assert.ok(med <= 0.3, `mean change interval ${meanS}s: median relative error ${med.toFixed(3)}`);
  }
});

test('equation (4): bounded error under irregular access and its own schedule', () => {
  for (const meanS of RATES_IN_RANGE) {
    for (const spacing of ['irregular', 'own'] as const) {
      const med = medianError(meanS, spacing, 43);
      assert.ok(med <= 0.5, `${spacing}, mean change interval ${meanS}s: median relative error ${med.toFixed(3)}`);
    }
  }
});

const PROPORTIONAL = { ...DEFAULT_REVISIT_OPTIONS, allocation: 'proportional' as const };
/** The √ form of the freshness allocation (the default before revisit goals; test/unit/revisit-allocation.test.ts covers the goal default). */
const SQRT = { ...DEFAULT_REVISIT_OPTIONS, allocation: 'sqrt' as const };

test('singular cases back off by the constant; the minimum holds', () => {
  const rng = mulberry32(1);
  let s = initialState(0);
  s = update(s, { at: DAY_S, changed: false });
  s = update(s, { at: 3 * DAY_S, changed: false });
  assert.equal(estimateInterval(s), null);
  let n = nextInterval(s, rng, PROPORTIONAL);
  assert.equal(n.kind, 'backoffUp');
  assert.equal(n.interval, 2 * DAY_S * DEFAULT_REVISIT_OPTIONS.backoff);
  // Under sqrt allocation the interval moves by √backoff (the assumed change interval by backoff).
  n = nextInterval(s, rng, SQRT);
  assert.equal(n.kind, 'backoffUp');
  assert.ok(Math.abs(n.interval - 2 * DAY_S * Math.sqrt(DEFAULT_REVISIT_OPTIONS.backoff)) < 1e-6);

  let c = initialState(0);
  c = update(c, { at: DAY_S, changed: true });
  c = update(c, { at: DAY_S + 8 * HOUR_S, changed: true });
  assert.equal(estimateInterval(c), null);
  n = nextInterval(c, rng, PROPORTIONAL);
  assert.equal(n.kind, 'backoffDown');
  assert.equal(n.interval, (8 * HOUR_S) / DEFAULT_REVISIT_OPTIONS.backoff);
  assert.ok(Math.abs(nextInterval(c, rng, SQRT).interval - (8 * HOUR_S) / Math.sqrt(DEFAULT_REVISIT_OPTIONS.backoff)) < 1e-6);
  c = update(c, { at: DAY_S + 9 * HOUR_S, changed: true });
  n = nextInterval(c, rng, PROPORTIONAL);
  assert.equal(n.interval, DEFAULT_REVISIT_OPTIONS.minIntervalS, 'never below the minimum');
  assert.equal(nextInterval(c, rng, SQRT).interval, DEFAULT_REVISIT_OPTIONS.minIntervalS);
});

test('allocation: proportional revisits every τ̂, sqrt every √(τ̂·τ0)', () => {
  const tau0 = DEFAULT_REVISIT_OPTIONS.freshnessScaleS;
  assert.equal(allocate(7 * DAY_S, PROPORTIONAL), 7 * DAY_S);
  assert.ok(Math.abs(allocate(7 * DAY_S, SQRT) - Math.sqrt(7 * DAY_S * tau0)) < 1e-6);
  assert.ok(Math.abs(allocate(tau0, SQRT) - tau0) < 1e-6, 'a page changing every τ0 is revisited every τ0');
  // Slow pages are revisited more often than they change, fast ones less often.
  assert.ok(allocate(30 * DAY_S, SQRT) < 30 * DAY_S && allocate(HOUR_S, SQRT) > HOUR_S);
  // The estimate branch uses it.
  let s = initialState(0);
  for (let k = 1; k <= 10; k++) s = update(s, { at: k * DAY_S, changed: k % 3 === 0 });
  const est = estimateInterval(s);
  assert.ok(est !== null);
  const n = nextInterval(s, mulberry32(2), SQRT);
  assert.equal(n.kind, 'estimate');
  assert.ok(Math.abs(n.interval - Math.sqrt(est * tau0)) < 1e-6);
  assert.equal(nextInterval(s, mulberry32(2), PROPORTIONAL).interval, est);
});

test('2nd visit is uniform in the configured range; Last-Modified seeds it when present', () => {
  const rng = mulberry32(7);
  const { secondVisitMinS: lo, secondVisitMaxS: hi } = DEFAULT_REVISIT_OPTIONS;
  const bins = new Array<number>(10).fill(0);
  const N = 20_000;
  for (let i = 0; i < N; i++) {
    const n = nextInterval(initialState(1000), rng);
    assert.equal(n.kind, 'second');
    assert.ok(n.interval >= lo && n.interval <= hi);
    const b = Math.min(9, Math.floor(((n.interval - lo) / (hi - lo)) * 10));
    bins[b] = (bins[b] ?? 0) + 1;
  }
  for (const b of bins) assert.ok(Math.abs(b - N / 10) < 0.1 * (N / 10), `bins ${bins.join(',')}`);

  const lm = nextInterval(initialState(10 * DAY_S, 8 * DAY_S), rng, PROPORTIONAL);
  assert.equal(lm.kind, 'lastModified');
  assert.equal(lm.interval, 2 * DAY_S);
  assert.ok(Math.abs(nextInterval(initialState(10 * DAY_S, 8 * DAY_S), rng).interval - allocate(2 * DAY_S)) < 1e-6);
  const old = nextInterval(initialState(1000 * DAY_S, 0), rng, PROPORTIONAL);
  assert.equal(old.interval, DEFAULT_REVISIT_OPTIONS.lastModifiedMaxS);
});

test('intervals beyond 400 days become uniform in 300–400 days', () => {
  const rng = mulberry32(3);
  // Stable for years, one change long ago: estimate far beyond the cap.
  let s = initialState(0);
  s = update(s, { at: 100 * DAY_S, changed: true });
  s = update(s, { at: 3000 * DAY_S, changed: false });
  assert.ok((estimateInterval(s) ?? 0) > 400 * DAY_S);
  let min = Infinity;
  let max = 0;
  for (let i = 0; i < 2000; i++) {
    const n = nextInterval(s, rng, PROPORTIONAL);
    assert.ok(n.capped);
    min = Math.min(min, n.interval);
    max = Math.max(max, n.interval);
  }
  assert.ok(min >= 300 * DAY_S && max <= 400 * DAY_S);
  assert.ok(min < 305 * DAY_S && max > 395 * DAY_S, 'spread over the whole range');
  // Back-off past the cap is capped too.
  let b = initialState(0);
  b = update(b, { at: 300 * DAY_S, changed: false });
  assert.ok(nextInterval(b, rng, PROPORTIONAL).capped);
  // Under sqrt allocation only change intervals beyond cap²/τ0 (about 73 years) reach the cap.
  assert.ok(!nextInterval(s, rng, SQRT).capped);
});

test('Cho MLE equals the closed form (3) when all tc are equal, and handles boundaries', () => {
  for (const [tc, m, tu] of [
    [3600, 5, 20_000],
    [DAY_S, 12, 40 * DAY_S],
    [600, 1, 1],
  ] as const) {
    const mle = choMle(new Array<number>(m).fill(tc), tu);
    const closed = tc / Math.log((m * tc + tu) / tu);
    assert.ok(mle != null && Math.abs(mle - closed) / closed < 1e-9, `${mle} vs ${closed}`);
  }
  assert.equal(choMle([], 1000), null, 'never changed');
  assert.equal(choMle([10, 20], 0), null, 'changed every time');
  // Irregular intervals: the root satisfies equation (2).
  const tcs = [1000, 5000, 20_000, 300];
  const inv = choMle(tcs, 50_000);
  assert.ok(inv != null);
  const lam = 1 / inv;
  const lhs = tcs.reduce((acc, t) => acc + t / Math.expm1(lam * t), 0);
  assert.ok(Math.abs(lhs - 50_000) / 50_000 < 1e-6);
  // The grouped state agrees with the plain solver.
  const st = choInitialState(0);
  let t = 0;
  for (const [dt, ch] of [[1000, true], [7000, false], [5000, true], [20_000, true], [43_000, false], [300, true]] as const) {
    t += dt;
    choObserve(st, { at: t, changed: ch });
  }
  const grouped = choEstimateInterval(st);
  assert.ok(grouped != null && Math.abs(grouped - inv) / inv < 1e-6);
});

test('state is compact: JSON ≤ 80 bytes, packed 24 bytes, round trip', () => {
  let s = initialState(1_735_689_600);
  for (let i = 1; i <= 50; i++) s = update(s, { at: 1_735_689_600 + i * 86_400 * 3, changed: i % 3 === 0 });
  assert.ok(serializeState(s).length <= 80, serializeState(s));
  const packed = packState(s);
  assert.equal(packed.byteLength, PACKED_STATE_BYTES);
  assert.deepEqual(unpackState(packed), JSON.parse(serializeState(s)));
});

test('selection: β, γ and α mapping', () => {
  assert.equal(changeProbability(100, 100, DAY_S), 0);
  assert.ok(Math.abs(changeProbability(DAY_S, 0, DAY_S) - (1 - Math.exp(-1))) < 1e-12);
  assert.equal(selectionProbability(1, 5, 0, DAY_S), 1);
  assert.ok(Math.abs(selectionProbability(0.5, DAY_S, 0, DAY_S) - (0.5 + 0.5 * (1 - Math.exp(-1)))) < 1e-12);
  const opts = { maxScore: 100, alphaMax: 0.5, log: true };
  assert.equal(alphaFromScore(0, opts), 0);
  assert.equal(alphaFromScore(100, opts), 0.5);
  assert.equal(alphaFromScore(1e6, opts), 0.5);
  assert.ok(alphaFromScore(10, opts) > alphaFromScore(1, opts));
  const order = topByGamma(
    [
      { alpha: 0, tCrawl: 0, tau: 30 * DAY_S }, // stable, unimportant
      { alpha: 0, tCrawl: 0, tau: HOUR_S }, // surely changed
      { alpha: 0.4, tCrawl: 0, tau: 30 * DAY_S }, // important
    ],
    DAY_S,
    2,
  );
  assert.deepEqual(order, [1, 2]);
});

test('load index: incremental updates equal recomputation', () => {
  const rng = mulberry32(11);
  const intervals: number[] = [];
  let x = emptyLoad();
  for (let step = 0; step < 50_000; step++) {
    const r = rng();
    if (intervals.length === 0 || r < 0.4) {
      const t = HOUR_S * Math.exp(rng() * 9);
      intervals.push(t);
      x = loadAdd(x, t);
    } else if (r < 0.7) {
      const i = Math.floor(rng() * intervals.length);
      const old = intervals[i] ?? 1;
      const t = HOUR_S * Math.exp(rng() * 9);
      intervals[i] = t;
      x = loadChange(x, old, t);
    } else {
      const i = Math.floor(rng() * intervals.length);
      const old = intervals[i] ?? 1;
      intervals[i] = intervals[intervals.length - 1] ?? 1;
      intervals.pop();
      x = loadRemove(x, old);
    }
  }
  const fresh = loadOf(intervals);
  assert.equal(x.n, intervals.length);
  assert.ok(Math.abs(loadValue(x) - fresh) / fresh < 1e-12, `${loadValue(x)} vs ${fresh}`);
});

test('overload detection and remedies make 1/L fit', () => {
  // 20,000 pages revisited every 1–10 days on one server: 1/L ≈ 19 s < 60 s politeness.
  const rng = mulberry32(5);
  const intervals = Array.from({ length: 20_000 }, () => DAY_S * (1 + 9 * rng()));
  const ctx = { allowedIntervalS: 60, maxFetchS: 0.9, servers: 3_200_000, connections: 32_000 };
  const check = checkLoad(loadOf(intervals), ctx);
  assert.ok(check.overloaded && check.byPoliteness);
  assert.equal(check.required, Math.max(60, 100 * 0.9));

  const l = stretchFactor(loadOf(intervals), check.required);
  const stretched = stretchIntervals(intervals, l);
  const afterL = checkLoad(loadOf(stretched), ctx);
  assert.ok(!afterL.overloaded, `stretch ${l}: 1/L = ${afterL.interval}`);
  assert.ok(Math.abs(afterL.interval - check.required) / check.required < 1e-9, 'tight');

  const d = requiredDelay(intervals, check.required);
  const delayed = delayIntervals(intervals, d);
  const afterD = checkLoad(loadOf(delayed), ctx);
  assert.ok(!afterD.overloaded, `delay ${d}: 1/L = ${afterD.interval}`);
  assert.ok(afterD.interval < check.required * 1.0001, 'tight');
  // An idle or light server needs nothing.
  assert.equal(stretchFactor(loadOf([DAY_S]), 60), 1);
  assert.equal(requiredDelay([DAY_S], 60), 0);
});

test('policies on simulated Poisson pages: meguri vs the same fetch budget at a fixed interval', () => {
  const r = comparePolicies({ pages: 2_000, days: 60, seed: 9, revisit: SQRT });
  assert.ok(Math.abs(r.fixed.fetches - r.meguri.fetches) / r.meguri.fetches < 0.002, 'same fetch budget');
  const ratio = r.meguri.versionsPerFetch / r.fixed.versionsPerFetch;
  assert.ok(ratio >= 1.5, `versions per fetch: meguri ${r.meguri.versionsPerFetch} / fixed ${r.fixed.versionsPerFetch} = ${ratio}`);
  assert.ok(r.meguri.versionsCaptured > r.fixed.versionsCaptured * 1.5);
  assert.ok(r.cho.versionsPerFetch > r.fixed.versionsPerFetch * 1.5);
  // Lower mean staleness at the same budget, with a margin (measured ≈ 0.88 of fixed's).
  const stale = r.meguri.meanStalenessS / r.fixed.meanStalenessS;
  assert.ok(stale < 0.95, `staleness: meguri ${r.meguri.meanStalenessS} s / fixed ${r.fixed.meanStalenessS} s = ${stale}`);
  assert.ok(r.meguri.freshness > r.fixed.freshness);
});

test('sqrt allocation is what beats a fixed interval on staleness; proportional does not', () => {
  for (const seed of [2, 3]) {
    const sqrt = comparePolicies({ pages: 1_500, days: 60, seed, revisit: SQRT });
    assert.ok(sqrt.meguri.versionsPerFetch >= 1.5 * sqrt.fixed.versionsPerFetch, `seed ${seed}: versions per fetch`);
    assert.ok(sqrt.meguri.meanStalenessS < 0.95 * sqrt.fixed.meanStalenessS, `seed ${seed}: staleness ${sqrt.meguri.meanStalenessS} vs ${sqrt.fixed.meanStalenessS}`);
    const prop = comparePolicies({ pages: 1_500, days: 60, seed, revisit: { ...DEFAULT_REVISIT_OPTIONS, allocation: 'proportional' } });
    assert.ok(prop.meguri.meanStalenessS > prop.fixed.meanStalenessS, `seed ${seed}: proportional allocation is staler than fixed at its budget`);
  }
});

