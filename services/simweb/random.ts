/**
 * Small deterministic randomness for the simulated web. Everything the web serves is a pure
 * function of (seed, host, page, purpose, ...), so instead of one long-lived generator we hash the
 * coordinates of each decision into a 32-bit seed and run a short-lived mulberry32 from there.
 * That keeps generation lazy (no need to build the whole web up front) and order-independent.
 */
import { fmix32 } from '../common/hash.ts';
import { mulberry32U32 } from '../common/random.ts';

/** Hashes a tuple of integers (each taken modulo 2^32) to a 32-bit unsigned integer. */
export function hashInts(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) {
    // Fold the high part in too so large numbers (times in ms) don't collide.
    const lo = x | 0;
    const hi = Math.floor(x / 4294967296) | 0;
    h = fmix32((h ^ lo) + Math.imul(hi, 0x27d4eb2f) + 0x6b43a9b5);
  }
  return h;
}

/** Hash of a tuple mapped to [0, 1). */
export function hash01(...xs: number[]): number {
  return hashInts(...xs) / 4294967296;
}

/** Hashes a string (FNV-1a then finalized); used to turn host names and URLs into ints. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** mulberry32 (services/common/random.ts) with the draws the simulation needs. */
export class Rng {
  private readonly nextU32: () => number;
  constructor(seed: number) {
    this.nextU32 = mulberry32U32(seed);
  }
  /** Next 32-bit unsigned integer. */
  u32(): number {
    return this.nextU32();
  }
  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }
  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** Picks one element of a non-empty array. */
  pick<T>(xs: readonly T[]): T {
    const x = xs[this.int(xs.length)];
    if (x === undefined) throw new RangeError('pick from empty array');
    return x;
  }
  /** Standard normal variate (Box-Muller). */
  normal(): number {
    const u = 1 - this.next(); // (0, 1], keeps log finite
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}

/** An Rng seeded from a tuple of integers. */
export function rngFor(...xs: number[]): Rng {
  return new Rng(hashInts(...xs));
}

/**
 * Zipf-like rank in [0, n): a continuous power law with density ∝ (x+1)^-s, inverted in closed
 * form so no per-n table is needed. s = 1 gives the classic 1/rank popularity.
 */
export function zipfRank(u: number, n: number, s: number): number {
  if (n <= 1) return 0;
  let x: number;
  if (Math.abs(s - 1) < 1e-9) {
    x = Math.exp(u * Math.log(n + 1)) - 1;
  } else {
    const a = 1 - s;
    x = Math.pow(1 + u * (Math.pow(n + 1, a) - 1), 1 / a) - 1;
  }
  const r = Math.floor(x);
  return r < 0 ? 0 : r >= n ? n - 1 : r;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * A cheap bijection on [0, n) that fixes 0: i -> (i * a) mod n with a coprime to n. Used to
 * scatter popularity ranks over page numbers without storing a permutation.
 */
export function affineMultiplier(n: number, seed: number): number {
  if (n <= 2) return 1;
  let a = 1 + (seed % (n - 1));
  while (gcd(a, n) !== 1) a = a + 1 >= n ? 1 : a + 1;
  return a;
}

/** Poisson variate: exact inversion for small means, normal approximation for large ones. */
export function poisson(rng: Rng, mean: number): number {
  if (mean <= 0) return 0;
  if (mean < 40) {
    const l = Math.exp(-mean);
    let k = 0;
    let p = rng.next();
    while (p > l) {
      k++;
      p *= rng.next();
    }
    return k;
  }
  return Math.max(0, Math.round(mean + Math.sqrt(mean) * rng.normal()));
}

/** Binomial(n, 1/2): exact coin flips (popcount of random words) for small n, normal otherwise. */
export function binomialHalf(rng: Rng, n: number): number {
  if (n <= 0) return 0;
  if (n <= 512) {
    let k = 0;
    let left = n;
    while (left > 0) {
      let w = rng.u32();
      if (left < 32) w &= (1 << left) - 1;
      k += popcount32(w);
      left -= 32;
    }
    return k;
  }
  const k = Math.round(n / 2 + (Math.sqrt(n) / 2) * rng.normal());
  return k < 0 ? 0 : k > n ? n : k;
}

function popcount32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
