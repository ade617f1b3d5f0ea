/**
 * A test driver for one task of a service, after Kafka Streams' TopologyTestDriver: no transport, no
 * group, no background loops. `pipeInput` runs one batch through the processor and commits it before
 * it returns; `advanceTime` moves a manual clock and runs the punctuations that came due; outputs and
 * dead letters are captured per topic; `store(name)` shows the committed state.
 *
 * What it keeps from the real runtime, so a logic test proves what production does:
 * - inputs are encoded and validated against the catalog's schemas like a consumed record (a record
 *   that fails becomes a dead letter, the rest of the batch goes on);
 * - emits go through the runtime's emitter (declared outputs only, size guard, dead letters);
 * - stores are the runtime's own RocksDB stores, in a temporary directory: writes stay pending until
 *   the step commits, a failed step drops them with the read cache, and key order is RocksDB's byte
 *   order — an in-memory map would be a second store implementation whose order and caching could
 *   differ from the one that runs in production;
 * - a processor that throws is rebuilt from the committed state and retried, then its batch is split
 *   and the record that keeps failing is dead-lettered (MEGURI_ERR_PROCESSING);
 * - a punctuation fires at most once per `advanceTime`, as a task's timer does when the clock jumps;
 * - outputs to a topic the service reads itself (the scheduler's `links`) come back to it as input,
 *   right after the step that emitted them, when they land on the driver's partition.
 *
 * A concurrent service (the fetcher, the parser) runs its RecordProcessor on each record in turn:
 * one of the orders its concurrent task may produce, with the same dead letter for a failed record.
 * Such a processor must not wait on the manual clock, which only `advanceTime` moves.
 *
 * What it adds: every output is checked against its topic's schema in the catalog, so a record the
 * next service would dead-letter fails the test at the step that emitted it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from './clock.ts';
import type { TopicCatalog } from './catalog.ts';
import { DEFAULT_MAX_MESSAGE_BYTES } from './catalog.ts';
import { DEADLETTER_TOPIC } from './deadletter.ts';
import type { DeadLetterValue } from './deadletter.ts';
import { OutputEmitter } from './emitter.ts';
import type { Origin } from './emitter.ts';
import { ServiceDefinitionError, classifyError, describeError } from './errors.ts';
import { validateInput } from './input.ts';
import type { Logger } from './logger.ts';
import { silentLogger } from './logger.ts';
import { ServiceMetrics } from './metrics.ts';
import { partitionForKey } from './partitioner.ts';
import type { Cancellable, EmitOptions, InputRecord, Processor, ProcessorContext, RecordContext, RecordProcessor, ServiceDefinition, TopicRecordMap } from './processor.ts';
import type { KeyValueStore, RangeQuery } from './store.ts';
import { TaskStores } from './task-stores.ts';
import type { LogRecord, OutRecord } from './transport.ts';

export interface TestDriverOptions {
  /** Schemas and topic settings (the crawler passes `crawlCatalog`). */
  readonly catalog: TopicCatalog;
  /** The input partition this task owns (default 0). */
  readonly partition?: number;
  /** Partition count of every topic, for the partition of keyed outputs (default: the catalog's). */
  readonly partitions?: number;
  /** The clock (default: a new ManualClock at `startMs`). */
  readonly clock?: ManualClock;
  /** Start of the default clock (default 2026-01-01T00:00:00Z). */
  readonly startMs?: number;
  /** Where the stores live; the driver removes a directory it made itself, never one it was given. */
  readonly dataDir?: string;
  /** Store group (default: the service name, as the runtime's default group id). */
  readonly groupId?: string;
  /** Attempts of a whole batch whose processor keeps failing before it is retried record by record (default 3, as the runtime). */
  readonly batchAttempts?: number;
  /** Maximum record size per logical output topic (default: the catalog's `max.message.bytes`, else Kafka's default). */
  readonly maxMessageBytes?: Readonly<Record<string, number>>;
  /**
   * Outputs to a topic the service also reads, on the driver's partition, are fed back to it after
   * each step until none are left, as the topic would deliver them (default true).
   */
  readonly loopback?: boolean;
  /** Check each output against its topic's schema (default true). */
  readonly validateOutputs?: boolean;
  readonly logger?: Logger;
}

