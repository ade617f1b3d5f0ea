/**
 * Transport on Apache Kafka through kafkajs.
 *
 * - Plain sends use one idempotent producer (acks=all, one request in flight, so retries never
 *   reorder or duplicate).
 * - Transactional commits use one transactional producer per scope (Kafka Streams' "one producer
 *   per task" model): a new owner of a partition initialises the same transactional id and so fences
 *   the previous owner's producer — a zombie can no longer commit outputs or offsets for it.
 * - Consumers read committed records only (read_committed), commit offsets manually, and deliver
 *   batches of one partition strictly in order.
 * Partitions are always chosen here with `partitionForKey` (murmur2) and sent explicitly.
 */
// kafkajs with the read_committed fix: never import 'kafkajs' itself for runtime values.
import { kafkajs } from './kafkajs.ts';
import type { Admin, Consumer, Producer, Message, TopicMessages, EachBatchPayload, logCreator } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import { partitionForKey } from '../partitioner.ts';
import { AsyncQueue } from '../async-queue.ts';
import { replicationForCluster } from './replication.ts';
import type { TopicReplication } from './replication.ts';
import type {
  AtomicCommit,
  ConsumedBatch,
  GroupMember,
  GroupMemberOptions,
  LogRecord,
  OutRecord,
  PartitionOffset,
  RecordMetadata,
  TopicDefinition,
  TopicDescription,
  TopicPartition,
  Transport,
} from '../transport.ts';

const { Kafka, logLevel: KafkaLogLevel } = kafkajs;

export interface KafkaTransportOptions {
  readonly brokers: readonly string[];
  readonly clientId?: string;
  readonly logger?: Logger;
  /**
   * Replication of the topics this transport creates (default 1 and 1: one broker). A factor above
   * the cluster's broker count fails ensureTopics with a ReplicationError, unless capToBrokers.
   */
  readonly replication?: TopicReplication & { readonly capToBrokers?: boolean };
  /** Transaction timeout; a crashed member's open transaction is aborted by the broker after it. */
  readonly transactionTimeoutMs?: number;
  readonly sessionTimeoutMs?: number;
  /** Partitions one member processes at the same time. */
  readonly partitionsConsumedConcurrently?: number;
}

/** Idempotent producers retry without a count limit (kafkajs warns otherwise: a limit can break EOS). */
const PRODUCER_RETRY = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 5000 };

function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ level, log }) => {
      const { message, ...extra } = log;
      const child = { component: 'kafkajs', ...extra };
      if (level === KafkaLogLevel.ERROR) logger.error(child, message);
      else if (level === KafkaLogLevel.WARN) logger.warn(child, message);
      else if (level === KafkaLogLevel.INFO) logger.debug(child, message);
      else logger.trace(child, message);
    };
}

/**
 * Splits records into requests of at most ~768 KiB, below the broker's default 1 MiB batch limit
 * (message.max.bytes): a large commit becomes several produce requests in the same transaction.
 */
function* chunkBySize(records: readonly OutRecord[], maxBytes = 768 * 1024): Generator<readonly OutRecord[]> {
  let start = 0;
  let size = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const bytes = (r.value?.length ?? 0) + (r.key?.length ?? 0) + 64;
    if (i > start && size + bytes > maxBytes) {
      yield records.slice(start, i);
      start = i;
      size = 0;
    }
    size += bytes;
  }
  if (start < records.length) yield records.slice(start);
}

function toLogRecord(topic: string, partition: number, m: EachBatchPayload['batch']['messages'][number]): LogRecord {
  const headers: Record<string, string> = {};
  if (m.headers) {
    for (const [k, v] of Object.entries(m.headers)) {
      if (v == null) continue;
      headers[k] = Array.isArray(v) ? String(v[0] ?? '') : v.toString();
    }
  }
  return {
    topic,
    partition,
    offset: Number(m.offset),
    key: m.key == null ? null : m.key.toString('utf8'),
    value: m.value ?? null,
    timestamp: Number(m.timestamp),
    headers,
  };
}

export class KafkaTransport implements Transport {
  readonly kind = 'kafka' as const;
  private readonly kafka: InstanceType<typeof Kafka>;
  private readonly logger: Logger;
  private adminClient: Admin | undefined;
  private adminConnecting: Promise<Admin> | undefined;
  private plainProducer: Promise<Producer> | undefined;
  private readonly txProducers = new Map<string, Promise<Producer>>();
  private readonly partitionCounts = new Map<string, number>();
  private readonly compressions = new Map<string, kafkajs.CompressionTypes>();
  private readonly members = new Set<KafkaGroupMember>();
  private closed = false;

