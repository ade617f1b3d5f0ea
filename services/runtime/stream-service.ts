/**
 * The stream runtime: runs a service's Processor over its input partitions on any Transport.
 *
 * Per assigned partition a Task owns the processor instance and (for stateful services) the
 * partition's RocksDB stores. One loop step: consume a batch → validate each record against its
 * topic's schema (invalid ones go to the dead-letter topic) → processor.process → one commit of
 * outputs + changelog + consumed offsets (a Kafka transaction for exactly-once services; one RocksDB
 * write batch on the embedded log) → apply the store writes locally with a checkpoint.
 * Batches and punctuations of one task never overlap.
 */
import type { z } from 'zod';
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import type { Logger } from './logger.ts';
import { silentLogger } from './logger.ts';
import { ServiceMetrics } from './metrics.ts';
import type { Registry } from 'prom-client';
import { TaskStores } from './store.ts';
import type { KeyValueStore } from './store.ts';
import type { ConsumedBatch, GroupMember, LogRecord, OutRecord, PartitionOffset, TopicPartition, Transport } from './transport.ts';
import { topicSchemas, SCHEMA_VERSION } from '../../schemas/index.ts';
import type { DeadletterRecord } from '../../schemas/index.ts';
import { changelogSpec, changelogTopicName, kafkaTopicConfig, topicSpec } from '../../topology/index.ts';
import type { StoreSpec } from '../../topology/index.ts';

export interface InputRecord<T> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly value: T;
  readonly headers: Readonly<Record<string, string>>;
}

export interface Cancellable {
  cancel(): void;
}

export interface EmitOptions {
  readonly partition?: number;
  readonly timestamp?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ProcessorContext {
  readonly service: string;
  readonly partition: number;
  readonly logger: Logger;
  /** Current time of the runtime's clock (ms). */
  now(): number;
  /** Queues a record for a declared output topic (logical name); it is committed with the batch. */
  emit(topic: string, key: string | null, value: unknown, options?: EmitOptions): void;
  store<V>(name: string): KeyValueStore<V>;
  /** Runs `fn` every `intervalMs` of clock time, serialised with batches; its outputs commit atomically too. */
  schedule(intervalMs: number, fn: (ctx: ProcessorContext) => Promise<void> | void): Cancellable;
}

export interface Processor<In> {
  init?(ctx: ProcessorContext): Promise<void> | void;
  process(records: readonly InputRecord<In>[], ctx: ProcessorContext): Promise<void> | void;
  /** Release in-memory resources only; stores are closed by the runtime. */
  close?(ctx: ProcessorContext): Promise<void> | void;
}

export interface ServiceDefinition<In> {
  readonly name: string;
  /** Logical input topics (schemas from schemas/). */
  readonly inputs: readonly string[];
  /** Logical output topics; emits elsewhere are rejected. The dead-letter topic is always allowed. */
  readonly outputs: readonly string[];
  readonly stores?: readonly StoreSpec[];
  readonly guarantee: 'exactly-once' | 'at-least-once';
  readonly maxBatchRecords?: number;
  /** Batch mode: one processor per partition sees whole batches (required unless `concurrent`). */
  createProcessor?(partition: number): Processor<In>;
  /**
   * Concurrent mode, for I/O-bound stateless services such as the fetcher: records of a partition are
   * processed independently, up to `maxInFlight` at once; a record's outputs are sent when it
   * finishes and offsets are committed up to the oldest unfinished record (at-least-once).
   */
  /** Registers the service's own metrics (gauges read at scrape time) beside the runtime's. */
  registerMetrics?(registry: Registry): void;
  readonly concurrent?: {
    readonly maxInFlight: number;
    readonly flushIntervalMs?: number;
    createRecordProcessor(partition: number): RecordProcessor<In>;
  };
}

/** Context of one record in concurrent mode: emits belong to that record. */
export interface RecordContext {
  readonly service: string;
  readonly partition: number;
  readonly logger: Logger;
  now(): number;
  emit(topic: string, key: string | null, value: unknown, options?: EmitOptions): void;
}

export interface RecordProcessor<In> {
  processRecord(record: InputRecord<In>, ctx: RecordContext): Promise<void>;
  close?(): Promise<void> | void;
}

export interface StreamServiceOptions {
  readonly transport: Transport;
  /** Where per-partition RocksDB stores live. */
  readonly dataDir: string;
  readonly topicPrefix?: string;
  /** Defaults to `<prefix><service name>`. */
  readonly groupId?: string;
  readonly memberName?: string;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly metrics?: ServiceMetrics;
  /** Create missing topics (inputs, outputs, changelogs) at start. */
  readonly createTopics?: boolean;
  /** Partition count used when creating topics. */
  readonly partitions?: number;
  /** Attempts of a whole batch before it is retried record by record. */
  readonly batchAttempts?: number;
}

const DEADLETTER = 'deadletter';

class ServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class StreamService<In> {
  readonly metrics: ServiceMetrics;
  readonly groupId: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly prefix: string;
  private readonly tasks = new Map<number, Task<In> | ConcurrentTask<In>>();
  private member: GroupMember | undefined;
  private stopping = false;
  private readonly logicalByPhysical = new Map<string, string>();

