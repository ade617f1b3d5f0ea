/**
 * A pooled prior over the change rate, per host (empirical Bayes): what the host's other pages
 * have shown becomes the prior of each of its pages, which the page's own evidence then overrides.
 *
 * The pool is a small histogram over the posterior grid's log-rates (POOL_BINS bins): for every page
 * with at least one revisit, its posterior on the *base* prior (the configured log-uniform one)
 * given its own sums, summed bin by bin. A page's contribution depends on its estimator state only,
 * so an outcome takes the page's old contribution out and puts the new one in — O(grid) per
 * outcome, whatever the host's size — and the histogram is always the sum over the host's pages'
 * current evidence (one EM step from the base prior towards the host's rate distribution).
 *
 * A page's prior is the pool without the page itself (leave one out: its evidence is already in
 * the likelihood), spread evenly over each bin's grid points and mixed with the base prior, as if
 * `pseudoPages` pages had shown nothing (at least `floor` of the mass): a host whose pages all
 * change daily still lets one page prove hourly or yearly. Pure.
 */
import { posterior } from './posterior.ts';
import type { RateGrid } from './posterior.ts';
import type { RevisitState } from './estimator.ts';

/** Bins of the stored histogram (each covers points/POOL_BINS grid rates: ×2.4 in rate on the default grid). */
export const POOL_BINS = 12;

/** Stored values are rounded to this (a JSON host state stays short). */
const ROUND = 1e4;

export interface PoolOptions {
  /** pages with evidence the pool needs before it replaces the base prior */
  minPages: number;
  /** weight of the base prior, in pages */
  pseudoPages: number;
  /** the base prior's least share of a pooled prior */
  floor: number;
}

export const DEFAULT_POOL_OPTIONS: Readonly<PoolOptions> = Object.freeze({ minPages: 5, pseudoPages: 2, floor: 0.05 });

/** A page's share of the pool (one per bin, summing to 1); null before its first revisit (no evidence). */
export function contribution(state: RevisitState | undefined, base: RateGrid): Float64Array | null {
  if (!state || !(state.a > 0)) return null;
  const p = posterior(state, base);
  const out = new Float64Array(POOL_BINS);
  const n = p.length;
  const { bin } = binsOf(n);
  for (let k = 0; k < n; k++) out[bin[k]!]! += p[k]!;
  return out;
}

/** Pages the histogram holds (the sum of its bins). */
export function poolSize(pool: readonly number[] | undefined): number {
  let n = 0;
  for (const x of pool ?? []) n += x;
  return n;
}

/**
 * The pool after a page's evidence moved from `before` to `after` (either a contribution or null:
 * none). Returns undefined when nothing is left (a host state without the field).
 */
export function movePool(pool: readonly number[] | undefined, before: Float64Array | null, after: Float64Array | null): number[] | undefined {
  if (!before && !after) return pool ? [...pool] : undefined;
  const out: number[] = [];
  let total = 0;
  for (let b = 0; b < POOL_BINS; b++) {
    const v = (pool?.[b] ?? 0) - (before?.[b] ?? 0) + (after?.[b] ?? 0);
    const r = Math.max(0, Math.round(v * ROUND) / ROUND);
    out.push(r);
    total += r;
  }
  return total > 0 ? out : undefined;
}

/**
 * The prior a page of the host gets: the pool less the page's own contribution (`own`), mixed with
 * the base prior. undefined while the pool holds fewer than `minPages` other pages (use the base).
 */
export function pooledGrid(pool: readonly number[] | undefined, base: RateGrid, own: Float64Array | null, opts: PoolOptions = DEFAULT_POOL_OPTIONS): RateGrid | undefined {
  if (!pool) return undefined;
  const hist = new Float64Array(POOL_BINS);
  let n = 0;
  for (let b = 0; b < POOL_BINS; b++) {
    hist[b] = Math.max(0, (pool[b] ?? 0) - (own?.[b] ?? 0));
    n += hist[b]!;
  }
  if (!(n >= opts.minPages)) return undefined;
  const points = base.rates.length;
  const { bin, perBin } = binsOf(points);
  const baseShare = Math.max(opts.floor, opts.pseudoPages / (n + opts.pseudoPages));
  // One value per bin: 12 logarithms, not one per grid point.
  const logBin = new Float64Array(POOL_BINS);
  for (let b = 0; b < POOL_BINS; b++) logBin[b] = Math.log(((1 - baseShare) * hist[b]!) / n / perBin[b]! + baseShare / points);
  const logPrior = new Float64Array(points);
  for (let k = 0; k < points; k++) logPrior[k] = logBin[bin[k]!]!;
  return { rates: base.rates, logPrior };
}

interface Bins {
  /** bin of each grid point */
  bin: Uint8Array;
  /** grid points per bin (the last may hold more when points is not a multiple of POOL_BINS) */
  perBin: Float64Array;
}

const binCache = new Map<number, Bins>();

function binsOf(points: number): Bins {
  let hit = binCache.get(points);
  if (hit) return hit;
  const bin = new Uint8Array(points);
  const perBin = new Float64Array(POOL_BINS);
  for (let k = 0; k < points; k++) {
    bin[k] = Math.min(POOL_BINS - 1, Math.floor((k * POOL_BINS) / points));
    perBin[bin[k]!]! += 1;
  }
  hit = { bin, perBin };
  binCache.set(points, hit);
  return hit;
}
