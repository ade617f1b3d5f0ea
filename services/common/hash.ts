/**
 * Integer finalizer of MurmurHash3 (fmix32): spreads every input bit over the 32-bit output, so
 * inputs that differ in one bit give unrelated results. The one copy of the step; the hashes built
 * on it (simweb's coordinates, the fingerprint's features, the discovery sample, the ordering
 * generator's seeding) import it from here.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