  constructor(
    readonly definition: ServiceDefinition<In>,
    readonly options: StreamServiceOptions,
  ) {
    this.prefix = options.topicPrefix ?? '';
    this.groupId = options.groupId ?? `${this.prefix}${definition.name}`;
    this.logger = (options.logger ?? silentLogger).child({ service: definition.name });
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new ServiceMetrics(definition.name);
    definition.registerMetrics?.(this.metrics.registry);
    for (const t of [...definition.inputs, ...definition.outputs, DEADLETTER]) this.logicalByPhysical.set(this.physical(t), t);
  }

  get name(): string {
    return this.definition.name;
  }

  physical(logical: string): string {
    return this.prefix + logical;
  }

  changelogTopic(store: string): string {
    return changelogTopicName(this.groupId, store);
  }

  /** Topic definitions this service needs (for creation at start or by `meguri topics create`). */
  topicDefinitions(partitions = this.options.partitions): { name: string; partitions: number; config: Record<string, string> }[] {
    const defs = [...new Set([...this.definition.inputs, ...this.definition.outputs, DEADLETTER])].map((logical) => {
      const spec = topicSpec(logical);
      return { name: this.physical(logical), partitions: logical === DEADLETTER ? spec.partitions : (partitions ?? spec.partitions), config: kafkaTopicConfig(spec) };
    });
    const inputPartitions = partitions ?? topicSpec(this.definition.inputs[0] ?? 'links').partitions;
    for (const store of this.definition.stores ?? []) {
      if (!store.changelog) continue;
      const spec = changelogSpec(this.groupId, store.name, inputPartitions);
      defs.push({ name: spec.name, partitions: spec.partitions, config: kafkaTopicConfig(spec) });
    }
    return defs;
  }

  async start(): Promise<void> {
    if (this.options.createTopics ?? true) await this.options.transport.ensureTopics(this.topicDefinitions());
    this.member = await this.options.transport.join({
      groupId: this.groupId,
      topics: this.definition.inputs.map((t) => this.physical(t)),
      memberName: this.options.memberName ?? this.definition.name,
      maxBatchRecords: this.definition.maxBatchRecords ?? 500,
      onAssigned: (tps) => this.onAssigned(tps),
      onRevoked: (tps) => this.onRevoked(tps),
      eachBatch: (batch) => this.onBatch(batch),
    });
    this.logger.info({ groupId: this.groupId, transport: this.options.transport.kind }, 'service started');
  }

  /** Resolves once the first assignment is known and every assigned task is restored. */
  async ready(): Promise<void> {
    await this.member?.ready();
    await Promise.all([...this.tasks.values()].map((t) => t.opened));
  }

  isReady(): boolean {
    return this.member !== undefined && !this.stopping && [...this.tasks.values()].every((t) => t.isOpen);
  }

  assignedPartitions(): number[] {
    return [...this.tasks.keys()].sort((a, b) => a - b);
  }

