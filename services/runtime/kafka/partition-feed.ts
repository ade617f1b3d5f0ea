/**
 * Pipelined delivery of one partition's batches on Kafka. kafkajs fetches again only when every
 * batch of its last fetch has been handled, so a member that processed and committed each batch
 * inside kafkajs's callback left the broker idle while it worked, and its worker idle while it
 * fetched: on `pages`, the parse worker was busy a quarter of the time while pages waited a second
 * to be parsed. A feed takes the fetched batches off kafkajs's hands at once (up to `maxQueued`
 * waiting, so memory stays bounded and a slow partition slows its own fetches) and hands them to
 * the service one at a time, in offset order, exactly as before.
 *
 * A batch the service hands back (its task is not running, or it failed) ends the pipeline: the
 * batches queued after it are dropped and `onHandedBack` is told the first offset to fetch again
 * from, so nothing is processed out of order and nothing is skipped. `drop()` forgets the queue
 * when the partition goes away (revoked, lost, stopping); the batch in progress always finishes.
 * Every drop starts a new epoch, which tells a fetch that waited for room before the drop that its
 * batch is stale.
 *
 * With `minIntervalMs` a batch starts no sooner than that after the previous one started: what
 * arrives meanwhile waits and goes with it, up to `maxMergedRecords` (a full merge goes at once), so
 * an exactly-once service makes one transaction per interval instead of one per fetch.
 *
 * Records below what the feed already took are skipped. After a rebalance that leaves a partition
 * here, kafkajs fetches again from the committed offset, which may lag the batches still queued or
 * in progress (they commit after kafkajs read it): without the skip they would be processed twice.
 */
import type { ConsumedBatch } from '../transport.ts';

export interface PartitionFeedOptions {
  /** Batches that may wait behind the one being processed. */
  readonly maxQueued: number;
  /**
   * What one call of `deliver` holds at most: batches waiting when the partition's previous one
   * ends go as one up to this many records, and a larger batch goes in pieces of this size. On
   * Kafka each delivered batch is one commit (a transaction for exactly-once services), whose round
   * trips cost more than processing the records. Default: batches go as they were pushed.
   */
  readonly maxMergedRecords?: number;
  /** A batch starts no sooner than this many ms after the previous one started (default 0). */
  readonly minIntervalMs?: number;
  /** Processes one batch (and commits it); rejects when the batch is handed back. */
  readonly deliver: (batch: ConsumedBatch) => Promise<void>;
  /**
   * A batch was handed back: fetch again from `offset`. Called after the queue was dropped; the
   * feed waits for it before it delivers anything fetched since.
   */
  readonly onHandedBack: (offset: number, err: unknown) => Promise<void> | void;
  /** False once the partition is no longer this member's to process: the queue is dropped. */
  readonly active: () => boolean;
}

export class PartitionFeed {
  private queue: ConsumedBatch[] = [];
  private epochCount = 0;
  private draining: Promise<void> | undefined;
  private roomWaiters: (() => void)[] = [];
  /** Offset after the last record queued (records below it are skipped). */
  private pushedEnd = Number.NEGATIVE_INFINITY;
  /** Offset after the last record handed to `deliver`. */
  private deliveredEnd = Number.NEGATIVE_INFINITY;
  /** performance.now() when the last delivery started. */
  private deliveredAt = Number.NEGATIVE_INFINITY;
  /** Ends the wait for the interval early (a full merge, a drop). */
  private wakeLinger: (() => void) | undefined;

  constructor(private readonly options: PartitionFeedOptions) {}

  /** Changes whenever the queue is dropped. */
  get epoch(): number {
    return this.epochCount;
  }

  /** Batches waiting (not counting the one in progress). */
  get queued(): number {
    return this.queue.length;
  }

  /** True while a batch is being delivered or batches wait. */
  get busy(): boolean {
    return this.draining !== undefined;
  }

  /** Resolves when another batch may be queued, or the queue was dropped (check `epoch`). */
  async waitForRoom(): Promise<void> {
    const epoch = this.epochCount;
    while (this.queue.length >= this.options.maxQueued && this.epochCount === epoch) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  /** Queues fetched batches (in offset order) and starts delivering if nothing is. */
  push(...batches: ConsumedBatch[]): void {
    for (const b of batches) {
      const records = b.records[0] !== undefined && b.records[0].offset >= this.pushedEnd ? b.records : b.records.filter((r) => r.offset >= this.pushedEnd);
      if (records.length === 0) continue;
      this.queue.push(records === b.records ? b : { ...b, records });
      this.pushedEnd = records[records.length - 1]!.offset + 1;
    }
    if (this.queue.length > 0) this.draining ??= this.drain();
    if (this.wakeLinger && this.queuedRecords() >= (this.options.maxMergedRecords ?? Number.POSITIVE_INFINITY)) this.wakeLinger();
  }

  private queuedRecords(): number {
    let n = 0;
    for (const b of this.queue) n += b.records.length;
    return n;
  }

  /** Waits out what is left of the interval since the last delivery started (early on a full merge or a drop). */
  private async linger(): Promise<void> {
    const left = this.deliveredAt + (this.options.minIntervalMs ?? 0) - performance.now();
    if (!(left > 0) || this.queuedRecords() >= (this.options.maxMergedRecords ?? Number.POSITIVE_INFINITY)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), left);
      const done = (): void => {
        clearTimeout(timer);
        this.wakeLinger = undefined;
        resolve();
      };
      this.wakeLinger = done;
    });
  }

  /** Forgets the queued batches; the one in progress finishes. */
  drop(): void {
    this.epochCount++;
    this.queue = [];
    this.pushedEnd = this.deliveredEnd;
    this.wakeRoomWaiters();
    this.wakeLinger?.();
  }

  /** Resolves when nothing is being delivered (after a drop: when the batch in progress ended). */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private wakeRoomWaiters(): void {
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  /** The next records to deliver: the first queued batch, cut or merged with the ones behind it to `maxMergedRecords`. */
  private takeMerged(): ConsumedBatch {
    const max = this.options.maxMergedRecords;
    const first = this.queue[0]!;
    if (max === undefined) return this.queue.shift()!;
    if (first.records.length > max) {
      this.queue[0] = { ...first, records: first.records.slice(max) };
      return { ...first, records: first.records.slice(0, max) };
    }
    this.queue.shift();
    if (this.queue.length === 0 || first.records.length + this.queue[0]!.records.length > max) return first;
    const records = [...first.records];
    let last = first;
    while (this.queue.length > 0 && records.length + this.queue[0]!.records.length <= max) {
      last = this.queue.shift()!;
      for (const r of last.records) records.push(r);
    }
    return { topic: first.topic, partition: first.partition, records, highWatermark: last.highWatermark };
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        if (!this.options.active()) {
          this.drop();
          break;
        }
        if (this.options.minIntervalMs) {
          await this.linger();
          if (this.queue.length === 0) break;
          if (!this.options.active()) continue;
          this.deliveredAt = performance.now();
        }
        const batch = this.takeMerged();
        this.wakeRoomWaiters();
        const first = batch.records[0]!.offset;
        this.deliveredEnd = batch.records[batch.records.length - 1]!.offset + 1;
        try {
          await this.options.deliver(batch);
        } catch (err) {
          // Nothing after a batch that was not processed may run before it.
          this.deliveredEnd = first;
          this.drop();
          await Promise.resolve()
            .then(() => this.options.onHandedBack(first, err))
            .catch(() => undefined);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }
}
