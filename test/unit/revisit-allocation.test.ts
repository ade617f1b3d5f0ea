/**
 * Revisit objectives (services/revisit/allocation.ts) against the closed-form optimum and against
 * a direct numerical maximisation on small populations with known rates.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allocateBudget,
  defaultMultiplier,
  freshness,
  g,
  gInverse,
  goalInterval,
  hostMultiplierStep,
  objectiveValue,
  optimalRate,
  versionsRate,
} from '../../services/revisit/allocation.ts';
import type { Page, RevisitGoal } from '../../services/revisit/allocation.ts';
import { DAY_S, DEFAULT_REVISIT_OPTIONS, HOUR_S, initialState, nextInterval, update } from '../../services/revisit/estimator.ts';
import { knownRatePolicy } from '../../services/revisit/policies.ts';
import { logUniformGrid, posteriorInterval, posteriorMeanInterval } from '../../services/revisit/posterior.ts';

const rel = (a: number, b: number): number => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

/** Golden-section maximum of a concave function on [lo, hi]. */
function goldenMax(f: (x: number) => number, lo: number, hi: number): number {
  const r = (Math.sqrt(5) - 1) / 2;
  let a = lo;
  let b = hi;
  for (let i = 0; i < 200 && b - a > 1e-12 * (hi - lo); i++) {
    const c = b - r * (b - a);
    const d = a + r * (b - a);
    if (f(c) >= f(d)) b = d;
    else a = c;
  }
  return (a + b) / 2;
}

/** Direct maximisation of Σ w·objective over f ≥ 0 with Σ f = B, for 2 or 3 pages (nested golden sections). */
function bruteForce(goal: RevisitGoal, pages: readonly Page[], budget: number): number[] {
  if (pages.length === 2) {
    const f1 = goldenMax((x) => objectiveValue(goal, pages, [x, budget - x]), 0, budget);
    return [f1, budget - f1];
  }
  assert.equal(pages.length, 3);
  const inner = (f1: number): number => goldenMax((x) => objectiveValue(goal, pages, [f1, x, budget - f1 - x]), 0, budget - f1);
  const f1 = goldenMax((x) => objectiveValue(goal, pages, [x, inner(x), budget - x - inner(x)]), 0, budget);
  const f2 = inner(f1);
  return [f1, f2, budget - f1 - f2];
}

test('g and its inverse', () => {
  assert.equal(g(0), 0);
  for (const x of [1e-6, 1e-3, 0.01, 0.3, 1, 2.5, 10]) {
    assert.ok(rel(gInverse(g(x)), x) < 1e-9, `x = ${x}: ${gInverse(g(x))}`);
  }
  // Near y = 1 the doubles run out: 1 − g(30) ≈ 3·10^−12.
  assert.ok(rel(gInverse(g(30)), 30) < 1e-5);
  assert.ok(Math.abs(g(1) - (1 - 2 / Math.E)) < 1e-15);
  assert.equal(gInverse(1), Infinity);
  assert.equal(gInverse(0), 0);
  // Freshness and versions of a regular revisit schedule.
  assert.ok(Math.abs(freshness(1, 1) - (1 - Math.exp(-1))) < 1e-15);
  assert.equal(freshness(0, 0), 1);
  assert.equal(freshness(1, 0), 0);
  assert.ok(Math.abs(versionsRate(2, 1) - (1 - Math.exp(-2))) < 1e-15);
});

test('versions at equal weights is the proportional policy: f_i = B·λ_i/Σλ (closed form)', () => {
  const pages: Page[] = [{ rate: 1 / HOUR_S }, { rate: 1 / DAY_S }, { rate: 1 / (7 * DAY_S) }, { rate: 1 / (90 * DAY_S) }];
  const budget = 1 / (3 * HOUR_S);
  const sum = pages.reduce((s, p) => s + p.rate, 0);
  const a = allocateBudget('versions', pages, budget);
  for (const [i, p] of pages.entries()) assert.ok(rel(a.rates[i]!, (budget * p.rate) / sum) < 1e-9, `page ${i}`);
  // The multiplier is g(x) at the common x = Σλ/B.
  assert.ok(rel(a.mu, g(sum / budget)) < 1e-9);
});

