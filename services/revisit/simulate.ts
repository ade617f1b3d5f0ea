/**
 * Deterministic change simulation for revisit policies: pages change as Poisson processes, a
 * scheduler loop fetches them over simulated time (no network, no clock), and each policy is
 * scored on the same change histories.
 *
 * Policies: `meguri` (equation (4) estimator), `cho` (equation (2) MLE with the same schedule
 * rules), `fixed` (one interval for every page, chosen so its fetch count matches meguri's).
 *
 * Metrics, counted over the window [warmup, warmup + days] and from each page's first fetch:
 *  - fetches, versionsCaptured (fetches that saw a version not seen before; the first fetch counts),
 *  - meanStalenessS: per page, total seconds during which its live version was unseen by the
 *    crawler (from the first unseen change to the next fetch), averaged over pages,
 *  - freshness: share of page-time that the crawler's copy was current (1 − staleness / window),
 *  - meanAgeS: time-averaged age, t − (first unseen change) while stale, averaged over pages.
 */
import { mulberry32 } from '../common/random.ts';
import {
  DAY_S,
  DEFAULT_REVISIT_OPTIONS,
  HOUR_S,
  choInitialState,
  choNextInterval,
  choObserve,
  initialState,
  nextInterval,
  update,
  type ChoState,
  type RevisitOptions,
  type RevisitState,
  type Rng,
} from './estimator.ts';

export type Policy = 'meguri' | 'cho' | 'fixed';

export interface SimOptions {
  pages: number;
  /** measured window, days */
  days: number;
  /** simulated days before the window (estimators learn, nothing is counted) */
  warmupDays: number;
  seed: number;
  /** mean change interval bounds (log-uniform between them), seconds */
  minChangeIntervalS: number;
  maxChangeIntervalS: number;
  /** first fetches are spread uniformly over [0, this) */
  firstFetchSpreadS: number;
  /** give the adaptive policies the page's Last-Modified at the first fetch */
  useLastModified: boolean;
  revisit: RevisitOptions;
}

export const DEFAULT_SIM_OPTIONS: Readonly<SimOptions> = Object.freeze({
  pages: 5_000,
  days: 60,
  warmupDays: 0,
  seed: 1,
  minChangeIntervalS: HOUR_S,
  maxChangeIntervalS: 365 * DAY_S,
  firstFetchSpreadS: DAY_S,
  useLastModified: true,
  revisit: DEFAULT_REVISIT_OPTIONS,
});

export interface PolicyResult {
  policy: Policy;
  fetches: number;
  versionsCaptured: number;
  versionsPerFetch: number;
  meanStalenessS: number;
  freshness: number;
  meanAgeS: number;
  fetchesPerDay: number;
  fetchesPerPagePerDay: number;
  /** the single interval used by `fixed` */
  fixedIntervalS?: number;
}

/** mulberry32 (services/common/random.ts), re-exported for the revisit benches and tests. */
export { mulberry32 };

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

function expDraw(rng: Rng, rate: number): number {
  return -Math.log(1 - rng()) / rate;
}

/** The simulated population: rates and first-fetch times, identical for every policy. */
export interface Population {
  /** λ per page, per second */
  rate: Float64Array;
  firstFetch: Float64Array;
}

export function makePopulation(o: SimOptions): Population {
  const rng = mulberry32(mix(o.seed, 1));
  const rate = new Float64Array(o.pages);
  const firstFetch = new Float64Array(o.pages);
  const lo = Math.log(o.minChangeIntervalS);
  const hi = Math.log(o.maxChangeIntervalS);
  for (let p = 0; p < o.pages; p++) {
    rate[p] = 1 / Math.exp(lo + rng() * (hi - lo));
    firstFetch[p] = rng() * o.firstFetchSpreadS;
  }
  return { rate, firstFetch };
}

