/**
 * Transport on Apache Kafka through kafkajs.
 *
 * - Plain sends use idempotent producers (acks=all, one request in flight, so retries never
 *   reorder or duplicate): one for `send`, one per scope of at-least-once commits (a partition of
 *   the fetcher or parser), each merging the sends that arrive while its request is out.
 * - Transactional commits use one transactional producer per scope (Kafka Streams' "one producer
 *   per task" model): a new owner of a partition initialises the same transactional id and so fences
 *   the previous owner's producer — a zombie can no longer commit outputs or offsets for it.
 * - Consumers read committed records only (read_committed), commit offsets manually, and deliver
 *   batches of one partition strictly in order.
 * Partitions are always chosen here with `partitionForKey` (murmur2) and sent explicitly.
 */
// kafkajs with the read_committed fix: never import 'kafkajs' itself for runtime values.
import { kafkajs } from './kafkajs.ts';
import { DEFAULT_GZIP_LEVEL, useGzipLevel } from './gzip-codec.ts';
import type { Consumer, Producer, TopicMessages } from 'kafkajs';
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import { partitionForKey } from '../partitioner.ts';
import { CoalescingSender } from './coalescing-sender.ts';
import type { TopicReplication } from './replication.ts';
import { TaskMigratedError, describeError } from '../errors.ts';
import { PRODUCER_RETRY, TRANSACTIONAL_RETRY, pinoLogCreator } from './client.ts';
import { KafkaAdmin } from './admin.ts';
import { DirectReader } from './direct-reader.ts';
import { KafkaGroupMember } from './group-member.ts';
import { MERGED_SEND_MAX_BYTES, approxRecordBytes, chunkBySize, metadataFor, toTopicMessages } from './records.ts';
import type {
  AtomicCommit,
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

const { Kafka, logLevel: KafkaLogLevel } = kafkajs;
/** How long a topic's max.message.bytes is kept before it is looked up again. */
const TOPIC_LIMIT_TTL_MS = 5 * 60_000;

export interface KafkaTransportOptions {
  readonly brokers: readonly string[];
  readonly clientId?: string;
  readonly logger?: Logger;
  /**
   * Replication of the topics this transport creates (default 1 and 1: one broker). A factor above
   * the cluster's broker count fails ensureTopics with a ReplicationError, unless capToBrokers.
   */
  readonly replication?: TopicReplication & { readonly capToBrokers?: boolean };
  /**
   * Transaction timeout; a crashed member's open transaction is aborted by the broker after it (and
   * blocks read_committed readers of its partitions until then). Below the session timeout, so a
   * member frozen mid-transaction has its transaction aborted before its partitions move on.
   * Default: session timeout minus 2 s.
   */
  readonly transactionTimeoutMs?: number;
  /** Group session timeout (default 10 s). */
  readonly sessionTimeoutMs?: number;
  /** Partitions one member processes at the same time. */
  readonly partitionsConsumedConcurrently?: number;
  /**
   * gzip level of what this process's producers send to gzip topics (`pages`), 1-9; default 1
   * (gzip-codec.ts). Per process: the last transport created sets it.
   */
  readonly gzipLevel?: number;
}

/** A plain send lane: its producer (made at its first send, dropped after a failed one) and its merging. */
interface PlainLane {
  producer: Promise<Producer> | undefined;
  readonly sender: CoalescingSender<OutRecord, RecordMetadata>;
}

export class KafkaTransport implements Transport {
  readonly kind = 'kafka' as const;
  private readonly kafka: InstanceType<typeof Kafka>;
  private readonly logger: Logger;
  private readonly admin: KafkaAdmin;
  private readonly reader: DirectReader;
  private readonly plainLanes = new Map<string, PlainLane>();
  private readonly txProducers = new Map<string, Promise<Producer>>();
  private readonly topicLimits = new Map<string, { readonly at: number; readonly limit: Promise<number | undefined> }>();
  private readonly offsetCommitters = new WeakMap<Consumer, CoalescingSender<PartitionOffset, void>>();
  private readonly members = new Set<KafkaGroupMember>();
  private closed = false;

  constructor(readonly options: KafkaTransportOptions) {
    this.logger = options.logger ?? silentLogger;
    useGzipLevel(options.gzipLevel ?? DEFAULT_GZIP_LEVEL);
    this.kafka = new Kafka({
      clientId: options.clientId ?? 'meguri',
      brokers: [...options.brokers],
      logLevel: KafkaLogLevel.INFO,
      logCreator: pinoLogCreator(this.logger),
      retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 5000 },
      connectionTimeout: 3000,
      requestTimeout: 30000,
    });
    this.admin = new KafkaAdmin(this.kafka, this.logger, options.replication);
    this.reader = new DirectReader(this.kafka);
  }

  /** kafkajs client, for the few callers that need more (e.g. kafkajs-native subscribers in examples). */
  get client(): InstanceType<typeof Kafka> {
    return this.kafka;
  }

  /**
   * The plain send lane `name`: an idempotent producer with one request in flight (so retries never
   * reorder or duplicate) and the merging of sends while one is out (coalescing-sender.ts). `send`
   * uses one lane and each scope of at-least-once commits (a task: one partition of a group)
   * another, so one partition's requests never wait behind another's. With one producer for the
   * process, the fetcher's gzip-compressed pages and the parser's links kept its single request
   * slot busy the whole crawl and a send waited 170–270 ms. A lane lives as long as the transport
   * (at most one per partition a group ever had here).
   */
  private plainLane(name: string): PlainLane {
    let lane = this.plainLanes.get(name);
    if (lane) return lane;
    const created: PlainLane = {
      producer: undefined,
      sender: new CoalescingSender<OutRecord, RecordMetadata>(
        (records) => this.sendNow(created, records),
        approxRecordBytes,
        MERGED_SEND_MAX_BYTES,
      ),
    };
    lane = created;
    this.plainLanes.set(name, lane);
    return lane;
  }

  private producer(lane: PlainLane): Promise<Producer> {
    lane.producer ??= (async () => {
      const p = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        retry: PRODUCER_RETRY,
        createPartitioner: kafkajs.Partitioners.DefaultPartitioner,
      });
      await p.connect();
      return p;
    })();
    return lane.producer;
  }

  get sessionTimeoutMs(): number {
    return this.options.sessionTimeoutMs ?? 10_000;
  }

  get transactionTimeoutMs(): number {
    return this.options.transactionTimeoutMs ?? Math.max(1000, this.sessionTimeoutMs - 2000);
  }

  /**
   * Claims a scope before its task restores: a new transactional producer is initialised WITH the
   * scope's transactional id (InitProducerId), which bumps the epoch — the previous owner's next
   * send, offset commit or commit is refused (fenced) and its open transaction is aborted.
   * kafkajs's connect() initialises an idempotent id only; its first transaction() is what sends
   * InitProducerId with the transactional id, so the claim begins (and aborts, empty) one here.
   * Only an open calls this: a commit never creates a producer, so a retry can never fence the
   * rightful owner.
   */
  async fenceScope(scope: string): Promise<void> {
    await this.releaseScope(scope);
    const created = (async () => {
      const producer = this.kafka.producer({
        transactionalId: scope,
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        retry: TRANSACTIONAL_RETRY,
        transactionTimeout: this.transactionTimeoutMs,
        createPartitioner: kafkajs.Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      try {
        const claim = await producer.transaction();
        await claim.abort();
      } catch (err) {
        await producer.disconnect().catch(() => undefined);
        throw err;
      }
      return producer;
    })();
    this.txProducers.set(scope, created);
    try {
      await created;
    } catch (err) {
      if (this.txProducers.get(scope) === created) this.txProducers.delete(scope);
      throw err;
    }
  }

  /** Drops a scope's producer (after its task closed, or when it was fenced or broken). */
  async releaseScope(scope: string): Promise<void> {
    const p = this.txProducers.get(scope);
    if (!p) return;
    this.txProducers.delete(scope);
    await p.then((producer) => producer.disconnect()).catch(() => undefined);
  }

  /**
   * Each topic's max.message.bytes among `records`, for splitting a send into batches its topics
   * accept (a lookup that fails: no limit but the request's).
   */
  private async messageLimits(records: readonly OutRecord[]): Promise<(topic: string) => number | undefined> {
    const found = new Map<string, number | undefined>();
    for (const topic of new Set(records.map((r) => r.topic))) found.set(topic, await this.maxMessageBytes(topic).catch(() => undefined));
    return (topic) => found.get(topic);
  }

  /**
   * The topic's effective max.message.bytes (its own setting, else the broker's default), looked up
   * once per topic and kept for a few minutes: the services' output limits and every send's split
   * read it. A failed lookup is not kept.
   */
  maxMessageBytes(topic: string): Promise<number | undefined> {
    const now = Date.now();
    const kept = this.topicLimits.get(topic);
    if (kept !== undefined && now - kept.at <= TOPIC_LIMIT_TTL_MS) return kept.limit;
    const limit = this.admin.maxMessageBytes(topic);
    this.topicLimits.set(topic, { at: now, limit });
    limit.catch(() => {
      if (this.topicLimits.get(topic)?.limit === limit) this.topicLimits.delete(topic);
    });
    return limit;
  }

  ensureTopics(topics: readonly TopicDefinition[]): Promise<void> {
    return this.admin.ensureTopics(topics);
  }

  listTopics(): Promise<string[]> {
    return this.admin.listTopics();
  }

  describeTopic(name: string): Promise<TopicDescription | undefined> {
    return this.admin.describeTopic(name);
  }

  async partitionFor(topic: string, key: string): Promise<number> {
    return partitionForKey(key, await this.admin.partitionCount(topic));
  }

  /**
   * Sends with acks=all (every in-sync copy, at least the topic's min.insync.replicas, has the
   * records before the send resolves). kafkajs compresses a whole request with one codec, so topics
   * configured with `compression.type=gzip` (`pages`) go in a request of their own, compressed here
   * rather than by the broker.
   */
  private async sendByCompression(
    topicMessages: TopicMessages[],
    send: (batch: { topicMessages: TopicMessages[]; acks: -1; compression: kafkajs.CompressionTypes }) => Promise<kafkajs.RecordMetadata[]>,
  ): Promise<kafkajs.RecordMetadata[]> {
    const groups = new Map<kafkajs.CompressionTypes, TopicMessages[]>();
    for (const tm of topicMessages) {
      const compression = await this.admin.compressionOf(tm.topic);
      groups.set(compression, [...(groups.get(compression) ?? []), tm]);
    }
    const results: kafkajs.RecordMetadata[] = [];
    for (const [compression, group] of groups) results.push(...(await send({ topicMessages: group, acks: -1, compression })));
    return results;
  }

  send(records: readonly OutRecord[]): Promise<RecordMetadata[]> {
    return this.plainLane('').sender.send(records);
  }

  /**
   * Offset commits of a consumer's at-least-once tasks, merged while one is out: the partitions of
   * a concurrent service (the fetcher, the parser) each commit after every flush, and sent one by
   * one they were a quarter of all the requests a crawl makes to the broker. A caller still
   * returns only once its offsets are committed; a failed request fails every call merged into it.
   */
  private offsetCommitter(consumer: Consumer): CoalescingSender<PartitionOffset, void> {
    let committer = this.offsetCommitters.get(consumer);
    if (committer === undefined) {
      committer = new CoalescingSender<PartitionOffset, void>(
        async (offsets) => {
          // A partition merged twice (two flushes of one task) commits the later offset.
          const latest = new Map<string, PartitionOffset>();
          for (const o of offsets) latest.set(`${o.topic}\u0000${o.partition}`, o);
          await consumer.commitOffsets([...latest.values()].map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })));
          return offsets.map(() => undefined);
        },
        () => 1,
        Number.MAX_SAFE_INTEGER,
      );
      this.offsetCommitters.set(consumer, committer);
    }
    return committer;
  }

  private async sendNow(lane: PlainLane, records: readonly OutRecord[]): Promise<RecordMetadata[]> {
    if (records.length === 0) return [];
    const current = this.producer(lane);
    const meta: RecordMetadata[] = [];
    try {
      // Inside the try: a producer that could not connect is dropped too, not kept for every later send.
      const producer = await current;
      const limitOf = await this.messageLimits(records);
      for (const chunk of chunkBySize(records, undefined, limitOf)) {
        const { topicMessages, slots } = await toTopicMessages(chunk, (t) => this.admin.partitionCount(t));
        meta.push(...metadataFor(slots, await this.sendByCompression(topicMessages, (batch) => producer.sendBatch(batch))));
      }
    } catch (err) {
      this.releasePlainProducer(lane, current);
      throw err;
    }
    return meta;
  }

  /**
   * A send that failed may have been written by the broker with its answer lost. kafkajs then rolls
   * back the sequence numbers it used, and the next batch of the same producer to that partition
   * would carry them again: the broker would take it for a duplicate, drop it and acknowledge it.
   * So the producer is dropped; the next send starts a new one (new producer id, new sequence
   * numbers). The caller retries the failed records (at least once).
   */
  private releasePlainProducer(lane: PlainLane, failed: Promise<Producer>): void {
    if (lane.producer !== failed) return;
    lane.producer = undefined;
    this.logger.warn('a send failed: its idempotent producer is released, the next send uses a new one');
    void failed.then((p) => p.disconnect()).catch(() => undefined);
  }

  /** Used by group members: one transaction for outputs + offsets, or send-then-commit. */
  async commitFor(groupId: string, consumer: Consumer, commit: AtomicCommit): Promise<RecordMetadata[]> {
    if (!commit.transactional) {
      const meta = await this.plainLane(`scope:${commit.scope ?? groupId}`).sender.send(commit.outputs);
      if (commit.offsets.length > 0) await this.offsetCommitter(consumer).send(commit.offsets);
      return meta;
    }
    if (!commit.scope) throw new Error('a transactional commit needs a scope');
    const pending = this.txProducers.get(commit.scope);
    // No producer: the task was never opened here, or its producer was fenced or broken. Making a new
    // one would bump the epoch and fence whoever owns the scope now — only a task open may do that.
    if (!pending) throw new TaskMigratedError(`no transactional producer for ${commit.scope}: the task must be opened again`);
    const producer = await pending;
    const tx = await producer.transaction();
    try {
      const meta: RecordMetadata[] = [];
      const limitOf = await this.messageLimits(commit.outputs);
      for (const chunk of chunkBySize(commit.outputs, undefined, limitOf)) {
        const { topicMessages, slots } = await toTopicMessages(chunk, (t) => this.admin.partitionCount(t));
        meta.push(...metadataFor(slots, await this.sendByCompression(topicMessages, (batch) => tx.sendBatch(batch))));
      }
      if (commit.offsets.length > 0) {
        const byTopic = new Map<string, { partition: number; offset: string }[]>();
        for (const o of commit.offsets) {
          const list = byTopic.get(o.topic) ?? [];
          byTopic.set(o.topic, list);
          list.push({ partition: o.partition, offset: String(o.offset) });
        }
        await tx.sendOffsets({ consumerGroupId: groupId, topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })) });
      }
      await tx.commit();
      return meta;
    } catch (err) {
      // Ends the transaction now rather than at its timeout (the next owner's fence aborts it anyway).
      if (tx.isActive()) await tx.abort().catch(() => undefined);
      // Whatever the error, this producer is done, transient ones included: a produce request whose
      // answer was lost (a broker going down) may have been written, and kafkajs then still holds the
      // sequence numbers it sent. A retry on the same producer and epoch would reuse them, and the
      // broker would take the retried records for duplicates of the aborted ones and drop them while
      // acknowledging, committing the input offsets without the outputs and changelog. (kafkajs also
      // skips the abort when it never saw AddPartitionsToTxn answered, leaving the transaction open.)
      // A fresh producer, made when the task opens again, gets a new epoch with new sequence numbers.
      // The task is closed dirty and restored after the group confirms its owner.
      await this.releaseScope(commit.scope);
      throw new TaskMigratedError(`transaction of ${commit.scope} failed (${describeError(err)}); producer released`, { cause: err });
    }
  }

  offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<number> {
    return this.admin.offsetForTimestamp(topic, partition, timestamp);
  }

  committedOffsets(groupId: string, topic: string): Promise<PartitionOffset[]> {
    return this.admin.committedOffsets(groupId, topic);
  }

  setCommittedOffsets(groupId: string, offsets: readonly PartitionOffset[]): Promise<void> {
    return this.admin.setCommittedOffsets(groupId, offsets);
  }

  /** Reads [from, to) of one partition at read_committed without joining any group (direct-reader.ts). */
  readPartition(topic: string, partition: number, from: number, to: number, options: { readonly complete?: boolean } = {}): AsyncIterable<readonly LogRecord[]> {
    return this.reader.read(topic, partition, from, to, options.complete ?? false);
  }

  async join(options: GroupMemberOptions): Promise<GroupMember> {
    if (this.closed) throw new Error('transport is closed');
    const member = new KafkaGroupMember(this, this.kafka, options, this.logger);
    this.members.add(member);
    await member.start();
    return member;
  }

  /** @internal */
  forget(member: KafkaGroupMember): void {
    this.members.delete(member);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.members].map((m) => m.stop()));
    for (const scope of [...this.txProducers.keys()]) await this.releaseScope(scope);
    for (const lane of this.plainLanes.values()) if (lane.producer) await (await lane.producer.catch(() => undefined))?.disconnect().catch(() => undefined);
    await this.admin.close();
    await this.reader.close();
  }
}