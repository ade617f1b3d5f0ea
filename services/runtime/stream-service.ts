/**
 * The stream runtime: runs a service's processor over its input partitions on any Transport.
 *
 * The service joins its consumer group and keeps one task per assigned partition (task.ts for batch
 * processors, concurrent-task.ts for concurrent ones). Tasks open off the group's critical path: an
 * assignment starts the open (fence, restore, init) and returns; batches of a partition wait for its
 * task to run. A task whose open fails is closed and replaced by a new one after a back-off, so
 * nothing ever runs over a store that was not restored. A task found migrated is closed dirty and
 * the member rejoins its group before that partition is opened again. A fatal error stops the
 * service: one log line, `failure` is set, /healthz turns 503 and the process exits non-zero.
 */
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import type { Logger } from './logger.ts';
import { silentLogger } from './logger.ts';
import { ServiceMetrics } from './metrics.ts';
import type { TopicCatalog } from './catalog.ts';
import { DEFAULT_MAX_MESSAGE_BYTES } from './catalog.ts';
import type { ServiceDefinition, TopicRecordMap } from './processor.ts';
import type { ConsumedBatch, GroupMember, TopicPartition, Transport } from './transport.ts';
import { OutputEmitter } from './emitter.ts';
import { DEADLETTER_TOPIC } from './deadletter.ts';
import { Task } from './task.ts';
import { TaskStores } from './task-stores.ts';
import { ConcurrentTask } from './concurrent-task.ts';
import type { TaskHost } from './task-host.ts';
import { backoffMs, sleep } from './task-host.ts';
import { FatalServiceError, TaskMigratedError, classifyError, describeError, isMeguriError } from './errors.ts';

export interface StreamServiceOptions {
  readonly transport: Transport;
  /** Schemas and topic settings of the topics the service reads and writes. */
  readonly catalog: TopicCatalog;
  /** Where per-partition RocksDB stores live. */
  readonly dataDir: string;
  readonly topicPrefix?: string;
  /** Defaults to `<prefix><service name>`. */
  readonly groupId?: string;
  readonly memberName?: string;
  /** Join the group as a static member under this id (Kafka; KIP-345). */
  readonly groupInstanceId?: string;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly metrics?: ServiceMetrics;
  /** Create missing topics (inputs, outputs, changelogs) at start. */
  readonly createTopics?: boolean;
  /** Partition count used when creating topics. */
  readonly partitions?: number;
  /** Attempts of a whole batch whose processor keeps failing before it is retried record by record. */
  readonly batchAttempts?: number;
  /** Concurrent mode: offsets committed at most this often (else the definition's, else after every flush). */
  readonly commitIntervalMs?: number;
  /** Exactly-once services: a partition's batches start at most this often (RuntimeConfig.transactionIntervalMs). */
  readonly transactionIntervalMs?: number;
  /** Called once when the service stops on a fatal error (the CLI exits non-zero). */
  readonly onFatal?: (err: Error) => void;
}

type AnyTask<In> = Task<In> | ConcurrentTask<In>;

/** How long a batch waits for its partition's task to run before it is handed back for later. */
const TASK_WAIT_MS = 1000;

export class StreamService<In, R extends TopicRecordMap = TopicRecordMap> {
  readonly metrics: ServiceMetrics;
  readonly groupId: string;
  readonly definition: ServiceDefinition<In>;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly prefix: string;
  private readonly tasks = new Map<number, AnyTask<In>>();
  /** Partitions the group gave this member (tasks may be opening or being replaced). */
  private readonly assigned = new Set<number>();
  private member: GroupMember | undefined;
  private stopping = false;
  private failure: Error | undefined;
  private emitter: OutputEmitter | undefined;
  private readonly logicalByPhysical = new Map<string, string>();
  private readonly host: TaskHost<In>;

  constructor(
    definition: ServiceDefinition<In, R>,
    readonly options: StreamServiceOptions,
  ) {
    this.definition = definition as unknown as ServiceDefinition<In>;
    this.prefix = options.topicPrefix ?? '';
    this.groupId = options.groupId ?? `${this.prefix}${definition.name}`;
    this.logger = (options.logger ?? silentLogger).child({ service: definition.name });
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new ServiceMetrics(definition.name);
    definition.registerMetrics?.(this.metrics.registry);
    for (const t of [...definition.inputs, ...definition.outputs, DEADLETTER_TOPIC]) this.logicalByPhysical.set(this.physical(t), t);
    const emitterOf = (): OutputEmitter => {
      if (!this.emitter) throw new Error('service not started');
      return this.emitter;
    };
    this.host = {
      definition: this.definition,
      catalog: options.catalog,
      groupId: this.groupId,
      dataDir: options.dataDir,
      transport: options.transport,
      clock: this.clock,
      metrics: this.metrics,
      get emitter(): OutputEmitter {
        return emitterOf();
      },
      batchAttempts: options.batchAttempts ?? 3,
      ...(options.commitIntervalMs !== undefined ? { commitIntervalMs: options.commitIntervalMs } : {}),
      member: () => this.member,
      logicalOf: (p) => this.logicalByPhysical.get(p),
      changelogTopic: (s) => this.changelogTopic(s),
      taskMigrated: (p, err) => this.taskMigrated(p, err),
      fatal: (err) => this.fatal(err),
    };
  }

