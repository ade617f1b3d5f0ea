/**
 * A partition of a stateless, I/O-bound service (the fetcher, the parser) in concurrent mode.
 * Dispatch never waits for a record to finish (only for a free slot), so one slow server does not
 * hold up the partition; finished records' outputs are sent in groups, then the offset of the oldest
 * unfinished record is committed (at-least-once), at most every `commitIntervalMs`.
 *
 * Bounded: at most `maxInFlight` records run, and at most `maxPendingRecords` / `maxPendingBytes` of
 * finished outputs wait to be sent; while either is full, dispatch (and so consumption) pauses.
 * Sending and committing the offset are two steps: outputs that were sent are never sent again
 * because the offset commit after them failed — only the offset is retried.
 */
import type { Logger } from './logger.ts';
import type { InputRecord, RecordContext, RecordProcessor } from './processor.ts';
import type { ConsumedBatch, OutRecord } from './transport.ts';
import type { TaskHost } from './task-host.ts';
import { TaskLifecycle } from './task-state.ts';
import type { TaskState } from './task-state.ts';
import { validateInput } from './input.ts';
import { TaskMigratedError, classifyError, describeError, isMembershipLost } from './errors.ts';

const DEFAULT_MAX_PENDING_RECORDS = 2_000;
const DEFAULT_MAX_PENDING_BYTES = 64 * 1024 * 1024;
/**
 * Offsets are committed after every flush by default: a record is processed again after a crash
 * only if it was in flight then, which for the fetcher means a page is fetched twice only if its
 * request was out. A longer interval (MEGURI_COMMIT_INTERVAL_MS) saves the broker a request per flush
 * (a seventh of a crawl's requests on Kafka, docs/benchmarks.md) and replays that much more.
 */
const DEFAULT_COMMIT_INTERVAL_MS = 0;

export class ConcurrentTask<In> {
  readonly service: string;
  readonly lifecycle: TaskLifecycle;
  private processor: RecordProcessor<In> | undefined;
  private readonly inFlight = new Set<number>();
  private waiters: (() => void)[] = [];
  private readyOutputs: OutRecord[] = [];
  private readyBytes = 0;
  /** Offset after the last dispatched record. */
  private dispatchedEnd = -1;
  private committedEnd = -1;
  /** When the last offset commit was started (performance.now()). */
  private committedAt = -Infinity;
  private readonly commitIntervalMs: number;
  private topic = '';
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly maxInFlight: number;
  private readonly maxPendingRecords: number;
  private readonly maxPendingBytes: number;
  private opening: Promise<void> | undefined;
  /** Names this partition's sends, so a transport can give each partition its own (AtomicCommit.scope). */
  private readonly scope: string;

  constructor(
    private readonly host: TaskHost<In>,
    readonly partition: number,
    readonly logger: Logger,
  ) {
    this.service = host.definition.name;
    const c = host.definition.concurrent!;
    this.maxInFlight = c.maxInFlight;
    this.maxPendingRecords = c.maxPendingRecords ?? DEFAULT_MAX_PENDING_RECORDS;
    this.maxPendingBytes = c.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
    this.commitIntervalMs = host.commitIntervalMs ?? c.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS;
    this.scope = `${host.groupId}.${partition}`;
    this.lifecycle = new TaskLifecycle(`${host.groupId}-${partition}`);
    this.lifecycle.onTransition((_, to) => host.metrics.taskStates.inc({ state: to }));
  }

  get taskState(): TaskState {
    return this.lifecycle.state;
  }

  get isRunning(): boolean {
    return this.lifecycle.is('running');
  }

  get opened(): Promise<void> {
    return this.opening ?? Promise.resolve();
  }

  /** Number of records being processed now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Nothing to restore for a stateless task: created → restoring → running at once. */
  open(): Promise<void> {
    this.lifecycle.transitionTo('restoring');
    this.processor = this.host.definition.concurrent!.createRecordProcessor(this.partition);
    const every = this.host.definition.concurrent!.flushIntervalMs ?? 50;
    this.flushTimer = setInterval(() => void this.flush().catch(() => undefined), every);
    this.lifecycle.transitionTo('running');
    this.opening = Promise.resolve();
    return this.opening;
  }

  private contextFor(buffer: OutRecord[], record: InputRecord<In>): RecordContext {
    const host = this.host;
    return {
      service: this.service,
      partition: this.partition,
      logger: this.logger,
      now: () => host.clock.now(),
      emit: (topic, key, value, options = {}) => host.emitter.emit(buffer, topic, key, value, options, record),
    };
  }