  private async onAssigned(tps: readonly TopicPartition[]): Promise<void> {
    const partitions = [...new Set(tps.map((tp) => tp.partition))];
    await Promise.all(
      partitions.map(async (p) => {
        if (this.tasks.has(p)) return;
        const logger = this.logger.child({ partition: p });
        const task = this.definition.concurrent ? new ConcurrentTask<In>(this, p, logger) : new Task<In>(this, p, logger);
        this.tasks.set(p, task);
        await task.open();
      }),
    );
    this.metrics.assignedPartitions.set(this.tasks.size);
  }

  private async onRevoked(tps: readonly TopicPartition[]): Promise<void> {
    const partitions = [...new Set(tps.map((tp) => tp.partition))];
    await Promise.all(
      partitions.map(async (p) => {
        const task = this.tasks.get(p);
        if (!task) return;
        this.tasks.delete(p);
        await task.close();
      }),
    );
    this.metrics.assignedPartitions.set(this.tasks.size);
  }

  private async onBatch(batch: ConsumedBatch): Promise<void> {
    const task = this.tasks.get(batch.partition);
    if (!task) throw new Error(`no task for partition ${batch.partition}`);
    await task.processBatch(batch);
  }

  /** @internal used by tasks */
  get internals(): {
    transport: Transport;
    member: GroupMember | undefined;
    clock: Clock;
    logicalOf: (physical: string) => string | undefined;
    stopping: boolean;
  } {
    return {
      transport: this.options.transport,
      member: this.member,
      clock: this.clock,
      logicalOf: (p) => this.logicalByPhysical.get(p),
      stopping: this.stopping,
    };
  }

