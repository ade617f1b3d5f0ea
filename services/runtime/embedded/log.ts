/**
 * The shared, process-wide state of one embedded log directory: the RocksDB database, topic and
 * partition state, committed offsets, the single writer, reads and maintenance. Every
 * `EmbeddedTransport` opened on the same directory in this process uses the same `SharedLog`
 * (RocksDB allows one process per database, and members of one group must see one log).
 *
 * Writes go through one writer: queued jobs are coalesced into a single atomic RocksDB write batch
 * (group commit). Offsets are assigned synchronously while the batch is built, so concurrent sends
 * never clash, and a partition's `visible` high watermark only moves after the batch is durable in
 * RocksDB. With one batch in flight at a time the log on disk is always a prefix of what was
 * acknowledged, which is what keeps it contiguous after a crash.
 */
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { LogRecord, RecordMetadata } from '../transport.ts';
import type { KeyValueDb } from '../rocksdb.ts';
import { decodeRecord, encodePointer, encodeRecord, peekRecord, pointerOf, recordTimestamp } from './codec.ts';
import type { SegmentPointer } from './codec.ts';
import { EXTERNAL_MIN_BYTES, SegmentFiles, segmentBytesOf } from './segments.ts';
import {
  boundsKey,
  decodeBounds,
  decodeOffsetKey,
  decodeSegmentKey,
  encodeBounds,
  encodeU64,
  formatKey,
  metaKey,
  metaPrefixRange,
  offsetKey,
  offsetPrefixRange,
  readU64,
  recordKey,
  recordKeyOffset,
  recordPartitionRange,
  recordRange,
  segmentPrefixRange,
  timeKey,
  timeKeyTimestamp,
  timePartitionRange,
} from './keys.ts';
import { RocksStore } from './rocks.ts';
import type { BatchOp } from './rocks.ts';

/**
 * Format 2 keeps the state stores of tasks in this database, written with the commits (keys.ts,
 * 'S'). A format-1 directory (stores in their own RocksDB beside it, restored from changelogs) is
 * taken over: each task moves its changelogs into the log once (StateManager). Format 3 keeps large
 * records in segment files (segments.ts), RocksDB holding pointers to them; format-2 records stay
 * where they are and are read as before. The marker is raised at open so a build that knows only an
 * older format refuses the directory instead of misreading it.
 */
const FORMAT_VERSION = '3';
const UPGRADABLE_FORMATS = new Set(['1', '2']);
/** Header of the empty record read in place of one lost in a machine crash (resolvePointers). */
export const LOST_RECORD_HEADER = 'meguri.lost';
/** Kafka's default delete.retention.ms: how long tombstones survive compaction. */
const DEFAULT_DELETE_RETENTION_MS = 86_400_000;
/** Upper bounds of one group-commit batch (a single job is never split). */
const MAX_GROUP_RECORDS = 20_000;
const MAX_GROUP_BYTES = 32 << 20;
const SCAN_CHUNK = 1000;
const DELETE_CHUNK = 2000;

export class UnknownTopicError extends Error {
  override readonly name = 'UnknownTopicError';
}

/** A commit for offsets of a partition the member does not own (it was rebalanced away). */
export class FencedCommitError extends Error {
  override readonly name = 'FencedCommitError';
}

