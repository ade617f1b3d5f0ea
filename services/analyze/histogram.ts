/** Power-of-two bins for heavy-tailed counts (pages per server): 1, 2–3, 4–7, 8–15, ... */

export interface Bin {
  from: number;
  to: number;
  count: number;
}

export function log2Bins(values: Iterable<number>): Bin[] {
  const counts: number[] = [];
  for (const v of values) {
    if (v < 1) continue;
    const b = Math.floor(Math.log2(v));
    counts[b] = (counts[b] ?? 0) + 1;
  }
  const bins: Bin[] = [];
  for (let b = 0; b < counts.length; b++) bins.push({ from: 2 ** b, to: 2 ** (b + 1) - 1, count: counts[b] ?? 0 });
  return bins;
}

/** Counts per label, sorted by count then label. */
export class Tally {
  private readonly m = new Map<string, number>();
  add(label: string, n = 1): void {
    this.m.set(label, (this.m.get(label) ?? 0) + n);
  }
  get(label: string): number {
    return this.m.get(label) ?? 0;
  }
  get total(): number {
    let t = 0;
    for (const v of this.m.values()) t += v;
    return t;
  }
  sorted(): { label: string; count: number }[] {
    return [...this.m].map(([label, count]) => ({ label, count })).sort((a, b) => b.count - a.count || (a.label < b.label ? -1 : 1));
  }
}
