/**
 * Change-rate estimation and revisit intervals for known URLs (the incremental archive crawler paper, section 3).
 *
 * A page's changes are modelled as a Poisson process with rate λ. Each access either detected a
 * change (new content hash, not a 304 / same hash) or did not. Equation (4) estimates
 *
 *     1/λ̂ ≈ t̄c / ln(T_total / T_stable),   0 < T_stable < T_total,
 *     t̄c = √(tc_min · tc_avg),   tc_avg = (T_total − T_stable) / m,
 *
 * from four running sums, so no per-access history is stored. The singular cases (never changed,
 * changed every time) fall back to exponential back-off of the last interval; the interval after
 * the first access is uniform random in a range (or derived from Last-Modified, Akamine et al., or
 * from the host's pooled prior when the caller has one).
 *
 * Cho & Garcia-Molina's maximum-likelihood estimator for irregular access (equation (2)) is here
 * as a comparator; it needs every change-detecting interval, so it keeps a history.
 *
 * Everything is pure: times are seconds (any epoch), randomness comes from the caller.
 */
import { defaultMultiplier, goalInterval } from './allocation.ts';
import { logUniformGrid, posteriorInterval } from './posterior.ts';
import type { RevisitGoal } from './allocation.ts';
import type { RateGrid } from './posterior.ts';

/** Uniform [0, 1) source; the caller owns seeding so simulations stay deterministic. */
export type Rng = () => number;

export const DAY_S = 86_400;
export const HOUR_S = 3_600;

/**
 * Per-URL estimator state. Field names are one letter because one record exists per known URL;
 * all values are numbers in seconds (m is a count), about 60 bytes as JSON and 24 bytes packed.
 */
export interface RevisitState {
  /** T_total: time from the first access to the last one (sum of all access intervals) */
  a: number;
  /** T_stable: sum of the access intervals that detected no change */
  s: number;
  /** m: number of accesses that detected a change */
  m: number;
  /** tc_min: shortest interval that detected a change (0 while m = 0) */
  c: number;
  /** time of the last access */
  l: number;
  /** last interval: the last observed access interval, or the Last-Modified hint before the 2nd access */
  i: number;
}

export interface RevisitOptions {
  /** Range of the uniform random interval before the 2nd access (no Last-Modified). */
  secondVisitMinS: number;
  secondVisitMaxS: number;
  /** Bounds for the Last-Modified-derived interval before the 2nd access. */
  lastModifiedMinS: number;
  lastModifiedMaxS: number;
  /**
   * Back-off constant of the singular cases: the assumed change interval is multiplied by it when
   * nothing changed, divided when everything did. The revisit interval moves by the same factor under
   * `proportional` allocation and by its square root under `sqrt`.
   */
  backoff: number;
  /** No interval is shorter than this. */
  minIntervalS: number;
  /** Intervals beyond the cap are replaced by a uniform random draw in [capRandomMinS, capRandomMaxS]. */
  capS: number;
  capRandomMinS: number;
  capRandomMaxS: number;
  /**
   * How an estimated change interval τ̂ becomes a revisit interval. `proportional` revisits every
   * τ̂ (the incremental archive crawler paper). `sqrt` revisits every √(τ̂ · freshnessScaleS): the slow-page form of Cho &
   * Garcia-Molina's freshness-optimal allocation (visit rate ∝ √λ), which spends less of the budget
   * on pages that change faster than they can be kept fresh and more on slowly changing ones.
   */
  allocation: 'proportional' | 'sqrt' | 'goal';
  /**
   * τ0 of the `sqrt` allocation: pages changing every τ0 are revisited every τ0. Under `goal` it
   * sets the freshness multiplier μ0 = τ0/2 (services/revisit/allocation.ts): the same intervals for
   * slowly changing pages, none for pages changing faster than every τ0/2.
   */
  freshnessScaleS: number;
  /**
   * What the `goal` allocation optimises: `freshness` (the share of time copies are up to date, Cho
   * & Garcia-Molina's Lagrangian solution) or `versions` (distinct versions captured per fetch).
   */
  goal: RevisitGoal;
  /**
   * Under the `freshness` goal: what one captured version is worth, in seconds of fresh copy. The
   * objective becomes Σ w·(F + c·V): 0 is Cho & Garcia-Molina's pure freshness (pages too fast to
   * keep fresh are dropped); c > 0 still visits them, towards the proportional policy as λ·c grows.
   */
  versionValueS: number;
  /** Under `goal`, pages the objective would not revisit at all (too fast to keep fresh) are revisited this often. */
  droppedIntervalS: number;
  /**
   * Under `goal`: allocate on the posterior over the change rate (services/revisit/posterior.ts),
   * from a log-uniform prior over [priorMinS, priorMaxS], rather than on the point estimate with
   * back-off in the singular cases.
   */
  posterior: boolean;
  /**
   * With `posterior`: each host's pages pool their evidence into the prior of the others
   * (empirical Bayes, services/revisit/pooled.ts); the caller passes it as AllocationContext.prior.
   */
  pooled: boolean;
  priorMinS: number;
  priorMaxS: number;
}