/** One record given to `pipeInput`. A Buffer (or null) value is sent as raw bytes, unchecked. */
export interface TestInput<V> {
  readonly key?: string | null;
  readonly value: V | Buffer | null;
  readonly timestamp?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One captured output, decoded as a consumer would see it. */
export interface TestOutput<V> {
  readonly topic: string;
  readonly key: string | null;
  readonly value: V;
  readonly partition: number;
  readonly timestamp: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** A processing failure the driver recovered from (the runtime would log it). */
export interface TestFailure {
  readonly stage: 'init' | 'batch' | 'record' | 'punctuation';
  readonly error: unknown;
}

/** Read-only view of a store's committed state. Values are copies: changing them changes nothing. */
export interface TestStore<V> {
  get(key: string): Promise<V | undefined>;
  range(query?: RangeQuery): Promise<[string, V][]>;
  keys(query?: RangeQuery): Promise<string[]>;
}

interface Punctuator {
  readonly intervalMs: number;
  readonly fn: (ctx: ProcessorContext) => Promise<void> | void;
  nextAt: number;
  cancelled: boolean;
  readonly order: number;
}

/** A processing attempt that failed; the driver rebuilds the processor and decides what next. */
class AttemptFailed extends Error {
  constructor(readonly original: unknown) {
    super(describeError(original), { cause: original });
  }
}

const DEFAULT_START_MS = Date.UTC(2026, 0, 1);
/** Transient failures of one step before the driver gives up (the runtime retries them forever). */
const MAX_TRANSIENT_RETRIES = 100;
/** Rounds of outputs fed back to the service's own inputs in one step before the driver calls it a loop. */
const MAX_LOOPBACK_ROUNDS = 1000;

export class TestDriver<In, R extends TopicRecordMap = TopicRecordMap> {
  readonly clock: ManualClock;
  readonly metrics: ServiceMetrics;
  readonly partition: number;
  readonly dataDir: string;
  /** Failures the driver recovered from, oldest first (a passing logic test usually expects none). */
  readonly failures: TestFailure[] = [];
  private readonly definition: ServiceDefinition<In>;
  private readonly groupId: string;
  private readonly ownsDataDir: boolean;
  private readonly emitter: OutputEmitter;
  private readonly logger: Logger;
  private readonly batchAttempts: number;
  private readonly validateOutputs: boolean;
  private stores: TaskStores | undefined;
  private processor: Processor<In> | undefined;
  private recordProcessor: RecordProcessor<In> | undefined;
  private punctuators: Punctuator[] = [];
  private punctuatorCount = 0;
  private pending: OutRecord[] = [];
  private origin: Origin | undefined;
  private readonly offsets = new Map<string, number>();
  /** Every committed output per logical topic, and how far `readOutput` has read. */
  private readonly captured = new Map<string, TestOutput<unknown>[]>();
  private readonly readPosition = new Map<string, number>();
  private readonly loopPosition = new Map<string, number>();
  /** The bytes each captured output was sent as (what a consumer of it reads). */
  private readonly encoded = new WeakMap<TestOutput<unknown>, Buffer>();
  private closed = false;
  private busy = false;
  /** The processor's context: what a task gives it, bound to this driver. */
  private readonly context: ProcessorContext;

