/**
 * How fresh a crawl kept its copies, measured against the ground truth of a simulated web: for
 * each page, the times its content changed in a window [start, end], and the times the crawler
 * fetched it. Used by `meguri demo --changing` to put meguri's adaptive revisits beside a fixed
 * interval with the same number of fetches.
 *
 *   versions existed   1 + content changes in (start, end] (a disappearance counts as one);
 *   versions seen      distinct content versions the fetches found;
 *   staleness          share of the time from a page's first fetch to `end` during which the
 *                      crawler's copy differed from the live page (a change after the last fetch
 *                      makes it stale until the next fetch), over all pages;
 *   mean stale age     over the same time, the mean age of the oldest change the copy misses.
 * The fixed-interval policy fetches every page first when the crawl did, then every I, with I
 * chosen so that it makes as many fetches in the window as the crawl did (equal budget).
 */

export interface PageTruth {
  /** Content change times (ms), ascending; a disappearance is one more change. */
  changes: readonly number[];
  /** The crawl's fetch times of the page (ms), ascending. */
  fetches: readonly number[];
}

export interface Freshness {
  pages: number;
  fetches: number;
  versionsExisted: number;
  versionsSeen: number;
  /** Stale share of the observed page-time, 0..1. */
  staleness: number;
  /** Mean age (ms) of the missed change while stale, averaged over all observed page-time. */
  meanStaleAgeMs: number;
}

/** Content version at time t: changes at or before t. */
function versionAt(changes: readonly number[], t: number): number {
  let lo = 0;
  let hi = changes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (changes[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Freshness of one fetch schedule over all pages in [start, end]. */
export function measureFreshness(pages: readonly PageTruth[], start: number, end: number): Freshness {
  let fetches = 0;
  let existed = 0;
  let seen = 0;
  let observed = 0;
  let stale = 0;
  let ageArea = 0;
  for (const page of pages) {
    const inWindow = page.changes.filter((t) => t > start && t <= end);
    existed += 1 + inWindow.length;
    const times = page.fetches.filter((t) => t >= start && t <= end);
    if (times.length === 0) continue;
    fetches += times.length;
    const versions = new Set<number>();
    for (const t of times) versions.add(versionAt(page.changes, t));
    seen += versions.size;
    observed += end - times[0]!;
    // Between consecutive fetches (and after the last), the copy is stale from the first change
    // after the fetch until the next fetch; the missed change's age grows linearly meanwhile.
    for (let i = 0; i < times.length; i++) {
      const from = times[i]!;
      const to = i + 1 < times.length ? times[i + 1]! : end;
      const next = page.changes[versionAt(page.changes, from)];
      if (next === undefined || next >= to) continue;
      const span = to - next;
      stale += span;
      ageArea += (span * span) / 2;
    }
  }
  return {
    pages: pages.length,
    fetches,
    versionsExisted: existed,
    versionsSeen: seen,
    staleness: observed > 0 ? stale / observed : 0,
    meanStaleAgeMs: observed > 0 ? ageArea / observed : 0,
  };
}

/** Fetches of the fixed policy with interval I: first fetch as the crawl's, then every I up to `end`. */
function fixedCount(firsts: readonly number[], end: number, intervalMs: number): number {
  let n = 0;
  for (const f of firsts) n += 1 + Math.floor((end - f) / intervalMs);
  return n;
}

/** The fixed interval whose fetch count in the window is closest to `budget` (not above it). */
export function fixedIntervalForBudget(firsts: readonly number[], end: number, budget: number): number {
  let lo = 1;
  let hi = Math.max(2, ...firsts.map((f) => end - f + 1));
  if (fixedCount(firsts, end, hi) > budget) return hi;
  for (let i = 0; i < 64 && hi - lo > 1; i++) {
    const mid = Math.floor((lo + hi) / 2);
    if (fixedCount(firsts, end, mid) > budget) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The same pages under a fixed interval with the crawl's fetch budget. */
export function fixedIntervalPages(pages: readonly PageTruth[], start: number, end: number): { pages: PageTruth[]; intervalMs: number } {
  const observedPages = pages.map((p) => ({ p, times: p.fetches.filter((t) => t >= start && t <= end) })).filter((x) => x.times.length > 0);
  const budget = observedPages.reduce((n, x) => n + x.times.length, 0);
  const firsts = observedPages.map((x) => x.times[0]!);
  const intervalMs = fixedIntervalForBudget(firsts, end, budget);
  const out: PageTruth[] = pages.map((p) => {
    const first = p.fetches.find((t) => t >= start && t <= end);
    if (first === undefined) return { changes: p.changes, fetches: [] };
    const fetches: number[] = [];
    for (let t = first; t <= end; t += intervalMs) fetches.push(t);
    return { changes: p.changes, fetches };
  });
  return { pages: out, intervalMs };
}