  /** Graceful stop: finish the batch in progress, commit, close stores, leave the group. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.member?.stop();
    await Promise.all([...this.tasks.values()].map((t) => t.close()));
    this.tasks.clear();
    this.logger.info('service stopped');
  }
}

function decodeValue(value: Buffer | null): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (value === null) return { ok: false, reason: 'null value (tombstone) on a data topic' };
  try {
    return { ok: true, value: JSON.parse(value.toString('utf8')) as unknown };
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
}

function isUtf8(buf: Buffer): boolean {
  return Buffer.from(buf.toString('utf8'), 'utf8').equals(buf);
}

class Task<In> implements ProcessorContext {
  readonly service: string;
  private lane: Promise<unknown> = Promise.resolve();
  private stores: TaskStores | undefined;
  private processor: Processor<In> | undefined;
  private outputs: OutRecord[] = [];
  private readonly punctuators = new Set<{ cancelled: boolean }>();
  private closing = false;
  isOpen = false;
  opened: Promise<void> = Promise.resolve();
  private readonly scope: string;
  private readonly allowedOutputs: Set<string>;

  constructor(
    private readonly owner: StreamService<In>,
    readonly partition: number,
    readonly logger: Logger,
  ) {
    this.service = owner.definition.name;
    this.scope = `${owner.groupId}.${partition}`;
    this.allowedOutputs = new Set([...owner.definition.outputs, DEADLETTER]);
  }

  now(): number {
    return this.owner.internals.clock.now();
  }

  emit(topic: string, key: string | null, value: unknown, options: EmitOptions = {}): void {
    if (!this.allowedOutputs.has(topic)) {
      throw new ServiceError('MEGURI_ERR_UNDECLARED_TOPIC', `${this.service} may not emit to "${topic}"; declared outputs: ${[...this.allowedOutputs].join(', ')}`);
    }
    this.outputs.push({
      topic: this.owner.physical(topic),
      key,
      value: Buffer.from(JSON.stringify(value), 'utf8'),
      ...(options.partition !== undefined ? { partition: options.partition } : {}),
      timestamp: options.timestamp ?? this.now(),
      ...(options.headers ? { headers: options.headers } : {}),
    });
  }

  store<V>(name: string): KeyValueStore<V> {
    if (!this.stores) throw new ServiceError('MEGURI_ERR_NO_STORE', `${this.service} declares no stores`);
    return this.stores.store<V>(name);
  }

  schedule(intervalMs: number, fn: (ctx: ProcessorContext) => Promise<void> | void): Cancellable {
    if (!(intervalMs > 0)) throw new RangeError('punctuation interval must be > 0');
    const handle = { cancelled: false };
    this.punctuators.add(handle);
    const clock = this.owner.internals.clock;
    void (async () => {
      while (!handle.cancelled && !this.closing) {
        await clock.sleep(intervalMs);
        if (handle.cancelled || this.closing) break;
        await this.enqueue(async () => {
          if (handle.cancelled || this.closing) return;
          await this.runWithRetry(async () => {
            await fn(this);
            await this.commit([]);
          }, 'punctuation');
        }).catch((err: unknown) => this.logger.error({ err }, 'punctuation failed'));
      }
    })();
    return { cancel: () => ((handle.cancelled = true), this.punctuators.delete(handle)) };
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const next = this.lane.then(job, job);
    this.lane = next.catch(() => undefined);
    return next;
  }

  open(): Promise<void> {
    this.opened = this.enqueue(async () => {
      const def = this.owner.definition;
      const { transport } = this.owner.internals;
      if (def.guarantee === 'exactly-once' && transport.fenceScope) await transport.fenceScope(this.scope);
      if (def.stores && def.stores.length > 0) {
        this.stores = await TaskStores.open(this.owner.options.dataDir, this.owner.groupId, this.partition, def.stores.map((s) => s.name));
        for (const spec of def.stores) if (spec.changelog) await this.restore(spec.name);
      }
      await this.startProcessor();
      this.isOpen = true;
    });
    return this.opened;
  }

  private async startProcessor(): Promise<void> {
    const create = this.owner.definition.createProcessor;
    if (!create) throw new Error(`${this.service} defines neither createProcessor nor concurrent`);
    this.processor = create(this.partition);
    await this.processor.init?.(this);
    // init may write to stores or emit (e.g. rebuilding indexes); commit that too.
    if (this.outputs.length > 0 || this.stores?.hasPending()) await this.commit([]);
  }

  /** Brings a store up to the end of its changelog partition. */
  private async restore(storeName: string): Promise<void> {
    const stores = this.stores!;
    const store = stores.store<unknown>(storeName);
    const { transport } = this.owner.internals;
    const topic = this.owner.changelogTopic(storeName);
    const desc = await transport.describeTopic(topic);
    const info = desc?.partitions.find((p) => p.partition === this.partition);
    if (!info) throw new Error(`changelog ${topic} has no partition ${this.partition}; were topics created with matching partition counts?`);
    let checkpoint = await store.checkpoint();
    if (checkpoint === undefined || checkpoint > info.high) {
      if (checkpoint !== undefined) this.logger.warn({ store: storeName, checkpoint, high: info.high }, 'store is ahead of its changelog; rebuilding');
      await store.wipe();
      checkpoint = info.low;
    }
    const from = Math.max(checkpoint, info.low);
    if (from >= info.high) return;
    const started = Date.now();
    let count = 0;
    for await (const chunk of transport.readPartition(topic, this.partition, from, info.high)) {
      const ops = chunk.filter((r) => r.key !== null).map((r) => store.restoreOp(r.key!, r.value));
      const last = chunk[chunk.length - 1];
      if (last) ops.push(store.checkpointOp(last.offset + 1));
      await stores.db.batch(ops);
      count += chunk.length;
    }
    this.owner.metrics.restoredRecords.inc({ store: storeName }, count);
    this.logger.info({ store: storeName, from, to: info.high, records: count, ms: Date.now() - started }, 'store restored from changelog');
  }

  processBatch(batch: ConsumedBatch): Promise<void> {
    return this.enqueue(() => this.runBatch(batch));
  }

  private toInput(record: LogRecord): { ok: true; input: InputRecord<In> } | { ok: false; code: string; reason: string } {
    return validate<In>(this.owner.internals.logicalOf(record.topic) ?? record.topic, record);
  }

  private deadletter(record: LogRecord, code: string, reason: string): void {
    this.emit(DEADLETTER, record.key, deadletterFor(this.service, record, code, reason, this.now()));
    this.owner.metrics.deadletters.inc({ topic: record.topic, code });
    this.logger.warn({ code, reason, topic: record.topic, partition: record.partition, offset: record.offset }, 'record sent to dead-letter topic');
  }

