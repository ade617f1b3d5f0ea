/**
 * Reads of the embedded log that go to RocksDB: records by offset (with pointers into segment files
 * resolved) and the sparse time index behind offsetForTimestamp. SharedLog serves the newest records
 * from each partition's tail and comes here for the rest.
 */
import type { Logger } from 'pino';
import type { LogRecord } from '../transport.ts';
import { decodeRecord, encodeRecord, pointerOf, recordTimestamp } from './codec.ts';
import type { SegmentPointer } from './codec.ts';
import type { SegmentFiles } from './segments.ts';
import { readU64, recordKeyOffset, recordRange, timeKey, timePartitionRange } from './keys.ts';
import type { RocksStore } from './rocks.ts';
import type { PartitionState } from './partition-state.ts';

/** Header of the empty record read in place of one lost in a machine crash (resolvePointers). */
export const LOST_RECORD_HEADER = 'meguri.lost';

export class LogReads {
  constructor(
    private readonly db: RocksStore,
    private readonly segments: SegmentFiles,
    private readonly logger: () => Logger,
  ) {}

  /**
   * Up to `max` records of [start, end) in offset order, from RocksDB. Undefined when retention
   * deleted a segment file while the read was on its way to it: read again from `ps.low`.
   */
  async records(ps: PartitionState, start: number, end: number, max: number): Promise<LogRecord[] | undefined> {
    const { keys, values } = await this.db.scan(recordRange(ps.topic.id, ps.partition, start, end), max);
    try {
      await this.resolvePointers(ps, values);
    } catch (err) {
      if (ps.low > start) return undefined;
      throw err;
    }
    const topic = ps.topic.name;
    const records: LogRecord[] = new Array<LogRecord>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const d = decodeRecord(values[i] as Buffer);
      records[i] = {
        topic,
        partition: ps.partition,
        offset: recordKeyOffset(keys[i] as Buffer),
        key: d.key,
        value: d.value,
        timestamp: d.timestamp,
        headers: d.headers,
      };
    }
    return records;
  }

  /** Replaces, in place, stored pointers with the records they point at in segment files. */
  private async resolvePointers(ps: PartitionState, values: Buffer[]): Promise<void> {
    let at: number[] | undefined;
    let pointers: SegmentPointer[] | undefined;
    for (let i = 0; i < values.length; i++) {
      const p = pointerOf(values[i]!);
      if (p === undefined) continue;
      (at ??= []).push(i);
      (pointers ??= []).push(p);
    }
    if (at === undefined || pointers === undefined) return;
    const records = await this.segments.read(ps.topic.id, ps.partition, pointers);
    for (let k = 0; k < at.length; k++) {
      const i = at[k]!;
      const record = records[k];
      if (record !== undefined) {
        values[i] = record;
        continue;
      }
      // Lost in a machine crash (segments.ts): an empty record that says so, not a stuck reader.
      // Consumers dead-letter it like any record without a value.
      const p = pointers[k]!;
      const reason = `record lost: segment ${p.seq} of ${ps.topic.name}-${ps.partition} ends before its bytes (a machine crash without fsync)`;
      this.logger().error({ topic: ps.topic.name, partition: ps.partition, segment: p.seq }, `embedded log: ${reason}`);
      values[i] = encodeRecord(recordTimestamp(values[i]!), null, null, { [LOST_RECORD_HEADER]: reason });
    }
  }

  /** First offset below `end` whose timestamp is >= `timestamp` (Kafka ListOffsets semantics), else `end`. */
  async offsetForTimestamp(ps: PartitionState, end: number, timestamp: number): Promise<number> {
    const id = ps.topic.id;
    // Index entries are (ts, offset) pairs at every new maximum timestamp, so every record before
    // the first entry with ts >= target is older than the target. Retention and compaction may
    // have removed the record an entry points at; the scan below then looks at what is left.
    const it = this.db.iterator({ gte: timeKey(id, ps.partition, timestamp), lt: timePartitionRange(id, ps.partition).lt });
    const nextEntry = async (): Promise<number | undefined> => {
      const { values } = await it.nextMany(1);
      const v = values[0];
      return v ? readU64(v, 0) : undefined;
    };
    try {
      let entry = await nextEntry();
      while (entry !== undefined && entry < end) {
        const following = await nextEntry();
        const bound = Math.min(end, following ?? end);
        const found = await this.firstAtOrAfter(ps, Math.max(entry, ps.low), bound, timestamp);
        if (found !== undefined) return found;
        entry = following;
      }
      return end;
    } finally {
      await it.end();
    }
  }

  private async firstAtOrAfter(ps: PartitionState, from: number, to: number, timestamp: number): Promise<number | undefined> {
    if (from >= to) return undefined;
    const it = this.db.iterator(recordRange(ps.topic.id, ps.partition, from, to));
    try {
      while (true) {
        const { keys, values } = await it.nextMany(256);
        for (let i = 0; i < keys.length; i++) {
          if (recordTimestamp(values[i] as Buffer) >= timestamp) return recordKeyOffset(keys[i] as Buffer);
        }
        if (keys.length < 256) return undefined;
      }
    } finally {
      await it.end();
    }
  }
}
