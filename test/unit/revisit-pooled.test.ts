/**
 * The per-host pooled prior (services/revisit/pooled.ts), the 2nd interval it sets, and the
 * freshness objective with a value per captured version.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY_S, DEFAULT_REVISIT_OPTIONS, HOUR_S, allocate, initialState, nextInterval, update } from '../../services/revisit/estimator.ts';
import type { RevisitState } from '../../services/revisit/estimator.ts';
import { defaultMultiplier, freshness, versionsRate } from '../../services/revisit/allocation.ts';
import { logUniformGrid, posteriorInterval, posteriorMeanInterval } from '../../services/revisit/posterior.ts';
import { DEFAULT_POOL_OPTIONS, POOL_BINS, contribution, movePool, poolSize, pooledGrid } from '../../services/revisit/pooled.ts';
import { mulberry32 } from '../../services/revisit/simulate.ts';

const base = logUniformGrid(DEFAULT_REVISIT_OPTIONS.priorMinS, DEFAULT_REVISIT_OPTIONS.priorMaxS);
const rel = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);

/** A page of mean change interval tau seen every `every` seconds, `visits` times. */
function observed(tau: number, every: number, visits: number, rng: () => number): RevisitState {
  let s = initialState(0);
  for (let n = 1; n <= visits; n++) s = update(s, { at: n * every, changed: rng() < -Math.expm1(-every / tau) });
  return s;
}

test('a page contributes its posterior mass per bin once it has evidence, none before', () => {
  assert.equal(contribution(initialState(1000), base), null);
  assert.equal(contribution(undefined, base), null);
  const c = contribution(observed(DAY_S, DAY_S, 4, mulberry32(1)), base)!;
  assert.equal(c.length, POOL_BINS);
  assert.ok(Math.abs(c.reduce((x, y) => x + y, 0) - 1) < 1e-12);
  // Bins run from the slowest rate to the fastest: an hourly changer's mass is in the last bins.
  const fast = contribution(
    update(update(initialState(0), { at: DAY_S, changed: true }), { at: 2 * DAY_S, changed: true }),
    base,
  )!;
  assert.ok(fast[POOL_BINS - 1]! > fast[0]!);
});

test('the pool moves a page’s evidence out and in: the same histogram as a recount, O(bins) per outcome', () => {
  const rng = mulberry32(7);
  const pages: RevisitState[] = [];
  let pool: number[] | undefined;
  for (let i = 0; i < 40; i++) {
    pages.push(initialState(rng() * 3600));
  }
  // 2,000 outcomes in random order of page.
  for (let k = 0; k < 2000; k++) {
    const i = Math.floor(rng() * pages.length);
    const before = pages[i]!;
    const after = update(before, { at: before.l + 3600 + rng() * 2 * DAY_S, changed: rng() < 0.3 });
    pool = movePool(pool, contribution(before, base), contribution(after, base));
    pages[i] = after;
  }
  const recount = new Float64Array(POOL_BINS);
  for (const s of pages) contribution(s, base)?.forEach((x, b) => (recount[b]! += x));
  for (let b = 0; b < POOL_BINS; b++) assert.ok(Math.abs(pool![b]! - recount[b]!) < 0.01, `bin ${b}: ${pool![b]} vs ${recount[b]}`);
  assert.ok(Math.abs(poolSize(pool) - 40) < 0.01);
  // A page that is gone takes its evidence with it; an empty pool is no field at all.
  let emptied: number[] | undefined = pool;
  for (const s of pages) emptied = movePool(emptied, contribution(s, base), null);
  assert.ok(emptied === undefined || poolSize(emptied) < 0.01);
  assert.equal(movePool(undefined, null, null), undefined);
  // Old host records have no pool: the base prior.
  assert.equal(pooledGrid(undefined, base, null), undefined);
});

