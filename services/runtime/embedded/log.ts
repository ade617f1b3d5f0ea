/**
 * The shared, process-wide state of one embedded log directory: the RocksDB database, topic and
 * partition state (partition-state.ts), committed offsets (offsets.ts), the single writer, reads
 * (the tail here, the rest in reads.ts) and maintenance (retention and compaction: maintenance.ts). Every
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
import { encodePointer } from './codec.ts';
import { EXTERNAL_MIN_BYTES, SegmentFiles } from './segments.ts';
import {
  boundsKey,
  decodeBounds,
  decodeSegmentKey,
  encodeU64,
  formatKey,
  metaKey,
  metaPrefixRange,
  readU64,
  recordKey,
  recordKeyOffset,
  recordPartitionRange,
  segmentPrefixRange,
  timeKey,
  timeKeyTimestamp,
  timePartitionRange,
} from './keys.ts';
import { RocksStore } from './rocks.ts';
import type { BatchOp } from './rocks.ts';
import { newTopic, remember, tailRecords, wake } from './partition-state.ts';
import type { PartitionState, TopicState } from './partition-state.ts';
import { CommittedOffsets } from './offsets.ts';
import type { OffsetUpdate } from './offsets.ts';
import { LogMaintenance, SCAN_CHUNK } from './maintenance.ts';
import type { MaintenanceReport } from './maintenance.ts';
import { LogReads } from './reads.ts';

export { parsePolicy } from './partition-state.ts';
export type { PartitionState, TopicState } from './partition-state.ts';
export { LOST_RECORD_HEADER } from './reads.ts';
export type { OffsetUpdate } from './offsets.ts';
export type { MaintenanceReport } from './maintenance.ts';

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
/** Upper bounds of one group-commit batch (a single job is never split). */
const MAX_GROUP_RECORDS = 20_000;
const MAX_GROUP_BYTES = 32 << 20;

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

/** A record validated and encoded at send time; its offset is assigned when its batch is built. */
export interface PreparedRecord {
  readonly ps: PartitionState;
  readonly timestamp: number;
  readonly encoded: Buffer;
  /** Emitted by a service of this process (OutRecord.conforms); kept with the record in the tail. */
  readonly conforms?: boolean;
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

export interface SharedLogOptions {
  readonly sync: boolean;
  readonly logger: Logger;
}

interface TopicMeta {
  readonly id: number;
  readonly partitions: number;
  readonly config: Record<string, string>;
}

export class SharedLog {
  readonly dir: string;
  private readonly topicsByName = new Map<string, TopicState>();
  private readonly topicsById = new Map<number, TopicState>();
  private readonly creating = new Map<string, Promise<void>>();
  private nextTopicId = 1;
  private readonly offsets = new CommittedOffsets();
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
  private readonly maintenance: LogMaintenance;
  private readonly reads: LogReads;

  private constructor(
    dir: string,
    private readonly db: RocksStore,
    private readonly options: SharedLogOptions,
  ) {
    this.dir = dir;
    this.segments = new SegmentFiles(path.join(dir, 'segments'));
    this.maintenance = new LogMaintenance(db, this.segments, options.sync);
    this.reads = new LogReads(db, this.segments, () => this.logger);
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
      const topic = newTopic(name, meta.id, meta.partitions, meta.config);
      await Promise.all(topic.partitions.map((ps) => this.loadPartition(ps)));
      this.registerTopic(topic);
    }
    const known = await this.db.scan(segmentPrefixRange(), Number.MAX_SAFE_INTEGER);
    const stale = this.segments.load(
      known.keys.map((key, i) => ({ ...decodeSegmentKey(key), lastOffset: readU64(known.values[i] as Buffer, 0) })),
      (topicId, partition) => this.topicsById.get(topicId)?.partitions[partition]?.low ?? Number.MAX_SAFE_INTEGER,
    );
    if (stale.length > 0) await this.db.batch(stale.map((key) => ({ type: 'del', key })), true);
    await this.offsets.load(this.db);
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
      const topic = newTopic(def.name, this.nextTopicId++, def.partitions, def.config);
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
    const extraOps = this.offsets.ops(offsets);
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
        this.offsets.apply(job.offsets);
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

  committedOffset(group: string, ps: PartitionState): number | undefined {
    return this.offsets.get(group, ps);
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
      const fromTail = tailRecords(ps, start, end, max);
      if (fromTail !== undefined) return { records: fromTail, next: start + fromTail.length, highWatermark };
      const records = await this.reads.records(ps, start, end, max);
      if (records === undefined) return await this.read(ps, ps.low, max, to);
      const last = records[records.length - 1];
      const next = records.length < max || !last ? end : last.offset + 1;
      return { records, next, highWatermark };
    } finally {
      this.opDone();
    }
  }

  /** First offset whose timestamp is >= `timestamp` (Kafka ListOffsets semantics), else `visible`. */
  async offsetForTimestamp(ps: PartitionState, timestamp: number): Promise<number> {
    const end = ps.visible;
    this.assertOpen();
    this.activeOps++;
    try {
      return await this.reads.offsetForTimestamp(ps, end, timestamp);
    } finally {
      this.opDone();
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
    const report = await this.maintenance.run([...this.topicsByName.values()], now, () => this.closed);
    if (report.expired + report.compacted > 0) this.logger.debug({ dir: this.dir, ...report }, 'embedded log maintenance');
    return report;
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

function byteSize(records: readonly PreparedRecord[]): number {
  let n = 0;
  for (const r of records) n += r.encoded.length + 32;
  return n;
}
