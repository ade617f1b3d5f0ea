/**
 * Overload remedies (the incremental archive crawler paper): when a host's revisit schedule needs requests more often than
 * politeness allows (1/L_i below the host's interval), its page intervals are made longer until
 * the schedule fits, applied automatically as each page's next visit is planned.
 *
 *  - `stretch`: every interval × l with l = L_i · allowed, so the load becomes L_i / l = 1/allowed;
 *    every page keeps its share of the host's requests.
 *  - `delay`: every interval + d, the smallest d with Σ 1/(T_ij + d) ≤ 1/allowed; the most
 *    frequently revisited pages lose most, the slow ones barely change.
 *  - `none`: only report (the host is flagged overloaded and its queue simply waits).
 *
 * L_i stays the load of the intervals the estimator asked for, so lifting the remedy when the
 * host's interval shrinks again needs no bookkeeping. `delay` needs the distribution of the
 * intervals, kept as a histogram of half-octave bins beside L_i (a few dozen counts per host).
 */
import { requiredDelay } from '../../revisit/selection.ts';
import type { PolitenessState } from './state.ts';

export type OverloadRemedy = 'stretch' | 'delay' | 'none';

/** Bin of an interval: half-octaves from 1 s (bin 0 = [1 s, 1.41 s), bin 50 ≈ 1 year). */
export function intervalBin(ms: number): number {
  return Math.max(0, Math.floor(2 * Math.log2(Math.max(ms, 1000) / 1000)));
}

/** Geometric centre of a bin, ms. */
export function binCentreMs(bin: number): number {
  return 1000 * 2 ** ((bin + 0.5) / 2);
}

/** Interval histogram: bin → count, sparse (only bins in use), so a host costs a few bytes per bin. */
export type IntervalHistogram = Record<string, number>;

/** Moves one interval between histogram bins (undefined: nothing was / will be counted). */
export function histogramChange(h: Readonly<IntervalHistogram> | undefined, oldMs: number | undefined, newMs: number | undefined): IntervalHistogram | undefined {
  const valid = (ms: number | undefined): ms is number => ms !== undefined && ms > 0;
  const out: IntervalHistogram = { ...h };
  if (valid(oldMs)) {
    const b = String(intervalBin(oldMs));
    const n = (out[b] ?? 0) - 1;
    if (n > 0) out[b] = n;
    else delete out[b];
  }
  if (valid(newMs)) {
    const b = String(intervalBin(newMs));
    out[b] = (out[b] ?? 0) + 1;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export interface Remedy {
  remedy: OverloadRemedy;
  /** 1/L_i is below the allowed interval */
  overloaded: boolean;
  /** multiply intervals by this (1 unless stretching) */
  factor: number;
  /** add this to intervals, ms (0 unless delaying) */
  delayMs: number;
}

const NONE: Remedy = Object.freeze({ remedy: 'none', overloaded: false, factor: 1, delayMs: 0 });

/** What to do to this host's intervals so 1/L_i ≥ allowedMs. */
export function remedyFor(state: PolitenessState, allowedMs: number, remedy: OverloadRemedy): Remedy {
  const L = state.L ?? 0;
  const allowedS = allowedMs / 1000;
  if (!(L > 0) || !(allowedS > 0) || 1 / L >= allowedS) return { ...NONE, remedy };
  if (remedy === 'none') return { remedy, overloaded: true, factor: 1, delayMs: 0 };
  if (remedy === 'stretch') return { remedy, overloaded: true, factor: L * allowedS, delayMs: 0 };
  // delay: solve on the histogram (intervals known to half an octave), its counts scaled so the
  // binned load equals the exact L_i at d = 0.
  const centres: number[] = [];
  const counts: number[] = [];
  let binned = 0;
  for (const [b, count] of Object.entries(state.lh ?? {})) {
    if (!(count > 0)) continue;
    const c = binCentreMs(Number(b)) / 1000;
    centres.push(c);
    counts.push(count);
    binned += count / c;
  }
  if (binned <= 0) return { remedy: 'stretch', overloaded: true, factor: L * allowedS, delayMs: 0 };
  const scale = L / binned;
  const d = requiredDelay(centres, allowedS, counts.map((c) => c * scale));
  return { remedy, overloaded: true, factor: 1, delayMs: Math.ceil(d * 1000) };
}

/** The interval a page actually gets under the host's remedy. */
export function applyRemedy(intervalMs: number, r: Remedy): number {
  return Math.round(intervalMs * r.factor + r.delayMs);
}