/** Per-page and per-host inputs of the `goal` allocation. */
export interface AllocationContext {
  /** importance weight w ≥ 1 of the page (default 1) */
  weight?: number;
  /** the host's multiplier factor k ≥ 1 (μ = k·μ0) when its budget binds (default 1) */
  multiplier?: number;
  /**
   * Under `goal` with `posterior`: the page's prior over the change rate when its host's pages
   * have pooled one (services/revisit/pooled.ts), instead of the log-uniform base prior; it also
   * sets the 2nd interval of a page without Last-Modified.
   */
  prior?: RateGrid;
}

export const DEFAULT_REVISIT_OPTIONS: Readonly<RevisitOptions> = Object.freeze({
  secondVisitMinS: 12 * HOUR_S,
  secondVisitMaxS: 3 * DAY_S,
  lastModifiedMinS: HOUR_S,
  lastModifiedMaxS: 30 * DAY_S,
  backoff: 2,
  minIntervalS: HOUR_S,
  capS: 400 * DAY_S,
  capRandomMinS: 300 * DAY_S,
  capRandomMaxS: 400 * DAY_S,
  allocation: 'goal',
  freshnessScaleS: 6 * HOUR_S,
  goal: 'freshness',
  versionValueS: 3 * HOUR_S,
  droppedIntervalS: 7 * DAY_S,
  posterior: true,
  pooled: true,
  priorMinS: 30 * 60,
  priorMaxS: 730 * DAY_S,
});

export interface Outcome {
  /** access time, seconds */
  at: number;
  /** true when the content changed since the previous access (new hash), false for 304 / same hash */
  changed: boolean;
}

/**
 * State after the first access. A Last-Modified time (seconds) seeds the 2nd interval: for a
 * Poisson page observed at a random moment the time since its last change is Exp(λ)-distributed,
 * so the age now − Last-Modified is a one-sample estimate of 1/λ (Akamine et al. uses it for new URLs).
 */
export function initialState(firstFetchAt: number, lastModified?: number): RevisitState {
  const age = lastModified != null && Number.isFinite(lastModified) ? firstFetchAt - lastModified : 0;
  return { a: 0, s: 0, m: 0, c: 0, l: firstFetchAt, i: age > 0 ? age : 0 };
}

/** Folds one access outcome into the state (returns a new object). Out-of-order or repeated outcomes are ignored. */
export function update(state: RevisitState, outcome: Outcome): RevisitState {
  const dt = outcome.at - state.l;
  if (!(dt > 0)) return state;
  if (outcome.changed) {
    const m = state.m + 1;
    return { a: state.a + dt, s: state.s, m, c: m === 1 ? dt : Math.min(state.c, dt), l: outcome.at, i: dt };
  }
  return { a: state.a + dt, s: state.s + dt, m: state.m, c: state.c, l: outcome.at, i: dt };
}

/** 1/λ̂ by equation (4), in seconds; null in the singular cases (T_total = 0, T_stable = 0 or T_stable = T_total). */
export function estimateInterval(state: RevisitState): number | null {
  const { a, s, m, c } = state;
  if (!(s > 0 && s < a && m > 0 && c > 0)) return null;
  const tcAvg = (a - s) / m;
  const tBar = Math.sqrt(c * tcAvg);
  const logRatio = Math.log(a / s);
  // a/s can round to 1 for a vanishing changed share; treat that as "never changed".
  if (!(logRatio > 0)) return null;
  return tBar / logRatio;
}

/** Which branch of the schedule produced an interval; exposed for tests and metrics. */
export type IntervalKind = 'second' | 'lastModified' | 'backoffUp' | 'backoffDown' | 'estimate';

export interface NextInterval {
  /** seconds until the next access */
  interval: number;
  kind: IntervalKind;
  /** true when the cap replaced the interval with a 300–400-day draw */
  capped: boolean;
}

