/**
 * Sends through one producer that allows a single request in flight (meguri's idempotent producer:
 * retries can then never reorder or duplicate), merged while a request is out. Without merging,
 * every caller waited for all the requests queued before its own: with the fetcher's partitions
 * flushing pages every 50 ms and the parser sending links, a send took 170–190 ms on a local broker
 * whose requests take a few. Merged, a send waits for at most the request in flight and then goes
 * out with everything that arrived meanwhile, in arrival order, so each caller's records keep their
 * order within every partition, and the broker sees fewer, larger requests.
 *
 * A failed request fails every call merged into it (each caller sends its records again, at least
 * once); calls that arrived later go out in the next request.
 */
export class CoalescingSender<T, R> {
  private waiting: { readonly items: readonly T[]; readonly resolve: (results: R[]) => void; readonly reject: (err: unknown) => void }[] = [];
  private pumping = false;

  /**
   * `sendAll` sends items as one request (or a few, in order) and returns one result per item.
   * `sizeOf` and `maxBytes` bound what one merged call holds; a single call larger than that is
   * sent alone, whole.
   */
  constructor(
    private readonly sendAll: (items: readonly T[]) => Promise<R[]>,
    private readonly sizeOf: (item: T) => number,
    private readonly maxBytes: number,
  ) {}

  send(items: readonly T[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      this.waiting.push({ items, resolve, reject });
      if (!this.pumping) void this.pump();
    });
  }

  private bytesOf(items: readonly T[]): number {
    let n = 0;
    for (const item of items) n += this.sizeOf(item);
    return n;
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.waiting.length > 0) {
        const group = [this.waiting.shift()!];
        // Sizes matter only when there is something to merge (the usual send goes alone).
        let bytes = this.waiting.length > 0 ? this.bytesOf(group[0]!.items) : 0;
        while (this.waiting.length > 0) {
          const next = this.bytesOf(this.waiting[0]!.items);
          if (bytes + next > this.maxBytes) break;
          group.push(this.waiting.shift()!);
          bytes += next;
        }
        const items = group.length === 1 ? group[0]!.items : group.flatMap((g) => g.items);
        try {
          const results = await this.sendAll(items);
          let at = 0;
          for (const g of group) {
            g.resolve(results.slice(at, at + g.items.length));
            at += g.items.length;
          }
        } catch (err) {
          for (const g of group) g.reject(err);
        }
      }
    } finally {
      this.pumping = false;
    }
  }
}
