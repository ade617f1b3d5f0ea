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
import type { Admin, Consumer, Producer, Message, TopicMessages, EachBatchPayload, logCreator } from 'kafkajs';
import { createRequire } from 'node:module';
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import { partitionForKey } from '../partitioner.ts';
import { replicationForCluster } from './replication.ts';
import { PartitionFeed } from './partition-feed.ts';
import { CoalescingSender } from './coalescing-sender.ts';
import type { TopicReplication } from './replication.ts';
import { FatalServiceError, TaskMigratedError, classifyError, describeError } from '../errors.ts';
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
  TopicPartition,
  Transport,
} from '../transport.ts';

const { Kafka, logLevel: KafkaLogLevel } = kafkajs;

/** kafkajs's read_committed isolation level (Fetch request). */
const READ_COMMITTED = 1;

type KafkajsMessage = EachBatchPayload['batch']['messages'][number];

/** The part of a Fetch response for one partition that kafkajs's Batch reads. */
interface FetchedPartition {
  readonly partition: number;
  readonly highWatermark: string;
  readonly lastStableOffset?: string;
  readonly abortedTransactions: unknown[];
  readonly messages: KafkajsMessage[];
}

/** The few kafkajs cluster/broker calls a direct read needs (kafkajs does not type its internals). */
interface DirectCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(query: { nodeId: string }): Promise<{
    fetch(request: object): Promise<{ responses: { topicName: string; partitions: FetchedPartition[] }[] }>;
  }>;
}

/** kafkajs's Batch: decodes one fetched partition, dropping aborted records and control records. */
const KafkajsBatch = createRequire(import.meta.url)('kafkajs/src/consumer/batch.js') as new (
  topic: string,
  fetchedOffset: string,
  data: FetchedPartition,
) => { readonly messages: KafkajsMessage[]; readonly messagesWithinOffset: KafkajsMessage[] };

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

/**
 * Runs `op` again while it fails with an error Kafka marks retriable (NOT_LEADER_FOR_PARTITION and
 * the like: a partition just created or moved is unknown to its broker for a moment), for up to
 * `budgetMs`; any other error, or the last one, is thrown.
 */
export async function retryWhileRetriable<T>(op: () => Promise<T>, budgetMs: number): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await op();
    } catch (err) {
      if ((err as { retriable?: unknown }).retriable !== true || Date.now() + wait > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Idempotent producers retry without a count limit (kafkajs warns otherwise: a limit can break EOS). */
const PRODUCER_RETRY = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 5000 };

/**
 * Broker answers that are part of normal operation and that kafkajs retries by itself, yet logs at
 * ERROR: a transaction's next request arriving while the previous one's markers are still being
 * written (CONCURRENT_TRANSACTIONS, after most commits under load), a coordinator that is still
 * loading its log after a start, a coordinator not there yet or moved (on a broker just started,
 * before its `__consumer_offsets` and `__transaction_state` partitions have leaders: kafkajs looks
 * it up again), and a partition whose leader moved or, on a topic just created,
 * is still being settled (NOT_LEADER_FOR_PARTITION: kafkajs refreshes its metadata and sends again).
 * Their texts are kafkajs's (protocol/error.js). If the retries run out, the failure still reaches
 * the caller, which reports it.
 */
const ROUTINE_RETRY_TEXTS = [
  'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
  "The coordinator is loading and hence can't process requests",
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
  'This server is not the leader for that topic-partition',
];

/** A kafkajs ERROR entry that only says a routine retry is under way (it is logged at debug). */
export function isRoutineRetry(log: { message?: string; error?: unknown }): boolean {
  const text = `${typeof log.error === 'string' ? log.error : ''} ${log.message ?? ''}`;
  return ROUTINE_RETRY_TEXTS.some((t) => text.includes(t));
}

function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ level, log }) => {
      const { message, ...extra } = log;
      const child = { component: 'kafkajs', ...extra };
      if (level === KafkaLogLevel.ERROR && isRoutineRetry(log)) logger.debug(child, message);
      else if (level === KafkaLogLevel.ERROR) logger.error(child, message);
      else if (level === KafkaLogLevel.WARN) logger.warn(child, message);
      else if (level === KafkaLogLevel.INFO) logger.debug(child, message);
      else logger.trace(child, message);
    };
}

