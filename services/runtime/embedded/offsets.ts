/**
 * Committed offsets of the embedded log's consumer groups: kept in memory for reads, written to
 * RocksDB in the same atomic batch as the records and state of a commit (keys.ts, offsetKey).
 */
import { decodeOffsetKey, encodeU64, offsetKey, offsetPrefixRange, readU64 } from './keys.ts';
import type { BatchOp, RocksStore } from './rocks.ts';
import type { PartitionState } from './partition-state.ts';

/** A group's next offset to read in one partition, as a commit sets it. */
export interface OffsetUpdate {
  readonly group: string;
  readonly ps: PartitionState;
  readonly offset: number;
}

function tpKey(topicId: number, partition: number): string {
  return `${topicId}:${partition}`;
}

export class CommittedOffsets {
  /** group → "topicId:partition" → next offset. */
  private readonly committed = new Map<string, Map<string, number>>();

  /** Reads every stored offset (at open). */
  async load(db: RocksStore): Promise<void> {
    const offsets = await db.scan(offsetPrefixRange(), Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < offsets.keys.length; i++) {
      const { group, topicId, partition } = decodeOffsetKey(offsets.keys[i] as Buffer);
      this.groupOffsets(group).set(tpKey(topicId, partition), readU64(offsets.values[i] as Buffer, 0));
    }
  }

  get(group: string, ps: PartitionState): number | undefined {
    return this.committed.get(group)?.get(tpKey(ps.topic.id, ps.partition));
  }

  /** The writes that store `offsets` (they join the commit's batch). */
  ops(offsets: readonly OffsetUpdate[]): BatchOp[] {
    return offsets.map((o) => ({ type: 'put', key: offsetKey(o.group, o.ps.topic.id, o.ps.partition), value: encodeU64(o.offset) }));
  }

  /** Takes `offsets` as committed, once their batch is durable. */
  apply(offsets: readonly OffsetUpdate[]): void {
    for (const o of offsets) this.groupOffsets(o.group).set(tpKey(o.ps.topic.id, o.ps.partition), o.offset);
  }

  private groupOffsets(group: string): Map<string, number> {
    let m = this.committed.get(group);
    if (!m) {
      m = new Map();
      this.committed.set(group, m);
    }
    return m;
  }
}
