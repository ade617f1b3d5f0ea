/** Prometheus metrics of a service (prom-client), one registry per service instance. */
import client from 'prom-client';

export class ServiceMetrics {
  readonly registry = new client.Registry();
  readonly recordsIn: client.Counter<'topic'>;
  readonly recordsOut: client.Counter<'topic'>;
  readonly deadletters: client.Counter<'topic' | 'code'>;
  readonly processingSeconds: client.Histogram<'topic'>;
  readonly commitSeconds: client.Histogram<'kind'>;
  readonly consumerLag: client.Gauge<'topic' | 'partition'>;
  readonly assignedPartitions: client.Gauge;
  readonly batchFailures: client.Counter<'topic'>;
  readonly restoredRecords: client.Counter<'store'>;
  readonly truncatedOutputs: client.Counter<'topic'>;
  readonly taskErrors: client.Counter<'recovery' | 'stage'>;
  readonly taskStates: client.Counter<'state'>;

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    client.collectDefaultMetrics({ register: this.registry, prefix: 'meguri_' });
    const registers = [this.registry];
    this.recordsIn = new client.Counter({ name: 'meguri_records_in_total', help: 'Records consumed', labelNames: ['topic'], registers });
    this.recordsOut = new client.Counter({ name: 'meguri_records_out_total', help: 'Records produced (changelog included)', labelNames: ['topic'], registers });
    this.deadletters = new client.Counter({ name: 'meguri_deadletter_total', help: 'Records sent to the dead-letter topic', labelNames: ['topic', 'code'], registers });
    this.processingSeconds = new client.Histogram({
      name: 'meguri_batch_processing_seconds',
      help: 'Time to process and commit one consumed batch',
      labelNames: ['topic'],
      buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.commitSeconds = new client.Histogram({
      name: 'meguri_commit_seconds',
      help: 'Time of the atomic commit (outputs + changelog + offsets)',
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.consumerLag = new client.Gauge({ name: 'meguri_consumer_lag', help: 'High watermark minus committed position', labelNames: ['topic', 'partition'], registers });
    this.assignedPartitions = new client.Gauge({ name: 'meguri_assigned_partitions', help: 'Input partitions owned by this instance', registers });
    this.batchFailures = new client.Counter({ name: 'meguri_batch_failures_total', help: 'Batches that failed and were retried', labelNames: ['topic'], registers });
    this.truncatedOutputs = new client.Counter({ name: 'meguri_outputs_shrunk_total', help: 'Outputs cut to fit their topic\'s max.message.bytes', labelNames: ['topic'], registers });
    this.taskErrors = new client.Counter({
      name: 'meguri_task_errors_total',
      help: 'Task errors by recovery (migrated, bad-record, transient, fatal) and stage (process, commit, open)',
      labelNames: ['recovery', 'stage'],
      registers,
    });
    this.taskStates = new client.Counter({ name: 'meguri_task_transitions_total', help: 'Task lifecycle transitions by the state entered', labelNames: ['state'], registers });
    this.restoredRecords = new client.Counter({ name: 'meguri_store_restored_records_total', help: 'Changelog records replayed into stores', labelNames: ['store'], registers });
  }
}