test('freshness matches the Lagrangian optimum within 1 % on small populations (direct maximisation)', () => {
  const cases: { pages: Page[]; budget: number }[] = [
    { pages: [{ rate: 1 / DAY_S }, { rate: 1 / (10 * DAY_S) }], budget: 1 / (2 * DAY_S) },
    { pages: [{ rate: 1 / (6 * HOUR_S) }, { rate: 1 / (3 * DAY_S) }], budget: 1 / (12 * HOUR_S) },
    { pages: [{ rate: 1 / (2 * HOUR_S) }, { rate: 1 / DAY_S }, { rate: 1 / (30 * DAY_S) }], budget: 1 / (8 * HOUR_S) },
    { pages: [{ rate: 1 / HOUR_S, weight: 2 }, { rate: 1 / (2 * DAY_S) }, { rate: 1 / (9 * DAY_S), weight: 1.5 }], budget: 1 / (4 * HOUR_S) },
  ];
  for (const [k, c] of cases.entries()) {
    const a = allocateBudget('freshness', c.pages, c.budget);
    assert.ok(rel(a.rates.reduce((s, f) => s + f, 0), c.budget) < 1e-9, `case ${k}: the budget is spent`);
    const best = bruteForce('freshness', c.pages, c.budget);
    for (const [i, f] of a.rates.entries()) {
      // Within 1 % of the budget's scale per page (a dropped page's optimum is 0).
      assert.ok(Math.abs(f - best[i]!) <= 0.01 * Math.max(best[i]!, c.budget / 100), `case ${k} page ${i}: ${f} vs ${best[i]}`);
    }
    assert.ok(objectiveValue('freshness', c.pages, a.rates) >= objectiveValue('freshness', c.pages, best) - 1e-9, `case ${k}: no better point`);
  }
});

test('versions with importance weights matches direct maximisation within 1 %', () => {
  const pages: Page[] = [{ rate: 1 / (3 * HOUR_S), weight: 1 }, { rate: 1 / DAY_S, weight: 2 }, { rate: 1 / (20 * DAY_S), weight: 1.3 }];
  const budget = 1 / (5 * HOUR_S);
  const a = allocateBudget('versions', pages, budget);
  const best = bruteForce('versions', pages, budget);
  for (const [i, f] of a.rates.entries()) assert.ok(Math.abs(f - best[i]!) <= 0.01 * Math.max(best[i]!, budget / 100), `page ${i}: ${f} vs ${best[i]}`);
  // Weight raises a page's share at the same rate.
  const same = allocateBudget('versions', [{ rate: 1 / DAY_S, weight: 1 }, { rate: 1 / DAY_S, weight: 2 }], budget);
  assert.ok(same.rates[1]! > same.rates[0]!);
});

test('freshness drops pages too fast to keep fresh; the KKT conditions hold', () => {
  const pages: Page[] = [{ rate: 1 / (20 * 60) }, { rate: 1 / DAY_S }, { rate: 1 / (4 * DAY_S) }, { rate: 1 / (40 * DAY_S) }, { rate: 0 }];
  const budget = 1 / DAY_S;
  const a = allocateBudget('freshness', pages, budget);
  assert.equal(a.rates[0], 0, 'a page changing every 20 minutes is not worth a fetch at this budget');
  assert.equal(a.rates[4], 0, 'a page that never changes needs no revisit');
  for (const [i, p] of pages.entries()) {
    const f = a.rates[i]!;
    if (f > 0) assert.ok(rel(g(p.rate / f) / p.rate, a.mu) < 1e-6, `page ${i}: marginal freshness per fetch equals μ`);
    else if (p.rate > 0) assert.ok(1 / p.rate <= a.mu * (1 + 1e-9), `page ${i}: dropped only when even the first fetch is worth less than μ`);
  }
});

