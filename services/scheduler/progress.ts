/**
 * Live counters of the scheduler partitions running in this process, for the crawl command's
 * progress display, its idle detection and its summary. The durable copy of the same counters is in
 * each partition's store.
 */
import type { PartitionStats } from './state.ts';

export interface PartitionLoad {
  readonly queued: number;
  readonly inflight: number;
  /** of the queued URLs, those on parked hosts (robots.txt unreachable, or failing): waiting on a retry */
  readonly parked?: number;
}

export class CrawlProgress {
  private readonly partitions = new Map<number, { stats: PartitionStats; load: PartitionLoad }>();

  update(partition: number, stats: PartitionStats, load: PartitionLoad): void {
    this.partitions.set(partition, { stats: { ...stats }, load });
  }

  /** The last counters reported by one partition (undefined: none in this process). */
  partition(partition: number): { readonly stats: PartitionStats; readonly load: PartitionLoad } | undefined {
    return this.partitions.get(partition);
  }

  forget(partition: number): void {
    this.partitions.delete(partition);
  }

  totals(): PartitionStats & Required<PartitionLoad> {
    const t: Record<string, number> = { queued: 0, inflight: 0, parked: 0 };
    const lists: Record<string, number[]> = {};
    for (const { stats, load } of this.partitions.values()) {
      for (const [k, v] of Object.entries(stats)) {
        // Per-depth counters are summed depth by depth.
        if (Array.isArray(v)) {
          const sum = (lists[k] ??= []);
          (v as number[]).forEach((n, i) => (sum[i] = (sum[i] ?? 0) + n));
        } else if (typeof v === 'number') t[k] = (t[k] ?? 0) + v;
      }
      t.queued = (t.queued ?? 0) + load.queued;
      t.inflight = (t.inflight ?? 0) + load.inflight;
      t.parked = (t.parked ?? 0) + (load.parked ?? 0);
    }
    return { ...t, ...lists } as unknown as PartitionStats & Required<PartitionLoad>;
  }
}
