/**
 * A batch task: one processor instance per input partition, with the partition's stores (stateful
 * services). One loop step: validate each record (invalid ones become dead letters) → process →
 * one commit of outputs + changelog + consumed offsets (a Kafka transaction for exactly-once
 * services; one RocksDB write batch on the embedded log) → apply the store writes locally with a
 * checkpoint. Batches and punctuations of one task never overlap (one lane).
 *
 * Failures follow the error's class (errors.ts): transient → retry the same batch with back-off on
 * the same producer; migrated → stop and let the service close the task dirty and rejoin; a
 * processor that keeps failing → isolate the record and dead-letter it; fatal → stop the service.
 */
import type { Logger } from './logger.ts';
import type { Cancellable, EmitOptions, InputRecord, Processor, ProcessorContext } from './processor.ts';
import type { KeyValueStore } from './store.ts';
import type { ConsumedBatch, LogRecord, OutRecord, PartitionOffset } from './transport.ts';
import type { Origin } from './emitter.ts';
import type { TaskHost } from './task-host.ts';
import { backoffMs, sleep } from './task-host.ts';
import { TaskLifecycle } from './task-state.ts';
import type { TaskState } from './task-state.ts';
import { StateManager } from './state-manager.ts';
import { validateInput } from './input.ts';
import { ServiceDefinitionError, TaskMigratedError, classifyError, describeError } from './errors.ts';
import type { ErrorStage, Recovery } from './errors.ts';

/** A failure with the stage it happened in, so classification knows processor code from commit. */
class StageError extends Error {
  constructor(
    readonly stage: ErrorStage,
    readonly original: unknown,
  ) {
    super(describeError(original), { cause: original });
  }
}

export class Task<In> implements ProcessorContext {
  readonly service: string;
  readonly lifecycle: TaskLifecycle;
  private lane: Promise<unknown> = Promise.resolve();
  private readonly state: StateManager | undefined;
  private processor: Processor<In> | undefined;
  private outputs: OutRecord[] = [];
  private origin: Origin | undefined;
  private readonly punctuators = new Set<{ cancelled: boolean }>();
  private readonly scope: string;
  private opening: Promise<void> | undefined;

  constructor(
    private readonly host: TaskHost<In>,
    readonly partition: number,
    readonly logger: Logger,
  ) {
    this.service = host.definition.name;
    this.scope = `${host.groupId}.${partition}`;
    this.lifecycle = new TaskLifecycle(`${host.groupId}-${partition}`);
    this.lifecycle.onTransition((_, to) => host.metrics.taskStates.inc({ state: to }));
    const stores = host.definition.stores ?? [];
    this.state =
      stores.length > 0
        ? new StateManager({
            dataDir: host.dataDir,
            groupId: host.groupId,
            partition,
            stores,
            transport: host.transport,
            changelogTopic: (s) => host.changelogTopic(s),
            logger,
            metrics: host.metrics,
            // A task closed while it restores (revoked, service stopping) stops restoring at once.
            onProgress: () => {
              if (!this.lifecycle.is('restoring')) throw new TaskMigratedError(`task ${this.scope} closed during its restore`);
            },
          })
        : undefined;
  }

  get taskState(): TaskState {
    return this.lifecycle.state;
  }

  get isRunning(): boolean {
    return this.lifecycle.is('running');
  }

  /** Resolves when the open attempt ends (running, or failed and closed). */
  get opened(): Promise<void> {
    return this.opening ?? Promise.resolve();
  }

  // ---- ProcessorContext ----------------------------------------------------------------------

  now(): number {
    return this.host.clock.now();
  }

  emit(topic: string, key: string | null, value: unknown, options: EmitOptions = {}): void {
    this.host.emitter.emit(this.outputs, topic, key, value, options, this.origin);
  }

  store<V>(name: string): KeyValueStore<V> {
    if (!this.state) throw new ServiceDefinitionError('MEGURI_ERR_NO_STORE', `${this.service} declares no stores`);
    return this.state.store<V>(name);
  }