  private full(): boolean {
    return this.inFlight.size >= this.maxInFlight || this.readyOutputs.length >= this.maxPendingRecords || this.readyBytes >= this.maxPendingBytes;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  async processBatch(batch: ConsumedBatch): Promise<void> {
    if (!this.isRunning) throw new TaskMigratedError(`task ${this.host.groupId}-${this.partition} is ${this.lifecycle.state}; batch not processed`);
    this.topic = batch.topic;
    const logical = this.host.logicalOf(batch.topic) ?? batch.topic;
    const schema = this.host.catalog.schema(logical);
    const codec = this.host.catalog.codec?.(logical);
    for (const record of batch.records) {
      while (this.isRunning && this.full()) await new Promise<void>((r) => this.waiters.push(r));
      // Records not dispatched stay uncommitted; the next owner (or this one after a re-open) reads them again.
      if (!this.isRunning) return;
      if (record.offset < this.dispatchedEnd) continue;
      this.dispatchedEnd = record.offset + 1;
      if (this.committedEnd < 0) this.committedEnd = record.offset;
      this.host.metrics.recordsIn.inc({ topic: batch.topic });
      const v = validateInput<In>(schema, record, codec);
      if (!v.ok) {
        const out: OutRecord[] = [];
        this.host.emitter.deadLetter(out, record, record.key, record.value, v.code, v.reason);
        this.addReady(out);
        continue;
      }
      this.inFlight.add(record.offset);
      const buffer: OutRecord[] = [];
      void this.processor!.processRecord(v.input, this.contextFor(buffer, v.input)).then(
        () => this.finish(record.offset, buffer),
        (err: unknown) => {
          this.logger.error({ err, offset: record.offset }, 'record failed');
          const out: OutRecord[] = [];
          this.host.emitter.deadLetter(out, record, record.key, record.value, 'MEGURI_ERR_PROCESSING', `processor failed: ${describeError(err)}`);
          this.finish(record.offset, out);
        },
      );
    }
    this.host.metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, batch.highWatermark - this.dispatchedEnd));
  }

  private addReady(outputs: readonly OutRecord[]): void {
    for (const o of outputs) {
      this.readyOutputs.push(o);
      this.readyBytes += (o.value?.length ?? 0) + (o.key?.length ?? 0);
    }
  }

  private finish(offset: number, outputs: OutRecord[]): void {
    this.inFlight.delete(offset);
    this.addReady(outputs);
    this.wake();
  }

  /**
   * Sends finished outputs, then commits the offset below the oldest unfinished record when
   * `commitIntervalMs` has passed since the last commit (always when `force`: a clean close).
   */
  private flush(force = false): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const member = this.host.member();
      if (!member || this.dispatchedEnd < 0) return;
      let commitTo = this.dispatchedEnd;
      for (const o of this.inFlight) if (o < commitTo) commitTo = o;
      const outputs = this.readyOutputs;
      if (outputs.length === 0 && commitTo <= this.committedEnd) return;
      if (outputs.length > 0) {
        this.readyOutputs = [];
        try {
          await member.commit({ transactional: false, scope: this.scope, outputs, offsets: [] });
        } catch (err) {
          this.readyOutputs = [...outputs, ...this.readyOutputs];
          this.flushFailed(err, 'send');
          return;
        }
        // Sent: from here on these outputs are never sent again, whatever happens to the offset.
        this.readyBytes = this.readyOutputs.reduce((n, o) => n + (o.value?.length ?? 0) + (o.key?.length ?? 0), 0);
        for (const o of outputs) this.host.metrics.recordsOut.inc({ topic: o.topic });
        this.wake();
      }
      if (commitTo > this.committedEnd && (force || performance.now() - this.committedAt >= this.commitIntervalMs)) {
        this.committedAt = performance.now();
        try {
          await member.commit({ transactional: false, scope: this.scope, outputs: [], offsets: [{ topic: this.topic, partition: this.partition, offset: commitTo }] });
          this.committedEnd = commitTo;
        } catch (err) {
          this.flushFailed(err, 'offset commit');
        }
      }
    });
    return this.flushing;
  }

  private flushFailed(err: unknown, what: string): void {
    const recovery = classifyError(err, 'commit');
    this.host.metrics.taskErrors.inc({ recovery, stage: 'commit' });
    if (recovery === 'fatal') {
      this.host.fatal(err);
      return;
    }
    // An offset commit the group refuses (this member is unknown to it, or of an old generation) will
    // not succeed by trying again: the partition is someone else's, or will be after the rejoin. The
    // task closes dirty and the member rejoins; the records not committed are read again.
    if (what === 'offset commit' && isMembershipLost(err) && this.isRunning) {
      this.host.taskMigrated(this.partition, err);
      return;
    }
    // Kept for the next flush (outputs not sent yet, or the offset).
    if (this.isRunning) this.logger.warn({ err, recovery }, `${what} failed; will retry`);
  }

  /** Clean close: let records in flight finish (bounded by the processor's own time limits), send, commit. */
  async closeClean(): Promise<void> {
    if (this.lifecycle.is('closed')) return;
    if (this.lifecycle.is('running', 'restoring')) this.lifecycle.transitionTo('suspended');
    this.wake();
    const deadline = Date.now() + 60_000;
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flush(true);
    if (this.readyOutputs.length > 0 || this.inFlight.size > 0) this.logger.warn({ unsent: this.readyOutputs.length, inFlight: this.inFlight.size }, 'closing with unsent outputs; their records will be processed again');
    await this.release();
  }

  /** Dirty close: outputs not sent yet are dropped (their records are read again). */
  async closeDirty(): Promise<void> {
    if (this.lifecycle.is('closed')) return;
    if (this.lifecycle.is('running', 'restoring')) this.lifecycle.transitionTo('suspended');
    this.wake();
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flushing.catch(() => undefined);
    this.readyOutputs = [];
    this.readyBytes = 0;
    await this.release();
  }

  private async release(): Promise<void> {
    try {
      await this.processor?.close?.();
    } catch (err) {
      this.logger.warn({ err }, 'processor close failed');
    }
    this.lifecycle.transitionTo('closed');
  }
}
