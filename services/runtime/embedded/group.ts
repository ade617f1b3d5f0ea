/**
 * In-process consumer groups over the embedded log.
 *
 * One coordinator per (log directory, group id) tracks the members, in join order. Partitions of the
 * subscribed topics are assigned round-robin over the sorted (topic, partition) list, skipping members
 * not subscribed to a topic (Kafka's RoundRobinAssignor), so the result is deterministic and balanced.
 * Rebalances are eager and serialised per group: first every member gives up the partitions it
 * loses (its fetch loop finishes the batch in progress, then onRevoked runs), then the new owners run
 * onAssigned and start fetching. A partition is therefore never fetched by two members at once.
 *
 * Fencing: a member may commit offsets only for partitions it owns; ownership ends when onRevoked
 * has returned, and is checked again when the commit's write batch is built, so a late commit from
 * a member that lost the partition is rejected instead of overwriting the new owner's progress.
 */
import type { Logger } from 'pino';
import type {
  AtomicCommit,
  ConsumedBatch,
  GroupMember,
  GroupMemberOptions,
  RecordMetadata,
  TopicPartition,
} from '../transport.ts';
import { CallFrame } from './call-frame.ts';
import { FencedCommitError, LogClosedError } from './log.ts';
import type { OffsetUpdate, PartitionState, PreparedRecord, SharedLog, TopicState } from './log.ts';

const DEFAULT_MAX_BATCH_RECORDS = 500;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 10_000;

/** What a member needs from the transport handle that created it. */
export interface MemberHost {
  readonly log: SharedLog;
  readonly logger: Logger;
  /** Validates and encodes outgoing records (default timestamps from the handle's clock). */
  prepare(records: AtomicCommit['outputs']): PreparedRecord[];
}

function backoffMs(attempt: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(attempt, 16));
}

function toTopicPartitions(parts: readonly PartitionState[]): TopicPartition[] {
  return parts.map((ps) => ({ topic: ps.topic.name, partition: ps.partition }));
}

const coordinators = new WeakMap<SharedLog, Map<string, GroupCoordinator>>();

export function coordinatorFor(log: SharedLog, groupId: string): GroupCoordinator {
  let groups = coordinators.get(log);
  if (!groups) {
    groups = new Map();
    coordinators.set(log, groups);
  }
  let c = groups.get(groupId);
  if (!c) {
    c = new GroupCoordinator(groupId, log);
    groups.set(groupId, c);
  }
  return c;
}

/** The coordinator of a group if one was ever created in this process. */
export function existingCoordinator(log: SharedLog, groupId: string): GroupCoordinator | undefined {
  return coordinators.get(log)?.get(groupId);
}

export class GroupCoordinator {
  private readonly members: EmbeddedGroupMember[] = [];
  private chain: Promise<void> = Promise.resolve();
  private seq = 0;
  private unsubscribe: (() => void) | undefined;
  generation = 0;
  /** Every member callback (eachBatch, onAssigned, onRevoked) of this group runs in this frame. */
  readonly callbacks = new CallFrame('embeddedGroupCallback');

  constructor(
    readonly groupId: string,
    readonly log: SharedLog,
  ) {}

  /** Members that joined and have not finished leaving. */
  get memberCount(): number {
    return this.members.length;
  }

  join(host: MemberHost, options: GroupMemberOptions): EmbeddedGroupMember {
    const member = new EmbeddedGroupMember(this, host, options, ++this.seq);
    this.members.push(member);
    // Topics created after the join (ensureTopics) join the assignment at once.
    this.unsubscribe ??= this.log.onTopicCreated((topic) => {
      if (this.members.some((m) => m.subscribes(topic.name))) void this.scheduleRebalance();
    });
    void this.scheduleRebalance();
    return member;
  }

  /** Queues a rebalance after the ones already queued; resolves when it has run. */
  scheduleRebalance(): Promise<void> {
    const run = this.chain.then(() => this.rebalance());
    this.chain = run.catch((err: unknown) => {
      this.log.logger.error({ err, group: this.groupId }, 'embedded group rebalance failed');
    });
    return this.chain;
  }