  constructor(readonly options: KafkaTransportOptions) {
    this.logger = options.logger ?? silentLogger;
    this.kafka = new Kafka({
      clientId: options.clientId ?? 'meguri',
      brokers: [...options.brokers],
      logLevel: KafkaLogLevel.INFO,
      logCreator: pinoLogCreator(this.logger),
      retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 5000 },
      connectionTimeout: 3000,
      requestTimeout: 30000,
    });
  }

  /** kafkajs client, for the few callers that need more (e.g. kafkajs-native subscribers in examples). */
  get client(): InstanceType<typeof Kafka> {
    return this.kafka;
  }

  private admin(): Promise<Admin> {
    if (this.adminClient) return Promise.resolve(this.adminClient);
    this.adminConnecting ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      this.adminClient = admin;
      return admin;
    })();
    return this.adminConnecting;
  }

  private producer(): Promise<Producer> {
    this.plainProducer ??= (async () => {
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
    return this.plainProducer;
  }

  /** The transactional producer of a scope, created on first use. */
  private txProducer(scope: string): Promise<Producer> {
    let p = this.txProducers.get(scope);
    if (!p) {
      p = (async () => {
        const producer = this.kafka.producer({
          transactionalId: scope,
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          retry: PRODUCER_RETRY,
          transactionTimeout: this.options.transactionTimeoutMs ?? 30000,
          createPartitioner: kafkajs.Partitioners.DefaultPartitioner,
        });
        await producer.connect();
        return producer;
      })();
      p.catch(() => this.txProducers.delete(scope));
      this.txProducers.set(scope, p);
    }
    return p;
  }

  async fenceScope(scope: string): Promise<void> {
    await this.txProducer(scope);
  }

  /** Drops a scope's producer (after its partition is revoked or when it was fenced). */
  async releaseScope(scope: string): Promise<void> {
    const p = this.txProducers.get(scope);
    if (!p) return;
    this.txProducers.delete(scope);
    await p.then((producer) => producer.disconnect()).catch(() => undefined);
  }

  async ensureTopics(topics: readonly TopicDefinition[]): Promise<void> {
    const admin = await this.admin();
    const existing = new Set(await admin.listTopics());
    const unique = [...new Map(topics.map((t) => [t.name, t])).values()];
    const missing = unique.filter((t) => !existing.has(t.name));
    if (missing.length === 0) return;
    const wanted = this.options.replication ?? { factor: 1, minInsyncReplicas: 1 };
    const brokers = (await admin.describeCluster()).brokers.length;
    const { replication, capped } = replicationForCluster(wanted, brokers, { capToBrokers: wanted.capToBrokers ?? false });
    if (capped) {
      this.logger.warn(
        { wanted: { factor: wanted.factor, minInsyncReplicas: wanted.minInsyncReplicas }, brokers, replication },
        `the cluster has ${brokers} broker(s): creating topics with replication factor ${replication.factor} and min.insync.replicas ${replication.minInsyncReplicas}`,
      );
    }
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({
          topic: t.name,
          numPartitions: t.partitions,
          replicationFactor: replication.factor,
          configEntries: Object.entries({ ...t.config, 'min.insync.replicas': String(replication.minInsyncReplicas) }).map(([name, value]) => ({ name, value })),
        })),
      });
    } catch (err) {
      // A concurrent creator may have won the race; only fail if a topic is still missing.
      const now = new Set(await admin.listTopics());
      if (missing.some((t) => !now.has(t.name))) throw err;
    }
    await this.waitForMetadata(admin, missing.map((t) => t.name));
    for (const t of missing) this.partitionCounts.set(t.name, t.partitions);
  }

  /**
   * A topic just created can be unknown to the broker's metadata for a moment (KRaft propagates it
   * asynchronously; kafkajs's waitForLeaders then fails with UNKNOWN_TOPIC_OR_PARTITION): wait until
   * every partition has a leader, so callers can use the topics at once.
   */
  private async waitForMetadata(admin: Admin, names: readonly string[], timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const meta = await admin.fetchTopicMetadata({ topics: [...names] });
        if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
      } catch (err) {
        if (Date.now() >= deadline) throw err;
      }
      if (Date.now() >= deadline) throw new Error(`topics ${names.join(', ')} were created but have no leaders after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async listTopics(): Promise<string[]> {
    const admin = await this.admin();
    return (await admin.listTopics()).filter((t) => !t.startsWith('__')).sort();
  }

  async describeTopic(name: string): Promise<TopicDescription | undefined> {
    const admin = await this.admin();
    if (!(await admin.listTopics()).includes(name)) return undefined;
    const offsets = await admin.fetchTopicOffsets(name);
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name }],
    });
    const config: Record<string, string> = {};
    for (const entry of configs.resources[0]?.configEntries ?? []) {
      if (!entry.isDefault) config[entry.configName] = entry.configValue;
    }
    return {
      name,
      config,
      partitions: offsets
        .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
        .sort((a, b) => a.partition - b.partition),
    };
  }

  private async partitionCount(topic: string): Promise<number> {
    const cached = this.partitionCounts.get(topic);
    if (cached) return cached;
    const admin = await this.admin();
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const count = meta.topics[0]?.partitions.length ?? 0;
    if (count < 1) throw new Error(`topic ${topic} does not exist`);
    this.partitionCounts.set(topic, count);
    return count;
  }

  async partitionFor(topic: string, key: string): Promise<number> {
    return partitionForKey(key, await this.partitionCount(topic));
  }

  /** Groups records by topic with explicit partitions; remembers each record's slot for offsets. */
  private async toTopicMessages(records: readonly OutRecord[]): Promise<{
    topicMessages: TopicMessages[];
    slots: { topic: string; partition: number; index: number }[];
  }> {
    const byTopic = new Map<string, Message[]>();
    const perPartitionCount = new Map<string, number>();
    const slots: { topic: string; partition: number; index: number }[] = [];
    for (const r of records) {
      const partition = r.partition ?? partitionForKey(r.key, await this.partitionCount(r.topic));
      const msgs = byTopic.get(r.topic) ?? [];
      byTopic.set(r.topic, msgs);
      msgs.push({
        key: r.key,
        value: r.value,
        partition,
        ...(r.timestamp !== undefined ? { timestamp: String(r.timestamp) } : {}),
        ...(r.headers ? { headers: { ...r.headers } } : {}),
      });
      const pk = `${r.topic}\u0000${partition}`;
      const index = perPartitionCount.get(pk) ?? 0;
      perPartitionCount.set(pk, index + 1);
      slots.push({ topic: r.topic, partition, index });
    }
    return { topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })), slots };
  }

  private static metadataFor(
    slots: { topic: string; partition: number; index: number }[],
    results: kafkajs.RecordMetadata[],
  ): RecordMetadata[] {
    const base = new Map<string, number>();
    for (const r of results) base.set(`${r.topicName}\u0000${r.partition}`, Number(r.baseOffset ?? r.offset ?? -1));
    return slots.map((s) => ({
      topic: s.topic,
      partition: s.partition,
      offset: (base.get(`${s.topic}\u0000${s.partition}`) ?? -1) + s.index,
    }));
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
      const compression = await this.compressionOf(tm.topic);
      groups.set(compression, [...(groups.get(compression) ?? []), tm]);
    }
    const results: kafkajs.RecordMetadata[] = [];
    for (const [compression, group] of groups) results.push(...(await send({ topicMessages: group, acks: -1, compression })));
    return results;
  }

  /** The codec a topic's records are sent with: gzip when the topic is configured for it, else none. */
  private async compressionOf(topic: string): Promise<kafkajs.CompressionTypes> {
    const cached = this.compressions.get(topic);
    if (cached !== undefined) return cached;
    let compression = kafkajs.CompressionTypes.None;
    try {
      const admin = await this.admin();
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: ['compression.type'] }],
      });
      const value = described.resources[0]?.configEntries.find((e) => e.configName === 'compression.type')?.configValue;
      if (value === 'gzip') compression = kafkajs.CompressionTypes.GZIP;
    } catch (err) {
      // Uncompressed is always readable; the broker still applies the topic's compression.type.
      this.logger.debug({ err, topic }, 'could not read the topic compression; sending uncompressed');
    }
    this.compressions.set(topic, compression);
    return compression;
  }

  async send(records: readonly OutRecord[]): Promise<RecordMetadata[]> {
    if (records.length === 0) return [];
    const producer = await this.producer();
    const meta: RecordMetadata[] = [];
    for (const chunk of chunkBySize(records)) {
      const { topicMessages, slots } = await this.toTopicMessages(chunk);
      meta.push(...KafkaTransport.metadataFor(slots, await this.sendByCompression(topicMessages, (batch) => producer.sendBatch(batch))));
    }
    return meta;
  }

  /** Used by group members: one transaction for outputs + offsets, or send-then-commit. */
  async commitFor(groupId: string, consumer: Consumer, commit: AtomicCommit): Promise<RecordMetadata[]> {
    if (!commit.transactional) {
      const meta = await this.send(commit.outputs);
      if (commit.offsets.length > 0) {
        await consumer.commitOffsets(
          commit.offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })),
        );
      }
      return meta;
    }
    if (!commit.scope) throw new Error('a transactional commit needs a scope');
    const producer = await this.txProducer(commit.scope);
    const tx = await producer.transaction();
    try {
      const meta: RecordMetadata[] = [];
      for (const chunk of chunkBySize(commit.outputs)) {
        const { topicMessages, slots } = await this.toTopicMessages(chunk);
        meta.push(...KafkaTransport.metadataFor(slots, await this.sendByCompression(topicMessages, (batch) => tx.sendBatch(batch))));
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
      await tx.abort().catch(() => undefined);
      // A fenced or broken producer cannot be reused; the next commit makes a fresh one.
      await this.releaseScope(commit.scope);
      throw err;
    }
  }

  async offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<number> {
    const admin = await this.admin();
    const entries = await admin.fetchTopicOffsetsByTimestamp(topic, timestamp);
    const entry = entries.find((e) => e.partition === partition);
    const offset = entry ? Number(entry.offset) : -1;
    if (offset >= 0) return offset;
    const high = (await admin.fetchTopicOffsets(topic)).find((o) => o.partition === partition);
    return high ? Number(high.high) : 0;
  }

  async committedOffsets(groupId: string, topic: string): Promise<PartitionOffset[]> {
    const admin = await this.admin();
    const res = await admin.fetchOffsets({ groupId, topics: [topic] });
    const out: PartitionOffset[] = [];
    for (const t of res) {
      for (const p of t.partitions) {
        const offset = Number(p.offset);
        if (offset >= 0) out.push({ topic: t.topic, partition: p.partition, offset });
      }
    }
    return out.sort((a, b) => a.partition - b.partition);
  }

  async setCommittedOffsets(groupId: string, offsets: readonly PartitionOffset[]): Promise<void> {
    const admin = await this.admin();
    const byTopic = new Map<string, { partition: number; offset: string }[]>();
    for (const o of offsets) {
      const list = byTopic.get(o.topic) ?? [];
      byTopic.set(o.topic, list);
      list.push({ partition: o.partition, offset: String(o.offset) });
    }
    for (const [topic, partitions] of byTopic) await admin.setOffsets({ groupId, topic, partitions });
  }

  /**
   * kafkajs has no manual partition assignment, so a throwaway group consumer subscribes, seeks the
   * one partition and pauses the rest. Batches made only of transaction markers never reach
   * eachBatch, so the end is detected from the batch-end instrumentation event's last offset.
   */
  async *readPartition(topic: string, partition: number, from: number, to: number): AsyncIterable<readonly LogRecord[]> {
    if (from >= to) return;
    const queue = new AsyncQueue<readonly LogRecord[]>();
    const consumer = this.kafka.consumer({
      groupId: `meguri-reader-${randomUUID()}`,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    let done = false;
    const finish = (): void => {
      if (!done) {
        done = true;
        queue.end();
      }
    };
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => {
      if (e.payload.topic === topic && e.payload.partition === partition && Number(e.payload.lastOffset) >= to - 1) finish();
    });
    consumer.on(consumer.events.CRASH, (e) => queue.fail(e.payload.error));
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      const count = await this.partitionCount(topic);
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch }) => {
          if (batch.partition !== partition || done) return;
          const records = batch.messages
            .map((m) => toLogRecord(topic, partition, m))
            .filter((r) => r.offset >= from && r.offset < to);
          if (records.length > 0) queue.push(records);
          if (Number(batch.lastOffset()) >= to - 1) finish();
          await queue.drained();
        },
      });
      consumer.seek({ topic, partition, offset: String(from) });
      const others = Array.from({ length: count }, (_, p) => p).filter((p) => p !== partition);
      if (others.length > 0) consumer.pause([{ topic, partitions: others }]);
      yield* queue;
    } finally {
      done = true;
      await consumer.disconnect().catch(() => undefined);
    }
  }

  async join(options: GroupMemberOptions): Promise<GroupMember> {
    if (this.closed) throw new Error('transport is closed');
    const member = new KafkaGroupMember(this, this.kafka, options, this.logger, this.options);
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
    if (this.plainProducer) await (await this.plainProducer).disconnect().catch(() => undefined);
    if (this.adminClient) await this.adminClient.disconnect().catch(() => undefined);
  }
}

const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

class KafkaGroupMember implements GroupMember {
  private readonly consumer: Consumer;
  private current = new Map<string, TopicPartition>();
  /** Partitions being handed back: their final flush may still commit. */
  private readonly revoking = new Set<string>();
  /** Serialises assignment changes; batches wait for it so a store is restored before use. */
  private assignmentChain: Promise<void> = Promise.resolve();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readyResolve!: () => void;
  private readonly readyPromise = new Promise<void>((resolve) => (this.readyResolve = resolve));
  private stopped = false;

  constructor(
    private readonly transport: KafkaTransport,
    kafka: InstanceType<typeof Kafka>,
    private readonly options: GroupMemberOptions,
    private readonly logger: Logger,
    transportOptions: KafkaTransportOptions,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      readUncommitted: false,
      sessionTimeout: transportOptions.sessionTimeoutMs ?? 10000,
      rebalanceTimeout: 30000,
      heartbeatInterval: 1000,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
      retry: { retries: 10 },
    });
  }

  get groupId(): string {
    return this.options.groupId;
  }

  assignment(): readonly TopicPartition[] {
    return [...this.current.values()];
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  private onGroupJoin(memberAssignment: Record<string, number[]>): void {
    const next = new Map<string, TopicPartition>();
    for (const [topic, partitions] of Object.entries(memberAssignment)) {
      for (const partition of partitions) next.set(tpKey(topic, partition), { topic, partition });
    }
    const revoked = [...this.current].filter(([k]) => !next.has(k)).map(([, tp]) => tp);
    const assigned = [...next].filter(([k]) => !this.current.has(k)).map(([, tp]) => tp);
    this.current = next;
    this.assignmentChain = this.assignmentChain.then(async () => {
      if (revoked.length > 0) {
        for (const tp of revoked) this.revoking.add(tpKey(tp.topic, tp.partition));
        try {
          await Promise.all(revoked.map((tp) => this.inFlight.get(tpKey(tp.topic, tp.partition))));
          await this.options.onRevoked(revoked);
        } finally {
          for (const tp of revoked) this.revoking.delete(tpKey(tp.topic, tp.partition));
        }
      }
      if (assigned.length > 0) await this.options.onAssigned(assigned);
      this.readyResolve();
    });
    this.assignmentChain.catch((err: unknown) => this.logger.error({ err }, 'assignment change failed'));
  }

  async start(): Promise<void> {
    this.consumer.on(this.consumer.events.GROUP_JOIN, (e) => this.onGroupJoin(e.payload.memberAssignment));
    this.consumer.on(this.consumer.events.CRASH, (e) =>
      this.logger.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed'),
    );
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: (this.options.startFrom ?? 'earliest') === 'earliest' });
    const maxBatch = this.options.maxBatchRecords ?? 500;
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 8,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const key = tpKey(batch.topic, batch.partition);
        await this.assignmentChain;
        if (!this.current.has(key)) return;
        const work = (async () => {
          const all = batch.messages.map((m) => toLogRecord(batch.topic, batch.partition, m));
          for (let i = 0; i < all.length; i += maxBatch) {
            if (!isRunning() || isStale() || this.stopped) return;
            const records = all.slice(i, i + maxBatch);
            const consumed: ConsumedBatch = {
              topic: batch.topic,
              partition: batch.partition,
              records,
              highWatermark: Number(batch.highWatermark),
            };
            await this.options.eachBatch(consumed);
            const last = records[records.length - 1];
            if (last) resolveOffset(String(last.offset));
            await heartbeat();
          }
        })();
        this.inFlight.set(key, work);
        try {
          await work;
        } finally {
          if (this.inFlight.get(key) === work) this.inFlight.delete(key);
        }
      },
    });
  }

  commit(commit: AtomicCommit): Promise<RecordMetadata[]> {
    for (const o of commit.offsets) {
      const key = tpKey(o.topic, o.partition);
      if (!this.current.has(key) && !this.revoking.has(key)) {
        return Promise.reject(new Error(`partition ${o.topic}[${o.partition}] is not assigned to this member`));
      }
    }
    return this.transport.commitFor(this.options.groupId, this.consumer, commit);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.assignmentChain.catch(() => undefined);
    // Hand partitions back while the consumer still runs, so final flushes can commit offsets.
    const all = [...this.current.values()];
    for (const tp of all) this.revoking.add(tpKey(tp.topic, tp.partition));
    this.current.clear();
    await Promise.all([...this.inFlight.values()].map((p) => p.catch(() => undefined)));
    try {
      if (all.length > 0) await this.options.onRevoked(all);
    } finally {
      this.revoking.clear();
    }
    await this.consumer.stop().catch(() => undefined);
    await this.consumer.disconnect().catch(() => undefined);
    this.transport.forget(this);
  }
}