test('default multipliers: freshness revisits slow pages every √(τ·τ0), versions every τ', () => {
  const tau0 = DEFAULT_REVISIT_OPTIONS.freshnessScaleS;
  // √ is the slow-page limit: the exact interval is longer by about x/3, x = √(τ0/τ) changes per revisit.
  for (const tau of [30 * DAY_S, 1000 * DAY_S]) {
    const exact = goalInterval('freshness', tau, 1, defaultMultiplier('freshness', tau0));
    const x = Math.sqrt(tau0 / tau);
    assert.ok(exact > Math.sqrt(tau * tau0) && rel(exact, Math.sqrt(tau * tau0)) < x / 2, `τ = ${tau / DAY_S} d: ${exact}`);
  }
  assert.ok(rel(goalInterval('freshness', 1000 * DAY_S, 1, defaultMultiplier('freshness', tau0)), Math.sqrt(1000 * DAY_S * tau0)) < 0.01);
  assert.ok(rel(goalInterval('versions', 3 * DAY_S, 1, defaultMultiplier('versions', tau0)), 3 * DAY_S) < 1e-9);
  assert.equal(goalInterval('freshness', tau0 / 2.5, 1, defaultMultiplier('freshness', tau0)), Infinity, 'faster than τ0/2: dropped');
  // An important page (w = 2) is kept even a little faster than that.
  assert.ok(Number.isFinite(goalInterval('freshness', tau0 / 2.5, 2, defaultMultiplier('freshness', tau0))));
});

test('a host budget: the dual step converges to the Lagrangian allocation under the budget (Kolobov et al.)', () => {
  const mu0 = defaultMultiplier('freshness', 6 * HOUR_S);
  const taus = Array.from({ length: 40 }, (_, i) => 3 * HOUR_S * Math.exp((i / 39) * Math.log(240)));
  const capacity = 1 / (4 * HOUR_S); // 6 requests a day for 40 pages
  let k = 1;
  let intervals = taus.map((t) => goalInterval('freshness', t, 1, mu0 * k));
  const load = (): number => intervals.reduce((s, T) => s + (Number.isFinite(T) ? 1 / T : 0), 0);
  assert.ok(load() > 2 * capacity, 'the unconstrained plan is over the budget');
  // One outcome re-plans one page, round robin, as revisits come due.
  for (let round = 0; round < 30; round++) {
    for (let i = 0; i < taus.length; i++) {
      k = hostMultiplierStep('freshness', k, load(), capacity, 1 / taus.length);
      intervals[i] = goalInterval('freshness', taus[i]!, 1, mu0 * k);
    }
  }
  intervals = taus.map((t) => goalInterval('freshness', t, 1, mu0 * k));
  assert.ok(rel(load(), capacity) < 0.02, `load ${load()} vs capacity ${capacity}`);
  const exact = allocateBudget('freshness', taus.map((t) => ({ rate: 1 / t })), load());
  assert.ok(rel(exact.mu, mu0 * k) < 0.01, `μ = ${mu0 * k} vs ${exact.mu}`);
  // With room again the multiplier falls back to 1, never below.
  assert.equal(hostMultiplierStep('freshness', 1.5, capacity / 10, capacity), 1);
  assert.equal(hostMultiplierStep('freshness', 1, capacity / 10, capacity), 1);
  assert.ok(hostMultiplierStep('versions', 1, 2 * capacity, capacity) > 1.9);
});

test('the estimator under the goal allocation', () => {
  const rng = (): number => 0.5;
  // The point-estimate form (posterior: false) of pure freshness (no value per captured version);
  // the posterior form is the next test's, the version value test/unit/revisit-pooled.test.ts's.
  const opts = { ...DEFAULT_REVISIT_OPTIONS, posterior: false, versionValueS: 0 };
  assert.equal(DEFAULT_REVISIT_OPTIONS.allocation, 'goal');
  assert.equal(DEFAULT_REVISIT_OPTIONS.posterior, true);
  assert.equal(opts.goal, 'freshness');
  let s = initialState(0);
  for (let k = 1; k <= 10; k++) s = update(s, { at: k * DAY_S, changed: k % 3 === 0 });
  const n = nextInterval(s, rng, opts);
  assert.equal(n.kind, 'estimate');
  const mu0 = defaultMultiplier('freshness', opts.freshnessScaleS);
  // Importance and the host's multiplier move the interval as the Lagrangian says.
  assert.ok(nextInterval(s, rng, opts, { weight: 2 }).interval < n.interval);
  assert.ok(nextInterval(s, rng, opts, { multiplier: 4 }).interval > n.interval);
  const versions = nextInterval(s, rng, { ...opts, goal: 'versions' });
  assert.ok(versions.interval > 0 && versions.interval !== n.interval);
  assert.ok(rel(n.interval, goalInterval('freshness', (nextInterval(s, rng, { ...opts, allocation: 'proportional' }).interval), 1, mu0)) < 1e-9);
  // Changed at every access, every 40 minutes: too fast to keep fresh, revisited only at the dropped interval.
  let c = initialState(0);
  for (let k = 1; k <= 4; k++) c = update(c, { at: k * 2400, changed: true });
  const fast = nextInterval(c, rng, opts);
  assert.equal(fast.kind, 'backoffDown');
  assert.equal(fast.interval, opts.droppedIntervalS);
  // Changed at every access a day apart: a finite estimate, revisited sooner than a day.
  let d = initialState(0);
  for (let k = 1; k <= 3; k++) d = update(d, { at: k * DAY_S, changed: true });
  const daily = nextInterval(d, rng, opts);
  assert.ok(daily.interval < DAY_S && daily.interval > HOUR_S, `${daily.interval}`);
});