  private assign(active: readonly EmbeddedGroupMember[]): Map<EmbeddedGroupMember, PartitionState[]> {
    const target = new Map<EmbeddedGroupMember, PartitionState[]>(active.map((m) => [m, []]));
    if (active.length === 0) return target;
    const topics = new Set<string>();
    for (const m of active) for (const t of m.topics) topics.add(t);
    const existing: TopicState[] = [];
    for (const name of [...topics].sort()) {
      const t = this.log.topic(name);
      if (t) existing.push(t);
    }
    let cursor = 0;
    for (const topic of existing) {
      for (const ps of topic.partitions) {
        for (let k = 0; k < active.length; k++) {
          const m = active[(cursor + k) % active.length] as EmbeddedGroupMember;
          if (m.subscribes(topic.name)) {
            target.get(m)?.push(ps);
            cursor = (cursor + k + 1) % active.length;
            break;
          }
        }
      }
    }
    return target;
  }

  private async rebalance(): Promise<void> {
    this.generation++;
    const active = this.members.filter((m) => !m.leaving);
    const leavers = this.members.filter((m) => m.leaving);
    const target = this.assign(active);
    await Promise.all(this.members.map((m) => m.revokeAllBut(target.get(m) ?? [])));
    // Only members that were leaving when this rebalance started have given everything up; one
    // that called stop() meanwhile is handled by the rebalance its stop() queued.
    for (const m of leavers) {
      this.members.splice(this.members.indexOf(m), 1);
      m.markLeft();
    }
    if (this.members.length === 0 && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
    }
    await Promise.all(active.map((m) => m.assign(target.get(m) ?? [])));
    for (const m of active) m.markReady();
  }
}

/** A member's fetch loop for one partition: strictly one batch at a time, in offset order. */
class PartitionLoop {
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  private done: Promise<void> = Promise.resolve();
  private readonly commits: Promise<unknown>[] = [];
  private committedInBatch: number | undefined;

  constructor(
    private readonly member: EmbeddedGroupMember,
    readonly ps: PartitionState,
  ) {}

  start(): void {
    this.done = this.run().catch((err: unknown) => {
      this.member.recordError(err, this.ps, 'fetch loop ended unexpectedly');
    });
  }

  /** Stops fetching; resolves after the batch in progress (if any) has finished. */
  stop(): Promise<void> {
    this.halt();
    return this.done;
  }

  /** Stops fetching without waiting. */
  halt(): void {
    this.stopping = true;
    this.wakeUp?.();
  }

  /** Remembers a commit issued for this partition so the next batch waits for it. */
  trackCommit(write: Promise<unknown>, offset: number): void {
    const settled = write.then(
      () => {
        this.committedInBatch = Math.max(this.committedInBatch ?? offset, offset);
      },
      () => undefined,
    );
    this.commits.push(settled);
  }

  private get stopped(): boolean {
    return this.stopping || this.member.leaving;
  }

  private async run(): Promise<void> {
    const { ps, member } = this;
    const log = member.host.log;
    // Commits queued by a previous owner must be durable before the committed offset is read.
    await log.flushed();
    let position = this.startPosition(undefined);
    let attempt = 0;
    while (!this.stopped) {
      if (position < ps.low) position = ps.low;
      if (position > ps.visible) {
        // Out of range (e.g. a committed offset past the end): reset like auto.offset.reset.
        const reset = member.startFrom === 'latest' ? ps.visible : ps.low;
        member.host.logger.warn({ group: member.groupId, topic: ps.topic.name, partition: ps.partition, position, reset }, 'offset out of range; reset');
        position = reset;
      }
      if (position >= ps.visible) {
        await this.waitForData(position);
        continue;
      }
      let read: Awaited<ReturnType<SharedLog['read']>>;
      try {
        read = await log.read(ps, position, member.maxBatchRecords);
      } catch (err) {
        if (err instanceof LogClosedError) return;
        member.recordError(err, ps, 'read failed');
        await this.sleep(backoffMs(attempt++));
        continue;
      }
      if (read.records.length === 0) {
        position = read.next;
        continue;
      }
      if (this.stopped) return;
      const batch: ConsumedBatch = {
        topic: ps.topic.name,
        partition: ps.partition,
        records: read.records,
        highWatermark: read.highWatermark,
      };
      this.committedInBatch = undefined;
      try {
        await member.runCallback(() => member.options.eachBatch(batch));
        await this.settleCommits();
        member.countBatch(read.records.length);
        position = Math.max(read.next, this.committedInBatch ?? 0);
        attempt = 0;
      } catch (err) {
        await this.settleCommits();
        member.recordError(err, ps, 'eachBatch failed; retrying from the committed offset');
        await this.sleep(backoffMs(attempt++));
        await log.flushed();
        position = this.startPosition(position);
      }
    }
  }

