/**
 * Admin calls of the Kafka transport: topics (create with the cluster's replication, describe,
 * list), their partition counts and codecs, and group offsets set or read from outside a group.
 */
// kafkajs with the read_committed fix: never import 'kafkajs' itself for runtime values.
import { kafkajs } from './kafkajs.ts';
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import { replicationForCluster } from './replication.ts';
import type { TopicReplication } from './replication.ts';
import { retryWhileRetriable } from './client.ts';
import type { PartitionOffset, TopicDefinition, TopicDescription } from '../transport.ts';

export class KafkaAdmin {
  private adminClient: Admin | undefined;
  private adminConnecting: Promise<Admin> | undefined;
  private readonly partitionCounts = new Map<string, number>();
  private readonly compressions = new Map<string, kafkajs.CompressionTypes>();

  constructor(
    private readonly kafka: Kafka,
    private readonly logger: Logger,
    private readonly replication: (TopicReplication & { readonly capToBrokers?: boolean }) | undefined,
  ) {}

  admin(): Promise<Admin> {
    if (this.adminClient) return Promise.resolve(this.adminClient);
    this.adminConnecting ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      this.adminClient = admin;
      return admin;
    })();
    return this.adminConnecting;
  }

  /** The topic's effective max.message.bytes (its own setting, else the broker's default). */
  async maxMessageBytes(topic: string): Promise<number | undefined> {
    const admin = await this.admin();
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] }],
    });
    const value = Number(configs.resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  }

  async ensureTopics(topics: readonly TopicDefinition[]): Promise<void> {
    const admin = await this.admin();
    const existing = new Set(await admin.listTopics());
    const unique = [...new Map(topics.map((t) => [t.name, t])).values()];
    const missing = unique.filter((t) => !existing.has(t.name));
    if (missing.length === 0) return;
    const wanted = this.replication ?? { factor: 1, minInsyncReplicas: 1 };
    const brokers = (await admin.describeCluster()).brokers.length;
    const { replication, capped } = replicationForCluster(wanted, brokers, { capToBrokers: wanted.capToBrokers ?? false });
    if (capped) {
      this.logger.warn(
        { wanted: { factor: wanted.factor, minInsyncReplicas: wanted.minInsyncReplicas }, brokers, replication },
        `the cluster has ${brokers} broker(s): creating topics with replication factor ${replication.factor} and min.insync.replicas ${replication.minInsyncReplicas}`,
      );
    }
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({
          topic: t.name,
          numPartitions: t.partitions,
          replicationFactor: replication.factor,
          configEntries: Object.entries({ ...t.config, 'min.insync.replicas': String(replication.minInsyncReplicas) }).map(([name, value]) => ({ name, value })),
        })),
      });
    } catch (err) {
      // Created, but not yet in the metadata kafkajs waited on (UNKNOWN_TOPIC_OR_PARTITION is
      // retriable): waitForMetadata below waits for it. Otherwise a concurrent creator may have
      // won the race; only fail if a topic is still missing.
      if ((err as { retriable?: unknown }).retriable !== true) {
        const now = new Set(await admin.listTopics());
        if (missing.some((t) => !now.has(t.name))) throw err;
      }
    }
    await this.waitForMetadata(admin, missing.map((t) => t.name));
    for (const t of missing) this.partitionCounts.set(t.name, t.partitions);
  }

  /**
   * A topic just created can be unknown to the broker's metadata for a moment (KRaft propagates it
   * asynchronously; kafkajs's waitForLeaders then fails with UNKNOWN_TOPIC_OR_PARTITION): wait until
   * every partition has a leader, so callers can use the topics at once.
   */
  private async waitForMetadata(admin: Admin, names: readonly string[], timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const meta = await admin.fetchTopicMetadata({ topics: [...names] });
        if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
      } catch (err) {
        if (Date.now() >= deadline) throw err;
      }
      if (Date.now() >= deadline) throw new Error(`topics ${names.join(', ')} were created but have no leaders after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async listTopics(): Promise<string[]> {
    const admin = await this.admin();
    return (await admin.listTopics()).filter((t) => !t.startsWith('__')).sort();
  }

  async describeTopic(name: string): Promise<TopicDescription | undefined> {
    const admin = await this.admin();
    if (!(await admin.listTopics()).includes(name)) return undefined;
    const offsets = await retryWhileRetriable(() => admin.fetchTopicOffsets(name), 10_000);
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name }],
    });
    const config: Record<string, string> = {};
    for (const entry of configs.resources[0]?.configEntries ?? []) {
      if (!entry.isDefault) config[entry.configName] = entry.configValue;
    }
    return {
      name,
      config,
      partitions: offsets
        .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
        .sort((a, b) => a.partition - b.partition),
    };
  }

  async partitionCount(topic: string): Promise<number> {
    const cached = this.partitionCounts.get(topic);
    if (cached) return cached;
    const admin = await this.admin();
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const count = meta.topics[0]?.partitions.length ?? 0;
    if (count < 1) throw new Error(`topic ${topic} does not exist`);
    this.partitionCounts.set(topic, count);
    return count;
  }

  /** The codec a topic's records are sent with: gzip when the topic is configured for it, else none. */
  async compressionOf(topic: string): Promise<kafkajs.CompressionTypes> {
    const cached = this.compressions.get(topic);
    if (cached !== undefined) return cached;
    let compression = kafkajs.CompressionTypes.None;
    try {
      const admin = await this.admin();
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: ['compression.type'] }],
      });
      const value = described.resources[0]?.configEntries.find((e) => e.configName === 'compression.type')?.configValue;
      if (value === 'gzip') compression = kafkajs.CompressionTypes.GZIP;
    } catch (err) {
      // Uncompressed is always readable; the broker still applies the topic's compression.type.
      this.logger.debug({ err, topic }, 'could not read the topic compression; sending uncompressed');
    }
    this.compressions.set(topic, compression);
    return compression;
  }

  async offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<number> {
    const admin = await this.admin();
    const entries = await admin.fetchTopicOffsetsByTimestamp(topic, timestamp);
    const entry = entries.find((e) => e.partition === partition);
    const offset = entry ? Number(entry.offset) : -1;
    if (offset >= 0) return offset;
    const high = (await admin.fetchTopicOffsets(topic)).find((o) => o.partition === partition);
    return high ? Number(high.high) : 0;
  }

  async committedOffsets(groupId: string, topic: string): Promise<PartitionOffset[]> {
    const admin = await this.admin();
    const res = await admin.fetchOffsets({ groupId, topics: [topic] });
    const out: PartitionOffset[] = [];
    for (const t of res) {
      for (const p of t.partitions) {
        const offset = Number(p.offset);
        if (offset >= 0) out.push({ topic: t.topic, partition: p.partition, offset });
      }
    }
    return out.sort((a, b) => a.partition - b.partition);
  }

  async setCommittedOffsets(groupId: string, offsets: readonly PartitionOffset[]): Promise<void> {
    const admin = await this.admin();
    const byTopic = new Map<string, { partition: number; offset: string }[]>();
    for (const o of offsets) {
      const list = byTopic.get(o.topic) ?? [];
      byTopic.set(o.topic, list);
      list.push({ partition: o.partition, offset: String(o.offset) });
    }
    for (const [topic, partitions] of byTopic) await admin.setOffsets({ groupId, topic, partitions });
  }

  async close(): Promise<void> {
    if (this.adminClient) await this.adminClient.disconnect().catch(() => undefined);
    this.adminClient = undefined;
    this.adminConnecting = undefined;
  }
}