export class LogClosedError extends Error {
  override readonly name = 'LogClosedError';
}

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
interface RecordTail {
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

function emptyTail(start: number): RecordTail {
  return { start, records: [], conforms: [], bytes: 0 };
}

/**
 * Appends a durable record to the tail, which drops its oldest records past TAIL_BYTES; a partition
 * neither read within TAIL_IDLE_MS of `now` nor awaited by a consumer keeps none (its next reads go
 * to RocksDB).
 */
function remember(ps: PartitionState, offset: number, encoded: Buffer, conforms: boolean, now: number): void {
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

/** A record validated and encoded at send time; its offset is assigned when its batch is built. */
export interface PreparedRecord {
  readonly ps: PartitionState;
  readonly timestamp: number;
  readonly encoded: Buffer;
  /** Emitted by a service of this process (OutRecord.conforms); kept with the record in the tail. */
  readonly conforms?: boolean;
}

export interface OffsetUpdate {
  readonly group: string;
  readonly ps: PartitionState;
  readonly offset: number;
}

interface WriteJob {
  readonly records: readonly PreparedRecord[];
  readonly extraOps: readonly BatchOp[];
  readonly offsets: readonly OffsetUpdate[];
  readonly bytes: number;
  /** Runs right before the job joins a batch; throwing rejects only this job (fencing). */
  readonly check?: () => void;
  readonly onDurable?: () => void;
  resolve(meta: RecordMetadata[]): void;
  reject(err: unknown): void;
}

export interface MaintenanceReport {
  /** Records removed from the head by retention.ms. */
  readonly expired: number;
  /** Records removed by compaction (superseded values and expired tombstones). */
  readonly compacted: number;
}

export interface SharedLogOptions {
  readonly sync: boolean;
  readonly logger: Logger;
}

interface TopicMeta {
  readonly id: number;
  readonly partitions: number;
  readonly config: Record<string, string>;
}

function tpKey(topicId: number, partition: number): string {
  return `${topicId}:${partition}`;
}

export function parsePolicy(config: Readonly<Record<string, string>>): { compact: boolean; delete: boolean } {
  const parts = (config['cleanup.policy'] ?? 'delete').split(',').map((s) => s.trim());
  return { compact: parts.includes('compact'), delete: parts.includes('delete') };
}

export class SharedLog {
  readonly dir: string;
  private readonly topicsByName = new Map<string, TopicState>();
  private readonly topicsById = new Map<number, TopicState>();
  private readonly creating = new Map<string, Promise<void>>();
  private nextTopicId = 1;
  /** group → "topicId:partition" → next offset. */
  private readonly committed = new Map<string, Map<string, number>>();
  private queue: WriteJob[] = [];
  private writing = false;
  private pumpScheduled = false;
  private closed = false;
  private activeOps = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private maintaining: Promise<MaintenanceReport> | undefined;
  private maintenanceFollowUp: Promise<MaintenanceReport> | undefined;
  private readonly topicListeners = new Set<(topic: TopicState) => void>();
  private readonly segments: SegmentFiles;

  private constructor(
    dir: string,
    private readonly db: RocksStore,
    private readonly options: SharedLogOptions,
  ) {
    this.dir = dir;
    this.segments = new SegmentFiles(path.join(dir, 'segments'));
  }

  static async open(dir: string, options: SharedLogOptions): Promise<SharedLog> {
    await mkdir(dir, { recursive: true });
    const db = await RocksStore.open(path.join(dir, 'log'));
    const log = new SharedLog(dir, db, options);
    try {
      await log.load();
    } catch (err) {
      await db.close();
      throw err;
    }
    return log;
  }

  get logger(): Logger {
    return this.options.logger;
  }

  // ---- loading ---------------------------------------------------------------------------------

  private async load(): Promise<void> {
    const [format] = await this.db.getMany([formatKey]);
    if (format === undefined || UPGRADABLE_FORMATS.has(format.toString())) {
      await this.db.batch([{ type: 'put', key: formatKey, value: Buffer.from(FORMAT_VERSION) }], true);
    } else if (format.toString() !== FORMAT_VERSION) {
      throw new Error(`embedded log at ${this.dir} has format ${format.toString()}, expected ${FORMAT_VERSION} (written by a newer meguri?)`);
    }
    const metas = await this.db.scan(metaPrefixRange(), Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < metas.keys.length; i++) {
      const name = (metas.keys[i] as Buffer).toString('utf8', 1);
      const meta = JSON.parse((metas.values[i] as Buffer).toString('utf8')) as TopicMeta;
      const topic = this.makeTopic(name, meta.id, meta.partitions, meta.config);
      await Promise.all(topic.partitions.map((ps) => this.loadPartition(ps)));
      this.registerTopic(topic);
    }
    const known = await this.db.scan(segmentPrefixRange(), Number.MAX_SAFE_INTEGER);
    const stale = this.segments.load(
      known.keys.map((key, i) => ({ ...decodeSegmentKey(key), lastOffset: readU64(known.values[i] as Buffer, 0) })),
      (topicId, partition) => this.topicsById.get(topicId)?.partitions[partition]?.low ?? Number.MAX_SAFE_INTEGER,
    );
    if (stale.length > 0) await this.db.batch(stale.map((key) => ({ type: 'del', key })), true);
    const offsets = await this.db.scan(offsetPrefixRange(), Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < offsets.keys.length; i++) {
      const { group, topicId, partition } = decodeOffsetKey(offsets.keys[i] as Buffer);
      this.groupOffsets(group).set(tpKey(topicId, partition), readU64(offsets.values[i] as Buffer, 0));
    }
  }

  private async loadPartition(ps: PartitionState): Promise<void> {
    const id = ps.topic.id;
    const [bounds] = await this.db.getMany([boundsKey(id, ps.partition)]);
    const last = await this.db.scan({ ...recordPartitionRange(id, ps.partition), reverse: true, values: false }, 1);
    const lastTime = await this.db.scan({ ...timePartitionRange(id, ps.partition), reverse: true, values: false }, 1);
    const marker = bounds ? decodeBounds(bounds) : { low: 0, high: 0 };
    const lastKey = last.keys[0];
    const high = Math.max(lastKey ? recordKeyOffset(lastKey) + 1 : 0, marker.high, marker.low);
    ps.low = marker.low;
    ps.reserved = high;
    ps.visible = high;
    const lastTimeKey = lastTime.keys[0];
    ps.maxTimestamp = lastTimeKey ? timeKeyTimestamp(lastTimeKey) : Number.NEGATIVE_INFINITY;
  }

  private makeTopic(name: string, id: number, partitions: number, config: Record<string, string>): TopicState {
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

  private registerTopic(topic: TopicState): void {
    this.topicsByName.set(topic.name, topic);
    this.topicsById.set(topic.id, topic);
    this.nextTopicId = Math.max(this.nextTopicId, topic.id + 1);
  }

  // ---- topics ----------------------------------------------------------------------------------

  topic(name: string): TopicState | undefined {
    return this.topicsByName.get(name);
  }

  requireTopic(name: string): TopicState {
    const topic = this.topicsByName.get(name);
    if (!topic) {
      throw new UnknownTopicError(`unknown topic "${name}" (the embedded log does not auto-create topics; call ensureTopics first)`);
    }
    return topic;
  }

  requirePartition(topicName: string, partition: number): PartitionState {
    const topic = this.requireTopic(topicName);
    const ps = Number.isInteger(partition) ? topic.partitions[partition] : undefined;
    if (!ps) throw new RangeError(`topic "${topicName}" has no partition ${partition} (it has ${topic.partitions.length})`);
    return ps;
  }

  topicNames(): string[] {
    return [...this.topicsByName.keys()].sort();
  }

  onTopicCreated(listener: (topic: TopicState) => void): () => void {
    this.topicListeners.add(listener);
    return () => this.topicListeners.delete(listener);
  }

  /** Creates the topics that do not exist yet, atomically; existing ones are left as they are. */
  async ensureTopics(defs: readonly { name: string; partitions: number; config: Record<string, string> }[]): Promise<void> {
    this.assertOpen();
    const waits: Promise<void>[] = [];
    const created: TopicState[] = [];
    const ops: BatchOp[] = [];
    for (const def of defs) {
      const existing = this.topicsByName.get(def.name);
      if (existing) {
        if (existing.partitions.length !== def.partitions) {
          this.logger.warn(
            { topic: def.name, existing: existing.partitions.length, requested: def.partitions },
            'topic exists with a different partition count; left as it is',
          );
        }
        continue;
      }
      const pending = this.creating.get(def.name);
      if (pending) {
        waits.push(pending);
        continue;
      }
      if (created.some((t) => t.name === def.name)) continue;
      const topic = this.makeTopic(def.name, this.nextTopicId++, def.partitions, def.config);
      created.push(topic);
      const meta: TopicMeta = { id: topic.id, partitions: def.partitions, config: def.config };
      ops.push({ type: 'put', key: metaKey(def.name), value: Buffer.from(JSON.stringify(meta)) });
    }
    if (created.length > 0) {
      const write = this.enqueue({
        records: [],
        extraOps: ops,
        offsets: [],
        bytes: 0,
        onDurable: () => {
          for (const t of created) this.registerTopic(t);
        },
      }).then(() => {
        for (const t of created) for (const l of this.topicListeners) l(t);
      });
      const settled = write.finally(() => {
        for (const t of created) this.creating.delete(t.name);
      });
      for (const t of created) this.creating.set(t.name, settled);
      waits.push(settled);
    }
    await Promise.all(waits);
  }

  // ---- writing ---------------------------------------------------------------------------------

  /** Appends prepared records (one atomic batch with whatever else is queued). */
  append(records: readonly PreparedRecord[]): Promise<RecordMetadata[]> {
    return this.enqueue({ records, extraOps: [], offsets: [], bytes: byteSize(records) });
  }

  /**
   * Outputs, offset commits and state store writes (keys under stateKeyPrefix) in one atomic write;
   * `check` runs when the batch is built.
   */
  commit(records: readonly PreparedRecord[], offsets: readonly OffsetUpdate[], check?: () => void, stateWrites: readonly BatchOp[] = []): Promise<RecordMetadata[]> {
    const extraOps: BatchOp[] = offsets.map((o) => ({
      type: 'put',
      key: offsetKey(o.group, o.ps.topic.id, o.ps.partition),
      value: encodeU64(o.offset),
    }));
    for (const op of stateWrites) extraOps.push(op);
    return this.enqueue({ records, extraOps, offsets, bytes: byteSize(records), check });
  }

  /** The database tasks keep their state stores in (keys under stateKeyPrefix). */
  get stateDb(): KeyValueDb {
    return this.stateView;
  }

  private readonly stateView: KeyValueDb = {
    get: async (key) => (await this.stateView.getMany([key]))[0],
    getMany: (keys) => {
      this.assertOpen();
      return this.db.getMany(keys);
    },
    // Through the writer, so it orders with the commits and is refused once the log is closed.
    batch: async (ops) => {
      await this.enqueue({ records: [], extraOps: ops, offsets: [], bytes: 0 });
    },
    range: (options) => this.stateRange(options),
  };

  private async *stateRange(options: { gte?: Buffer; lt?: Buffer; reverse?: boolean }): AsyncGenerator<[Buffer, Buffer]> {
    this.assertOpen();
    const it = this.db.iterator({ ...(options.gte ? { gte: options.gte } : {}), ...(options.lt ? { lt: options.lt } : {}), reverse: options.reverse ?? false, highWaterMark: 64 * 1024 });
    try {
      for (;;) {
        const { keys, values } = await it.nextMany(SCAN_CHUNK);
        for (let i = 0; i < keys.length; i++) yield [keys[i]!, values[i]!];
        if (keys.length < SCAN_CHUNK) return;
      }
    } finally {
      await it.end();
    }
  }

  /** Resolves once every write queued before the call is durable (or failed). */
  flushed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.enqueue({ records: [], extraOps: [], offsets: [], bytes: 0 }).then(
      () => undefined,
      () => undefined,
    );
  }

  private enqueue(job: Omit<WriteJob, 'resolve' | 'reject'>): Promise<RecordMetadata[]> {
    if (this.closed) return Promise.reject(new LogClosedError(`embedded log at ${this.dir} is closed`));
    return new Promise((resolve, reject) => {
      this.queue.push({ ...job, resolve, reject });
      if (!this.pumpScheduled && !this.writing) {
        this.pumpScheduled = true;
        // A microtask lets sends issued in the same tick share one batch.
        queueMicrotask(() => {
          this.pumpScheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    if (this.writing) return;
    if (this.queue.length === 0) {
      if (this.activeOps === 0) this.notifyIdle();
      return;
    }
    let take = 0;
    let records = 0;
    let bytes = 0;
    while (take < this.queue.length) {
      const job = this.queue[take] as WriteJob;
      if (take > 0 && (records + job.records.length > MAX_GROUP_RECORDS || bytes + job.bytes > MAX_GROUP_BYTES)) break;
      records += job.records.length;
      bytes += job.bytes;
      take++;
    }
    const jobs = this.queue.splice(0, take);
    const ops: BatchOp[] = [];
    const accepted: { job: WriteJob; meta: RecordMetadata[] }[] = [];
    const touched = new Map<PartitionState, number>();
    const written: { ps: PartitionState; offset: number; encoded: Buffer; conforms: boolean }[] = [];
    let appendFailure: unknown;
    for (const job of jobs) {
      if (job.check) {
        try {
          job.check();
        } catch (err) {
          job.reject(err);
          continue;
        }
      }
      const meta: RecordMetadata[] = [];
      for (const r of job.records) {
        const ps = r.ps;
        if (!touched.has(ps)) touched.set(ps, ps.maxTimestamp);
        const offset = ps.reserved++;
        let stored = r.encoded;
        if (r.encoded.length >= EXTERNAL_MIN_BYTES && !ps.topic.compacted && appendFailure === undefined) {
          try {
            stored = encodePointer(r.encoded, this.segments.append(ps.topic.id, ps.partition, offset, r.encoded, ps.topic.segmentBytes));
          } catch (err) {
            appendFailure = err;
          }
        }
        ops.push({ type: 'put', key: recordKey(ps.topic.id, ps.partition, offset), value: stored });
        written.push({ ps, offset, encoded: r.encoded, conforms: r.conforms === true });
        if (r.timestamp > ps.maxTimestamp) {
          ps.maxTimestamp = r.timestamp;
          ops.push({ type: 'put', key: timeKey(ps.topic.id, ps.partition, r.timestamp), value: encodeU64(offset) });
        }
        meta.push({ topic: ps.topic.name, partition: ps.partition, offset });
      }
      for (const op of job.extraOps) ops.push(op);
      accepted.push({ job, meta });
    }
    const done = (): void => {
      for (const { job, meta } of accepted) {
        for (const o of job.offsets) this.groupOffsets(o.group).set(tpKey(o.ps.topic.id, o.ps.partition), o.offset);
        try {
          job.onDurable?.();
        } catch (err) {
          this.logger.error({ err }, 'embedded log: post-write hook failed');
        }
        job.resolve(meta);
      }
    };
    if (ops.length === 0) {
      done();
      this.pump();
      return;
    }
    let segmentsTouched: ReturnType<SegmentFiles['takeTouched']> = { ops: [], segments: [] };
    try {
      segmentsTouched = this.segments.takeTouched();
    } catch (err) {
      appendFailure ??= err;
    }
    for (const op of segmentsTouched.ops) ops.push(op);
    this.writing = true;
    // Segment bytes are on disk before the batch that points at them (segments.ts, crash order).
    let segmentsReady = Promise.resolve();
    if (appendFailure !== undefined) segmentsReady = Promise.reject(appendFailure);
    else if (this.options.sync && segmentsTouched.segments.length > 0) segmentsReady = this.segments.sync(segmentsTouched.segments);
    segmentsReady.then(() => this.db.batch(ops, this.options.sync)).then(
      () => {
        this.writing = false;
        this.segments.committed(segmentsTouched.segments);
        const now = performance.now();
        for (const w of written) remember(w.ps, w.offset, w.encoded, w.conforms, now);
        for (const ps of touched.keys()) {
          ps.visible = ps.reserved;
          wake(ps);
        }
        done();
        this.pump();
      },
      (err: unknown) => {
        this.writing = false;
        for (const [ps, maxTimestamp] of touched) {
          ps.reserved = ps.visible;
          ps.maxTimestamp = maxTimestamp;
        }
        this.logger.error({ err, dir: this.dir }, 'embedded log write failed');
        for (const { job } of accepted) job.reject(err);
        this.pump();
      },
    );
  }

  // ---- offsets ---------------------------------------------------------------------------------

  private groupOffsets(group: string): Map<string, number> {
    let m = this.committed.get(group);
    if (!m) {
      m = new Map();
      this.committed.set(group, m);
    }
    return m;
  }

  committedOffset(group: string, ps: PartitionState): number | undefined {
    return this.committed.get(group)?.get(tpKey(ps.topic.id, ps.partition));
  }

  // ---- reading ---------------------------------------------------------------------------------

  /**
   * Up to `max` records of [from, min(to, visible)) in offset order. `next` is where the following
   * read starts (past gaps left by compaction or retention).
   */
  async read(ps: PartitionState, from: number, max: number, to = Number.MAX_SAFE_INTEGER): Promise<{ records: LogRecord[]; next: number; highWatermark: number }> {
    ps.readAt = performance.now();
    const highWatermark = ps.visible;
    const end = Math.min(to, highWatermark);
    const start = Math.max(from, ps.low);
    if (start >= end) return { records: [], next: Math.max(start, from), highWatermark };
    this.assertOpen();
    this.activeOps++;
    try {
      const topic = ps.topic.name;
      const tail = ps.tail;
      if (start >= tail.start && start < tail.start + tail.records.length) {
        const n = Math.min(max, end - start, tail.start + tail.records.length - start);
        const records = new Array<LogRecord>(n);
        for (let i = 0; i < n; i++) {
          const at = start - tail.start + i;
          const d = decodeRecord(tail.records[at]!);
          records[i] = { topic, partition: ps.partition, offset: start + i, key: d.key, value: d.value, timestamp: d.timestamp, headers: d.headers, conforms: tail.conforms[at]! };
        }
        return { records, next: start + n, highWatermark };
      }
      const { keys, values } = await this.db.scan(recordRange(ps.topic.id, ps.partition, start, end), max);
      try {
        await this.resolvePointers(ps, values);
      } catch (err) {
        // Retention may have deleted a segment while this read was on its way to it.
        if (ps.low > start) return await this.read(ps, ps.low, max, to);
        throw err;
      }
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
      const last = records[records.length - 1];
      const next = records.length < max || !last ? end : last.offset + 1;
      return { records, next, highWatermark };
    } finally {
      this.opDone();
    }
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
      this.logger.error({ topic: ps.topic.name, partition: ps.partition, segment: p.seq }, `embedded log: ${reason}`);
      values[i] = encodeRecord(recordTimestamp(values[i]!), null, null, { [LOST_RECORD_HEADER]: reason });
    }
  }

  /** First offset whose timestamp is >= `timestamp` (Kafka ListOffsets semantics), else `visible`. */
  async offsetForTimestamp(ps: PartitionState, timestamp: number): Promise<number> {
    const end = ps.visible;
    this.assertOpen();
    this.activeOps++;
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
      this.opDone();
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

  // ---- maintenance -----------------------------------------------------------------------------

  /**
   * Applies retention.ms and compaction to every topic. One run at a time: a call during a run gets
   * a follow-up run (shared by all such calls), so it always covers the writes made before it.
   */
  maintain(now: number): Promise<MaintenanceReport> {
    if (this.maintenanceFollowUp) return this.maintenanceFollowUp;
    if (!this.maintaining) return this.startMaintenance(now);
    const followUp = this.maintaining
      .catch(() => undefined)
      .then(() => {
        this.maintenanceFollowUp = undefined;
        return this.startMaintenance(now);
      });
    this.maintenanceFollowUp = followUp;
    return followUp;
  }

  private startMaintenance(now: number): Promise<MaintenanceReport> {
    if (this.closed) return Promise.resolve({ expired: 0, compacted: 0 });
    this.activeOps++;
    const run = this.runMaintenance(now).finally(() => {
      this.maintaining = undefined;
      this.opDone();
    });
    this.maintaining = run;
    return run;
  }

  private async runMaintenance(now: number): Promise<MaintenanceReport> {
    let expired = 0;
    let compacted = 0;
    for (const topic of [...this.topicsByName.values()]) {
      const policy = parsePolicy(topic.config);
      const retentionMs = Number(topic.config['retention.ms'] ?? -1);
      const deleteRetentionMs = Number(topic.config['delete.retention.ms'] ?? DEFAULT_DELETE_RETENTION_MS);
      for (const ps of topic.partitions) {
        if (this.closed) break;
        if (policy.delete && Number.isFinite(retentionMs) && retentionMs > 0) {
          expired += await this.applyRetention(ps, now - retentionMs);
        }
        if (policy.compact) compacted += await this.compact(ps, now, deleteRetentionMs);
      }
    }
    if (expired + compacted > 0) this.logger.debug({ dir: this.dir, expired, compacted }, 'embedded log maintenance');
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
    await this.db.batch([{ type: 'put', key: boundsKey(ps.topic.id, ps.partition), value: encodeBounds(newLow, end) }], this.options.sync);
    ps.low = newLow;
    const range = recordPartitionRange(ps.topic.id, ps.partition);
    await this.db.clear({ gte: range.gte, lt: recordKey(ps.topic.id, ps.partition, newLow) });
    await this.trimTimeIndex(ps, newLow);
    // Segments whose records are all gone: their keys first, then the files (segments.ts).
    const expired = this.segments.expired(ps.topic.id, ps.partition, newLow);
    if (expired.keys.length > 0) {
      await this.db.batch(expired.keys.map((key) => ({ type: 'del', key })), this.options.sync);
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
        await this.db.batch([{ type: 'put', key: boundsKey(ps.topic.id, ps.partition), value: encodeBounds(ps.low, end) }], this.options.sync);
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

  // ---- lifecycle -------------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new LogClosedError(`embedded log at ${this.dir} is closed`);
  }

  private opDone(): void {
    this.activeOps--;
    if (this.activeOps === 0 && !this.writing && this.queue.length === 0) this.notifyIdle();
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters.splice(0);
    for (const w of waiters) w();
  }

  private idle(): Promise<void> {
    if (this.activeOps === 0 && !this.writing && this.queue.length === 0 && !this.pumpScheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Waits for queued writes, reads and maintenance, then closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flushed();
    this.closed = true;
    await this.idle();
    for (const topic of this.topicsByName.values()) for (const ps of topic.partitions) wake(ps);
    this.segments.close();
    await this.db.close();
  }
}

function wake(ps: PartitionState): void {
  if (ps.waiters.size === 0) return;
  const waiters = [...ps.waiters];
  ps.waiters.clear();
  for (const w of waiters) w();
}

function byteSize(records: readonly PreparedRecord[]): number {
  let n = 0;
  for (const r of records) n += r.encoded.length + 32;
  return n;
}