  private async settleCommits(): Promise<void> {
    while (this.commits.length > 0) await Promise.all(this.commits.splice(0));
  }

  /** The group's committed offset, else `fallback`, else per startFrom. */
  private startPosition(fallback: number | undefined): number {
    const committed = this.member.host.log.committedOffset(this.member.groupId, this.ps);
    if (committed !== undefined) return committed;
    if (fallback !== undefined) return fallback;
    return this.member.startFrom === 'latest' ? this.ps.visible : this.ps.low;
  }

  private waitForData(position: number): Promise<void> {
    const ps = this.ps;
    return new Promise((resolve) => {
      if (this.stopped || ps.visible > position) return resolve();
      const w = (): void => {
        ps.waiters.delete(w);
        this.wakeUp = undefined;
        resolve();
      };
      ps.waiters.add(w);
      this.wakeUp = w;
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      const finish = (): void => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeUp = finish;
    });
  }
}

export interface MemberStats {
  readonly memberId: string;
  readonly assignment: readonly TopicPartition[];
  /** Failed eachBatch/onAssigned/onRevoked calls and read errors so far. */
  readonly errors: number;
  readonly batches: number;
  readonly records: number;
}

export class EmbeddedGroupMember implements GroupMember {
  readonly groupId: string;
  readonly memberId: string;
  readonly topics: ReadonlySet<string>;
  readonly startFrom: 'earliest' | 'latest';
  readonly maxBatchRecords: number;
  leaving = false;
  private readonly owned = new Map<PartitionState, PartitionLoop>();
  private readonly readyPromise: Promise<void>;
  private resolveReady!: () => void;
  private readonly leftPromise: Promise<void>;
  private resolveLeft!: () => void;
  private errors = 0;
  private batches = 0;
  private records = 0;
  private readonly leftListeners: (() => void)[] = [];
  private readonly leaveWaiters: (() => void)[] = [];

  constructor(
    private readonly coordinator: GroupCoordinator,
    readonly host: MemberHost,
    readonly options: GroupMemberOptions,
    seq: number,
  ) {
    this.groupId = coordinator.groupId;
    this.memberId = `${options.memberName ?? this.groupId}#${seq}`;
    this.topics = new Set(options.topics);
    this.startFrom = options.startFrom ?? 'earliest';
    this.maxBatchRecords = Math.max(1, Math.floor(options.maxBatchRecords ?? DEFAULT_MAX_BATCH_RECORDS));
    this.readyPromise = new Promise((resolve) => (this.resolveReady = resolve));
    this.leftPromise = new Promise((resolve) => (this.resolveLeft = resolve));
  }

  subscribes(topic: string): boolean {
    return this.topics.has(topic);
  }