  private constructor(
    definition: ServiceDefinition<In, R>,
    private readonly options: TestDriverOptions,
  ) {
    this.definition = definition as unknown as ServiceDefinition<In>;
    if (!this.definition.createProcessor && !this.definition.concurrent) {
      throw new ServiceDefinitionError('MEGURI_ERR_NO_PROCESSOR', `${definition.name} defines neither createProcessor nor concurrent`);
    }
    this.clock = options.clock ?? new ManualClock(options.startMs ?? DEFAULT_START_MS);
    this.partition = options.partition ?? 0;
    this.groupId = options.groupId ?? definition.name;
    this.ownsDataDir = options.dataDir === undefined;
    this.dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `meguri-driver-${definition.name}-`));
    this.logger = (options.logger ?? silentLogger).child({ service: definition.name, partition: this.partition });
    this.batchAttempts = options.batchAttempts ?? 3;
    this.validateOutputs = options.validateOutputs ?? true;
    this.metrics = new ServiceMetrics(definition.name);
    definition.registerMetrics?.(this.metrics.registry);
    const maxBytes = new Map<string, number>();
    for (const logical of new Set([...definition.outputs, DEADLETTER_TOPIC])) {
      const declared = Number(options.catalog.topic(logical).config['max.message.bytes'] ?? NaN);
      maxBytes.set(logical, options.maxMessageBytes?.[logical] ?? (Number.isFinite(declared) ? declared : DEFAULT_MAX_MESSAGE_BYTES));
    }
    this.context = {
      service: definition.name,
      partition: this.partition,
      logger: this.logger,
      now: () => this.clock.now(),
      emit: (topic: string, key: string | null, value: unknown, emitOptions: EmitOptions = {}) => this.emitter.emit(this.pending, topic, key, value, emitOptions, this.origin),
      store: <V>(name: string): KeyValueStore<V> => {
        if (!this.stores || (this.definition.stores ?? []).length === 0) throw new ServiceDefinitionError('MEGURI_ERR_NO_STORE', `${this.definition.name} declares no stores`);
        return this.stores.store<V>(name);
      },
      schedule: (intervalMs: number, fn: (ctx: ProcessorContext) => Promise<void> | void): Cancellable => {
        if (!(intervalMs > 0)) throw new RangeError('punctuation interval must be > 0');
        const p: Punctuator = { intervalMs, fn, nextAt: this.clock.now() + intervalMs, cancelled: false, order: this.punctuatorCount++ };
        this.punctuators.push(p);
        return { cancel: () => ((p.cancelled = true), (this.punctuators = this.punctuators.filter((q) => q !== p))) };
      },
    };
    // Physical names are the logical ones: the driver has no topic prefix.
    this.emitter = new OutputEmitter({
      service: definition.name,
      outputs: definition.outputs,
      catalog: options.catalog,
      physical: (logical) => logical,
      maxBytes,
      now: () => this.clock.now(),
      logger: this.logger,
      metrics: this.metrics,
    });
  }

  /** Opens the service's stores and starts its processor (init runs and commits, as in a task's open). */
  static async open<In, R extends TopicRecordMap>(definition: ServiceDefinition<In, R>, options: TestDriverOptions): Promise<TestDriver<In, R>> {
    const driver = new TestDriver<In, R>(definition, options);
    try {
      await driver.start();
    } catch (err) {
      await driver.close();
      throw err;
    }
    return driver;
  }

  // ---- driving -------------------------------------------------------------------------------

  /** Current time of the driver's clock. */
  now(): number {
    return this.clock.now();
  }

  /**
   * Feeds `records` to the processor as one consumed batch of `topic` and commits it. Resolves when
   * its outputs and store writes are visible. Invalid records become dead letters, as in the runtime.
   */
  async pipeInput(topic: string, records: TestInput<In> | readonly TestInput<In>[]): Promise<void> {
    if (!this.definition.inputs.includes(topic)) {
      throw new ServiceDefinitionError('MEGURI_ERR_UNDECLARED_TOPIC', `${this.definition.name} does not read "${topic}"; its inputs: ${this.definition.inputs.join(', ')}`);
    }
    const list = Array.isArray(records) ? (records as readonly TestInput<In>[]) : [records as TestInput<In>];
    if (list.length === 0) return;
    await this.step(async () => {
      await this.consume(list.map((r) => this.toLogRecord(topic, r)));
      await this.loopBack();
    });
  }

  private consume(batch: readonly LogRecord[]): Promise<void> {
    return this.recordProcessor ? this.runRecords(batch) : this.runBatch(batch);
  }