/**
 * Splits records into requests of at most ~768 KiB, below the broker's default 1 MiB batch limit
 * (message.max.bytes): a large commit becomes several produce requests in the same transaction.
 */
/** A record's size in a produce request, near enough for splitting and merging requests. */
function approxRecordBytes(r: OutRecord): number {
  return (r.value?.length ?? 0) + (r.key?.length ?? 0) + 64;
}

function* chunkBySize(records: readonly OutRecord[], maxBytes = 768 * 1024): Generator<readonly OutRecord[]> {
  let start = 0;
  let size = 0;
  for (let i = 0; i < records.length; i++) {
    const bytes = approxRecordBytes(records[i]!);
    if (i > start && size + bytes > maxBytes) {
      yield records.slice(start, i);
      start = i;
      size = 0;
    }
    size += bytes;
  }
  if (start < records.length) yield records.slice(start);
}

/** A plain send lane: its producer (made at its first send, dropped after a failed one) and its merging. */
interface PlainLane {
  producer: Promise<Producer> | undefined;
  readonly sender: CoalescingSender<OutRecord, RecordMetadata>;
}

/** The most one merged plain send holds (it goes out as requests of at most ~768 KiB each). */
const MERGED_SEND_MAX_BYTES = 4 * 1024 * 1024;

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
  private readonly plainLanes = new Map<string, PlainLane>();
  private readonly txProducers = new Map<string, Promise<Producer>>();
  private readonly partitionCounts = new Map<string, number>();
  private readonly compressions = new Map<string, kafkajs.CompressionTypes>();
  private readonly offsetCommitters = new WeakMap<Consumer, CoalescingSender<PartitionOffset, void>>();
  private readonly members = new Set<KafkaGroupMember>();
  private directClusterPromise: Promise<DirectCluster> | undefined;
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
        retry: PRODUCER_RETRY,
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

  /** The topic's effective max.message.bytes (its own setting, else the broker's default). */
  async maxMessageBytes(topic: string): Promise<number | undefined> {
    const admin = await this.admin();
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] }],
    });
    const value = Number(configs.resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue);
    return Number.isFinite(value) && value > 0 ? value : undefined;
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
      // Created, but not yet in the metadata kafkajs waited on (UNKNOWN_TOPIC_OR_PARTITION is
      // retriable): waitForMetadata below waits for it. Otherwise a concurrent creator may have
      // won the race; only fail if a topic is still missing.
      if ((err as { retriable?: unknown }).retriable !== true) {
        const now = new Set(await admin.listTopics());
        if (missing.some((t) => !now.has(t.name))) throw err;
      }
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
    const offsets = await retryWhileRetriable(() => admin.fetchTopicOffsets(name), 10_000);
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
      for (const chunk of chunkBySize(records)) {
        const { topicMessages, slots } = await this.toTopicMessages(chunk);
        meta.push(...KafkaTransport.metadataFor(slots, await this.sendByCompression(topicMessages, (batch) => producer.sendBatch(batch))));
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

  /** A kafkajs cluster client of our own (no group), for direct fetches. */
  private directCluster(): Promise<DirectCluster> {
    this.directClusterPromise ??= (async () => {
      const symbol = Object.getOwnPropertySymbols(this.kafka).find((s) => s.description === 'private:Kafka:createCluster');
      const create = symbol ? (this.kafka as unknown as Record<symbol, unknown>)[symbol] : undefined;
      if (typeof create !== 'function') throw new Error('this kafkajs version offers no cluster client; cannot read partitions directly');
      const cluster = (create as (o: object) => DirectCluster)({ allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED });
      await cluster.connect();
      return cluster;
    })();
    this.directClusterPromise.catch(() => (this.directClusterPromise = undefined));
    return this.directClusterPromise;
  }

  /**
   * Reads [from, to) of one partition without joining any consumer group (a restore must not cost a
   * group join per changelog, nor a rebalance of anyone): read_committed fetches from the
   * partition's leader, decoded by kafkajs's own batch code (which drops aborted records and
   * transaction markers). Stops at the last stable offset when `to` lies beyond it.
   */
  async *readPartition(topic: string, partition: number, from: number, to: number): AsyncIterable<readonly LogRecord[]> {
    if (from >= to) return;
    const cluster = await this.directCluster();
    await cluster.addTargetTopic(topic);
    let position = from;
    for (let attempt = 0; position < to; ) {
      let data: FetchedPartition;
      try {
        const leaders = cluster.findLeaderForPartitions(topic, [partition]);
        const nodeId = Object.keys(leaders)[0];
        if (nodeId === undefined) throw new Error(`no leader for ${topic}[${partition}]`);
        const broker = await cluster.findBroker({ nodeId });
        const response = await broker.fetch({
          isolationLevel: READ_COMMITTED,
          maxWaitTime: 100,
          minBytes: 1,
          maxBytes: 64 * 1024 * 1024,
          topics: [{ topic, partitions: [{ partition, fetchOffset: String(position), maxBytes: 16 * 1024 * 1024 }] }],
        });
        const found = response.responses.find((r) => r.topicName === topic)?.partitions.find((p) => p.partition === partition);
        if (!found) throw new Error(`fetch of ${topic}[${partition}] returned no data`);
        data = found;
        attempt = 0;
      } catch (err) {
        if (classifyError(err, 'commit') !== 'transient' || ++attempt > 20) throw err;
        await cluster.refreshMetadata().catch(() => undefined);
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
        continue;
      }
      const batch = new KafkajsBatch(topic, String(position), data);
      const within = batch.messagesWithinOffset;
      if (within.length === 0) {
        // Nothing past `position`: the end of what read_committed may see.
        if (Number(data.lastStableOffset ?? data.highWatermark) <= position || Number(data.highWatermark) <= position) return;
        continue;
      }
      const records = batch.messages.map((m) => toLogRecord(topic, partition, m)).filter((r) => r.offset >= from && r.offset < to);
      if (records.length > 0) yield records;
      position = Number(within[within.length - 1]!.offset) + 1;
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
    for (const lane of this.plainLanes.values()) if (lane.producer) await (await lane.producer.catch(() => undefined))?.disconnect().catch(() => undefined);
    if (this.adminClient) await this.adminClient.disconnect().catch(() => undefined);
    if (this.directClusterPromise) await (await this.directClusterPromise.catch(() => undefined))?.disconnect().catch(() => undefined);
  }
}

/** Crashes without a kafkajs restart tolerated (each restarted by us) within the window before the service stops. */
const MAX_CRASH_RESTARTS = 3;
const CRASH_WINDOW_MS = 5 * 60_000;
/**
 * How long a member keeps trying to reach the cluster again after a crash or a rejoin while the
 * brokers are unreachable (a broker restart, a rolling upgrade) before the service gives up.
 */
const BROKER_OUTAGE_BUDGET_MS = 5 * 60_000;

const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * Fetched batches that may wait behind the one a partition is processing: kafkajs fetches the
 * next while this one runs (partition-feed.ts). Two keep the service busy between fetches.
 */
const QUEUED_BATCHES_PER_PARTITION = 2;
/**
 * A partition's delivery holds at most this many times maxBatchRecords records: batches that waited
 * while it worked go together (a larger one in pieces), and a task processes them maxBatchRecords
 * at a time and commits once, so a transaction's fixed round trips are paid once for all of them.
 */
const MERGED_BATCHES = 4;

class KafkaGroupMember implements GroupMember {
  private readonly consumer: Consumer;
  private current = new Map<string, TopicPartition>();
  /** Partitions being handed back: their final flush may still commit. */
  private readonly revoking = new Set<string>();
  /** Serialises assignment changes. */
  private assignmentChain: Promise<void> = Promise.resolve();
  /** Batches fetched and waiting to be processed, per partition (partition-feed.ts). */
  private readonly feeds = new Map<string, PartitionFeed>();
  private readyResolve!: () => void;
  private readonly readyPromise = new Promise<void>((resolve) => (this.readyResolve = resolve));
  private stopped = false;
  /** Member id of the last join: a new one means the coordinator forgot us (evicted, paused, partitioned away). */
  private memberId: string | undefined;
  private rejoining: Promise<void> | undefined;
  private readonly heartbeatIntervalMs = 1000;
  /** Times of recent crashes kafkajs did not restart from. */
  private crashes: number[] = [];

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
      sessionTimeout: transport.sessionTimeoutMs,
      rebalanceTimeout: 30000,
      heartbeatInterval: this.heartbeatIntervalMs,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
      retry: { retries: 10 },
    });
    void transportOptions;
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

  private chain(step: () => Promise<void>): void {
    this.assignmentChain = this.assignmentChain.then(step).catch((err: unknown) => this.logger.error({ err }, 'assignment change failed'));
  }

  private onGroupJoin(memberId: string, memberAssignment: Record<string, number[]>): void {
    const next = new Map<string, TopicPartition>();
    for (const [topic, partitions] of Object.entries(memberAssignment)) {
      for (const partition of partitions) next.set(tpKey(topic, partition), { topic, partition });
    }
    // A new member id means our previous generation is gone: someone else may have owned (and
    // changed) our partitions meanwhile, even if we get the same ones back. Every task is migrated.
    const generationLost = this.memberId !== undefined && this.memberId !== memberId;
    this.memberId = memberId;
    const lost = generationLost ? [...this.current.values()] : [];
    const revoked = generationLost ? [] : [...this.current].filter(([k]) => !next.has(k)).map(([, tp]) => tp);
    const assigned = generationLost ? [...next.values()] : [...next].filter(([k]) => !this.current.has(k)).map(([, tp]) => tp);
    if (generationLost) this.logger.warn({ groupId: this.groupId, memberId, partitions: lost.length }, 'group generation lost: every task is migrated and restored');
    this.current = next;
    this.chain(async () => {
      if (lost.length > 0) await this.loseAll(lost);
      if (revoked.length > 0) {
        for (const tp of revoked) this.revoking.add(tpKey(tp.topic, tp.partition));
        try {
          await this.drainFeeds(revoked);
          await this.options.onRevoked(revoked);
        } finally {
          for (const tp of revoked) this.revoking.delete(tpKey(tp.topic, tp.partition));
        }
      }
      if (assigned.length > 0) await this.options.onAssigned(assigned);
      this.readyResolve();
    });
  }

  private async loseAll(tps: readonly TopicPartition[]): Promise<void> {
    await this.drainFeeds(tps);
    if (this.options.onLost) await this.options.onLost(tps);
    else await this.options.onRevoked(tps);
  }

  /**
   * Leaves the group and joins again as a new member (kafkajs has no "rejoin" call: stop and run
   * again). Every task is lost first; the coordinator's new assignment reopens them.
   */
  rejoin(reason: string): void {
    if (this.stopped || this.rejoining) return;
    this.logger.warn({ groupId: this.groupId, reason }, 'rejoining the group');
    this.rejoining = (async () => {
      try {
        await this.consumer.stop();
        const lost = [...this.current.values()];
        this.current = new Map();
        this.memberId = undefined;
        await new Promise<void>((resolve) => this.chain(async () => (await this.loseAll(lost), resolve())));
        await this.runAgainWhenReachable(false);
      } catch (err) {
        this.options.onFatal?.(new FatalServiceError(`rejoining group ${this.groupId} failed: ${describeError(err)}`, { cause: err }));
      } finally {
        this.rejoining = undefined;
      }
    })();
  }

  /** After a crash kafkajs left stopped: every task is lost, the consumer runs (and joins) again. */
  private restartAfterCrash(): void {
    if (this.stopped || this.rejoining) return;
    this.rejoining = (async () => {
      try {
        await this.consumer.stop().catch(() => undefined);
        const lost = [...this.current.values()];
        this.current = new Map();
        this.memberId = undefined;
        await new Promise<void>((resolve) => this.chain(async () => (await this.loseAll(lost), resolve())));
        await this.runAgainWhenReachable(true);
      } catch (err) {
        this.options.onFatal?.(new FatalServiceError(`restarting the consumer of group ${this.groupId} failed: ${describeError(err)}`, { cause: err }));
      } finally {
        this.rejoining = undefined;
      }
    })();
  }

  /**
   * Connects (when asked) and runs the consumer again, waiting out a cluster that is unreachable for
   * up to BROKER_OUTAGE_BUDGET_MS: kafkajs's own retries give up after about 15 s, shorter than a
   * broker restart. Any other error, or an outage past the budget, is thrown.
   */
  private async runAgainWhenReachable(connect: boolean): Promise<void> {
    const started = Date.now();
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        if (connect) await this.consumer.connect();
        await this.run();
        return;
      } catch (err) {
        if (classifyError(err, 'open') !== 'transient' || Date.now() - started > BROKER_OUTAGE_BUDGET_MS) throw err;
        const waitMs = Math.min(15_000, 1000 * 2 ** attempt);
        this.logger.warn({ groupId: this.groupId, err: describeError(err), waitMs }, 'cluster unreachable; trying again');
        await this.consumer.disconnect().catch(() => undefined);
        connect = true;
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      }
    }
  }

  async start(): Promise<void> {
    this.consumer.on(this.consumer.events.GROUP_JOIN, (e) => this.onGroupJoin(e.payload.memberId, e.payload.memberAssignment));
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      const restart = e.payload.restart;
      if (restart || this.stopped) {
        this.logger.error({ err: e.payload.error }, 'consumer crashed; kafkajs restarts it');
        return;
      }
      // kafkajs does not come back from a crash with restart: false (e.g. an admin error during the
      // first assignment). Restart it a few times; a member that keeps crashing consumes nothing and
      // must not look alive, so the service then stops (and the process exits non-zero).
      const now = Date.now();
      this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
      this.crashes.push(now);
      const error = e.payload.error;
      if (this.crashes.length > MAX_CRASH_RESTARTS) {
        this.options.onFatal?.(new FatalServiceError(`consumer of group ${this.groupId} crashed ${this.crashes.length} times in ${CRASH_WINDOW_MS / 1000} s: ${describeError(error)}`, { cause: error }));
        return;
      }
      this.logger.error({ err: error, crashes: this.crashes.length }, 'consumer crashed and kafkajs will not restart it; restarting it');
      setTimeout(() => this.restartAfterCrash(), 1000 * this.crashes.length).unref();
    });
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: (this.options.startFrom ?? 'earliest') === 'earliest' });
    await this.run();
  }

  /** The feed of a partition, made when its first batch arrives (partition-feed.ts). */
  private feedOf(topic: string, partition: number): PartitionFeed {
    const key = tpKey(topic, partition);
    let feed = this.feeds.get(key);
    if (feed) return feed;
    feed = new PartitionFeed({
      maxQueued: QUEUED_BATCHES_PER_PARTITION,
      maxMergedRecords: MERGED_BATCHES * (this.options.maxBatchRecords ?? 500),
      deliver: (batch) => this.options.eachBatch(batch),
      active: () => this.current.has(key) && !this.stopped && !this.rejoining,
      onHandedBack: async (offset, err) => {
        // Not processed (task opening, migrated, or failing): fetch it again. The service has
        // already acted on the error. The seek also takes back what kafkajs fetched past it.
        this.logger.debug({ err: describeError(err), topic, partition, offset }, 'batch handed back');
        if (this.current.has(key)) {
          try {
            this.consumer.seek({ topic, partition, offset: String(offset) });
          } catch (seekError) {
            // The consumer is stopping or restarting: it starts again from the committed offset.
            this.logger.debug({ err: describeError(seekError), topic, partition }, 'seek after a hand-back failed');
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      },
    });
    this.feeds.set(key, feed);
    return feed;
  }

  /** Forgets the batches queued for these partitions and waits for the ones in progress. */
  private async drainFeeds(tps: readonly TopicPartition[]): Promise<void> {
    const feeds = tps.map((tp) => this.feeds.get(tpKey(tp.topic, tp.partition))).filter((f): f is PartitionFeed => f !== undefined);
    for (const feed of feeds) feed.drop();
    await Promise.all(feeds.map((f) => f.idle().catch(() => undefined)));
    for (const tp of tps) {
      const key = tpKey(tp.topic, tp.partition);
      if (!this.feeds.get(key)?.busy) this.feeds.delete(key);
    }
  }

  private async run(): Promise<void> {
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 8,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const key = tpKey(batch.topic, batch.partition);
        // kafkajs heartbeats only between batches: keep the membership alive while this one waits
        // for room in its partition's feed, so slow work never costs the member its partitions.
        const keepAlive = setInterval(() => {
          heartbeat().catch((err: unknown) => this.logger.debug({ err: describeError(err), topic: batch.topic }, 'heartbeat during a batch failed'));
        }, this.heartbeatIntervalMs);
        try {
          await this.assignmentChain;
          // isStale: a seek after a hand-back is pending, so this batch lies past what must be read again.
          if (batch.messages.length === 0 || !this.current.has(key) || this.rejoining || isStale()) return;
          const feed = this.feedOf(batch.topic, batch.partition);
          const epoch = feed.epoch;
          await feed.waitForRoom();
          if (feed.epoch !== epoch || !isRunning() || isStale() || this.stopped || this.rejoining || !this.current.has(key)) return;
          const records = batch.messages.map((m) => toLogRecord(batch.topic, batch.partition, m));
          // The feed delivers it in pieces of at most MERGED_BATCHES × maxBatchRecords records.
          feed.push({ topic: batch.topic, partition: batch.partition, records, highWatermark: Number(batch.highWatermark) });
          // Fetch on past them; a hand-back seeks back to the first record not processed.
          resolveOffset(records[records.length - 1]!.offset.toString());
        } finally {
          clearInterval(keepAlive);
        }
        await heartbeat();
      },
    });
  }

  commit(commit: AtomicCommit): Promise<RecordMetadata[]> {
    // Kafka keeps no task state: stores write changelogs (Transport.inlineState is absent here).
    if (commit.stateWrites?.length) return Promise.reject(new TypeError('the Kafka transport keeps no state stores; write them through changelogs'));
    for (const o of commit.offsets) {
      const key = tpKey(o.topic, o.partition);
      if (!this.current.has(key) && !this.revoking.has(key)) {
        return Promise.reject(new TaskMigratedError(`partition ${o.topic}[${o.partition}] is not assigned to this member`));
      }
    }
    return this.transport.commitFor(this.options.groupId, this.consumer, commit);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.rejoining?.catch(() => undefined);
    await this.assignmentChain.catch(() => undefined);
    // Hand partitions back while the consumer still runs, so final flushes can commit offsets.
    const all = [...this.current.values()];
    for (const tp of all) this.revoking.add(tpKey(tp.topic, tp.partition));
    this.current.clear();
    await this.drainFeeds(all);
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
