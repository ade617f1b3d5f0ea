/**
 * mulberry32: a tiny, fast 32-bit generator with a 2^32 period, good enough for simulations and
 * replayable tests (not for anything secret). The same seed always gives the same sequence.
 */

/** A generator of 32-bit unsigned integers. */
export function mulberry32U32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** A generator of numbers uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  const next = mulberry32U32(seed);
  return () => next() / 4294967296;
}
