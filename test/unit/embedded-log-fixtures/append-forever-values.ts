/** Length of the n-th value append-forever.ts writes: mostly small, every fifth one over 4 KiB. */
export function appendedValueLength(n: number): number {
  return n % 5 === 0 ? 6000 + (n % 300) : 200 + (n % 300);
}
