/**
 * What a task needs from the service that owns it (kept narrow so tasks never reach into the
 * service's internals).
 */
import type { Clock } from './clock.ts';
import type { ServiceMetrics } from './metrics.ts';
import type { TopicCatalog } from './catalog.ts';
import type { OutputEmitter } from './emitter.ts';
import type { ServiceDefinition } from './processor.ts';
import type { GroupMember, Transport } from './transport.ts';

export interface TaskHost<In> {
  readonly definition: ServiceDefinition<In>;
  readonly catalog: TopicCatalog;
  readonly groupId: string;
  readonly dataDir: string;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly metrics: ServiceMetrics;
  readonly emitter: OutputEmitter;
  /** Attempts of a whole batch whose processor keeps failing before it is retried record by record. */
  readonly batchAttempts: number;
  /** Concurrent mode: the operator's offset commit interval, which wins over the definition's. */
  readonly commitIntervalMs?: number;
  member(): GroupMember | undefined;
  logicalOf(physical: string): string | undefined;
  changelogTopic(store: string): string;
  /** A task found it is no longer the owner (fenced, generation lost): close it dirty and rejoin. */
  taskMigrated(partition: number, err: unknown): void;
  /** Something no retry can fix: stop the service. */
  fatal(err: unknown): void;
}

/** Back-off before retry `attempt` (1-based): 100 ms doubling to 10 s. */
export function backoffMs(attempt: number): number {
  return Math.min(10_000, 100 * 2 ** Math.min(Math.max(0, attempt - 1), 10));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