  private async runBatch(batch: ConsumedBatch): Promise<void> {
    if (this.closing || batch.records.length === 0) return;
    const started = performance.now();
    const last = batch.records[batch.records.length - 1]!;
    const offsets: PartitionOffset[] = [{ topic: batch.topic, partition: batch.partition, offset: last.offset + 1 }];
    const attempts = this.owner.options.batchAttempts ?? 3;
    let done = false;
    for (let attempt = 1; attempt <= attempts && !done; attempt++) {
      try {
        const valid: InputRecord<In>[] = [];
        for (const record of batch.records) {
          const r = this.toInput(record);
          if (r.ok) valid.push(r.input);
          else this.deadletter(record, r.code, r.reason);
        }
        if (valid.length > 0) await this.processor!.process(valid, this);
        await this.commit(offsets);
        done = true;
      } catch (err) {
        if (this.closing) return;
        this.owner.metrics.batchFailures.inc({ topic: batch.topic });
        this.logger.error({ err, attempt, offset: batch.records[0]?.offset }, 'batch failed; resetting task and retrying');
        await this.reset();
        await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** attempt)));
      }
    }
    if (!done) await this.runRecordByRecord(batch);
    this.owner.metrics.recordsIn.inc({ topic: batch.topic }, batch.records.length);
    this.owner.metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, batch.highWatermark - (last.offset + 1)));
    this.owner.metrics.processingSeconds.observe({ topic: batch.topic }, (performance.now() - started) / 1000);
  }

  /** A batch that keeps failing: isolate the record that breaks the processor and dead-letter it. */
  private async runRecordByRecord(batch: ConsumedBatch): Promise<void> {
    for (const record of batch.records) {
      const offsets = [{ topic: batch.topic, partition: batch.partition, offset: record.offset + 1 }];
      let committed = false;
      for (let attempt = 1; attempt <= 2 && !committed; attempt++) {
        try {
          const r = this.toInput(record);
          if (r.ok) await this.processor!.process([r.input], this);
          else this.deadletter(record, r.code, r.reason);
          await this.commit(offsets);
          committed = true;
        } catch (err) {
          if (this.closing) return;
          await this.reset();
          if (attempt === 2) {
            this.deadletter(record, 'MEGURI_ERR_PROCESSING', `processor failed: ${(err as Error).message}`);
            await this.commit(offsets);
            committed = true;
          }
        }
      }
    }
  }

  private async runWithRetry(fn: () => Promise<void>, what: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (this.closing || attempt >= 3) throw err;
        this.logger.warn({ err, attempt }, `${what} failed; retrying`);
        await this.reset();
      }
    }
  }

  /** Forgets uncommitted work and rebuilds the processor from committed state. */
  private async reset(): Promise<void> {
    this.outputs = [];
    this.stores?.discardPending();
    try {
      await this.processor?.close?.(this);
    } catch (err) {
      this.logger.warn({ err }, 'processor close failed during reset');
    }
    for (const p of this.punctuators) p.cancelled = true;
    this.punctuators.clear();
    await this.startProcessor();
  }

  /** Outputs + changelog + offsets in one atomic commit, then local store writes with checkpoints. */
  private async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    const member = this.owner.internals.member;
    if (!member) throw new Error('not a group member');
    const outputs = this.outputs;
    const changelogStart = outputs.length;
    const storeEnds: { name: string; index: number }[] = [];
    const storeSpecs = this.owner.definition.stores ?? [];
    if (this.stores) {
      for (const spec of storeSpecs) {
        const store = this.stores.store<unknown>(spec.name);
        if (!spec.changelog || store.pending.size === 0) continue;
        const topic = this.owner.changelogTopic(spec.name);
        for (const [key, value] of store.pending) outputs.push({ topic, key, value, partition: this.partition });
        storeEnds.push({ name: spec.name, index: outputs.length - 1 });
      }
    }
    if (outputs.length === 0 && offsets.length === 0) return;
    const t0 = performance.now();
    const meta = await member.commit({
      transactional: this.owner.definition.guarantee === 'exactly-once',
      scope: this.scope,
      outputs,
      offsets,
    });
    this.owner.metrics.commitSeconds.observe({ kind: this.owner.definition.guarantee }, (performance.now() - t0) / 1000);
    this.outputs = [];
    for (const o of outputs.slice(0, changelogStart)) this.owner.metrics.recordsOut.inc({ topic: o.topic });
    if (this.stores) {
      const ops = [];
      for (const spec of storeSpecs) ops.push(...this.stores.store<unknown>(spec.name).pendingOps());
      for (const end of storeEnds) {
        const m = meta[end.index];
        if (m && m.offset >= 0) ops.push(this.stores.store<unknown>(end.name).checkpointOp(m.offset + 1));
      }
      await this.stores.db.batch(ops);
      this.stores.committed();
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const p of this.punctuators) p.cancelled = true;
    this.punctuators.clear();
    await this.lane;
    this.isOpen = false;
    try {
      await this.processor?.close?.(this);
    } catch (err) {
      this.logger.warn({ err }, 'processor close failed');
    }
    this.outputs = [];
    if (this.stores) {
      this.stores.discardPending();
      await this.stores.close();
      this.stores = undefined;
    }
  }
}

