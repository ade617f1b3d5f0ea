/**
 * What a service gives the runtime (a ServiceDefinition with a Processor or a RecordProcessor) and
 * what the runtime gives its logic (a context: emit, store, schedule, now). Logic never sees a
 * consumer, a producer or a task.
 *
 * `R` maps each logical output topic to the type of its records, so `ctx.emit('frontier', key, v)`
 * checks `v` against the frontier record type (services pass the schema package's map).
 */
import type { Registry } from 'prom-client';
import type { Logger } from './logger.ts';
import type { KeyValueStore, StoreCodec } from './store.ts';

/** Records by logical topic name. */
export type TopicRecordMap = Record<string, unknown>;

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

/**
 * A value already encoded with its topic's codec (JSON for most topics), emitted as these bytes.
 * For values made off the event loop: a worker thread encodes, and the emitter does not decode and
 * encode again. The bytes must be what the topic's codec would make of a valid record; consumers
 * validate them like any other.
 */
export class EncodedValue {
  constructor(readonly bytes: Buffer) {}
}

/** The one way to produce a record: typed by topic, checked against the declared outputs. */
export interface Emitter<R extends TopicRecordMap = TopicRecordMap> {
  emit<T extends keyof R & string>(topic: T, key: string | null, value: R[T] | EncodedValue, options?: EmitOptions): void;
}

export interface ProcessorContext<R extends TopicRecordMap = TopicRecordMap> extends Emitter<R> {
  readonly service: string;
  readonly partition: number;
  readonly logger: Logger;
  /** Current time of the runtime's clock (ms). */
  now(): number;
  store<V>(name: string): KeyValueStore<V>;
  /** Runs `fn` every `intervalMs` of clock time, serialised with batches; its outputs commit atomically too. */
  schedule(intervalMs: number, fn: (ctx: ProcessorContext<R>) => Promise<void> | void): Cancellable;
}

export interface Processor<In, R extends TopicRecordMap = TopicRecordMap> {
  init?(ctx: ProcessorContext<R>): Promise<void> | void;
  process(records: readonly InputRecord<In>[], ctx: ProcessorContext<R>): Promise<void> | void;
  /** Release in-memory resources only; stores are closed by the runtime. */
  close?(ctx: ProcessorContext<R>): Promise<void> | void;
}

/** Context of one record in concurrent mode: emits belong to that record. */
export interface RecordContext<R extends TopicRecordMap = TopicRecordMap> extends Emitter<R> {
  readonly service: string;
  readonly partition: number;
  readonly logger: Logger;
  now(): number;
}

export interface RecordProcessor<In, R extends TopicRecordMap = TopicRecordMap> {
  processRecord(record: InputRecord<In>, ctx: RecordContext<R>): Promise<void>;
  close?(): Promise<void> | void;
}

export interface StoreDeclaration {
  readonly name: string;
  /** Changelog on unless disabled: without it a moved partition loses its state. */
  readonly changelog: boolean;
  readonly description?: string;
  /** How its values are kept on disk, when not as they are (StoreCodec). */
  readonly codec?: StoreCodec<unknown>;
}

export interface ServiceDefinition<In, R extends TopicRecordMap = TopicRecordMap> {
  readonly name: string;
  /** Logical input topics (validated with the catalog's schemas). */
  readonly inputs: readonly string[];
  /** Logical output topics; emits elsewhere are rejected. The dead-letter topic is always allowed. */
  readonly outputs: readonly string[];
  readonly stores?: readonly StoreDeclaration[];
  readonly guarantee: 'exactly-once' | 'at-least-once';
  readonly maxBatchRecords?: number;
  /** Batch mode: one processor per partition sees whole batches (required unless `concurrent`). */
  createProcessor?(partition: number): Processor<In, R>;
  /** Registers the service's own metrics (gauges read at scrape time) beside the runtime's. */
  registerMetrics?(registry: Registry): void;
  /**
   * Concurrent mode, for I/O-bound stateless services such as the fetcher: records of a partition are
   * processed independently, up to `maxInFlight` at once; a record's outputs are sent when it
   * finishes and offsets are committed up to the oldest unfinished record (at-least-once).
   */
  readonly concurrent?: {
    readonly maxInFlight: number;
    readonly flushIntervalMs?: number;
    /**
     * Offsets are committed at most this often; outputs are sent at every flush. Default 0 (after
     * every flush): a crash makes the partition's next owner process again at most this much more.
     */
    readonly commitIntervalMs?: number;
    /** Records finished but not yet sent, at most; consumption pauses while full. Default 2,000. */
    readonly maxPendingRecords?: number;
    /** Bytes finished but not yet sent, at most; consumption pauses while full. Default 64 MiB. */
    readonly maxPendingBytes?: number;
    createRecordProcessor(partition: number): RecordProcessor<In, R>;
  };
}