/**
 * The shared schedule around any estimator: 2nd-visit rule, back-off in singular cases, the
 * minimum and the 400-day cap. `estimate` is 1/λ̂ in seconds or null when not estimable.
 */
export function scheduleInterval(
  state: RevisitState,
  estimate: number | null,
  rng: Rng,
  opts: RevisitOptions = DEFAULT_REVISIT_OPTIONS,
  ctx: AllocationContext = {},
): NextInterval {
  let interval: number;
  let kind: IntervalKind;
  const pooled = opts.allocation === 'goal' && opts.posterior ? ctx.prior : undefined;
  if (state.a === 0) {
    const fromAge = state.i > 0 ? allocate(state.i, opts, ctx) : Infinity;
    if (Number.isFinite(fromAge)) {
      interval = clamp(fromAge, opts.lastModifiedMinS, opts.lastModifiedMaxS);
      kind = 'lastModified';
    } else if (pooled) {
      // No evidence of its own yet: the interval that is best for a page drawn from its host's
      // pages, but no longer than the random draw's longest (a new page may not be like the old ones).
      const mu = defaultMultiplier(opts.goal, opts.freshnessScaleS) * (ctx.multiplier ?? 1);
      interval = Math.min(opts.secondVisitMaxS, posteriorInterval(opts.goal, state, pooled, ctx.weight ?? 1, mu, opts.versionValueS));
      kind = 'second';
    } else {
      interval = opts.secondVisitMinS + rng() * (opts.secondVisitMaxS - opts.secondVisitMinS);
      kind = 'second';
    }
  } else if (opts.allocation === 'goal' && opts.posterior) {
    const mu = defaultMultiplier(opts.goal, opts.freshnessScaleS) * (ctx.multiplier ?? 1);
    interval = dropped(posteriorInterval(opts.goal, state, pooled ?? logUniformGrid(opts.priorMinS, opts.priorMaxS), ctx.weight ?? 1, mu, opts.versionValueS), opts);
    kind = estimate != null ? 'estimate' : state.m === 0 || state.s >= state.a ? 'backoffUp' : 'backoffDown';
  } else if (estimate != null && Number.isFinite(estimate) && estimate > 0) {
    interval = dropped(allocate(estimate, opts, ctx), opts);
    kind = 'estimate';
  } else if (state.m === 0 || state.s >= state.a) {
    // Never changed: stretch. Also covers a log ratio that rounded to zero.
    interval = state.i * backoffStep(opts);
    kind = 'backoffUp';
  } else if (opts.allocation === 'goal') {
    // Changed at every access: as if half the shortest interval had passed unchanged (a finite
    // estimate that falls as the changes keep coming), then the goal's allocation, which drops
    // pages that change faster than they can be kept fresh rather than chasing them.
    const pseudo = estimateInterval({ ...state, a: state.a + state.c / 2, s: state.c / 2 });
    interval = pseudo === null ? state.i / backoffStep(opts) : dropped(allocate(pseudo, opts, ctx), opts);
    kind = 'backoffDown';
  } else {
    // Changed at every access: shrink towards the minimum.
    interval = state.i / backoffStep(opts);
    kind = 'backoffDown';
  }
  return capInterval(Math.max(interval, opts.minIntervalS), kind, rng, opts);
}

/**
 * Revisit interval for an estimated change interval τ̂ (seconds) under the configured allocation;
 * Infinity when the `goal` allocation would not revisit the page.
 */
export function allocate(
  changeIntervalS: number,
  opts: Pick<RevisitOptions, 'allocation' | 'freshnessScaleS'> & Partial<Pick<RevisitOptions, 'goal' | 'versionValueS'>> = DEFAULT_REVISIT_OPTIONS,
  ctx: AllocationContext = {},
): number {
  if (opts.allocation === 'goal') {
    const goal = opts.goal ?? 'freshness';
    // F + c·V has the marginal g(x)·(1/λ + c): freshness's rule at weight w·(1 + c·λ).
    const c = goal === 'freshness' ? (opts.versionValueS ?? 0) : 0;
    const weight = (ctx.weight ?? 1) * (1 + c / changeIntervalS);
    return goalInterval(goal, changeIntervalS, weight, defaultMultiplier(goal, opts.freshnessScaleS) * (ctx.multiplier ?? 1));
  }
  return opts.allocation === 'sqrt' ? Math.sqrt(changeIntervalS * opts.freshnessScaleS) : changeIntervalS;
}

function dropped(interval: number, opts: RevisitOptions): number {
  return Number.isFinite(interval) ? interval : opts.droppedIntervalS;
}

