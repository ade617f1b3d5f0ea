/**
 * Revisit allocation by objective: the Lagrangian solutions of Cho & Garcia-Molina ("Effective page
 * refresh policies for web crawlers", ACM TODS 2003), importance-weighted, with a per-host budget
 * as in Kolobov et al. ("Optimal freshness crawl under politeness constraints", SIGIR 2019).
 *
 * A page changes as a Poisson process of rate λ and is revisited at regular intervals 1/f. Over
 * time, with x = λ/f (changes expected per revisit interval):
 *
 *   freshness   F(λ, f) = (1 − e^(−x)) / x        share of time the copy is up to date
 *   versions    V(λ, f) = f · (1 − e^(−x))        distinct versions captured per unit time
 *
 * Both derivatives come out through the same function g(x) = 1 − (1 + x)·e^(−x) (0 → 1, rising):
 * ∂F/∂f = g(x)/λ and ∂V/∂f = g(x). Maximising Σ w_i·objective_i − μ·Σ f_i (μ: the value of one
 * fetch per unit time, w_i: importance) gives, per page,
 *
 *   freshness   g(λ_i/f_i) = μ·λ_i / w_i     (f_i = 0 when μ·λ_i ≥ w_i: too fast to keep fresh)
 *   versions    g(λ_i/f_i) = μ / w_i         (f_i ∝ λ_i at equal weights: proportional)
 *
 * A budget Σ f_i = B (what a host's politeness leaves for revisits) fixes μ, found by bisection:
 * Σ f_i falls strictly as μ rises. Pure; rates are per second, μ is in seconds (freshness) or
 * dimensionless (versions).
 */

export type RevisitGoal = 'freshness' | 'versions';

export interface Page {
  /** change rate λ (per second), ≥ 0 */
  rate: number;
  /** importance weight w > 0 (default 1) */
  weight?: number;
}

/** g(x) = 1 − (1 + x)·e^(−x): rises from 0 (x = 0) to 1 (x → ∞); g'(x) = x·e^(−x). */
export function g(x: number): number {
  if (x < 1e-3) return (x * x) / 2 - (x * x * x) / 3; // series: no cancellation near 0
  return 1 - (1 + x) * Math.exp(-x);
}

/** The x ≥ 0 with g(x) = y, for 0 ≤ y < 1 (Infinity for y ≥ 1). Newton with a bisection safeguard. */
export function gInverse(y: number): number {
  if (!(y > 0)) return 0;
  if (y >= 1) return Infinity;
  let lo = 0;
  let hi = 1;
  while (g(hi) < y) hi *= 2;
  // Start from the small-x form g ≈ x²/2, inside the bracket.
  let x = Math.min(Math.sqrt(2 * y), (lo + hi) / 2);
  for (let i = 0; i < 100; i++) {
    const gx = g(x) - y;
    if (gx > 0) hi = x;
    else lo = x;
    const d = x * Math.exp(-x);
    let next = d > 0 ? x - gx / d : (lo + hi) / 2;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - x) <= 1e-14 * Math.max(1, x)) return next;
    x = next;
  }
  return x;
}

/** Time-averaged freshness of a page of rate λ revisited every 1/f (1 for λ = 0, 0 for f = 0 < λ). */
export function freshness(rate: number, f: number): number {
  if (!(rate > 0)) return 1;
  if (!(f > 0)) return 0;
  const x = rate / f;
  return x < 1e-9 ? 1 - x / 2 : -Math.expm1(-x) / x;
}

/** Distinct versions captured per unit time by revisits at rate f of a page of rate λ. */
export function versionsRate(rate: number, f: number): number {
  if (!(rate > 0) || !(f > 0)) return 0;
  return -f * Math.expm1(-rate / f);
}

/** The Lagrangian visit rate of one page at multiplier μ (0: not worth revisiting). */
export function optimalRate(goal: RevisitGoal, rate: number, weight: number, mu: number): number {
  if (!(rate > 0) || !(weight > 0)) return 0;
  if (!(mu > 0)) return Infinity;
  const y = goal === 'freshness' ? (mu * rate) / weight : mu / weight;
  if (y >= 1) return 0;
  return rate / gInverse(y);
}

/** Σ w·objective for visit rates f (per unit time for versions, a sum of shares for freshness). */
export function objectiveValue(goal: RevisitGoal, pages: readonly Page[], f: readonly number[]): number {
  let v = 0;
  for (const [i, p] of pages.entries()) {
    const w = p.weight ?? 1;
    v += w * (goal === 'freshness' ? freshness(p.rate, f[i] ?? 0) : versionsRate(p.rate, f[i] ?? 0));
  }
  return v;
}