  get name(): string {
    return this.definition.name;
  }

  physical(logical: string): string {
    return this.prefix + logical;
  }

  changelogTopic(store: string): string {
    return this.options.catalog.changelog(this.groupId, store, 1).name;
  }

  /** Topic definitions this service needs (for creation at start or by `meguri topics create`). */
  topicDefinitions(partitions = this.options.partitions): { name: string; partitions: number; config: Record<string, string> }[] {
    const catalog = this.options.catalog;
    const defs = [...new Set([...this.definition.inputs, ...this.definition.outputs, DEADLETTER_TOPIC])].map((logical) => {
      const spec = catalog.topic(logical);
      return { name: this.physical(logical), partitions: logical === DEADLETTER_TOPIC ? spec.partitions : (partitions ?? spec.partitions), config: spec.config };
    });
    const inputPartitions = partitions ?? catalog.topic(this.definition.inputs[0] ?? DEADLETTER_TOPIC).partitions;
    for (const store of this.definition.stores ?? []) {
      if (!store.changelog) continue;
      const spec = catalog.changelog(this.groupId, store.name, inputPartitions);
      defs.push({ name: spec.name, partitions: spec.partitions, config: spec.config });
    }
    return defs;
  }

  /** Maximum record size of each output topic, read from the topic (the catalog's value if it cannot be read). */
  private async outputLimits(): Promise<Map<string, number>> {
    const limits = new Map<string, number>();
    for (const logical of new Set([...this.definition.outputs, DEADLETTER_TOPIC])) {
      const fromTopic = await this.options.transport.maxMessageBytes?.(this.physical(logical));
      const declared = Number(this.options.catalog.topic(logical).config['max.message.bytes'] ?? NaN);
      limits.set(logical, fromTopic ?? (Number.isFinite(declared) ? declared : DEFAULT_MAX_MESSAGE_BYTES));
    }
    return limits;
  }

  async start(): Promise<void> {
    if (this.options.createTopics ?? true) await this.options.transport.ensureTopics(this.topicDefinitions());
    const maxBytes = await this.outputLimits();
    this.emitter = new OutputEmitter({
      service: this.definition.name,
      outputs: this.definition.outputs,
      catalog: this.options.catalog,
      physical: (l) => this.physical(l),
      maxBytes,
      now: () => this.clock.now(),
      logger: this.logger,
      metrics: this.metrics,
    });
    this.member = await this.options.transport.join({
      groupId: this.groupId,
      topics: this.definition.inputs.map((t) => this.physical(t)),
      memberName: this.options.memberName ?? this.definition.name,
      ...(this.options.groupInstanceId !== undefined ? { groupInstanceId: this.options.groupInstanceId } : {}),
      maxBatchRecords: this.definition.maxBatchRecords ?? 500,
      ...(this.definition.guarantee === 'exactly-once' && this.options.transactionIntervalMs ? { batchIntervalMs: this.options.transactionIntervalMs } : {}),
      warmPartitions: () => ((this.definition.stores ?? []).length > 0 ? TaskStores.localPartitions(this.options.dataDir, this.groupId) : []),
      onAssigned: (tps) => this.onAssigned(tps),
      onRevoked: (tps) => this.onRevoked(tps, 'clean'),
      onLost: (tps) => this.onRevoked(tps, 'dirty'),
      onFatal: (err) => this.fatal(err),
      eachBatch: (batch) => this.onBatch(batch),
    });
    this.logger.info({ groupId: this.groupId, transport: this.options.transport.kind }, 'service started');
  }