/** Builds a dead-letter record for a consumed record that could not be accepted. */
function deadletterFor(service: string, record: LogRecord, code: string, reason: string, at: number): DeadletterRecord {
  const raw = record.value ?? Buffer.alloc(0);
  const utf8 = isUtf8(raw);
  return {
    v: SCHEMA_VERSION,
    service,
    reason,
    code,
    origin: { topic: record.topic, partition: record.partition, offset: String(record.offset), timestamp: record.timestamp },
    key: record.key,
    value: utf8 ? raw.toString('utf8') : raw.toString('base64'),
    valueEncoding: utf8 ? 'utf8' : 'base64',
    at,
  };
}

function validate<In>(logical: string, record: LogRecord): { ok: true; input: InputRecord<In> } | { ok: false; code: string; reason: string } {
  const schema = (topicSchemas as Record<string, z.ZodType>)[logical];
  const decoded = decodeValue(record.value);
  if (!decoded.ok) return { ok: false, code: 'MEGURI_ERR_DECODE', reason: decoded.reason };
  if (!schema) return { ok: true, input: { ...record, value: decoded.value as In } };
  const parsed = schema.safeParse(decoded.value);
  if (!parsed.success) {
    const reason = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    return { ok: false, code: 'MEGURI_ERR_SCHEMA', reason };
  }
  return { ok: true, input: { ...record, value: parsed.data as In } };
}

/**
 * A partition in concurrent mode. Dispatch never waits for a record to finish (only for a free
 * slot), so one slow server does not hold up the partition; finished records' outputs are flushed
 * in groups, then the offset of the oldest unfinished record is committed.
 */
class ConcurrentTask<In> {
  readonly service: string;
  isOpen = false;
  opened: Promise<void> = Promise.resolve();
  private processor: RecordProcessor<In> | undefined;
  private readonly inFlight = new Set<number>();
  private slotWaiters: (() => void)[] = [];
  private readyOutputs: OutRecord[] = [];
  /** Offset after the last dispatched record. */
  private dispatchedEnd = -1;
  private committedEnd = -1;
  private topic = '';
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closing = false;
  private readonly maxInFlight: number;

  constructor(
    private readonly owner: StreamService<In>,
    readonly partition: number,
    readonly logger: Logger,
  ) {
    this.service = owner.definition.name;
    this.maxInFlight = owner.definition.concurrent!.maxInFlight;
  }

  open(): Promise<void> {
    this.processor = this.owner.definition.concurrent!.createRecordProcessor(this.partition);
    const every = this.owner.definition.concurrent!.flushIntervalMs ?? 50;
    this.flushTimer = setInterval(() => void this.flush(), every);
    this.isOpen = true;
    return Promise.resolve();
  }

