/**
 * Server load index (the incremental archive crawler paper): with revisit intervals T_ij for the pages j of server i,
 *   L_i = Σ_j 1/T_ij,   I_i ≤ 1/L_i (the access interval the schedule needs),
 *   R_i = (1/L_i) / max_k e_ik,   feasible iff R_i ≥ S/C.
 * L is kept incrementally in the host's politeness state as page intervals are added, removed or
 * changed, so the report costs nothing per page.
 */
import type { PolitenessConfig } from './config.ts';
import { hostInterval, kFor } from './interval.ts';
import type { PolitenessContext } from './interval.ts';
import type { PolitenessState } from './state.ts';
import { histogramChange } from './remedy.ts';

/** 1/T in 1/s for an interval in ms; undefined or non-positive intervals contribute nothing. */
function rate(intervalMs: number | undefined): number {
  return intervalMs !== undefined && intervalMs > 0 ? 1000 / intervalMs : 0;
}

/**
 * Moves one page's revisit interval from `oldMs` to `newMs` in L. Adding a page: oldMs undefined;
 * removing it: newMs undefined.
 */
export function changePageInterval(state: PolitenessState, oldMs: number | undefined, newMs: number | undefined): PolitenessState {
  const L = (state.L ?? 0) - rate(oldMs) + rate(newMs);
  // Float subtraction can leave a tiny residue (or a tiny negative) when the last page goes.
  const clean = L < 1e-12 ? 0 : L;
  const { L: _old, lh: _lh, ...rest } = state;
  const lh = histogramChange(state.lh, oldMs, newMs);
  return { ...rest, ...(clean === 0 ? {} : { L: clean }), ...(lh ? { lh } : {}) };
}

/** L recomputed from scratch (for checks and rebuilds). */
export function loadIndex(intervalsMs: Iterable<number>): number {
  let L = 0;
  for (const t of intervalsMs) L += rate(t);
  return L;
}

export interface LoadRow {
  host: string;
  /** L_i, 1/s */
  L: number;
  /** 1/L_i in s (null: no page scheduled) */
  accessIntervalS: number | null;
  meanFetchS: number | null;
  maxFetchS: number | null;
  /** (1/L_i) / max e_ik (null when either is unknown) */
  R: number | null;
  /** 1/L_i is below the interval politeness allows, or R_i < S/C */
  overloaded: boolean;
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** One row of `meguri stats hosts`. S/C is taken from ctx when known, else kFactor stands in. */
export function loadReport(host: string, state: PolitenessState, config: PolitenessConfig, ctx: PolitenessContext = {}): LoadRow {
  const L = state.L ?? 0;
  const accessIntervalS = L > 0 ? 1 / L : null;
  const meanFetchS = state.fn ? (state.fs ?? 0) / state.fn / 1000 : null;
  const maxFetchS = state.fn && state.fx !== undefined ? state.fx / 1000 : null;
  const R = accessIntervalS !== null && maxFetchS !== null && maxFetchS > 0 ? accessIntervalS / maxFetchS : null;
  const allowedS = hostInterval(state, config, ctx).ms / 1000;
  const overloaded = (accessIntervalS !== null && accessIntervalS < allowedS) || (R !== null && R < kFor(config, ctx));
  return {
    host,
    L,
    accessIntervalS: accessIntervalS === null ? null : round3(accessIntervalS),
    meanFetchS: meanFetchS === null ? null : round3(meanFetchS),
    maxFetchS,
    R: R === null ? null : round3(R),
    overloaded,
  };
}

/** The n most loaded hosts, highest L first (ties by host name, so the order is stable). */
export function topByLoad(rows: readonly LoadRow[], n: number): LoadRow[] {
  return [...rows].sort((a, b) => b.L - a.L || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0)).slice(0, Math.max(0, n));
}