  schedule(intervalMs: number, fn: (ctx: ProcessorContext) => Promise<void> | void): Cancellable {
    if (!(intervalMs > 0)) throw new RangeError('punctuation interval must be > 0');
    const handle = { cancelled: false };
    this.punctuators.add(handle);
    const clock = this.host.clock;
    const live = (): boolean => !handle.cancelled && this.lifecycle.is('running', 'restoring');
    void (async () => {
      while (live()) {
        await clock.sleep(intervalMs);
        if (!live()) break;
        await this.enqueue(async () => {
          if (!this.isRunning || handle.cancelled) return;
          const done = await this.runUntilCommitted('punctuation', async () => {
            this.origin = undefined;
            await fn(this);
          }, []);
          if (!done) this.logger.error('punctuation keeps failing; skipped until its next run');
        }).catch((err: unknown) => this.failed(err, 'punctuation'));
      }
    })();
    return { cancel: () => ((handle.cancelled = true), this.punctuators.delete(handle)) };
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const next = this.lane.then(job, job);
    this.lane = next.catch(() => undefined);
    return next;
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  /**
   * created → restoring → running. On Kafka the scope's transactional producer is initialised with
   * its transactional id first (fencing the previous owner), then the stores are restored to the end
   * of their changelogs, then the processor starts. Throws if any step fails; the task is then
   * closed and the service opens a new one.
   */
  open(): Promise<void> {
    this.opening = this.enqueue(async () => {
      if (this.lifecycle.is('closed')) return; // closed before its open began
      this.lifecycle.transitionTo('restoring');
      try {
        const { transport } = this.host;
        if (this.host.definition.guarantee === 'exactly-once' && transport.fenceScope) await transport.fenceScope(this.scope);
        if (this.lifecycle.state !== 'restoring') return;
        await this.state?.openAndRestore();
        if (this.lifecycle.state !== 'restoring') return;
        await this.startProcessor();
        this.lifecycle.transitionTo('running');
      } catch (err) {
        if (this.lifecycle.is('restoring')) this.host.metrics.taskErrors.inc({ recovery: classifyError(err, 'open'), stage: 'open' });
        await this.release(false);
        throw err;
      }
    });
    return this.opening;
  }

  private async startProcessor(): Promise<void> {
    const create = this.host.definition.createProcessor;
    if (!create) throw new ServiceDefinitionError('MEGURI_ERR_NO_PROCESSOR', `${this.service} defines neither createProcessor nor concurrent`);
    this.processor = create(this.partition);
    await this.processor.init?.(this);
    // init may write to stores or emit (e.g. rebuilding indexes); commit that too.
    if (this.outputs.length > 0 || this.state?.hasPending()) await this.commit([]);
  }

  /** Clean close (revocation, stop): after the batch in progress; every batch has committed. */
  async closeClean(): Promise<void> {
    await this.close(true);
  }

  /** Dirty close (migrated): uncommitted state dropped, nothing committed. */
  async closeDirty(): Promise<void> {
    await this.close(false);
  }

  private async close(clean: boolean): Promise<void> {
    if (this.lifecycle.is('closed')) return;
    if (this.lifecycle.is('created')) return this.lifecycle.transitionTo('closed');
    if (this.lifecycle.is('running', 'restoring')) this.lifecycle.transitionTo('suspended');
    for (const p of this.punctuators) p.cancelled = true;
    this.punctuators.clear();
    // A clean close waits for the batch in progress (it commits); a dirty one only for it to stop.
    await this.lane;
    await this.release(clean);
  }

  /** Releases processor, stores and the scope's producer; → closed. */
  private async release(clean: boolean): Promise<void> {
    if (this.lifecycle.is('closed')) return;
    if (!this.lifecycle.is('suspended', 'created')) this.lifecycle.transitionTo('suspended');
    try {
      await this.processor?.close?.(this);
    } catch (err) {
      this.logger.warn({ err }, 'processor close failed');
    }
    this.processor = undefined;
    this.outputs = [];
    await this.state?.close();
    if (this.host.definition.guarantee === 'exactly-once') {
      await this.host.transport.releaseScope?.(this.scope).catch((err: unknown) => this.logger.warn({ err }, 'releasing the producer failed'));
    }
    this.lifecycle.transitionTo('closed');
    this.logger.debug({ clean }, 'task closed');
  }

  // ---- processing ----------------------------------------------------------------------------

  processBatch(batch: ConsumedBatch): Promise<void> {
    return this.enqueue(() => this.runBatch(batch));
  }

  private toInput(record: LogRecord): ReturnType<typeof validateInput<In>> {
    const logical = this.host.logicalOf(record.topic) ?? record.topic;
    return validateInput<In>(this.host.catalog.schema(logical), record, this.host.catalog.codec?.(logical));
  }

  private async runBatch(batch: ConsumedBatch): Promise<void> {
    if (batch.records.length === 0) return;
    if (!this.isRunning) throw new TaskMigratedError(`task ${this.scope} is ${this.lifecycle.state}; batch not processed`);
    const started = performance.now();
    const last = batch.records[batch.records.length - 1]!;
    const offsets: PartitionOffset[] = [{ topic: batch.topic, partition: batch.partition, offset: last.offset + 1 }];
    const processed = await this.runUntilCommitted(
      'batch',
      async () => {
        // A batch larger than maxBatchRecords (batches merged while the task committed, on Kafka)
        // is processed in steps of that size, with a turn of the event loop between them, and
        // committed once.
        const step = this.host.definition.maxBatchRecords ?? batch.records.length;
        for (let start = 0; start < batch.records.length; start += step) {
          if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
          const end = Math.min(batch.records.length, start + step);
          const valid: InputRecord<In>[] = [];
          for (let i = start; i < end; i++) {
            const record = batch.records[i]!;
            const r = this.toInput(record);
            if (r.ok) valid.push(r.input);
            else this.host.emitter.deadLetter(this.outputs, record, record.key, record.value, r.code, r.reason);
          }
          this.origin = batch.records[end - 1]!;
          if (valid.length > 0) await this.processor!.process(valid, this);
        }
      },
      offsets,
      this.host.batchAttempts,
    );
    if (!processed) await this.runRecordByRecord(batch);
    this.host.metrics.recordsIn.inc({ topic: batch.topic }, batch.records.length);
    this.host.metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, batch.highWatermark - (last.offset + 1)));
    this.host.metrics.processingSeconds.observe({ topic: batch.topic }, (performance.now() - started) / 1000);
  }

  /**
   * Runs `work` and commits it with `offsets`, retrying by the error's class. Returns false when the
   * processor failed `processAttempts` times (the caller isolates the bad record); throws on
   * migrated and fatal errors. Transient errors (process or commit) are retried without limit while
   * the task runs: they never dead-letter anything.
   */
  private async runUntilCommitted(what: string, work: () => Promise<void>, offsets: readonly PartitionOffset[], processAttempts = 3): Promise<boolean> {
    let processFailures = 0;
    for (let attempt = 1; ; attempt++) {
      if (!this.isRunning) throw new TaskMigratedError(`task ${this.scope} stopped running during ${what}`);
      try {
        try {
          await work();
        } catch (err) {
          throw new StageError('process', err);
        }
        try {
          await this.commit(offsets);
        } catch (err) {
          throw new StageError('commit', err);
        }
        return true;
      } catch (wrapped) {
        const { stage, original } = wrapped as StageError;
        const recovery: Recovery = classifyError(original, stage);
        this.host.metrics.taskErrors.inc({ recovery, stage });
        this.host.metrics.batchFailures.inc({ topic: what });
        if (recovery === 'fatal') throw original;
        if (recovery === 'migrated' || !this.isRunning) {
          this.discardUncommitted();
          throw new TaskMigratedError(`task ${this.scope}: ${describeError(original)}`, { cause: original });
        }
        try {
          await this.reset();
        } catch (resetError) {
          const cause = resetError instanceof StageError ? resetError.original : resetError;
          if (classifyError(cause, 'commit') === 'fatal') throw cause;
          throw new TaskMigratedError(`task ${this.scope}: rebuilding the processor failed: ${describeError(cause)}`, { cause });
        }
        if (recovery === 'bad-record' && ++processFailures >= processAttempts) {
          this.logger.error({ err: original, attempt, stage }, `${what} keeps failing; isolating its records`);
          return false;
        }
        this.logger.warn({ err: original, attempt, stage, recovery }, `${what} failed; retrying from the last committed state`);
        await sleep(backoffMs(attempt));
      }
    }
  }

  /** A batch whose processor keeps failing: find the record that breaks it and dead-letter it. */
  private async runRecordByRecord(batch: ConsumedBatch): Promise<void> {
    for (const record of batch.records) {
      const offsets = [{ topic: batch.topic, partition: batch.partition, offset: record.offset + 1 }];
      let lastError: unknown;
      const ok = await this.runUntilCommitted(
        'record',
        async () => {
          this.origin = record;
          const r = this.toInput(record);
          if (!r.ok) {
            this.host.emitter.deadLetter(this.outputs, record, record.key, record.value, r.code, r.reason);
            return;
          }
          try {
            await this.processor!.process([r.input], this);
          } catch (err) {
            lastError = err;
            throw err;
          }
        },
        offsets,
        2,
      );
      if (ok) continue;
      await this.runUntilCommitted(
        'dead letter',
        async () => {
          this.host.emitter.deadLetter(this.outputs, record, record.key, record.value, 'MEGURI_ERR_PROCESSING', `processor failed: ${describeError(lastError)}`);
        },
        offsets,
        Number.POSITIVE_INFINITY,
      );
    }
  }

  private discardUncommitted(): void {
    this.outputs = [];
    this.state?.discardPending();
  }

  /** Forgets uncommitted work (outputs, store writes, cache) and rebuilds the processor from committed state. */
  private async reset(): Promise<void> {
    this.discardUncommitted();
    try {
      await this.processor?.close?.(this);
    } catch (err) {
      this.logger.warn({ err }, 'processor close failed during reset');
    }
    for (const p of this.punctuators) p.cancelled = true;
    this.punctuators.clear();
    this.processor = undefined;
    if (!this.isRunning) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startProcessor();
        return;
      } catch (err) {
        const recovery = classifyError(err, 'commit');
        if (recovery !== 'transient' || !this.isRunning) throw new StageError('commit', err);
        this.discardUncommitted();
        await sleep(backoffMs(attempt));
      }
    }
  }

  /**
   * Outputs + changelog + offsets in one atomic commit, then local store writes with checkpoints;
   * inline stores (embedded log) write in the commit itself.
   */
  private async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    const member = this.host.member();
    if (!member) throw new TaskMigratedError('not a group member');
    const outputs = this.outputs;
    const changelogStart = outputs.length;
    const slots = this.state?.appendChangelog(outputs) ?? { ends: [] };
    const stateWrites = this.state?.inlineWrites();
    if (outputs.length === 0 && offsets.length === 0 && !stateWrites?.length) return;
    const t0 = performance.now();
    const meta = await member.commit({
      transactional: this.host.definition.guarantee === 'exactly-once',
      scope: this.scope,
      outputs,
      offsets,
      ...(stateWrites?.length ? { stateWrites } : {}),
    });
    this.host.metrics.commitSeconds.observe({ kind: this.host.definition.guarantee }, (performance.now() - t0) / 1000);
    this.outputs = [];
    for (const o of outputs.slice(0, changelogStart)) this.host.metrics.recordsOut.inc({ topic: o.topic });
    await this.state?.applyCommitted(slots, meta);
  }

  /** A punctuation that could not complete: migrated → the service closes the task; fatal → stop. */
  private failed(err: unknown, what: string): void {
    const recovery = classifyError(err, 'commit');
    if (recovery === 'migrated') this.host.taskMigrated(this.partition, err);
    else if (recovery === 'fatal') this.host.fatal(err);
    else this.logger.error({ err }, `${what} failed`);
  }
}
