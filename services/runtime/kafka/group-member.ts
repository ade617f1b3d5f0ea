/**
 * One member of a consumer group on kafkajs: its assignment, the batches it fetched waiting per
 * partition (partition-feed.ts), rejoining after a task migrated or a crash, and a clean leave.
 */
// kafkajs with the read_committed fix: never import 'kafkajs' itself for runtime values.
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import { PartitionFeed } from './partition-feed.ts';
import { toLogRecord } from './records.ts';
import { kafkajs } from './kafkajs.ts';
import { stickyAssigner } from './sticky-assignment.ts';
import { withInstanceId } from './static-membership.ts';
import { FatalServiceError, TaskMigratedError, classifyError, describeError } from '../errors.ts';
import type { AtomicCommit, GroupMember, GroupMemberOptions, RecordMetadata, TopicPartition } from '../transport.ts';

/** What a member needs of its transport. */
export interface MemberTransport {
  readonly sessionTimeoutMs: number;
  commitFor(groupId: string, consumer: Consumer, commit: AtomicCommit): Promise<RecordMetadata[]>;
  forget(member: KafkaGroupMember): void;
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

export class KafkaGroupMember implements GroupMember {
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
  /** Times of recent crashes on errors other than a busy or unreachable cluster. */
  private crashes: number[] = [];
  /** Crashes on a busy or unreachable cluster in a row (each waits longer), and when the last was. */
  private transientCrashes = 0;
  private lastTransientCrash = 0;
  /** A rejoin or restart waiting for the one in progress; what it must do (connect first). */
  private recoveryQueued: { connect: boolean } | undefined;
  /**
   * Partitions of the last assignment, kept through a rejoin (which empties `current`): the claim a
   * rejoining member makes, so the group gives it back what it held.
   */
  private lastOwned: number[] = [];
  /** Rebalances this member took part in (each ends in a GROUP_JOIN with the new assignment). */
  joins = 0;

