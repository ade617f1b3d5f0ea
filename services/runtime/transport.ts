/**
 * The Transport contract: moving records between services. Two implementations keep one contract:
 * `KafkaTransport` (kafkajs against Apache Kafka) and `EmbeddedTransport` (a durable, partitioned,
 * replayable log in RocksDB inside one process). Services never see which one they run on.
 *
 * Offsets are numbers (safe up to 2^53, far beyond any log here) and always mean "the next offset to
 * read" when committed, as in Kafka.
 */
import type { BatchOp, KeyValueDb } from './rocksdb.ts';

export interface OutRecord {
  /** Physical topic name (prefix included). */
  readonly topic: string;
  readonly key: string | null;
  /** null is a tombstone (deletes the key in a compacted topic). */
  readonly value: Buffer | null;
  /** Explicit partition; otherwise murmur2(key) % partitions like Kafka's default partitioner. */
  readonly partition?: number;
  /** CreateTime in ms; defaults to the transport's clock at append. */
  readonly timestamp?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The value was built by a service's typed emit (services/runtime/emitter.ts), within its topic's
   * schema. A transport that hands the record to a consumer in the same process, without it ever
   * leaving memory, passes this on as LogRecord.conforms; others ignore it.
   */
  readonly conforms?: boolean;
}

export interface LogRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly timestamp: number;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * True only for a record a service of this process emitted and the embedded log handed over from
   * memory: its value is not validated again (services/runtime/input.ts). Records from Kafka, from
   * disk (an earlier run, maybe an older version) or sent by other code are always validated.
   */
  readonly conforms?: boolean;
}

export interface RecordMetadata {
  readonly topic: string;
  readonly partition: number;
  /** Offset of the record (for Kafka: base offset of its batch plus its index in the request). */
  readonly offset: number;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface PartitionOffset extends TopicPartition {
  /** The next offset to read. */
  readonly offset: number;
}

export interface TopicDefinition {
  readonly name: string;
  readonly partitions: number;
  /** Kafka topic configs, e.g. cleanup.policy, retention.ms. The embedded log honours cleanup.policy and retention.ms. */
  readonly config?: Readonly<Record<string, string>>;
}

export interface PartitionInfo {
  readonly partition: number;
  /** Earliest available offset. */
  readonly low: number;
  /** Next offset to be written (read_committed end for Kafka). */
  readonly high: number;
}

export interface TopicDescription {
  readonly name: string;
  readonly partitions: readonly PartitionInfo[];
  readonly config: Readonly<Record<string, string>>;
}

export interface ConsumedBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly LogRecord[];
  /** End of the partition when the batch was read (for lag). */
  readonly highWatermark: number;
}

/**
 * One atomic step of a consumer: the outputs and the consumed offsets become visible together or not
 * at all (Kafka: one transaction; embedded: one RocksDB write batch). With `transactional: false`
 * outputs are sent first and offsets committed after (at-least-once).
 */
export interface AtomicCommit {
  /** Scope of the transaction: one transactional producer per scope (e.g. "<group>-<partition>"), so a
   *  new owner of that scope fences the old one. Required when transactional. Without a transaction
   *  it names the sender: a transport may give each scope its own producer, so one partition's
   *  sends never wait behind another's; a scope's sends stay in order. */
  readonly scope?: string;
  readonly transactional: boolean;
  readonly outputs: readonly OutRecord[];
  readonly offsets: readonly PartitionOffset[];
  /**
   * State store writes (keys under an InlineState's prefix), applied in the same atomic write.
   * Only for a transport that offers inlineState.
   */
  readonly stateWrites?: readonly BatchOp[];
}

/**
 * Where a task keeps its state stores when the transport holds them itself (the embedded log): a
 * key prefix of the transport's database. Their writes go into the commits (AtomicCommit.stateWrites),
 * so the stores need no changelog and no restore.
 */
export interface InlineState {
  readonly db: KeyValueDb;
  readonly keyPrefix: string;
}