  /** Resolves once the first assignment is known and every assigned task is running. */
  async ready(): Promise<void> {
    await this.member?.ready();
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.isReady()) return;
      await sleep(50);
    }
  }

  isReady(): boolean {
    if (this.member === undefined || this.stopping || this.failure) return false;
    for (const p of this.assigned) if (!this.tasks.get(p)?.isRunning) return false;
    return true;
  }

  /** False once the service stopped on a fatal error (what /healthz reports). */
  isAlive(): boolean {
    return this.failure === undefined;
  }

  /** The fatal error that stopped the service, if any. */
  get failed(): Error | undefined {
    return this.failure;
  }

  assignedPartitions(): number[] {
    return [...this.assigned].sort((a, b) => a - b);
  }

  /** State of each partition's task (created, restoring, running, suspended, closed). */
  taskStates(): Record<number, string> {
    const out: Record<number, string> = {};
    for (const p of this.assigned) out[p] = this.tasks.get(p)?.taskState ?? 'opening';
    return out;
  }

  private async onAssigned(tps: readonly TopicPartition[]): Promise<void> {
    for (const p of new Set(tps.map((tp) => tp.partition))) {
      this.assigned.add(p);
      if (!this.tasks.has(p)) this.startTask(p, 0);
    }
    this.metrics.assignedPartitions.set(this.assigned.size);
  }

  /** Creates and opens the task of `p`; a failed open closes it and tries again with a new task. */
  private startTask(p: number, attempt: number): void {
    if (this.stopping || this.failure || !this.assigned.has(p) || this.tasks.has(p)) return;
    const logger = this.logger.child({ partition: p });
    const task: AnyTask<In> = this.definition.concurrent ? new ConcurrentTask<In>(this.host, p, logger) : new Task<In>(this.host, p, logger);
    this.tasks.set(p, task);
    task.open().then(
      () => {
        if (attempt > 0) logger.info({ attempts: attempt + 1 }, 'task opened after retries');
      },
      (err: unknown) => {
        if (this.tasks.get(p) === task) this.tasks.delete(p);
        if (!this.assigned.has(p) || this.stopping) return;
        const recovery = classifyError(err, 'open');
        if (recovery === 'fatal') return this.fatal(err);
        logger.warn({ err: describeError(err), attempt: attempt + 1, recovery }, 'opening the task failed; it is closed and will be opened again');
        void sleep(backoffMs(attempt + 1)).then(() => this.startTask(p, attempt + 1));
      },
    );
  }

  private async onRevoked(tps: readonly TopicPartition[], how: 'clean' | 'dirty'): Promise<void> {
    await Promise.all(
      [...new Set(tps.map((tp) => tp.partition))].map(async (p) => {
        this.assigned.delete(p);
        const task = this.tasks.get(p);
        if (!task) return;
        this.tasks.delete(p);
        // A task still restoring stops at its next changelog chunk; one running finishes its batch.
        if (how === 'clean') await task.closeClean();
        else await task.closeDirty();
      }),
    );
    this.metrics.assignedPartitions.set(this.assigned.size);
  }

  private async onBatch(batch: ConsumedBatch): Promise<void> {
    const p = batch.partition;
    // On Kafka a batch must not hold the member for long (it rejoins between batches); in one process
    // a batch may simply wait for its task's restore to end.
    const patient = this.options.transport.kind === 'embedded';
    const deadline = Date.now() + TASK_WAIT_MS;
    let task = this.tasks.get(p);
    while (!task?.isRunning) {
      const opening = task !== undefined && (task.taskState === 'created' || task.taskState === 'restoring');
      if (this.stopping || this.failure || !this.assigned.has(p) || (Date.now() >= deadline && !(patient && opening))) {
        // Not processed: the transport delivers these records again (from the committed offset).
        throw new TaskMigratedError(`partition ${p} has no running task (${task?.taskState ?? 'none'}); batch handed back`);
      }
      await sleep(25);
      task = this.tasks.get(p);
    }
    try {
      await task.processBatch(batch);
    } catch (err) {
      const recovery = classifyError(err, 'commit');
      if (recovery === 'fatal') this.fatal(err);
      else if (recovery === 'migrated') this.taskMigrated(p, err);
      throw err;
    }
  }

  /**
   * A task is no longer the owner (or cannot prove it): close it dirty — its uncommitted state is
   * dropped — and rejoin the group; the partition is opened again (fenced, restored) only when the
   * group assigns it again. On a transport without group generations (the embedded log, one
   * process) the task is simply reopened.
   */
  private taskMigrated(p: number, err: unknown): void {
    const task = this.tasks.get(p);
    if (!task || this.stopping) return;
    this.tasks.delete(p);
    this.logger.warn({ partition: p, err: describeError(err) }, 'task migrated: closing it dirty, restoring from the changelog after the group is rejoined');
    void task
      .closeDirty()
      .catch((e: unknown) => this.logger.warn({ err: e }, 'dirty close failed'))
      .then(() => {
        if (this.member?.rejoin) this.member.rejoin(`task ${p} migrated: ${describeError(err)}`);
        else void sleep(backoffMs(1)).then(() => this.startTask(p, 1));
      });
  }

  /** Stops the service for good: one clear log line, /healthz 503, `onFatal` (the CLI exits non-zero). */
  fatal(err: unknown): void {
    if (this.failure) return;
    const error = err instanceof Error ? err : new FatalServiceError(String(err));
    this.failure = error;
    const code = isMeguriError(error) ? error.code : ((error as { code?: unknown; type?: unknown }).type ?? (error as { code?: unknown }).code ?? 'MEGURI_ERR_FATAL');
    this.logger.fatal({ err: error, code }, `${this.name} stopped on a fatal error: ${describeError(error)}`);
    void this.stop()
      .catch(() => undefined)
      .then(() => this.options.onFatal?.(error));
  }

  /** Graceful stop: finish the batch in progress, commit, close stores, leave the group. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.member?.stop();
    await Promise.all([...this.tasks.values()].map((t) => (this.failure ? t.closeDirty() : t.closeClean()).catch((err: unknown) => this.logger.warn({ err }, 'task close failed'))));
    this.tasks.clear();
    this.assigned.clear();
    this.logger.info('service stopped');
  }
}
