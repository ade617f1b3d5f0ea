/**
 * Known-rate revisit policies replayed on a changing web's ground truth at a given fetch budget,
 * to set beside what a crawl did (bench:freshness): every page is first fetched when the crawl
 * first fetched it in the scored window, then at its policy's regular interval up to the end.
 *
 *   proportional   interval ∝ the page's mean change interval (the versions objective at equal weights)
 *   optimal        Cho & Garcia-Molina's freshness-optimal allocation with the rates known
 *                  (services/revisit/allocation.ts); pages too fast to keep fresh get the first fetch only
 *
 * The policy's multiplier μ is bisected until its fetch count in the window is the largest not above
 * the budget. Pure; times in ms.
 */
import { goalInterval } from './allocation.ts';
import type { RevisitGoal } from './allocation.ts';
import type { PageTruth } from './freshness.ts';

export interface KnownRatePage extends PageTruth {
  /** mean interval of the page's content changes (ms); Infinity when its content never changes */
  meanIntervalMs: number;
}

export interface ReplayedPolicy {
  pages: PageTruth[];
  /** the multiplier that spends the budget */
  mu: number;
}

/** Fetch times of a page first fetched at `first`, then every `intervalMs`, up to `end`. */
function schedule(first: number, intervalMs: number, end: number): number[] {
  const out = [first];
  if (!Number.isFinite(intervalMs) || !(intervalMs > 0)) return out;
  for (let t = first + intervalMs; t <= end; t += intervalMs) out.push(t);
  return out;
}

function count(first: number, intervalMs: number, end: number): number {
  return 1 + (Number.isFinite(intervalMs) && intervalMs > 0 ? Math.floor((end - first) / intervalMs) : 0);
}

/**
 * The pages under the goal's Lagrangian allocation with known rates (equal weights), spending at
 * most `budget` fetches in [start, end]: `freshness` is the optimal policy, `versions` the
 * proportional one.
 */
export function knownRatePolicy(goal: RevisitGoal, pages: readonly KnownRatePage[], start: number, end: number, budget: number): ReplayedPolicy {
  const firsts = pages.map((p) => p.fetches.find((t) => t >= start && t <= end));
  const intervals = (mu: number): number[] => pages.map((p) => goalInterval(goal, p.meanIntervalMs, 1, mu));
  const total = (mu: number): number => {
    const iv = intervals(mu);
    let n = 0;
    for (const [i, f] of firsts.entries()) if (f !== undefined) n += count(f, iv[i]!, end);
    return n;
  };
  // Σ fetches falls as μ rises (ms for freshness, dimensionless for versions): bracket, then bisect.
  let lo = goal === 'freshness' ? 1 : 1e-12;
  let hi = goal === 'freshness' ? 1e13 : 1 - 1e-12;
  for (let i = 0; i < 200 && hi - lo > lo * 1e-12; i++) {
    const mid = goal === 'freshness' ? Math.sqrt(lo * hi) : (lo + hi) / 2;
    if (total(mid) > budget) lo = mid;
    else hi = mid;
  }
  const iv = intervals(hi);
  return {
    mu: hi,
    pages: pages.map((p, i) => {
      const f = firsts[i];
      return { changes: p.changes, fetches: f === undefined ? [] : schedule(f, iv[i]!, end) };
    }),
  };
}
