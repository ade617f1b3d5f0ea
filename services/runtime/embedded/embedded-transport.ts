/**
 * EmbeddedTransport: the Transport contract on a durable, partitioned, replayable log in RocksDB
 * inside this process (see README.md next to this file for the design and the key layout).
 *
 * RocksDB allows one process per database, so handles are shared: every `open()` of the same
 * directory in one process uses one `SharedLog` (ref-counted; the database closes with the last
 * handle). Each handle is one "member host": consumer group members it creates stop when it closes,
 * while topics, offsets and groups are common to all handles of the directory.
 */
import path from 'node:path';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { systemClock } from '../clock.ts';
import type { Clock } from '../clock.ts';
import { partitionForKey } from '../partitioner.ts';
import type {
  InlineState,
  GroupMember,
  GroupMemberOptions,
  LogRecord,
  OutRecord,
  PartitionOffset,
  RecordMetadata,
  TopicDefinition,
  TopicDescription,
  Transport,
} from '../transport.ts';
import { encodeRecord } from './codec.ts';
import { stateKeyPrefix } from './keys.ts';
import { coordinatorFor, existingCoordinator } from './group.ts';
import type { EmbeddedGroupMember, MemberHost, MemberStats } from './group.ts';
import { LogClosedError, SharedLog } from './log.ts';
import type { MaintenanceReport, OffsetUpdate, PreparedRecord } from './log.ts';

export interface EmbeddedTransportOptions {
  /** Directory of the log; the RocksDB database lives in `<dir>/log`. */
  readonly dir: string;
  /** Default record timestamps and retention cut-offs. Default: wall clock. */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /**
   * fsync the WAL on every write batch. Without it (the default) a killed process loses nothing
   * that was acknowledged, but a machine crash or power loss may lose the last writes.
   * Decided by the first handle that opens a directory.
   */
  readonly sync?: boolean;
  /**
   * Period of the retention/compaction run (also run once at open). 0 disables the timer; call
   * maintain() instead. Default 5 minutes. Decided by the first handle that opens a directory.
   */
  readonly maintenanceIntervalMs?: number;
}

const DEFAULT_MAINTENANCE_INTERVAL_MS = 5 * 60_000;
const READ_CHUNK = 1000;
/** Kafka's legal topic names. */
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

interface RegistryEntry {
  refs: number;
  readonly ready: Promise<SharedLog>;
  timer: NodeJS.Timeout | undefined;
}

const registry = new Map<string, RegistryEntry>();
const closing = new Map<string, Promise<void>>();

async function acquire(dir: string, options: EmbeddedTransportOptions, clock: Clock, logger: Logger): Promise<{ key: string; entry: RegistryEntry; log: SharedLog }> {
  const key = path.resolve(dir);
  for (let c = closing.get(key); c; c = closing.get(key)) await c;
  let entry = registry.get(key);
  if (!entry) {
    const created: RegistryEntry = {
      refs: 0,
      ready: SharedLog.open(key, { sync: options.sync ?? false, logger }),
      timer: undefined,
    };
    entry = created;
    registry.set(key, created);
    const interval = options.maintenanceIntervalMs ?? DEFAULT_MAINTENANCE_INTERVAL_MS;
    created.ready.then(
      (log) => {
        const run = (): void => {
          log.maintain(clock.now()).catch((err: unknown) => logger.error({ err, dir: key }, 'embedded log maintenance failed'));
        };
        run();
        if (interval > 0 && created.refs > 0) {
          created.timer = setInterval(run, interval);
          created.timer.unref();
        }
      },
      () => undefined,
    );
  }
  entry.refs++;
  try {
    return { key, entry, log: await entry.ready };
  } catch (err) {
    entry.refs--;
    if (registry.get(key) === entry) registry.delete(key);
    throw err;
  }
}

async function release(key: string, entry: RegistryEntry): Promise<void> {
  entry.refs--;
  if (entry.refs > 0) return;
  if (registry.get(key) === entry) registry.delete(key);
  if (entry.timer) clearInterval(entry.timer);
  const done = entry.ready
    .then((log) => log.close())
    .finally(() => {
      if (closing.get(key) === done) closing.delete(key);
    });
  closing.set(key, done);
  await done;
}

export class EmbeddedTransport implements Transport, MemberHost {
  readonly kind = 'embedded' as const;
  private closed = false;
  private closePromise: Promise<void> | undefined;
  private readonly members = new Set<EmbeddedGroupMember>();

