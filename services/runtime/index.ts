/**
 * The stream runtime's public surface. Services import from here only, never from internals.
 */
import { join } from 'node:path';
import type { Transport } from './transport.ts';
import type { Logger } from './logger.ts';
import type { Clock } from './clock.ts';
import type { KafkaTransport, KafkaTransportOptions } from './kafka/kafka-transport.ts';
import { EmbeddedTransport } from './embedded/index.ts';

export type * from './transport.ts';
export type { KeyValueDb } from './rocksdb.ts';
export { StreamService } from './stream-service.ts';
export type { StreamServiceOptions } from './stream-service.ts';
export { TestDriver } from './test-driver.ts';
export type { TestDriverOptions, TestInput, TestOutput, TestStore, TestFailure } from './test-driver.ts';
export type { DeadLetterValue } from './deadletter.ts';
export { EncodedValue } from './processor.ts';
export type { ServiceDefinition, Processor, ProcessorContext, InputRecord, Cancellable, EmitOptions, RecordProcessor, RecordContext, Emitter, TopicRecordMap, StoreDeclaration } from './processor.ts';
export type { TopicCatalog, TopicConfigDefinition, ValueCodec } from './catalog.ts';
export { DEFAULT_MAX_MESSAGE_BYTES } from './catalog.ts';
export { MeguriError, TaskMigratedError, TransientError, RecordTooLargeError, IllegalTaskStateError, FatalServiceError, ServiceDefinitionError, classifyError, isMeguriError } from './errors.ts';
export type { Recovery, ErrorStage } from './errors.ts';
export type { TaskState } from './task-state.ts';
export type { KeyValueStore, RangeQuery, StoreCodec, StoreSpec } from './store.ts';
export { prefixEnd, NOT_IN_MEMORY } from './store.ts';
export { ServiceMetrics } from './metrics.ts';
export { createLogger, silentLogger } from './logger.ts';
export type { Logger } from './logger.ts';
export { systemClock, ScaledClock, ManualClock, clockDuration } from './clock.ts';
export type { Clock } from './clock.ts';
export { loadRuntimeConfig, describeConfig, ConfigError } from './config.ts';
export type { RuntimeConfig } from './config.ts';
export { startHealthServer, onShutdownSignal } from './host.ts';
export { partitionForKey } from './partitioner.ts';
export { EmbeddedTransport };
export type { KafkaTransport, KafkaTransportOptions };
export { ReplicationError, replicationForCluster, replicationProblem } from './kafka/replication.ts';
export type { TopicReplication } from './kafka/replication.ts';

export interface TransportConfig {
  readonly transport: 'embedded' | 'kafka';
  readonly kafkaBrokers: readonly string[];
  /** The embedded log lives in `<dataDir>/log`. */
  readonly dataDir: string;
  readonly clientId?: string;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Kafka: replication of the topics this transport creates (default 1 and 1). */
  readonly replication?: KafkaTransportOptions['replication'];
  /** Embedded log: fsync every write batch (default off). */
  readonly fsync?: boolean;
  /** Kafka: gzip level of the producers (default 1; kafka/gzip-codec.ts). */
  readonly gzipLevel?: number;
}

/**
 * The Kafka transport's class, loaded on first use: kafkajs is some 150 modules, and a crawl on the
 * embedded log (the default) never needs them.
 */
export async function loadKafkaTransport(): Promise<typeof KafkaTransport> {
  return (await import('./kafka/kafka-transport.ts')).KafkaTransport;
}

export async function createTransport(config: TransportConfig): Promise<Transport> {
  if (config.transport === 'kafka') {
    const KafkaTransport = await loadKafkaTransport();
    return new KafkaTransport({
      brokers: config.kafkaBrokers,
      ...(config.clientId ? { clientId: config.clientId } : {}),
      ...(config.logger ? { logger: config.logger } : {}),
      ...(config.replication ? { replication: config.replication } : {}),
      ...(config.gzipLevel !== undefined ? { gzipLevel: config.gzipLevel } : {}),
    });
  }
  return EmbeddedTransport.open({
    dir: config.dataDir,
    ...(config.logger ? { logger: config.logger } : {}),
    ...(config.clock ? { clock: config.clock } : {}),
    ...(config.fsync ? { sync: true } : {}),
  });
}

export function embeddedLogDir(dataDir: string): string {
  return join(dataDir, 'log');
}