  /**
   * A concurrent service's records, one after another (one of the orders the runtime's concurrent
   * task may produce). As there, each record's outputs go out together, and a record whose
   * processing fails is dead-lettered without a retry.
   */
  private async runRecords(batch: readonly LogRecord[]): Promise<void> {
    const schema = this.options.catalog.schema(batch[0]!.topic);
    for (const record of batch) {
      const v = validateInput<In>(schema, record, this.options.catalog.codec?.(record.topic));
      if (!v.ok) {
        this.emitter.deadLetter(this.pending, record, record.key, record.value, v.code, v.reason);
        await this.commit();
        continue;
      }
      const buffer: OutRecord[] = [];
      const ctx: RecordContext = {
        service: this.definition.name,
        partition: this.partition,
        logger: this.logger,
        now: () => this.clock.now(),
        emit: (topic, key, value, emitOptions = {}) => this.emitter.emit(buffer, topic, key, value, emitOptions, record),
      };
      try {
        await this.recordProcessor!.processRecord(v.input, ctx);
        this.pending = buffer;
      } catch (err) {
        this.failures.push({ stage: 'record', error: err });
        this.emitter.deadLetter(this.pending, record, record.key, record.value, 'MEGURI_ERR_PROCESSING', `processor failed: ${describeError(err)}`);
      }
      await this.commit();
    }
  }

  /** One consumed batch: processed whole, or record by record when it keeps failing. */
  private async runBatch(batch: readonly LogRecord[]): Promise<void> {
    if (await this.attempts('batch', () => this.processRecords(batch, batch[batch.length - 1]!), this.batchAttempts)) return;
    // The batch keeps failing: record by record, and the one that still fails is dead-lettered.
    for (const record of batch) {
      let lastError: unknown;
      const ok = await this.attempts(
        'record',
        async () => {
          try {
            await this.processRecords([record], record);
          } catch (err) {
            lastError = err;
            throw err;
          }
        },
        2,
      );
      if (ok) continue;
      this.emitter.deadLetter(this.pending, record, record.key, record.value, 'MEGURI_ERR_PROCESSING', `processor failed: ${describeError(lastError)}`);
      await this.commit();
    }
  }

  /** Feeds outputs to the service's own inputs back to it, one batch per topic and round. */
  private async loopBack(): Promise<void> {
    if (!(this.options.loopback ?? true)) return;
    const topics = this.definition.inputs.filter((t) => this.definition.outputs.includes(t));
    for (let round = 0; ; round++) {
      let fed = false;
      for (const topic of topics) {
        const all = this.captured.get(topic) ?? [];
        const from = this.loopPosition.get(topic) ?? 0;
        this.loopPosition.set(topic, all.length);
        const mine = all.slice(from).filter((o) => o.partition === this.partition);
        if (mine.length === 0) continue;
        if (round >= MAX_LOOPBACK_ROUNDS) throw new Error(`${this.definition.name} keeps feeding ${topic} back to itself (${round} rounds)`);
        fed = true;
        await this.consume(mine.map((o) => this.toLogRecord(topic, { key: o.key, value: this.encoded.get(o) ?? null, timestamp: o.timestamp, headers: o.headers })));
      }
      if (!fed) return;
    }
  }