test('the pooled prior: the base below minPages, leave-one-out, and a floor of the base prior', () => {
  const rng = mulberry32(3);
  let pool: number[] | undefined;
  const daily: RevisitState[] = [];
  for (let i = 0; i < 30; i++) daily.push(observed(DAY_S, 12 * HOUR_S, 12, rng));
  for (const s of daily.slice(0, DEFAULT_POOL_OPTIONS.minPages - 1)) pool = movePool(pool, null, contribution(s, base));
  assert.equal(pooledGrid(pool, base, null), undefined);
  for (const s of daily.slice(DEFAULT_POOL_OPTIONS.minPages - 1)) pool = movePool(pool, null, contribution(s, base));
  const prior = pooledGrid(pool, base, null)!;
  assert.equal(prior.rates, base.rates);
  const weights = Array.from(prior.logPrior, Math.exp);
  assert.ok(Math.abs(weights.reduce((x, y) => x + y, 0) - 1) < 1e-9);
  // Every rate keeps at least the floor's share of the base prior, so evidence can override the pool.
  for (const w of weights) assert.ok(w >= DEFAULT_POOL_OPTIONS.floor / weights.length - 1e-12);
  // The prior's geometric mean lies near the host's daily rate, far from the base prior's (~4 days).
  const fresh = initialState(0);
  assert.ok(rel(posteriorMeanInterval(fresh, prior), DAY_S) < 0.6, `${posteriorMeanInterval(fresh, prior) / DAY_S} days`);
  assert.ok(posteriorMeanInterval(fresh, base) > 3 * DAY_S);
  // Leave one out: a page's own contribution is not counted twice.
  const own = contribution(daily[0]!, base);
  const loo = pooledGrid(pool, base, own)!;
  assert.notDeepEqual(Array.from(loo.logPrior), Array.from(prior.logPrior));
});

test('empirical Bayes: a page with few revisits on a host of daily pages is estimated better; its own evidence wins', () => {
  const rng = mulberry32(11);
  let pool: number[] | undefined;
  for (let i = 0; i < 39; i++) pool = movePool(pool, null, contribution(observed(DAY_S * (0.7 + 0.6 * rng()), 12 * HOUR_S, 10, rng), base));
  let errBase = 0;
  let errPooled = 0;
  for (let k = 0; k < 200; k++) {
    const s = observed(DAY_S, 12 * HOUR_S, 3, rng);
    const prior = pooledGrid(pool, base, null)!;
    errBase += Math.abs(Math.log(posteriorMeanInterval(s, base) / DAY_S));
    errPooled += Math.abs(Math.log(posteriorMeanInterval(s, prior) / DAY_S));
  }
  assert.ok(errPooled < 0.7 * errBase, `pooled ${errPooled / 200}, base ${errBase / 200}`);
  // A page that changed at each of 40 hourly visits is fast whatever its host's daily pages say.
  let hourly = initialState(0);
  for (let n = 1; n <= 40; n++) hourly = update(hourly, { at: n * 1800, changed: n % 4 !== 0 });
  const prior = pooledGrid(pool, base, null)!;
  assert.ok(posteriorMeanInterval(hourly, prior) < 3 * HOUR_S, `${posteriorMeanInterval(hourly, prior) / HOUR_S} h`);
});