  assignment(): readonly TopicPartition[] {
    return toTopicPartitions([...this.owned.keys()]);
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  /** Resolves once the member has left the group (after stop() or its transport closed). */
  left(): Promise<void> {
    return this.leftPromise;
  }

  onLeft(listener: () => void): void {
    this.leftListeners.push(listener);
  }

  stats(): MemberStats {
    return { memberId: this.memberId, assignment: this.assignment(), errors: this.errors, batches: this.batches, records: this.records };
  }

  get errorCount(): number {
    return this.errors;
  }

  async commit(commit: AtomicCommit): Promise<RecordMetadata[]> {
    if (commit.transactional && !commit.scope) throw new TypeError('a transactional commit requires a scope');
    const log = this.host.log;
    const outputs = this.host.prepare(commit.outputs);
    const updates: OffsetUpdate[] = commit.offsets.map((o) => {
      if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new RangeError(`invalid offset ${o.offset} for ${o.topic}-${o.partition}`);
      return { group: this.groupId, ps: log.requirePartition(o.topic, o.partition), offset: o.offset };
    });
    const check = (): void => {
      for (const u of updates) {
        if (!this.owned.has(u.ps)) {
          throw new FencedCommitError(
            `member ${this.memberId} of group "${this.groupId}" does not own ${u.ps.topic.name}-${u.ps.partition}` +
              ` (rebalanced away or never assigned); commit rejected`,
          );
        }
      }
    };
    check();
    const write = log.commit(outputs, updates, check, commit.stateWrites);
    for (const u of updates) this.owned.get(u.ps)?.trackCommit(write, u.offset);
    return write;
  }

  async stop(): Promise<void> {
    if (!this.leaving) {
      this.leaving = true;
      for (const loop of this.owned.values()) loop.halt();
      for (const w of this.leaveWaiters.splice(0)) w();
      void this.coordinator.scheduleRebalance();
    }
    // From inside one of this group's callbacks (or code such a callback waits for), waiting would
    // wait for that callback itself: the member leaves once it has returned.
    if (this.coordinator.callbacks.encloses()) return;
    await this.leftPromise;
  }

  // ---- called by the coordinator and the fetch loops -------------------------------------------

  runCallback<T>(fn: () => Promise<T>): Promise<T> {
    return this.coordinator.callbacks.run(fn);
  }

  recordError(err: unknown, ps: PartitionState | undefined, message: string): void {
    this.errors++;
    this.host.logger.error(
      { err, group: this.groupId, member: this.memberId, topic: ps?.topic.name, partition: ps?.partition, errors: this.errors },
      message,
    );
  }

  /** Revokes every owned partition not in `keep`: after their batch in progress, then onRevoked. */
  async revokeAllBut(keep: readonly PartitionState[]): Promise<void> {
    const keepSet = new Set(keep);
    const revoked = [...this.owned.keys()].filter((ps) => !keepSet.has(ps));
    if (revoked.length === 0) return;
    await Promise.all(revoked.map((ps) => this.owned.get(ps)?.stop()));
    try {
      await this.runCallback(() => this.options.onRevoked(toTopicPartitions(revoked)));
    } catch (err) {
      this.recordError(err, undefined, 'onRevoked failed');
    }
    for (const ps of revoked) this.owned.delete(ps);
  }

  /** Takes the partitions of `target` not owned yet: onAssigned (retried until it succeeds), then fetch. */
  async assign(target: readonly PartitionState[]): Promise<void> {
    if (this.leaving) return;
    const added = target.filter((ps) => !this.owned.has(ps));
    if (added.length === 0) return;
    const loops = added.map((ps) => new PartitionLoop(this, ps));
    for (const loop of loops) this.owned.set(loop.ps, loop);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.runCallback(() => this.options.onAssigned(toTopicPartitions(added)));
        break;
      } catch (err) {
        this.recordError(err, undefined, 'onAssigned failed; retrying');
        if (this.leaving) return;
        await this.pause(backoffMs(attempt));
        if (this.leaving) return;
      }
    }
    if (this.leaving) return;
    for (const loop of loops) loop.start();
  }

  /** Sleeps `ms`, or less if the member starts leaving. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const waiters = this.leaveWaiters;
      function done(): void {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }

  countBatch(records: number): void {
    this.batches++;
    this.records += records;
  }

  markReady(): void {
    this.resolveReady();
  }

  markLeft(): void {
    this.resolveReady();
    this.resolveLeft();
    for (const l of this.leftListeners.splice(0)) l();
  }
}