function backoffStep(opts: RevisitOptions): number {
  // Freshness revisits slow pages at √(τ·τ0): the interval moves by √backoff when τ moves by backoff.
  return opts.allocation === 'sqrt' || (opts.allocation === 'goal' && opts.goal === 'freshness') ? Math.sqrt(opts.backoff) : opts.backoff;
}

function capInterval(interval: number, kind: IntervalKind, rng: Rng, opts: RevisitOptions): NextInterval {
  if (interval <= opts.capS) return { interval, kind, capped: false };
  // Still revisit very stable pages: servers and domains die, and the draw spreads the load.
  return {
    interval: opts.capRandomMinS + rng() * (opts.capRandomMaxS - opts.capRandomMinS),
    kind,
    capped: true,
  };
}

/** The next revisit interval (seconds) for the equation-(4) estimator. */
export function nextInterval(state: RevisitState, rng: Rng, opts: RevisitOptions = DEFAULT_REVISIT_OPTIONS, ctx: AllocationContext = {}): NextInterval {
  return scheduleInterval(state, estimateInterval(state), rng, opts, ctx);
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

// ---------------------------------------------------------------------------------------------
// Serialisation: JSON (as stored today) and a fixed 24-byte packing (whole seconds, uint32 each).

/** The state in whole seconds: what is stored (sub-second precision means nothing for change intervals ≥ 1 min). */
export function wholeSeconds(state: RevisitState): RevisitState {
  const r = Math.round;
  return { a: r(state.a), s: r(state.s), m: state.m, c: r(state.c), l: r(state.l), i: r(state.i) };
}

/** JSON with whole seconds; about 60 bytes for a typical state. */
export function serializeState(state: RevisitState): string {
  return JSON.stringify(wholeSeconds(state));
}

export const PACKED_STATE_BYTES = 24;

/** Packs the state into 24 bytes: six uint32 fields (seconds; epoch times fit until 2106). */
export function packState(state: RevisitState, out = new Uint8Array(PACKED_STATE_BYTES)): Uint8Array {
  const v = new DataView(out.buffer, out.byteOffset, PACKED_STATE_BYTES);
  const u = (x: number): number => Math.min(0xffffffff, Math.max(0, Math.round(x)));
  v.setUint32(0, u(state.a));
  v.setUint32(4, u(state.s));
  v.setUint32(8, u(state.m));
  v.setUint32(12, u(state.c));
  v.setUint32(16, u(state.l));
  v.setUint32(20, u(state.i));
  return out;
}

export function unpackState(buf: Uint8Array): RevisitState {
  if (buf.byteLength < PACKED_STATE_BYTES) throw new RangeError(`packed revisit state needs ${PACKED_STATE_BYTES} bytes`);
  const v = new DataView(buf.buffer, buf.byteOffset, PACKED_STATE_BYTES);
  return { a: v.getUint32(0), s: v.getUint32(4), m: v.getUint32(8), c: v.getUint32(12), l: v.getUint32(16), i: v.getUint32(20) };
}

// ---------------------------------------------------------------------------------------------
// Comparator: Cho & Garcia-Molina's MLE for irregular access (equation (2)), full history.

/**
 * History needed by equation (2): the change-detecting intervals tc_i (T_stable = Σ tu_j is in
 * `base.s`). Intervals are grouped in 5 % log-spaced buckets (count and sum per bucket, the bucket
 * mean stands for its members) so that long histories stay cheap to re-solve; equal intervals are
 * kept exactly. The state is mutated in place by choObserve.
 */
export interface ChoState {
  /** the shared schedule fields (same meaning as RevisitState) */
  base: RevisitState;
  /** per bucket: sum of tc_i */
  tSum: number[];
  /** per bucket: count of tc_i */
  tN: number[];
  /** bucket key → index into tSum / tN */
  keys: Map<number, number>;
  /** last solution λ̂ (warm start), 0 when none */
  lam: number;
}

const CHO_BUCKET = Math.log(1.05);

export function choInitialState(firstFetchAt: number, lastModified?: number): ChoState {
  return { base: initialState(firstFetchAt, lastModified), tSum: [], tN: [], keys: new Map(), lam: 0 };
}

/** Folds one outcome into the comparator state (in place). */
export function choObserve(state: ChoState, outcome: Outcome): void {
  const base = update(state.base, outcome);
  if (base === state.base) return;
  state.base = base;
  if (!outcome.changed) return;
  const key = Math.round(Math.log(base.i) / CHO_BUCKET);
  const idx = state.keys.get(key);
  if (idx === undefined) {
    state.keys.set(key, state.tSum.length);
    state.tSum.push(base.i);
    state.tN.push(1);
  } else {
    state.tSum[idx] = (state.tSum[idx] ?? 0) + base.i;
    state.tN[idx] = (state.tN[idx] ?? 0) + 1;
  }
}

/**
 * Solves Σ_i tc_i / (exp(λ tc_i) − 1) = Σ_j tu_j for λ and returns λ̂, or null when the MLE is at
 * a boundary: no change seen (λ̂ = 0) or no unchanged interval (λ̂ = ∞). `tc` may be grouped:
 * value tc[k] occurring counts[k] times. The left side falls strictly from +∞ to 0 as λ grows,
 * so the root is unique; it is bracketed and refined by Newton steps on ln λ, with bisection
 * whenever a step leaves the bracket.
 */
export function choSolveRate(
  tc: readonly number[],
  tuSum: number,
  counts?: readonly number[],
  guess?: number,
): number | null {
  return solveGrouped(tc, counts, tuSum, guess);
}

/** `sums[k]` is the sum of counts[k] equal-ish intervals (or a single interval when counts is absent). */
function solveGrouped(sums: readonly number[], counts: readonly number[] | undefined, tuSum: number, guess?: number): number | null {
  if (sums.length === 0 || !(tuSum > 0)) return null;
  const w = (k: number): number => (counts ? (counts[k] ?? 0) : 1);
  const tc = counts ? sums.map((s, k) => s / (counts[k] ?? 1)) : sums;
  // g(λ) = f(λ) and its derivative with respect to ln λ, in one pass.
  const eval2 = (lambda: number): [number, number] => {
    let f = -tuSum;
    let d = 0;
    for (let k = 0; k < tc.length; k++) {
      const t = tc[k] ?? 0;
      const x = lambda * t;
      if (x > 700) continue; // both terms underflow to 0
      const em = Math.expm1(x);
      const n = w(k);
      f += (n * t) / em;
      d -= (n * t * x * (em + 1)) / (em * em);
    }
    return [f, d];
  };
  let sumTc = 0;
  let m = 0;
  for (let k = 0; k < tc.length; k++) {
    sumTc += (tc[k] ?? 0) * w(k);
    m += w(k);
  }
  // Start from the warm start or the closed form (3) with the mean tc; bracket by doubling.
  let lambda = guess != null && guess > 0 ? guess : Math.log((sumTc + tuSum) / tuSum) / (sumTc / m);
  if (!(lambda > 0 && Number.isFinite(lambda))) lambda = m / sumTc;
  // Safeguarded Newton on u = ln λ: g(u) falls from +∞ to −T_stable, so every evaluation tells
  // which side of the root it is on; steps are limited to a factor e² and replaced by bisection
  // once both sides are known and a step would leave the bracket.
  let logLo = -Infinity;
  let logHi = Infinity;
  let logL = Math.log(lambda);
  for (let iter = 0; iter < 200; iter++) {
    const [fx, d] = eval2(Math.exp(logL));
    if (fx === 0) return Math.exp(logL);
    if (fx > 0) logLo = logL;
    else logHi = logL;
    let step = d < 0 ? -fx / d : fx > 0 ? 2 : -2;
    step = Math.max(-2, Math.min(2, step));
    let next = logL + step;
    if (!(next > logLo && next < logHi)) next = Number.isFinite(logLo) && Number.isFinite(logHi) ? (logLo + logHi) / 2 : logL + (fx > 0 ? 2 : -2);
    if (Math.abs(next - logL) < 1e-9) return Math.exp(next);
    logL = next;
  }
  return Math.exp(logL);
}

/** 1/λ̂ (seconds) from equation (2) for a plain list of change-detecting intervals. */
export function choMle(tc: readonly number[], tuSum: number): number | null {
  const lam = choSolveRate(tc, tuSum);
  return lam == null ? null : 1 / lam;
}

export function choEstimateInterval(state: ChoState): number | null {
  const lam = solveGrouped(state.tSum, state.tN, state.base.s, state.lam > 0 ? state.lam : undefined);
  if (lam != null) state.lam = lam;
  return lam == null ? null : 1 / lam;
}

export function choNextInterval(state: ChoState, rng: Rng, opts: RevisitOptions = DEFAULT_REVISIT_OPTIONS): NextInterval {
  return scheduleInterval(state.base, choEstimateInterval(state), rng, opts);
}
