/**
 * Which due URLs to revisit (Akamine et al.) and whether a server can bear its revisit schedule
 * (the incremental archive crawler paper, section 4). Pure functions; times in seconds.
 *
 * Selection: γ(p,t) = α(p) + (1 − α(p)) · β(p,t),  β(p,t) = 1 − exp(−(t − t_crawl(p)) / τ(p)).
 * β is the probability that a Poisson page with mean change interval τ changed since its last
 * access; α lifts important pages regardless of change.
 *
 * Load: L_i = Σ_j 1/T_ij over server i's pages; serial access needs an interval ≤ 1/L_i. The
 * server is overloaded when 1/L_i is below the politeness interval or R_i = (1/L_i)/max_k e_ik < S/C.
 */
import type { Rng } from './estimator.ts';

// ---------------------------------------------------------------------------------------------
// Selection probability

/** β: probability of at least one change in (tCrawl, t] for mean change interval tau. */
export function changeProbability(t: number, tCrawl: number, tau: number): number {
  const dt = t - tCrawl;
  if (!(dt > 0)) return 0;
  if (!(tau > 0)) return 1;
  return -Math.expm1(-dt / tau);
}

export interface AlphaOptions {
  /** the largest importance score in the population (normaliser) */
  maxScore: number;
  /** α for the most important page; keeps importance from swamping change evidence */
  alphaMax: number;
  /** compress heavy-tailed scores (PageRank-like) with log1p before normalising */
  log: boolean;
}

export const DEFAULT_ALPHA_OPTIONS: Readonly<AlphaOptions> = Object.freeze({ maxScore: 1, alphaMax: 0.5, log: true });

/**
 * α(p) from an importance score (the scheduler's IPR approximation, ≥ 0):
 * α = alphaMax · n, with n = log1p(score)/log1p(maxScore) (or score/maxScore when log is false),
 * clamped to [0, 1]. PageRank mass is heavy-tailed, so the log keeps mid-ranked pages from all
 * collapsing to α ≈ 0.
 */
export function alphaFromScore(score: number, opts: AlphaOptions = DEFAULT_ALPHA_OPTIONS): number {
  if (!(score > 0) || !(opts.maxScore > 0)) return 0;
  const n = opts.log ? Math.log1p(score) / Math.log1p(opts.maxScore) : score / opts.maxScore;
  return opts.alphaMax * Math.min(1, Math.max(0, n));
}

/** γ(p,t) = α + (1 − α)·β. */
export function selectionProbability(alpha: number, t: number, tCrawl: number, tau: number): number {
  const a = Math.min(1, Math.max(0, alpha));
  return a + (1 - a) * changeProbability(t, tCrawl, tau);
}

export interface Candidate {
  /** α(p) */
  alpha: number;
  /** last access time (whether or not it changed) */
  tCrawl: number;
  /** mean change interval τ (e.g. 1/λ̂ from the estimator) */
  tau: number;
}

/**
 * Deterministic choice when capacity is short: the k due candidates with the highest γ at `now`
 * (ties keep input order). Returns their indices.
 */
export function topByGamma(cands: readonly Candidate[], now: number, k: number): number[] {
  const scored = cands.map((c, idx) => ({ idx, g: selectionProbability(c.alpha, now, c.tCrawl, c.tau) }));
  scored.sort((x, y) => y.g - x.g || x.idx - y.idx);
  return scored.slice(0, Math.max(0, k)).map((s) => s.idx);
}