export interface Allocation {
  /** the multiplier that spends the budget */
  mu: number;
  /** visit rate per page */
  rates: number[];
}

/** Visit rates that maximise the goal with Σ f = budget (per second), and their multiplier μ. */
export function allocateBudget(goal: RevisitGoal, pages: readonly Page[], budget: number): Allocation {
  const total = (mu: number): number => pages.reduce((s, p) => s + optimalRate(goal, p.rate, p.weight ?? 1, mu), 0);
  const live = pages.filter((p) => p.rate > 0 && (p.weight ?? 1) > 0);
  if (live.length === 0 || !(budget > 0)) return { mu: Infinity, rates: pages.map(() => 0) };
  // Above muMax every page is dropped; below it Σ f rises without bound as μ → 0.
  const muMax = Math.max(...live.map((p) => (goal === 'freshness' ? (p.weight ?? 1) / p.rate : (p.weight ?? 1))));
  let hi = muMax;
  let lo = muMax / 2;
  while (total(lo) < budget) lo /= 2;
  for (let i = 0; i < 200 && hi / lo > 1 + 1e-13; i++) {
    const mid = Math.sqrt(lo * hi);
    if (total(mid) > budget) lo = mid;
    else hi = mid;
  }
  // A page at its threshold μ = w/λ (freshness) has a flat marginal near f = 0, so Σ f jumps there
  // by a few percent of λ: the optimum mixes the bracket's two (equally optimal) ends to spend B.
  const rate = (mu: number): number[] => pages.map((p) => optimalRate(goal, p.rate, p.weight ?? 1, mu));
  const [below, above] = [rate(lo), rate(hi)];
  const [sumBelow, sumAbove] = [below.reduce((s, f) => s + f, 0), above.reduce((s, f) => s + f, 0)];
  const theta = sumBelow > sumAbove ? Math.min(1, Math.max(0, (budget - sumAbove) / (sumBelow - sumAbove))) : 0;
  return { mu: Math.sqrt(lo * hi), rates: above.map((f, i) => f + theta * ((below[i] ?? 0) - f)) };
}

/**
 * The default multiplier of each goal, for a crawl with no binding budget: freshness takes
 * μ0 = τ0/2 so that slowly changing pages (λ ≪ f) get f = √(λ/τ0), i.e. a revisit interval of
 * √(τ·τ0) — the `sqrt` allocation's scale — and pages changing faster than every τ0/2 are dropped;
 * versions takes g(1), so that a page of weight 1 is revisited every τ (the proportional policy).
 */
export function defaultMultiplier(goal: RevisitGoal, freshnessScaleS: number): number {
  return goal === 'freshness' ? freshnessScaleS / 2 : g(1);
}

/**
 * Revisit interval (seconds) for an estimated change interval τ (seconds) of a page of weight w
 * under the goal at multiplier μ; Infinity when the page is not worth revisiting (freshness: it
 * changes faster than a revisit could keep up with).
 */
export function goalInterval(goal: RevisitGoal, changeIntervalS: number, weight: number, mu: number): number {
  if (!(changeIntervalS > 0) || !Number.isFinite(changeIntervalS)) return Infinity;
  const f = optimalRate(goal, 1 / changeIntervalS, weight, mu);
  return f > 0 ? 1 / f : Infinity;
}

/**
 * A host's multiplier factor k (μ = k·μ0) after its planned revisit load L (requests per second,
 * Σ 1/T) was set against what it may take, `capacity` (per second): the dual step of the per-host
 * constraint. Over budget, k rises by (L/capacity)^(p·step) (p = 2 for freshness, whose slow-page
 * rates go as μ^−½; 1 for versions); under it k falls back towards 1, never below (the crawl's own
 * μ0). `step` damps it: the scheduler takes 1/n for a host of n planned pages, since one outcome
 * re-plans one page, so a whole round of the host's pages moves k by the full ratio.
 */
export function hostMultiplierStep(goal: RevisitGoal, k: number, load: number, capacity: number, step = 1): number {
  if (!(capacity > 0) || !(load > 0)) return Math.max(1, k);
  const ratio = Math.min(4, Math.max(0.25, load / capacity));
  const next = k * ratio ** ((goal === 'freshness' ? 2 : 1) * Math.min(1, Math.max(0, step)));
  return Math.min(1e6, Math.max(1, next));
}