export interface GroupMemberOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Stable name for logs and the Kafka client id. */
  readonly memberName?: string;
  /** Where a partition without a committed offset starts. Default 'earliest'. */
  readonly startFrom?: 'earliest' | 'latest';
  /** Upper bound of records per batch. */
  readonly maxBatchRecords?: number;
  /**
   * Kafka: a partition's next batch is delivered no sooner than this after its previous one began,
   * with what arrived meanwhile merged into it (one commit). Default 0: at once.
   */
  readonly batchIntervalMs?: number;
  /** Kafka: static membership under this id (static-membership.ts); absent: a dynamic member. */
  readonly groupInstanceId?: string;
  /**
   * Partitions whose stores this member holds on disk: the group prefers them for it when they have
   * to move (a restore there replays only what the local checkpoint lacks).
   */
  warmPartitions?(): readonly number[];
  /** Called before any batch of the newly assigned partitions is delivered (never with an empty list). */
  onAssigned(partitions: readonly TopicPartition[]): Promise<void>;
  /** Called when partitions are taken away (rebalance or stop), after their last batch finished.
   *  Commits for those partitions are still accepted until it returns (final flushes). */
  onRevoked(partitions: readonly TopicPartition[]): Promise<void>;
  /** Called instead of onRevoked for partitions this member lost without a clean handover (its group
   *  membership expired, it was fenced, or it rejoins): their tasks close dirty, committing nothing. */
  onLost?(partitions: readonly TopicPartition[]): Promise<void>;
  /** Called when the member cannot go on (e.g. its consumer crashed for good). */
  onFatal?(err: Error): void;
  /** Batches of one partition are delivered one at a time, in offset order. The next batch starts
   *  after this one (or after a later committed offset); a commit never moves the position back. */
  eachBatch(batch: ConsumedBatch): Promise<void>;
}

export interface GroupMember {
  readonly groupId: string;
  /** Partitions currently assigned to this member. */
  assignment(): readonly TopicPartition[];
  /** Commits outputs and offsets (see AtomicCommit). Returns the metadata of the outputs in order. */
  commit(commit: AtomicCommit): Promise<RecordMetadata[]>;
  /** Resolves once this member has its first assignment (possibly empty). */
  ready(): Promise<void>;
  /** Leaves the group after the batch in progress; revokes all partitions. */
  stop(): Promise<void>;
  /**
   * Gives up the current generation — every assigned partition is lost (onLost) — and joins the
   * group again; partitions come back through onAssigned. Used when a task finds it was fenced: it
   * must not claim its partition again before the group confirms it owns it. Optional: members of
   * the embedded log cannot become zombies.
   */
  rejoin?(reason: string): void;
}

export interface Transport {
  readonly kind: 'kafka' | 'embedded';
  /** Creates missing topics; existing ones are left as they are. */
  ensureTopics(topics: readonly TopicDefinition[]): Promise<void>;
  describeTopic(name: string): Promise<TopicDescription | undefined>;
  listTopics(): Promise<string[]>;
  /** Partition a key maps to with Kafka's default murmur2 partitioner. */
  partitionFor(topic: string, key: string): Promise<number>;
  /** Plain (non-transactional, idempotent) send, e.g. for seeds from the CLI. */
  send(records: readonly OutRecord[]): Promise<RecordMetadata[]>;
  /** First offset whose timestamp is >= `timestamp`, or the partition's high watermark if none. */
  offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<number>;
  /** Committed offsets of a group for a topic (partitions without a commit are omitted). */
  committedOffsets(groupId: string, topic: string): Promise<PartitionOffset[]>;
  /** Sets a group's committed offsets (group must have no active members), e.g. to replay from a time. */
  setCommittedOffsets(groupId: string, offsets: readonly PartitionOffset[]): Promise<void>;
  /** Reads [from, to) of one partition outside any group (state restore, inspection), in order;
   *  stops at the current end if `to` lies beyond it — unless `complete` (a restore): then it reads
   *  all of [from, to), waiting out an open transaction or a leader that has not caught up, and
   *  throws if it cannot. */
  readPartition(topic: string, partition: number, from: number, to: number, options?: { readonly complete?: boolean }): AsyncIterable<readonly LogRecord[]>;
  /**
   * Claims a transactional scope before its state is restored: on Kafka this initialises the
   * scope's transactional producer, which fences any previous owner and aborts its open transaction.
   * Optional: the embedded log needs no fencing (one process owns it).
   */
  fenceScope?(scope: string): Promise<void>;
  /** Releases a scope's producer after its task closed (a later fenceScope starts afresh). */
  releaseScope?(scope: string): Promise<void>;
  /**
   * The database and key prefix for the state stores of a group's task, when the transport keeps
   * them inside its own storage. Absent on Kafka: stores live in the task's RocksDB directory and
   * are restored from their changelogs.
   */
  inlineState?(groupId: string, partition: number): InlineState;
  /** Largest record the topic accepts (its max.message.bytes), if the transport can tell. */
  maxMessageBytes?(topic: string): Promise<number | undefined>;
  /** Joins a consumer group; partitions are balanced over the group's members and rebalanced as members come and go. */
  join(options: GroupMemberOptions): Promise<GroupMember>;
  /** Stops all members, flushes, releases resources. */
  close(): Promise<void>;
}