test('known-rate policies replayed at a budget spend at most it, and nearly all of it', () => {
  const H = 3_600_000;
  const pages = Array.from({ length: 50 }, (_, i) => ({
    changes: [],
    fetches: [i * 60_000],
    meanIntervalMs: 2 * H * Math.exp((i / 49) * Math.log(720)),
  }));
  const end = 10 * 24 * H;
  for (const goal of ['freshness', 'versions'] as const) {
    const r = knownRatePolicy(goal, pages, 0, end, 600);
    const n = r.pages.reduce((s, p) => s + p.fetches.length, 0);
    assert.ok(n <= 600 && n >= 580, `${goal}: ${n} fetches`);
    assert.ok(r.pages.every((p, i) => p.fetches[0] === i * 60_000));
  }
  const opt = knownRatePolicy('freshness', pages, 0, end, 600);
  assert.equal(opt.pages[0]!.fetches.length, 1, 'the fastest page is dropped by the freshness optimum');
  assert.ok(optimalRate('freshness', 1, 1, 0.5) > 0);
});

test('the posterior allocation: learns the rate, needs no back-off, and meets the known-rate rule', () => {
  const grid = logUniformGrid(1800, 730 * DAY_S);
  const mu = defaultMultiplier('freshness', 6 * HOUR_S);
  // A page changing every 2 days visited daily for 60 days (expected outcomes, deterministic).
  const tau = 2 * DAY_S;
  let s = initialState(0);
  for (let k = 1; k <= 60; k++) s = update(s, { at: k * DAY_S, changed: k % 5 === 0 || k % 5 === 2 });
  const est = posteriorMeanInterval(s, grid);
  assert.ok(rel(est, tau) < 0.25, `posterior mean ${est / DAY_S} days`);
  // With that much evidence the expected-freshness interval is the known-rate one (within 10 %).
  const post = posteriorInterval('freshness', s, grid, 1, mu);
  assert.ok(rel(post, goalInterval('freshness', est, 1, mu)) < 0.1, `${post} vs ${goalInterval('freshness', est, 1, mu)}`);
  // Never changed: the interval grows with the unchanged time, without a back-off constant.
  let quiet = initialState(0);
  const intervals: number[] = [];
  for (let t = DAY_S; t < 40 * DAY_S; t += intervals.at(-1) ?? DAY_S) {
    quiet = update(quiet, { at: t, changed: false });
    intervals.push(posteriorInterval('freshness', quiet, grid, 1, mu));
  }
  assert.ok(intervals.every((x, i) => i === 0 || x > intervals[i - 1]!), intervals.map((x) => (x / DAY_S).toFixed(2)).join(' '));
  // Changed at every visit 40 minutes apart: not worth keeping fresh.
  let fast = initialState(0);
  for (let k = 1; k <= 6; k++) fast = update(fast, { at: k * 2400, changed: true });
  assert.equal(posteriorInterval('freshness', fast, grid, 1, mu), Infinity);
  const pure = { ...DEFAULT_REVISIT_OPTIONS, versionValueS: 0 };
  assert.equal(nextInterval(fast, () => 0.5, pure).interval, DEFAULT_REVISIT_OPTIONS.droppedIntervalS);
  // By default a captured version is worth something: such a page is still visited, well before the dropped interval.
  assert.ok(DEFAULT_REVISIT_OPTIONS.versionValueS > 0);
  assert.ok(nextInterval(fast, () => 0.5).interval < DEFAULT_REVISIT_OPTIONS.droppedIntervalS / 4);
  // Versions: a page always changing gets short intervals, never dropped below the weight's reach.
  assert.ok(Number.isFinite(posteriorInterval('versions', fast, grid, 1, defaultMultiplier('versions', 6 * HOUR_S))));
});
