/**
 * Retention and compaction of the embedded log (Kafka's cleanup.policy delete and compact): records
 * older than retention.ms leave the head of a partition, and a compacted topic keeps only the
 * latest record per key. Offsets never change; readers skip the gaps. SharedLog runs one pass at a
 * time (log.ts, maintain).
 */
import { peekRecord, recordTimestamp } from './codec.ts';
import type { SegmentFiles } from './segments.ts';
import { boundsKey, encodeBounds, readU64, recordKey, recordKeyOffset, recordPartitionRange, recordRange, timePartitionRange } from './keys.ts';
import type { RocksStore, BatchOp } from './rocks.ts';
import { emptyTail, parsePolicy } from './partition-state.ts';
import type { PartitionState, TopicState } from './partition-state.ts';

/** Kafka's default delete.retention.ms: how long tombstones survive compaction. */
const DEFAULT_DELETE_RETENTION_MS = 86_400_000;
/** Keys read per iterator step. */
export const SCAN_CHUNK = 1000;
/** Keys deleted per write batch. */
const DELETE_CHUNK = 2000;

export interface MaintenanceReport {
  /** Records removed from the head by retention.ms. */
  readonly expired: number;
  /** Records removed by compaction (superseded values and expired tombstones). */
  readonly compacted: number;
}

export class LogMaintenance {
  constructor(
    private readonly db: RocksStore,
    private readonly segments: SegmentFiles,
    private readonly sync: boolean,
  ) {}

  /** Applies retention.ms and compaction to every partition of `topics`; stops early once `closed()`. */
  async run(topics: readonly TopicState[], now: number, closed: () => boolean): Promise<MaintenanceReport> {
    let expired = 0;
    let compacted = 0;
    for (const topic of topics) {
      const policy = parsePolicy(topic.config);
      const retentionMs = Number(topic.config['retention.ms'] ?? -1);
      const deleteRetentionMs = Number(topic.config['delete.retention.ms'] ?? DEFAULT_DELETE_RETENTION_MS);
      for (const ps of topic.partitions) {
        if (closed()) break;
        if (policy.delete && Number.isFinite(retentionMs) && retentionMs > 0) {
          expired += await this.applyRetention(ps, now - retentionMs);
        }
        if (policy.compact) compacted += await this.compact(ps, now, deleteRetentionMs);
      }
    }
    return { expired, compacted };
  }

  /** Drops records older than `cutoff` from the head (stops at the first newer one). */
  private async applyRetention(ps: PartitionState, cutoff: number): Promise<number> {
    const end = ps.visible;
    const oldLow = ps.low;
    if (oldLow >= end) return 0;
    let newLow = end;
    const it = this.db.iterator(recordRange(ps.topic.id, ps.partition, oldLow, end));
    try {
      scan: while (true) {
        const { keys, values } = await it.nextMany(SCAN_CHUNK);
        for (let i = 0; i < keys.length; i++) {
          if (recordTimestamp(values[i] as Buffer) >= cutoff) {
            newLow = recordKeyOffset(keys[i] as Buffer);
            break scan;
          }
        }
        if (keys.length < SCAN_CHUNK) break;
      }
    } finally {
      await it.end();
    }
    if (newLow <= oldLow) return 0;
    // The marker goes first: after a crash the bounds are right and leftover keys below `low` are
    // ignored by readers and removed by the next run.
    await this.db.batch([{ type: 'put', key: boundsKey(ps.topic.id, ps.partition), value: encodeBounds(newLow, end) }], this.sync);
    ps.low = newLow;
    const range = recordPartitionRange(ps.topic.id, ps.partition);
    await this.db.clear({ gte: range.gte, lt: recordKey(ps.topic.id, ps.partition, newLow) });
    await this.trimTimeIndex(ps, newLow);
    // Segments whose records are all gone: their keys first, then the files (segments.ts).
    const expired = this.segments.expired(ps.topic.id, ps.partition, newLow);
    if (expired.keys.length > 0) {
      await this.db.batch(expired.keys.map((key) => ({ type: 'del', key })), this.sync);
      this.segments.removeFiles(expired.segments);
    }
    return newLow - oldLow;
  }

  /** Removes time index entries below `low`, except the last one (it still bounds later records). */
  private async trimTimeIndex(ps: PartitionState, low: number): Promise<void> {
    const it = this.db.iterator({ ...timePartitionRange(ps.topic.id, ps.partition) });
    const stale: Buffer[] = [];
    try {
      outer: while (true) {
        const { keys, values } = await it.nextMany(SCAN_CHUNK);
        for (let i = 0; i < keys.length; i++) {
          if (readU64(values[i] as Buffer, 0) >= low) break outer;
          stale.push(keys[i] as Buffer);
        }
        if (keys.length < SCAN_CHUNK) break;
      }
    } finally {
      await it.end();
    }
    stale.pop();
    for (let i = 0; i < stale.length; i += DELETE_CHUNK) {
      await this.db.batch(stale.slice(i, i + DELETE_CHUNK).map((key) => ({ type: 'del', key })), false);
    }
  }

  /**
   * Keeps only the latest record per key (newest first, one reverse pass); tombstones older than
   * `deleteRetentionMs` go too. Offsets never change; readers skip the gaps.
   */
  private async compact(ps: PartitionState, now: number, deleteRetentionMs: number): Promise<number> {
    const end = ps.visible;
    if (end === ps.compactedHigh && !ps.tombstonesKept) return 0;
    // Records compaction removes must not be served from memory afterwards.
    ps.tail = emptyTail(ps.reserved);
    const seen = new Set<string>();
    let pending: Buffer[] = [];
    // Expired tombstones go last: if the process dies half-way, a key must never come back with
    // an older value because its tombstone was deleted before the values it hides.
    const expiredTombstones: Buffer[] = [];
    let removed = 0;
    let markerWritten = false;
    let tombstonesKept = false;
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      if (!markerWritten) {
        // Compaction may remove the last record (an expired tombstone); the marker keeps `high`.
        await this.db.batch([{ type: 'put', key: boundsKey(ps.topic.id, ps.partition), value: encodeBounds(ps.low, end) }], this.sync);
        markerWritten = true;
      }
      const ops: BatchOp[] = pending.map((key) => ({ type: 'del', key }));
      pending = [];
      await this.db.batch(ops, false);
      removed += ops.length;
    };
    const it = this.db.iterator({ ...recordRange(ps.topic.id, ps.partition, ps.low, end), reverse: true });
    try {
      while (true) {
        const { keys, values } = await it.nextMany(SCAN_CHUNK);
        for (let i = 0; i < keys.length; i++) {
          const rec = peekRecord(values[i] as Buffer);
          if (rec.key == null) continue;
          if (seen.has(rec.key)) {
            pending.push(keys[i] as Buffer);
          } else {
            seen.add(rec.key);
            if (rec.tombstone) {
              if (rec.timestamp <= now - deleteRetentionMs) expiredTombstones.push(keys[i] as Buffer);
              else tombstonesKept = true;
            }
          }
        }
        if (pending.length >= DELETE_CHUNK) await flush();
        if (keys.length < SCAN_CHUNK) break;
      }
      await flush();
    } finally {
      await it.end();
    }
    for (let i = 0; i < expiredTombstones.length; i += DELETE_CHUNK) {
      pending = expiredTombstones.slice(i, i + DELETE_CHUNK);
      await flush();
    }
    ps.compactedHigh = end;
    ps.tombstonesKept = tombstonesKept;
    return removed;
  }
}