test('the 2nd interval comes from the pooled prior when there is one, the random draw otherwise', () => {
  const fresh = initialState(0);
  const drawn = nextInterval(fresh, () => 0.5);
  assert.equal(drawn.kind, 'second');
  assert.equal(drawn.interval, (DEFAULT_REVISIT_OPTIONS.secondVisitMinS + DEFAULT_REVISIT_OPTIONS.secondVisitMaxS) / 2);
  const hostOf = (tau: number): ReturnType<typeof pooledGrid> => {
    const rng = mulberry32(5);
    let pool: number[] | undefined;
    for (let i = 0; i < 20; i++) pool = movePool(pool, null, contribution(observed(tau, tau / 2, 12, rng), base));
    return pooledGrid(pool, base, null);
  };
  const daily = hostOf(DAY_S)!;
  const monthly = hostOf(30 * DAY_S)!;
  const a = nextInterval(fresh, () => 0.5, DEFAULT_REVISIT_OPTIONS, { prior: daily });
  const b = nextInterval(fresh, () => 0.9, DEFAULT_REVISIT_OPTIONS, { prior: daily });
  assert.equal(a.kind, 'second');
  assert.equal(a.interval, b.interval);
  const mu = defaultMultiplier('freshness', DEFAULT_REVISIT_OPTIONS.freshnessScaleS);
  assert.ok(rel(a.interval, posteriorInterval('freshness', fresh, daily, 1, mu, DEFAULT_REVISIT_OPTIONS.versionValueS)) < 1e-9);
  // A host of slowly changing pages: a longer 2nd interval, at most the random draw's longest.
  const slow = nextInterval(fresh, () => 0.5, DEFAULT_REVISIT_OPTIONS, { prior: monthly });
  assert.ok(slow.interval > 2 * a.interval, `${slow.interval / HOUR_S} h vs ${a.interval / HOUR_S} h`);
  assert.ok(slow.interval <= DEFAULT_REVISIT_OPTIONS.secondVisitMaxS);
  // Without the posterior the pool is not used.
  assert.equal(nextInterval(fresh, () => 0.5, { ...DEFAULT_REVISIT_OPTIONS, posterior: false }, { prior: daily }).interval, drawn.interval);
});

/** Golden-section maximum of a unimodal function on [lo, hi]. */
function goldenMax(f: (x: number) => number, lo: number, hi: number): number {
  const r = (Math.sqrt(5) - 1) / 2;
  let a = lo;
  let b = hi;
  for (let i = 0; i < 200; i++) {
    const c = b - r * (b - a);
    const d = a + r * (b - a);
    if (f(c) > f(d)) b = d;
    else a = c;
  }
  return (a + b) / 2;
}

test('freshness with a value per captured version: the visit rate maximises w·(F + c·V) − μ·f', () => {
  const mu = 3 * HOUR_S;
  for (const c of [0, HOUR_S, 3 * HOUR_S]) {
    for (const tau of [2 * HOUR_S, 6 * HOUR_S, DAY_S, 10 * DAY_S]) {
      for (const w of [1, 1.5]) {
        const lam = 1 / tau;
        const value = (f: number): number => w * (freshness(lam, f) + c * versionsRate(lam, f)) - mu * f;
        const fStar = goldenMax(value, 1e-9, 20 * lam);
        const opts = { ...DEFAULT_REVISIT_OPTIONS, versionValueS: c };
        const interval = allocate(tau, opts, { weight: w });
        if (!Number.isFinite(interval)) {
          // Dropped: no visit rate is worth its cost.
          assert.ok(value(fStar) <= 1e-9 + value(1e-12), `tau ${tau / HOUR_S} h, c ${c / HOUR_S} h`);
          continue;
        }
        assert.ok(rel(1 / interval, fStar) < 0.01, `tau ${tau / HOUR_S} h, c ${c / HOUR_S} h, w ${w}: ${1 / interval} vs ${fStar}`);
        // The posterior form on a sharp posterior (a long regular history at the known rate) agrees.
        const grid = { rates: new Float64Array([lam]), logPrior: new Float64Array([0]) };
        assert.ok(rel(posteriorInterval('freshness', initialState(0), grid, w, mu, c), interval) < 1e-4);
      }
    }
  }
  // A captured version worth something: pages too fast to keep fresh are visited rather than dropped.
  const twoHourly = 2 * HOUR_S;
  assert.equal(allocate(twoHourly, { ...DEFAULT_REVISIT_OPTIONS, versionValueS: 0 }), Infinity);
  assert.ok(Number.isFinite(allocate(twoHourly, { ...DEFAULT_REVISIT_OPTIONS, versionValueS: 3 * HOUR_S })));
});