  constructor(
    private readonly transport: MemberTransport,
    kafka: Kafka,
    private readonly options: GroupMemberOptions,
    private readonly logger: Logger,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      readUncommitted: false,
      sessionTimeout: transport.sessionTimeoutMs,
      rebalanceTimeout: 30000,
      heartbeatInterval: this.heartbeatIntervalMs,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
      // The member restarts the consumer itself after a crash (recover), never kafkajs.
      retry: { retries: 10, restartOnFailure: async () => false },
      // Sticky first; round robin only so that a member of an older version can still join.
      partitionAssigners: [stickyAssigner(() => this.claim()), kafkajs.PartitionAssigners.roundRobin],
    });
  }

  /** Runs a consumer call as this member: with its static instance id, if it has one. */
  private asMember<T>(call: () => Promise<T>): Promise<T> {
    return withInstanceId(this.options.groupInstanceId, call);
  }

  /** What this member tells the group's leader at a join (sticky-assignment.ts). */
  private claim(): { owned: number[]; warm: number[] } {
    const owned = [...this.lastOwned];
    let warm: readonly number[] = [];
    try {
      warm = this.options.warmPartitions?.() ?? [];
    } catch (err) {
      this.logger.debug({ err: describeError(err) }, 'could not list the warm partitions');
    }
    return { owned, warm: [...warm] };
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
    this.joins++;
    const generationLost = this.memberId !== undefined && this.memberId !== memberId;
    this.memberId = memberId;
    const lost = generationLost ? [...this.current.values()] : [];
    const revoked = generationLost ? [] : [...this.current].filter(([k]) => !next.has(k)).map(([, tp]) => tp);
    const assigned = generationLost ? [...next.values()] : [...next].filter(([k]) => !this.current.has(k)).map(([, tp]) => tp);
    if (generationLost) this.logger.warn({ groupId: this.groupId, memberId, partitions: lost.length }, 'group generation lost: every task is migrated and restored');
    this.current = next;
    this.lastOwned = [...new Set([...next.values()].map((tp) => tp.partition))];
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
    this.recover(reason, false, 0);
  }

  /**
   * The one path by which the consumer is stopped and run again (a rejoin, or after a crash), one
   * cycle at a time: every task is lost, the consumer stops, connects if asked, and runs (joins)
   * again. kafkajs's own restart after a crash is switched off (restartOnFailure): it started a
   * second runner beside one this member had started, in the same consumer, and the two then took
   * turns in the group, each join looking like a lost generation to the other, one of them never
   * heartbeating: after a broker restart the member was dropped every session timeout for good.
   * A request that arrives while a cycle waits to start is merged into it.
   */
  private recover(reason: string, connect: boolean, delayMs: number): void {
    if (this.stopped) return;
    if (this.recoveryQueued) {
      this.recoveryQueued.connect ||= connect;
      return;
    }
    const queued = { connect };
    this.recoveryQueued = queued;
    const cycle = (this.rejoining ?? Promise.resolve()).then(async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
      if (this.recoveryQueued === queued) this.recoveryQueued = undefined;
      if (this.stopped) return;
      this.logger.warn({ groupId: this.groupId, reason }, 'rejoining the group');
      try {
        await this.asMember(() => this.consumer.stop()).catch(() => undefined);
        const lost = [...this.current.values()];
        this.current = new Map();
        this.memberId = undefined;
        await new Promise<void>((resolve) => this.chain(async () => (await this.loseAll(lost), resolve())));
        await this.runAgainWhenReachable(queued.connect);
      } catch (err) {
        this.options.onFatal?.(new FatalServiceError(`rejoining group ${this.groupId} failed: ${describeError(err)}`, { cause: err }));
      }
    });
    this.rejoining = cycle;
    void cycle.finally(() => {
      if (this.rejoining === cycle) this.rejoining = undefined;
    });
  }

  /**
   * A crash (kafkajs stopped and disconnected the consumer). Errors of a cluster that is busy or
   * unreachable (a coordinator loading after a broker restart, a connection refused) restart it after a
   * growing wait, bounded by BROKER_OUTAGE_BUDGET_MS in runAgainWhenReachable; any other error counts, and
   * a member that keeps crashing consumes nothing and must not look alive: past MAX_CRASH_RESTARTS
   * in CRASH_WINDOW_MS the service stops (and the process exits non-zero).
   */
  private onCrash(error: unknown): void {
    if (this.stopped) return;
    const now = Date.now();
    if (classifyError(error, 'open') === 'transient') {
      this.transientCrashes = now - this.lastTransientCrash > CRASH_WINDOW_MS ? 1 : this.transientCrashes + 1;
      this.lastTransientCrash = now;
      const waitMs = Math.min(15_000, 250 * 2 ** this.transientCrashes);
      this.logger.warn({ groupId: this.groupId, err: describeError(error), waitMs }, 'consumer stopped on a cluster error; running it again');
      this.recover(`consumer stopped: ${describeError(error)}`, true, waitMs);
      return;
    }
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length > MAX_CRASH_RESTARTS) {
      this.options.onFatal?.(new FatalServiceError(`consumer of group ${this.groupId} crashed ${this.crashes.length} times in ${CRASH_WINDOW_MS / 1000} s: ${describeError(error)}`, { cause: error }));
      return;
    }
    this.logger.error({ err: error, crashes: this.crashes.length }, 'consumer crashed; restarting it');
    this.recover(`consumer crashed: ${describeError(error)}`, true, 1000 * this.crashes.length);
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
        if (connect) await this.asMember(() => this.consumer.connect());
        await this.run();
        return;
      } catch (err) {
        if (classifyError(err, 'open') !== 'transient' || Date.now() - started > BROKER_OUTAGE_BUDGET_MS) throw err;
        const waitMs = Math.min(15_000, 1000 * 2 ** attempt);
        this.logger.warn({ groupId: this.groupId, err: describeError(err), waitMs }, 'cluster unreachable; trying again');
        await this.asMember(() => this.consumer.disconnect()).catch(() => undefined);
        connect = true;
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      }
    }
  }

  async start(): Promise<void> {
    this.consumer.on(this.consumer.events.GROUP_JOIN, (e) => this.onGroupJoin(e.payload.memberId, e.payload.memberAssignment));
    this.consumer.on(this.consumer.events.CRASH, (e) => this.onCrash(e.payload.error));
    await this.asMember(() => this.consumer.connect());
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: (this.options.startFrom ?? 'earliest') === 'earliest' });
    await this.run();
  }

  /** The feed of a partition, made when its first batch arrives (partition-feed.ts). */
  private feedOf(topic: string, partition: number): PartitionFeed {
    const key = tpKey(topic, partition);
    let feed = this.feeds.get(key);
    if (feed) return feed;
    feed = new PartitionFeed({
      // Waiting out an interval, a merge may take as many batches as it has room for.
      maxQueued: this.options.batchIntervalMs ? MERGED_BATCHES * QUEUED_BATCHES_PER_PARTITION : QUEUED_BATCHES_PER_PARTITION,
      maxMergedRecords: MERGED_BATCHES * (this.options.maxBatchRecords ?? 500),
      ...(this.options.batchIntervalMs ? { minIntervalMs: this.options.batchIntervalMs } : {}),
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
    await this.asMember(() => this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 8,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const key = tpKey(batch.topic, batch.partition);
        // kafkajs heartbeats only between batches: keep the membership alive while this one waits
        // for room in its partition's feed, so slow work never costs the member its partitions.
        // A heartbeat that says the group rebalances (or forgot this member) ends the wait: kafkajs
        // joins again only once every batch in progress returned, within the rebalance timeout;
        // the batch is not taken, and is fetched again from the committed offset after the join.
        let wake: () => void = () => undefined;
        const regroup = new Promise<'regroup'>((resolve) => (wake = () => resolve('regroup')));
        const keepAlive = setInterval(() => {
          heartbeat().catch((err: unknown) => {
            const type = (err as { type?: unknown }).type;
            const lost = type === 'UNKNOWN_MEMBER_ID' || type === 'ILLEGAL_GENERATION' || type === 'FENCED_INSTANCE_ID';
            if (lost) this.logger.warn({ err: describeError(err), groupId: this.groupId, topic: batch.topic }, 'heartbeat during a batch: the group no longer knows this member; it joins again');
            else this.logger.debug({ err: describeError(err), topic: batch.topic }, 'heartbeat during a batch failed');
            if (lost || type === 'REBALANCE_IN_PROGRESS') wake();
          });
        }, this.heartbeatIntervalMs);
        try {
          if ((await Promise.race([this.assignmentChain.then(() => 'ready' as const), regroup])) === 'regroup') return;
          // isStale: a seek after a hand-back is pending, so this batch lies past what must be read again.
          if (batch.messages.length === 0 || !this.current.has(key) || this.rejoining || isStale()) return;
          const feed = this.feedOf(batch.topic, batch.partition);
          const epoch = feed.epoch;
          if ((await Promise.race([feed.waitForRoom().then(() => 'room' as const), regroup])) === 'regroup') return;
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
    }));
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
    await this.asMember(() => this.consumer.stop()).catch(() => undefined);
    await this.asMember(() => this.consumer.disconnect()).catch(() => undefined);
    this.transport.forget(this);
  }
}