  private constructor(
    readonly log: SharedLog,
    private readonly registryKey: string,
    private readonly entry: RegistryEntry,
    private readonly clock: Clock,
    readonly logger: Logger,
  ) {}

  static async open(options: EmbeddedTransportOptions): Promise<EmbeddedTransport> {
    const clock = options.clock ?? systemClock;
    const logger = options.logger ?? pino({ name: 'embedded-log', level: 'warn' });
    const { key, entry, log } = await acquire(options.dir, options, clock, logger);
    return new EmbeddedTransport(log, key, entry, clock, logger);
  }

  /** Resolved directory of the log. */
  get dir(): string {
    return this.registryKey;
  }

  async ensureTopics(topics: readonly TopicDefinition[]): Promise<void> {
    this.assertOpen();
    for (const t of topics) {
      if (typeof t.name !== 'string' || !TOPIC_NAME.test(t.name) || t.name === '.' || t.name === '..') {
        throw new RangeError(`invalid topic name ${JSON.stringify(t.name)} (Kafka rules: [a-zA-Z0-9._-], 1-249 chars)`);
      }
      if (!Number.isInteger(t.partitions) || t.partitions < 1 || t.partitions > 100_000) {
        throw new RangeError(`invalid partition count ${t.partitions} for topic "${t.name}"`);
      }
      for (const [k, v] of Object.entries(t.config ?? {})) {
        if (typeof v !== 'string') throw new TypeError(`config ${k} of topic "${t.name}" must be a string`);
      }
    }
    await this.log.ensureTopics(topics.map((t) => ({ name: t.name, partitions: t.partitions, config: { ...(t.config ?? {}) } })));
  }

  async describeTopic(name: string): Promise<TopicDescription | undefined> {
    this.assertOpen();
    const topic = this.log.topic(name);
    if (!topic) return undefined;
    return {
      name,
      partitions: topic.partitions.map((ps) => ({ partition: ps.partition, low: Math.min(ps.low, ps.visible), high: ps.visible })),
      config: { ...topic.config },
    };
  }

  /** The topic's max.message.bytes when it was created with one (the log itself has no limit). */
  async maxMessageBytes(topic: string): Promise<number | undefined> {
    this.assertOpen();
    const value = Number(this.log.topic(topic)?.config['max.message.bytes']);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  }

  async listTopics(): Promise<string[]> {
    this.assertOpen();
    return this.log.topicNames();
  }

  async partitionFor(topic: string, key: string): Promise<number> {
    this.assertOpen();
    return partitionForKey(key, this.log.requireTopic(topic).partitions.length);
  }

  async send(records: readonly OutRecord[]): Promise<RecordMetadata[]> {
    this.assertOpen();
    const prepared = this.prepare(records);
    if (prepared.length === 0) return [];
    return this.log.append(prepared);
  }

  async offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<number> {
    this.assertOpen();
    if (!Number.isFinite(timestamp)) throw new RangeError(`invalid timestamp ${timestamp}`);
    return this.log.offsetForTimestamp(this.log.requirePartition(topic, partition), Math.ceil(timestamp));
  }

  async committedOffsets(groupId: string, topic: string): Promise<PartitionOffset[]> {
    this.assertOpen();
    const t = this.log.topic(topic);
    if (!t) return [];
    const out: PartitionOffset[] = [];
    for (const ps of t.partitions) {
      const offset = this.log.committedOffset(groupId, ps);
      if (offset !== undefined) out.push({ topic, partition: ps.partition, offset });
    }
    return out;
  }

  async setCommittedOffsets(groupId: string, offsets: readonly PartitionOffset[]): Promise<void> {
    this.assertOpen();
    validateGroupId(groupId);
    const coordinator = existingCoordinator(this.log, groupId);
    if (coordinator && coordinator.memberCount > 0) {
      throw new Error(`group "${groupId}" has ${coordinator.memberCount} active member(s); stop them before setting offsets`);
    }
    const updates: OffsetUpdate[] = offsets.map((o) => {
      if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new RangeError(`invalid offset ${o.offset} for ${o.topic}-${o.partition}`);
      return { group: groupId, ps: this.log.requirePartition(o.topic, o.partition), offset: o.offset };
    });
    if (updates.length === 0) return;
    await this.log.commit([], updates, () => {
      if ((existingCoordinator(this.log, groupId)?.memberCount ?? 0) > 0) {
        throw new Error(`group "${groupId}" gained members; offsets not set`);
      }
    });
  }

