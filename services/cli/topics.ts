/** `meguri topics create|describe`: the topology applied to and compared with a Kafka cluster. */
import { topics as topologyTopics, services, kafkaTopicConfig, changelogSpec, CLUSTER_REPLICATION } from '../../topology/index.ts';
import type { Replication, TopicSpec } from '../../topology/index.ts';
import { loadKafkaTransport, loadRuntimeConfig, replicationProblem, ReplicationError } from '../runtime/index.ts';
import type { RuntimeConfig } from '../runtime/index.ts';

function brokers(flag: string | undefined): string[] {
  const config = loadRuntimeConfig({ transport: 'kafka', ...(flag ? { kafkaBrokers: flag } : {}) });
  return config.kafkaBrokers;
}

export interface ReplicationFlags {
  replicationFactor?: number;
  minInsyncReplicas?: number;
}

/**
 * Replication from flags, then MEGURI_REPLICATION_FACTOR / MEGURI_MIN_INSYNC_REPLICAS, then
 * `defaults`. A factor given alone keeps min.insync.replicas at most one below it, so
 * `--replication-factor 1` works by itself. `explicit` tells whether anything was given.
 */
export function chooseReplication(
  flags: ReplicationFlags,
  config: Pick<RuntimeConfig, 'replicationFactor' | 'minInsyncReplicas'>,
  defaults: Replication = CLUSTER_REPLICATION,
): { replication: Replication; explicit: boolean } {
  const factor = flags.replicationFactor ?? config.replicationFactor;
  const minIsr = flags.minInsyncReplicas ?? config.minInsyncReplicas;
  const replication = {
    factor: factor ?? defaults.factor,
    minInsyncReplicas: minIsr ?? (factor !== undefined ? Math.max(1, Math.min(defaults.minInsyncReplicas, factor - 1)) : defaults.minInsyncReplicas),
  };
  const problem = replicationProblem(replication);
  if (problem) throw new ReplicationError(problem);
  return { replication, explicit: factor !== undefined || minIsr !== undefined };
}

/** Every topic of the topology with physical names: data topics plus the scheduler's changelogs. */
export function plannedTopics(prefix: string, partitions: number): (TopicSpec & { physical: string; partitionCount: number })[] {
  const out: (TopicSpec & { physical: string; partitionCount: number })[] = topologyTopics.map((t) => ({
    ...t,
    physical: prefix + t.name,
    partitionCount: t.name === 'deadletter' ? t.partitions : partitions,
  }));
  for (const svc of services) {
    for (const store of svc.stores) {
      if (!store.changelog) continue;
      const spec = changelogSpec(`${prefix}${svc.name}`, store.name, partitions);
      out.push({ ...spec, physical: spec.name, partitionCount: partitions });
    }
  }
  return out;
}

/**
 * Creates the missing topics with the cluster's replication (default 3 copies, 2 in sync: a
 * single-broker cluster such as deploy/local needs `--replication-factor 1`, which its `kafka.sh env`
 * sets through MEGURI_REPLICATION_FACTOR). Existing topics are left as they are.
 */
export async function topicsCreate(flags: { kafka?: string; topicPrefix: string; partitions: number } & ReplicationFlags): Promise<void> {
  const config = loadRuntimeConfig({ transport: 'kafka', ...(flags.kafka ? { kafkaBrokers: flags.kafka } : {}) });
  const { replication } = chooseReplication(flags, config);
  const transport = new (await loadKafkaTransport())({ brokers: config.kafkaBrokers, replication });
  try {
    const planned = plannedTopics(flags.topicPrefix, flags.partitions);
    const before = new Set(await transport.listTopics());
    await transport.ensureTopics(planned.map((t) => ({ name: t.physical, partitions: t.partitionCount, config: kafkaTopicConfig(t, replication) })));
    for (const t of planned) {
      const settings = before.has(t.physical) ? '' : `  replication=${replication.factor}  min.insync.replicas=${replication.minInsyncReplicas}`;
      console.log(`${before.has(t.physical) ? 'exists ' : 'created'}  ${t.physical}  partitions=${t.partitionCount}  cleanup=${t.cleanupPolicy}${settings}`);
    }
  } finally {
    await transport.close();
  }
}

export async function topicsDescribe(flags: { kafka?: string; topicPrefix: string; json?: boolean }): Promise<void> {
  const planned = plannedTopics(flags.topicPrefix, 8);
  const readers = (name: string): string[] => services.filter((s) => s.reads.includes(name)).map((s) => s.name);
  const writers = (name: string): string[] => services.filter((s) => s.writes.includes(name)).map((s) => s.name);
  const live = new Map<string, { partitions: { partition: number; low: number; high: number }[]; config: Record<string, string> }>();
  if (flags.kafka || process.env.MEGURI_KAFKA_BROKERS || process.env.KAFKA_BROKERS) {
    const transport = new (await loadKafkaTransport())({ brokers: brokers(flags.kafka) });
    try {
      for (const t of planned) {
        const d = await transport.describeTopic(t.physical);
        if (d) live.set(t.physical, { partitions: [...d.partitions], config: { ...d.config } });
      }
    } finally {
      await transport.close();
    }
  }
  const rows = planned.map((t) => ({
    topic: t.physical,
    key: t.key,
    schema: t.schema,
    cleanupPolicy: t.cleanupPolicy,
    retentionMs: t.retentionMs,
    writers: t.schema === 'changelog' ? ['scheduler'] : writers(t.name),
    readers: t.schema === 'changelog' ? ['scheduler (restore)'] : readers(t.name),
    description: t.description,
    live: live.get(t.physical) ?? null,
  }));
  if (flags.json) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  for (const r of rows) {
    console.log(`${r.topic}`);
    console.log(`  ${r.description}`);
    console.log(`  key: ${r.key}; schema: ${r.schema}; cleanup: ${r.cleanupPolicy}; retention: ${r.retentionMs < 0 ? 'forever' : `${Math.round(r.retentionMs / 3_600_000)} h`}`);
    console.log(`  writers: ${r.writers.join(', ') || '-'}; readers: ${r.readers.join(', ') || '-'}`);
    if (r.live) {
      const total = r.live.partitions.reduce((s, p) => s + (p.high - p.low), 0);
      console.log(`  on Kafka: ${r.live.partitions.length} partitions, ${total} records retained`);
    } else if (live.size > 0) console.log('  on Kafka: missing (run `meguri topics create`)');
  }
}