  /**
   * Moves the clock forward by `ms` and runs every punctuation that came due, earliest first, each
   * committed on its own. Like a task's timer, a punctuation runs once per advance however many of
   * its intervals passed; advance in steps to run it more often.
   */
  async advanceTime(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`advanceTime needs a duration >= 0, got ${ms}`);
    await this.step(async () => {
      this.clock.advance(ms);
      const now = this.clock.now();
      const due = this.punctuators.filter((p) => !p.cancelled && p.nextAt <= now).sort((a, b) => a.nextAt - b.nextAt || a.order - b.order);
      for (const p of due) {
        // A punctuation cancelled or replaced (by a rebuilt processor) since this advance began is skipped.
        if (p.cancelled || !this.punctuators.includes(p)) continue;
        p.nextAt = now + p.intervalMs;
        const done = await this.attempts(
          'punctuation',
          async () => {
            this.origin = undefined;
            await p.fn(this.context);
          },
          3,
        );
        if (!done) this.logger.error('punctuation keeps failing; skipped until its next run');
      }
      await this.loopBack();
    });
  }

  /** Closes the processor and the stores and opens them again on the same directory, as a restarted process would. */
  async restart(): Promise<void> {
    await this.step(async () => {
      await this.stopProcessor();
      await this.stores?.close();
      this.stores = undefined;
      await this.start();
    });
  }

  // ---- inspecting ----------------------------------------------------------------------------

  /** Outputs of `topic` committed since the last `readOutput` of it (a test's view of a consumer). */
  readOutput<T extends keyof R & string>(topic: T): TestOutput<R[T]>[] {
    const all = this.captured.get(topic) ?? [];
    const from = this.readPosition.get(topic) ?? 0;
    this.readPosition.set(topic, all.length);
    return all.slice(from) as TestOutput<R[T]>[];
  }

  /** Every output of `topic` committed so far, read or not. */
  allOutput<T extends keyof R & string>(topic: T): TestOutput<R[T]>[] {
    return [...((this.captured.get(topic) ?? []) as TestOutput<R[T]>[])];
  }

  /** Every dead letter so far (rejected inputs and outputs that could not be sent). */
  deadLetters(): DeadLetterValue[] {
    return (this.captured.get(DEADLETTER_TOPIC) ?? []).map((r) => r.value as DeadLetterValue);
  }

  /** The committed state of a declared store. */
  store<V>(name: string): TestStore<V> {
    const live = (): KeyValueStore<V> => {
      if (this.closed) throw new Error('the test driver is closed');
      if (!this.stores) throw new ServiceDefinitionError('MEGURI_ERR_NO_STORE', `${this.definition.name} declares no stores`);
      return this.stores.store<V>(name);
    };
    live();
    return {
      get: async (key) => structuredClone(await live().get(key)),
      range: async (query) => {
        const out: [string, V][] = [];
        for await (const [k, v] of live().range(query)) out.push([k, structuredClone(v)]);
        return out;
      },
      keys: async (query) => {
        const out: string[] = [];
        for await (const [k] of live().range(query)) out.push(k);
        return out;
      },
    };
  }

  /** Closes processor and stores; removes the store directory unless it was given in the options. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.stopProcessor();
    } finally {
      await this.stores?.close();
      this.stores = undefined;
      if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    }
  }

  // ---- the task ------------------------------------------------------------------------------

  /** One step at a time, like a task's single lane; a step started inside another is a test bug. */
  private async step(work: () => Promise<void>): Promise<void> {
    if (this.closed) throw new Error('the test driver is closed');
    if (this.busy) throw new Error('a driver step is already running: await each pipeInput/advanceTime before the next');
    this.busy = true;
    try {
      await work();
    } finally {
      this.busy = false;
    }
  }

  private async start(): Promise<void> {
    const stores = this.definition.stores ?? [];
    if (stores.length > 0) this.stores = await TaskStores.open(this.dataDir, this.groupId, this.partition, stores);
    await this.startProcessor();
  }

  private async startProcessor(): Promise<void> {
    this.punctuators = [];
    if (this.definition.concurrent) {
      this.recordProcessor = this.definition.concurrent.createRecordProcessor(this.partition);
      return;
    }
    this.processor = this.definition.createProcessor!(this.partition);
    this.origin = undefined;
    await this.processor.init?.(this.context);
    // init may write to stores or emit (rebuilding indexes); that commits too.
    await this.commit();
  }

  private async stopProcessor(): Promise<void> {
    for (const p of this.punctuators) p.cancelled = true;
    this.punctuators = [];
    const processor = this.processor;
    const recordProcessor = this.recordProcessor;
    this.processor = undefined;
    this.recordProcessor = undefined;
    await processor?.close?.(this.context);
    await recordProcessor?.close?.();
  }

  private toLogRecord(topic: string, input: TestInput<In>): LogRecord {
    const offset = this.offsets.get(topic) ?? 0;
    this.offsets.set(topic, offset + 1);
    const raw = input.value;
    // As the topic carries it: through the topic's codec (a page's framed header and body bytes), else UTF-8 JSON.
    const codec = this.options.catalog.codec?.(topic);
    const value = raw === null ? null : Buffer.isBuffer(raw) ? raw : codec !== undefined ? codec.encode(raw) : Buffer.from(JSON.stringify(raw), 'utf8');
    return { topic, partition: this.partition, offset, key: input.key ?? null, value, timestamp: input.timestamp ?? this.clock.now(), headers: input.headers ?? {} };
  }

  /** Validates and processes records as one batch (invalid ones become dead letters), then commits. */
  private async processRecords(records: readonly LogRecord[], origin: Origin): Promise<void> {
    const schema = this.options.catalog.schema(records[0]!.topic);
    const valid: InputRecord<In>[] = [];
    for (const record of records) {
      const r = validateInput<In>(schema, record, this.options.catalog.codec?.(record.topic));
      if (r.ok) valid.push(r.input);
      else this.emitter.deadLetter(this.pending, record, record.key, record.value, r.code, r.reason);
    }
    this.origin = origin;
    if (valid.length > 0) await this.processor!.process(valid, this.context);
  }

  /**
   * Runs `work` and commits; on a throw, drops what it left uncommitted, rebuilds the processor from
   * the committed state and tries again. Errors are classified as in a task: a suspected bad record
   * counts against `attempts` (false when they are spent); a transient one is retried without
   * counting (bounded here, so a test cannot spin forever); a fatal or migrated one is thrown to the
   * test, where the runtime would stop the service or reopen the task.
   */
  private async attempts(stage: TestFailure['stage'], work: () => Promise<void>, attempts: number): Promise<boolean> {
    let failures = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        try {
          await work();
        } catch (err) {
          throw new AttemptFailed(err);
        }
        await this.commit();
        return true;
      } catch (err) {
        if (!(err instanceof AttemptFailed)) throw err;
        const original = err.original;
        this.failures.push({ stage, error: original });
        const recovery = classifyError(original, 'process');
        if (recovery === 'fatal' || recovery === 'migrated') throw original;
        if (recovery === 'transient' && attempt >= MAX_TRANSIENT_RETRIES) {
          throw new Error(`${stage} failed ${attempt} times with transient errors; last: ${describeError(original)}`, { cause: original });
        }
        this.logger.warn({ err: original, attempt, stage, recovery }, `${stage} failed; retrying from the last committed state`);
        await this.reset();
        if (recovery === 'bad-record' && ++failures >= attempts) return false;
      }
    }
  }

  /** Forgets uncommitted outputs, store writes and the read cache, and rebuilds the processor. */
  private async reset(): Promise<void> {
    this.pending = [];
    this.stores?.discardPending();
    try {
      await this.stopProcessor();
    } catch (err) {
      this.logger.warn({ err }, 'processor close failed during reset');
    }
    try {
      await this.startProcessor();
    } catch (err) {
      this.failures.push({ stage: 'init', error: err });
      throw err;
    }
  }

  /**
   * The commit of a step: outputs are checked against their schemas (a mismatch fails the test
   * here), store writes reach RocksDB and the read cache, then the outputs become visible.
   */
  private async commit(): Promise<void> {
    const outputs = this.pending;
    this.pending = [];
    const decoded = outputs.map((o) => {
      const d = this.decodeOutput(o);
      if (o.value !== null) this.encoded.set(d, o.value);
      return d;
    });
    const stores = this.stores;
    if (stores?.hasPending()) {
      await stores.db.batch([...stores.stores.values()].flatMap((s) => s.pendingOps()));
      stores.committed();
    }
    for (const o of decoded) {
      let list = this.captured.get(o.topic);
      if (!list) this.captured.set(o.topic, (list = []));
      list.push(o);
      if (o.topic !== DEADLETTER_TOPIC) this.metrics.recordsOut.inc({ topic: o.topic });
    }
  }

  private decodeOutput(o: OutRecord): TestOutput<unknown> {
    const text = o.value === null ? null : o.value.toString('utf8');
    let value: unknown = text === null ? null : (JSON.parse(text) as unknown);
    const schema = o.topic === DEADLETTER_TOPIC ? undefined : this.options.catalog.schema(o.topic);
    if (this.validateOutputs && schema) {
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
        throw new Error(`${this.definition.name} emitted a ${o.topic} record that does not match its schema (${issues}): ${text?.slice(0, 500)}`);
      }
      value = parsed.data;
    }
    const partitions = this.options.partitions ?? this.options.catalog.topic(o.topic).partitions;
    return {
      topic: o.topic,
      key: o.key,
      value,
      partition: o.partition ?? partitionForKey(o.key, partitions),
      timestamp: o.timestamp ?? this.clock.now(),
      headers: o.headers ?? {},
    };
  }
}