  readPartition(topic: string, partition: number, from: number, to: number): AsyncIterable<readonly LogRecord[]> {
    this.assertOpen();
    const ps = this.log.requirePartition(topic, partition);
    if (!(from >= 0) || Number.isNaN(to)) throw new RangeError(`invalid range [${from}, ${to})`);
    const log = this.log;
    return {
      async *[Symbol.asyncIterator](): AsyncGenerator<readonly LogRecord[]> {
        let position = Math.floor(from);
        while (position < to) {
          const { records, next } = await log.read(ps, position, READ_CHUNK, to);
          if (records.length === 0) return;
          yield records;
          position = next;
        }
      },
    };
  }

  async join(options: GroupMemberOptions): Promise<GroupMember> {
    this.assertOpen();
    validateGroupId(options.groupId);
    if (options.topics.length === 0) throw new RangeError('join needs at least one topic');
    const member = coordinatorFor(this.log, options.groupId).join(this, options);
    this.members.add(member);
    member.onLeft(() => this.members.delete(member));
    return member;
  }

  /** Tasks keep their stores in the log's database, under a prefix of their own (keys.ts). */
  inlineState(groupId: string, partition: number): InlineState {
    this.assertOpen();
    return { db: this.log.stateDb, keyPrefix: stateKeyPrefix(groupId, partition) };
  }

  /** Runs retention and compaction now (also runs periodically and at open). */
  maintain(): Promise<MaintenanceReport> {
    this.assertOpen();
    return this.log.maintain(this.clock.now());
  }

  /** Stats (assignment, batches, error counts) of the group members created by this handle. */
  memberStats(): MemberStats[] {
    return [...this.members].map((m) => m.stats());
  }

  /** Resolves once every write issued so far is durable. */
  flush(): Promise<void> {
    return this.log.flushed();
  }

  close(): Promise<void> {
    this.closePromise ??= this.doClose();
    return this.closePromise;
  }

  private async doClose(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.members].map((m) => m.stop()));
    await this.log.flushed();
    await release(this.registryKey, this.entry);
  }

  /** Validates and encodes records; partitions are chosen here, offsets when the batch is written. */
  prepare(records: readonly OutRecord[]): PreparedRecord[] {
    const out: PreparedRecord[] = new Array<PreparedRecord>(records.length);
    let now: number | undefined;
    for (let i = 0; i < records.length; i++) {
      const r = records[i] as OutRecord;
      const topic = this.log.requireTopic(r.topic);
      const key = r.key ?? null;
      if (key !== null && typeof key !== 'string') throw new TypeError(`record key for "${r.topic}" must be a string or null`);
      if (key === null && topic.compacted) {
        throw new TypeError(`compacted topic "${r.topic}" does not accept records without a key`);
      }
      let value = r.value ?? null;
      if (value !== null && !Buffer.isBuffer(value)) {
        if (!((value as unknown) instanceof Uint8Array)) throw new TypeError(`record value for "${r.topic}" must be a Buffer or null`);
        const u8 = value as Uint8Array;
        value = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
      }
      let partition: number;
      if (r.partition != null) {
        partition = r.partition;
        if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitions.length) {
          throw new RangeError(`topic "${r.topic}" has no partition ${partition} (it has ${topic.partitions.length})`);
        }
      } else {
        partition = partitionForKey(key, topic.partitions.length);
      }
      let timestamp: number;
      if (r.timestamp != null) {
        if (!Number.isFinite(r.timestamp)) throw new RangeError(`invalid timestamp ${r.timestamp}`);
        timestamp = Math.floor(r.timestamp);
      } else {
        now ??= Math.floor(this.clock.now());
        timestamp = now;
      }
      if (r.headers) {
        for (const [k, v] of Object.entries(r.headers)) {
          if (typeof v !== 'string') throw new TypeError(`header ${k} of a record for "${r.topic}" must be a string`);
        }
      }
      out[i] = {
        ps: topic.partitions[partition] as PreparedRecord['ps'],
        timestamp,
        encoded: encodeRecord(timestamp, key, value, r.headers),
        conforms: r.conforms === true,
      };
    }
    return out;
  }

  private assertOpen(): void {
    if (this.closed) throw new LogClosedError('embedded transport is closed');
  }
}

function validateGroupId(groupId: string): void {
  if (typeof groupId !== 'string' || groupId.length === 0 || groupId.includes('\u0000')) {
    throw new RangeError(`invalid group id ${JSON.stringify(groupId)}`);
  }
}
