/**
 * The in-memory state of the embedded log's topics and partitions: bounds and watermarks, the
 * consumers waiting on a partition, and the tail of newest records that most reads are served from.
 */
import type { LogRecord } from '../transport.ts';
import { decodeRecord } from './codec.ts';
import { segmentBytesOf } from './segments.ts';

export interface TopicState {
  readonly name: string;
  readonly id: number;
  readonly config: Readonly<Record<string, string>>;
  readonly partitions: readonly PartitionState[];
  /** cleanup.policy includes "compact": keys are required, older values per key are dropped. */
  readonly compacted: boolean;
  /** Size at which a segment file of this topic is rolled (segments.ts). */
  readonly segmentBytes: number;
}

export interface PartitionState {
  readonly topic: TopicState;
  readonly partition: number;
  /** Earliest retained offset. */
  low: number;
  /** Next offset to assign; ahead of `visible` only while a write batch is in flight. */
  reserved: number;
  /** High watermark readers see: every offset below it is durable. */
  visible: number;
  /** Largest timestamp appended (drives the sparse time index). */
  maxTimestamp: number;
  /** Consumers parked until `visible` moves. */
  readonly waiters: Set<() => void>;
  /** `visible` when compaction last finished, and whether tombstones were kept back then. */
  compactedHigh: number;
  tombstonesKept: boolean;
  /** The newest records, encoded, as written (see TAIL_BYTES). */
  tail: RecordTail;
  /** performance.now() of the last read (-Infinity: never); a tail is kept only while reads come. */
  readAt: number;
}

/**
 * The last records written to a partition, kept in memory: consumers mostly read what was written
 * a moment ago, and answering from here spares a RocksDB iterator per read. `records[i]` is the
 * record at offset `start + i`; the tail always ends at `visible` or below.
 */
export interface RecordTail {
  start: number;
  records: Buffer[];
  /** conforms[i]: records[i] was emitted by a service of this process (PreparedRecord.conforms). */
  conforms: boolean[];
  bytes: number;
}

/** Bytes of encoded records kept per partition in its tail (a few pages, hundreds of links). */
const TAIL_BYTES = 2 * 1024 * 1024;
/**
 * A partition nobody has read for this long keeps no tail. Changelogs are read only to restore a
 * store, yet take most of a crawl's records (tens per page): kept in tails they were the largest
 * set of objects surviving the event loop's young-generation collections.
 */
const TAIL_IDLE_MS = 10_000;

export function emptyTail(start: number): RecordTail {
  return { start, records: [], conforms: [], bytes: 0 };
}

/**
 * Appends a durable record to the tail, which drops its oldest records past TAIL_BYTES; a partition
 * neither read within TAIL_IDLE_MS of `now` nor awaited by a consumer keeps none (its next reads go
 * to RocksDB).
 */
export function remember(ps: PartitionState, offset: number, encoded: Buffer, conforms: boolean, now: number): void {
  if (ps.waiters.size === 0 && now - ps.readAt > TAIL_IDLE_MS) {
    if (ps.tail.records.length > 0) ps.tail = emptyTail(offset + 1);
    else ps.tail.start = offset + 1;
    return;
  }
  let tail = ps.tail;
  if (offset !== tail.start + tail.records.length) tail = ps.tail = emptyTail(offset);
  tail.records.push(encoded);
  tail.conforms.push(conforms);
  tail.bytes += encoded.length;
  if (tail.bytes > TAIL_BYTES) {
    let drop = 0;
    while (tail.bytes > TAIL_BYTES / 2 && drop < tail.records.length - 1) tail.bytes -= tail.records[drop++]!.length;
    tail.records.splice(0, drop);
    tail.conforms.splice(0, drop);
    tail.start += drop;
  }
}

/** Up to `max` records of [start, end) from the partition's tail, or undefined when `start` is not in it. */
export function tailRecords(ps: PartitionState, start: number, end: number, max: number): LogRecord[] | undefined {
  const tail = ps.tail;
  if (start < tail.start || start >= tail.start + tail.records.length) return undefined;
  const topic = ps.topic.name;
  const n = Math.min(max, end - start, tail.start + tail.records.length - start);
  const records = new Array<LogRecord>(n);
  for (let i = 0; i < n; i++) {
    const at = start - tail.start + i;
    const d = decodeRecord(tail.records[at]!);
    records[i] = { topic, partition: ps.partition, offset: start + i, key: d.key, value: d.value, timestamp: d.timestamp, headers: d.headers, conforms: tail.conforms[at]! };
  }
  return records;
}

/** cleanup.policy as flags (Kafka's default: delete). */
export function parsePolicy(config: Readonly<Record<string, string>>): { compact: boolean; delete: boolean } {
  const parts = (config['cleanup.policy'] ?? 'delete').split(',').map((s) => s.trim());
  return { compact: parts.includes('compact'), delete: parts.includes('delete') };
}

/** A topic with its partitions, all empty (their bounds are loaded or start at 0). */
export function newTopic(name: string, id: number, partitions: number, config: Record<string, string>): TopicState {
  const parts: PartitionState[] = [];
  const topic: TopicState = {
    name,
    id,
    config: Object.freeze({ ...config }),
    partitions: parts,
    compacted: parsePolicy(config).compact,
    segmentBytes: segmentBytesOf(config),
  };
  for (let p = 0; p < partitions; p++) {
    parts.push({
      topic,
      partition: p,
      low: 0,
      reserved: 0,
      visible: 0,
      maxTimestamp: Number.NEGATIVE_INFINITY,
      waiters: new Set(),
      compactedHigh: -1,
      tombstonesKept: false,
      tail: emptyTail(0),
      readAt: Number.NEGATIVE_INFINITY,
    });
  }
  return topic;
}

/** Wakes the consumers parked on the partition. */
export function wake(ps: PartitionState): void {
  if (ps.waiters.size === 0) return;
  const waiters = [...ps.waiters];
  ps.waiters.clear();
  for (const w of waiters) w();
}