/** Min-heap of (time, page) over typed arrays; the scheduler's due queue. */
class DueHeap {
  private t: Float64Array;
  private p: Int32Array;
  size = 0;
  constructor(capacity: number) {
    this.t = new Float64Array(capacity);
    this.p = new Int32Array(capacity);
  }
  push(time: number, page: number): void {
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.t[parent] ?? 0) <= time) break;
      this.t[i] = this.t[parent] ?? 0;
      this.p[i] = this.p[parent] ?? 0;
      i = parent;
    }
    this.t[i] = time;
    this.p[i] = page;
  }
  topTime(): number {
    return this.t[0] ?? Infinity;
  }
  topPage(): number {
    return this.p[0] ?? -1;
  }
  pop(): void {
    const n = --this.size;
    const time = this.t[n] ?? 0;
    const page = this.p[n] ?? 0;
    let i = 0;
    while (true) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && (this.t[c + 1] ?? 0) < (this.t[c] ?? 0)) c++;
      if ((this.t[c] ?? 0) >= time) break;
      this.t[i] = this.t[c] ?? 0;
      this.p[i] = this.p[c] ?? 0;
      i = c;
    }
    this.t[i] = time;
    this.p[i] = page;
  }
}

/** Per-policy scheduling decision: given a fetch outcome, the next interval (seconds). */
interface Scheduler {
  first(page: number, at: number, lastModified: number): number;
  observe(page: number, at: number, changed: boolean): number;
}

function meguriScheduler(o: SimOptions, rng: Rng): Scheduler {
  const states: RevisitState[] = new Array<RevisitState>(o.pages);
  return {
    first(page, at, lastModified) {
      const s = initialState(at, o.useLastModified ? lastModified : undefined);
      states[page] = s;
      return nextInterval(s, rng, o.revisit).interval;
    },
    observe(page, at, changed) {
      const s = update(states[page] as RevisitState, { at, changed });
      states[page] = s;
      return nextInterval(s, rng, o.revisit).interval;
    },
  };
}

function choScheduler(o: SimOptions, rng: Rng): Scheduler {
  const states: ChoState[] = new Array<ChoState>(o.pages);
  return {
    first(page, at, lastModified) {
      const s = choInitialState(at, o.useLastModified ? lastModified : undefined);
      states[page] = s;
      return choNextInterval(s, rng, o.revisit).interval;
    },
    observe(page, at, changed) {
      const s = states[page] as ChoState;
      choObserve(s, { at, changed });
      return choNextInterval(s, rng, o.revisit).interval;
    },
  };
}

function fixedScheduler(intervalS: number): Scheduler {
  return { first: () => intervalS, observe: () => intervalS };
}