/** The paper's stochastic rule: each candidate is selected with probability γ. Returns indices. */
export function sampleByGamma(cands: readonly Candidate[], now: number, rng: Rng): number[] {
  const out: number[] = [];
  cands.forEach((c, idx) => {
    if (rng() < selectionProbability(c.alpha, now, c.tCrawl, c.tau)) out.push(idx);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Server load index

/**
 * L_i kept incrementally as a compensated (Neumaier) sum so that long runs of add / remove /
 * change stay equal to a recomputation; n is the page count (for the politeness tier).
 */
export interface LoadIndex {
  /** running sum of 1/T */
  L: number;
  /** compensation term of the sum */
  k: number;
  /** pages counted */
  n: number;
}

export function emptyLoad(): LoadIndex {
  return { L: 0, k: 0, n: 0 };
}

function addTerm(x: LoadIndex, term: number, dn: number): LoadIndex {
  const t = x.L + term;
  const k = Math.abs(x.L) >= Math.abs(term) ? x.k + (x.L - t + term) : x.k + (term - t + x.L);
  return { L: t, k, n: x.n + dn };
}

/** Adds a page with revisit interval T (seconds). */
export function loadAdd(x: LoadIndex, intervalS: number): LoadIndex {
  return addTerm(x, 1 / intervalS, 1);
}

/** Removes a page that had interval T. */
export function loadRemove(x: LoadIndex, intervalS: number): LoadIndex {
  return addTerm(x, -1 / intervalS, -1);
}

/** A page's interval changed from `oldS` to `newS`. */
export function loadChange(x: LoadIndex, oldS: number, newS: number): LoadIndex {
  return addTerm(addTerm(x, -1 / oldS, 0), 1 / newS, 0);
}

/** Current Σ 1/T (per second). */
export function loadValue(x: LoadIndex): number {
  const v = x.L + x.k;
  return x.n === 0 || v < 0 ? 0 : v;
}

/** Recomputation from scratch, for checks. */
export function loadOf(intervalsS: Iterable<number>): number {
  let x = emptyLoad();
  for (const t of intervalsS) x = loadAdd(x, t);
  return loadValue(x);
}

/** Theoretical upper bound on the server access interval, 1/L_i (seconds); Infinity for an idle server. */
export function theoreticalInterval(load: number): number {
  return load > 0 ? 1 / load : Infinity;
}

/** Politeness floor of the incremental archive crawler paper: 1 minute, 5 s for servers with ≥ 10,000 pages. */
export function allowedInterval(pageCount: number, base = 60, big = 5, bigPages = 10_000): number {
  return pageCount >= bigPages ? big : base;
}

export interface LoadCheck {
  /** 1/L_i, seconds */
  interval: number;
  /** R_i = (1/L_i) / max_k e_ik */
  R: number;
  /** 1/L_i < allowed interval */
  byPoliteness: boolean;
  /** R_i < S/C */
  byResources: boolean;
  overloaded: boolean;
  /** smallest interval the server's schedule must allow: max(allowed, (S/C)·max e) */
  required: number;
}

export interface LoadContext {
  /** politeness floor for this server, seconds */
  allowedIntervalS: number;
  /** max_k e_ik: slowest page fetch time on this server, seconds */
  maxFetchS: number;
  /** S: servers being crawled */
  servers: number;
  /** C: parallel connections */
  connections: number;
}

export function checkLoad(load: number, ctx: LoadContext): LoadCheck {
  const interval = theoreticalInterval(load);
  const sc = ctx.servers / ctx.connections;
  const R = ctx.maxFetchS > 0 ? interval / ctx.maxFetchS : Infinity;
  const byPoliteness = interval < ctx.allowedIntervalS;
  const byResources = R < sc;
  return {
    interval,
    R,
    byPoliteness,
    byResources,
    overloaded: byPoliteness || byResources,
    required: Math.max(ctx.allowedIntervalS, sc * ctx.maxFetchS),
  };
}

// ---------------------------------------------------------------------------------------------
// Overload remedies (the incremental archive crawler paper, 4.x): stretch every interval by l, or add d to every interval.

/** The factor l ≥ 1 such that multiplying every interval by l makes 1/L_i ≥ required. */
export function stretchFactor(load: number, requiredS: number): number {
  return Math.max(1, load * requiredS);
}

/** Multiplies every interval by l (the load index becomes L/l): thins every page's samples evenly. */
export function stretchIntervals(intervalsS: readonly number[], l: number): number[] {
  return intervalsS.map((t) => t * l);
}

/**
 * The smallest d ≥ 0 (seconds) such that Σ w_j/(T_j + d) ≤ 1/required (w_j = 1 unless weights are
 * given, e.g. counts of a histogram). Adding d hits the most frequently revisited pages hardest and
 * barely touches the rest. Bisection on a monotone sum; d ≤ n·required − min T suffices because then
 * every term is ≤ w_j/(n·required), n = Σ w_j.
 */
export function requiredDelay(intervalsS: readonly number[], requiredS: number, weights?: readonly number[]): number {
  const target = 1 / requiredS;
  const load = (d: number): number => {
    let s = 0;
    for (let j = 0; j < intervalsS.length; j++) s += (weights?.[j] ?? 1) / ((intervalsS[j] ?? 0) + d);
    return s;
  };
  if (intervalsS.length === 0 || load(0) <= target) return 0;
  let n = 0;
  for (let j = 0; j < intervalsS.length; j++) n += weights?.[j] ?? 1;
  let lo = 0;
  let hi = n * requiredS;
  for (let i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (load(mid) <= target) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Adds d seconds to every interval. */
export function delayIntervals(intervalsS: readonly number[], d: number): number[] {
  return intervalsS.map((t) => t + d);
}