  private contextFor(buffer: OutRecord[]): RecordContext {
    const owner = this.owner;
    const allowed = new Set([...owner.definition.outputs, DEADLETTER]);
    return {
      service: this.service,
      partition: this.partition,
      logger: this.logger,
      now: () => owner.internals.clock.now(),
      emit: (topic, key, value, options = {}) => {
        if (!allowed.has(topic)) throw new ServiceError('MEGURI_ERR_UNDECLARED_TOPIC', `${this.service} may not emit to "${topic}"`);
        buffer.push({
          topic: owner.physical(topic),
          key,
          value: Buffer.from(JSON.stringify(value), 'utf8'),
          ...(options.partition !== undefined ? { partition: options.partition } : {}),
          timestamp: options.timestamp ?? owner.internals.clock.now(),
          ...(options.headers ? { headers: options.headers } : {}),
        });
      },
    };
  }

  async processBatch(batch: ConsumedBatch): Promise<void> {
    this.topic = batch.topic;
    const logical = this.owner.internals.logicalOf(batch.topic) ?? batch.topic;
    for (const record of batch.records) {
      if (this.closing) return;
      while (this.inFlight.size >= this.maxInFlight) await new Promise<void>((r) => this.slotWaiters.push(r));
      if (this.closing) return;
      this.dispatchedEnd = record.offset + 1;
      if (this.committedEnd < 0) this.committedEnd = record.offset;
      this.owner.metrics.recordsIn.inc({ topic: batch.topic });
      const v = validate<In>(logical, record);
      if (!v.ok) {
        this.readyOutputs.push(this.deadletterOut(record, v.code, v.reason));
        continue;
      }
      this.inFlight.add(record.offset);
      const buffer: OutRecord[] = [];
      void this.processor!.processRecord(v.input, this.contextFor(buffer)).then(
        () => this.finish(record.offset, buffer),
        (err: unknown) => {
          this.logger.error({ err, offset: record.offset }, 'record failed');
          this.finish(record.offset, [this.deadletterOut(record, 'MEGURI_ERR_PROCESSING', `processor failed: ${(err as Error).message}`)]);
        },
      );
    }
    this.owner.metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, batch.highWatermark - this.dispatchedEnd));
  }

  private deadletterOut(record: LogRecord, code: string, reason: string): OutRecord {
    this.owner.metrics.deadletters.inc({ topic: record.topic, code });
    this.logger.warn({ code, reason, offset: record.offset }, 'record sent to dead-letter topic');
    const dl = deadletterFor(this.service, record, code, reason, this.owner.internals.clock.now());
    return { topic: this.owner.physical(DEADLETTER), key: record.key, value: Buffer.from(JSON.stringify(dl), 'utf8') };
  }

  private finish(offset: number, outputs: OutRecord[]): void {
    this.inFlight.delete(offset);
    this.readyOutputs.push(...outputs);
    const waiter = this.slotWaiters.shift();
    waiter?.();
  }

  /** Number of records being processed now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const member = this.owner.internals.member;
      if (!member || this.dispatchedEnd < 0) return;
      let commitTo = this.dispatchedEnd;
      for (const o of this.inFlight) if (o < commitTo) commitTo = o;
      const outputs = this.readyOutputs;
      if (outputs.length === 0 && commitTo <= this.committedEnd) return;
      this.readyOutputs = [];
      try {
        await member.commit({
          transactional: false,
          outputs,
          offsets: commitTo > this.committedEnd ? [{ topic: this.topic, partition: this.partition, offset: commitTo }] : [],
        });
        for (const o of outputs) this.owner.metrics.recordsOut.inc({ topic: o.topic });
        this.committedEnd = Math.max(this.committedEnd, commitTo);
      } catch (err) {
        // Keep the outputs for the next flush; offsets are only committed after their outputs.
        this.readyOutputs = [...outputs, ...this.readyOutputs];
        if (!this.closing) this.logger.warn({ err }, 'flush failed; will retry');
        else throw err;
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const w of this.slotWaiters.splice(0)) w();
    // Let records in flight finish (they are bounded by the processor's own time limits).
    const deadline = Date.now() + 60_000;
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flush().catch((err: unknown) => this.logger.warn({ err }, 'final flush failed; records will be re-processed'));
    this.isOpen = false;
    await this.processor?.close?.();
  }
}
