/**
 * Revisit allocation under uncertainty: instead of plugging a point estimate λ̂ into the Lagrangian
 * rule (services/revisit/allocation.ts), maximise the *expected* objective over a posterior on λ,
 *
 *   freshness   E[g(λ/f)/λ] = μ/w        versions   E[g(λ/f)] = μ/w
 *
 * (both sides fall as f rises, so one bisection finds f; f = 0 when even f → 0 is worth less than
 * μ). The posterior lives on a log-spaced grid of rates, from a prior (log-uniform over the
 * configured range unless the caller pools one, e.g. per host) and the estimator's running sums:
 * T_stable unchanged time and m change-detecting intervals of mean tc_avg,
 *
 *   L(λ) = exp(−λ·T_stable) · (1 − exp(−λ·tc_avg))^m.
 *
 * The singular cases need no back-off rule: a page never seen changing moves its mass to slow rates
 * as T_stable grows, one always seen changing to fast ones, at the pace the evidence allows, and
 * three or four observations give a usable interval. Pure.
 */
import { g } from './allocation.ts';
import type { RevisitGoal } from './allocation.ts';
import type { RevisitState } from './estimator.ts';

export interface RateGrid {
  /** rates λ_k (per second), ascending */
  rates: Float64Array;
  /** prior log-weights per rate */
  logPrior: Float64Array;
}

const grids = new Map<string, RateGrid>();

/** A log-uniform prior over change intervals in [minS, maxS], `points` rates (cached). */
export function logUniformGrid(minS: number, maxS: number, points = 48): RateGrid {
  const key = `${minS}/${maxS}/${points}`;
  const hit = grids.get(key);
  if (hit) return hit;
  const rates = new Float64Array(points);
  for (let k = 0; k < points; k++) rates[k] = 1 / (maxS * Math.exp((-k / (points - 1)) * Math.log(maxS / minS)));
  const grid = { rates, logPrior: new Float64Array(points) };
  grids.set(key, grid);
  return grid;
}

/** Posterior weights (summing to 1) on the grid given the estimator's sums. */
export function posterior(state: RevisitState, grid: RateGrid): Float64Array {
  const n = grid.rates.length;
  const logW = new Float64Array(n);
  const tc = state.m > 0 ? (state.a - state.s) / state.m : 0;
  let max = -Infinity;
  for (let k = 0; k < n; k++) {
    const lam = grid.rates[k]!;
    let l = (grid.logPrior[k] ?? 0) - lam * state.s;
    if (state.m > 0) l += state.m * Math.log(-Math.expm1(-lam * tc));
    logW[k] = l;
    if (l > max) max = l;
  }
  let sum = 0;
  for (let k = 0; k < n; k++) {
    const w = Math.exp(logW[k]! - max);
    logW[k] = w;
    sum += w;
  }
  for (let k = 0; k < n; k++) logW[k] = logW[k]! / sum;
  return logW;
}

/**
 * Point estimate of the change interval (seconds): the posterior's geometric mean exp E[ln(1/λ)]
 * (the arithmetic mean E[1/λ] is dragged up by the prior's long slow tail while evidence is thin).
 */
export function posteriorMeanInterval(state: RevisitState, grid: RateGrid): number {
  const p = posterior(state, grid);
  let v = 0;
  for (let k = 0; k < p.length; k++) v -= p[k]! * Math.log(grid.rates[k]!);
  return Math.exp(v);
}

/**
 * Marginal value of visit rate f: E[g(λ/f)·(1/λ + c)] (freshness, each captured version worth c
 * seconds of fresh copy) or E[g(λ/f)] (versions).
 */
function marginal(goal: RevisitGoal, p: readonly number[], rates: readonly number[], f: number, c: number): number {
  let v = 0;
  for (let k = 0; k < p.length; k++) {
    const lam = rates[k]!;
    const gx = g(lam / f);
    v += goal === 'freshness' ? p[k]! * gx * (1 / lam + c) : p[k]! * gx;
  }
  return v;
}

/**
 * The revisit interval (seconds) that maximises the expected objective of a page of weight w at
 * multiplier μ under the posterior; Infinity when no revisit is worth μ.
 */
export function posteriorInterval(goal: RevisitGoal, state: RevisitState, grid: RateGrid, weight: number, mu: number, versionValueS = 0): number {
  const all = posterior(state, grid);
  // Only the rates the posterior still holds (it concentrates as evidence accrues): cheaper sums.
  const p: number[] = [];
  const rates: number[] = [];
  for (let k = 0; k < all.length; k++) {
    if (all[k]! < 1e-9) continue;
    p.push(all[k]!);
    rates.push(grid.rates[k]!);
  }
  const target = mu / weight;
  // As f → 0, g → 1: the marginal tends to E[1/λ] (freshness) or 1 (versions).
  if (marginal(goal, p, rates, 1e-12, versionValueS) <= target) return Infinity;
  // Bisection on the interval T = 1/f (log scale), between the grid's fastest and 100× its slowest.
  let lo = Math.log(0.01 / grid.rates[grid.rates.length - 1]!);
  let hi = Math.log(100 / grid.rates[0]!);
  if (marginal(goal, p, rates, Math.exp(-lo), versionValueS) >= target) return Math.exp(lo);
  if (marginal(goal, p, rates, Math.exp(-hi), versionValueS) <= target) return Math.exp(hi);
  // 20 halvings of a range of ~25 in ln T: the interval to within 2.4e-5 of itself (2 s a day).
  for (let i = 0; i < 20; i++) {
    const mid = (lo + hi) / 2;
    // A longer interval (smaller f) raises the marginal value of a fetch.
    if (marginal(goal, p, rates, Math.exp(-mid), versionValueS) > target) hi = mid;
    else lo = mid;
  }
  return Math.exp((lo + hi) / 2);
}