/** Runs one policy over the population. */
export function runPolicy(policy: Policy, o: SimOptions, pop: Population, fixedIntervalS?: number): PolicyResult {
  const start = o.warmupDays * DAY_S;
  const end = start + o.days * DAY_S;
  const n = o.pages;
  const rng = mulberry32(mix(o.seed, 2));
  let sched: Scheduler;
  if (policy === 'meguri') sched = meguriScheduler(o, rng);
  else if (policy === 'cho') sched = choScheduler(o, rng);
  else {
    if (!(fixedIntervalS != null && fixedIntervalS > 0)) throw new RangeError('fixed policy needs an interval');
    sched = fixedScheduler(fixedIntervalS);
  }

  // Change processes: one generator per page, seeded identically for every policy.
  const changeRng: Rng[] = new Array<Rng>(n);
  const nextChange = new Float64Array(n);
  const lastChange = new Float64Array(n);
  const version = new Int32Array(n);
  const seenVersion = new Int32Array(n).fill(-1);
  const firstUnseen = new Float64Array(n).fill(NaN);
  for (let p = 0; p < n; p++) {
    const r = mulberry32(mix(o.seed, 1000 + p));
    changeRng[p] = r;
    const rate = pop.rate[p] ?? 1;
    // Stationary start: the last change before t = 0 is Exp(λ) back (memorylessness).
    lastChange[p] = -expDraw(r, rate);
    nextChange[p] = expDraw(r, rate);
  }

  let fetches = 0;
  let versions = 0;
  let staleS = 0;
  let ageS2 = 0;
  // Seconds of page-time inside the window after each page's first fetch (freshness denominator).
  let observedS = 0;

  const advance = (p: number, t: number): void => {
    const rate = pop.rate[p] ?? 1;
    const r = changeRng[p] as Rng;
    while ((nextChange[p] ?? Infinity) <= t) {
      const c = nextChange[p] ?? 0;
      version[p] = (version[p] ?? 0) + 1;
      lastChange[p] = c;
      if (Number.isNaN(firstUnseen[p])) firstUnseen[p] = c;
      nextChange[p] = c + expDraw(r, rate);
    }
  };
  // Stale time and age accrued from the first unseen change up to t, clipped to the window.
  const settle = (p: number, t: number): void => {
    const c1 = firstUnseen[p] ?? NaN;
    if (Number.isNaN(c1) || (seenVersion[p] ?? -1) < 0) return;
    const from = Math.max(c1, start);
    const to = Math.min(t, end);
    if (to > from) {
      staleS += to - from;
      ageS2 += ((to - c1) * (to - c1) - (from - c1) * (from - c1)) / 2;
    }
  };

  const heap = new DueHeap(n);
  for (let p = 0; p < n; p++) heap.push(pop.firstFetch[p] ?? 0, p);
  while (heap.size > 0 && heap.topTime() < end) {
    const t = heap.topTime();
    const p = heap.topPage();
    heap.pop();
    advance(p, t);
    settle(p, t);
    const first = (seenVersion[p] ?? -1) < 0;
    const changed = !first && version[p] !== seenVersion[p];
    if (t >= start) {
      fetches++;
      if (first || changed) versions++;
    }
    seenVersion[p] = version[p] ?? 0;
    firstUnseen[p] = NaN;
    const interval = first ? sched.first(p, t, lastChange[p] ?? 0) : sched.observe(p, t, changed);
    heap.push(t + interval, p);
  }
  for (let p = 0; p < n; p++) {
    advance(p, end);
    settle(p, end);
    const f = pop.firstFetch[p] ?? 0;
    observedS += Math.max(0, end - Math.max(start, f));
  }
  const windowDays = o.days;
  return {
    policy,
    fetches,
    versionsCaptured: versions,
    versionsPerFetch: fetches > 0 ? versions / fetches : 0,
    meanStalenessS: staleS / n,
    freshness: observedS > 0 ? 1 - staleS / observedS : 1,
    meanAgeS: observedS > 0 ? ageS2 / observedS : 0,
    fetchesPerDay: fetches / windowDays,
    fetchesPerPagePerDay: fetches / windowDays / n,
    ...(fixedIntervalS != null ? { fixedIntervalS } : {}),
  };
}

/** Fetches a fixed-interval schedule makes inside the window (each page from its first fetch). */
export function fixedFetchCount(o: SimOptions, pop: Population, intervalS: number): number {
  const start = o.warmupDays * DAY_S;
  const end = start + o.days * DAY_S;
  let count = 0;
  for (let p = 0; p < o.pages; p++) {
    const u = pop.firstFetch[p] ?? 0;
    if (u >= end) continue;
    // k ≥ 0 with start ≤ u + kT < end
    const kMin = u >= start ? 0 : Math.ceil((start - u) / intervalS);
    const kMax = Math.ceil((end - u) / intervalS) - 1;
    if (kMax >= kMin) count += kMax - kMin + 1;
  }
  return count;
}

/** The fixed interval whose fetch count is closest to `budget` (bisection on a monotone count). */
export function fixedIntervalForBudget(o: SimOptions, pop: Population, budget: number): number {
  let lo = 1;
  let hi = (o.warmupDays + o.days) * DAY_S * 2;
  for (let i = 0; i < 100; i++) {
    const mid = Math.sqrt(lo * hi);
    if (fixedFetchCount(o, pop, mid) > budget) lo = mid;
    else hi = mid;
  }
  const cLo = fixedFetchCount(o, pop, lo);
  const cHi = fixedFetchCount(o, pop, hi);
  return Math.abs(cLo - budget) < Math.abs(cHi - budget) ? lo : hi;
}

export interface Comparison {
  options: SimOptions;
  meguri: PolicyResult;
  cho: PolicyResult;
  fixed: PolicyResult;
}

/** Runs all three policies; `fixed` gets meguri's fetch budget. */
export function comparePolicies(overrides: Partial<SimOptions> = {}): Comparison {
  const o: SimOptions = { ...DEFAULT_SIM_OPTIONS, ...overrides };
  const pop = makePopulation(o);
  const meguri = runPolicy('meguri', o, pop);
  const cho = runPolicy('cho', o, pop);
  const fixed = runPolicy('fixed', o, pop, fixedIntervalForBudget(o, pop, meguri.fetches));
  return { options: o, meguri, cho, fixed };
}
