/**
 * Reads of one partition outside any consumer group (a store's restore must not cost a group join
 * per changelog, nor a rebalance of anyone): read_committed fetches from the partition's leader
 * through a kafkajs cluster client of our own, decoded by kafkajs's batch code.
 */
import { createRequire } from 'node:module';
import type { Kafka } from 'kafkajs';
import { classifyError } from '../errors.ts';
import type { LogRecord } from '../transport.ts';
import type { KafkajsMessage } from './records.ts';
import { toLogRecord } from './records.ts';

/** kafkajs's read_committed isolation level (Fetch request). */
const READ_COMMITTED = 1;

/** The part of a Fetch response for one partition that kafkajs's Batch reads. */
interface FetchedPartition {
  readonly partition: number;
  readonly highWatermark: string;
  readonly lastStableOffset?: string;
  readonly abortedTransactions: unknown[];
  readonly messages: KafkajsMessage[];
}

/** The few kafkajs cluster/broker calls a direct read needs (kafkajs does not type its internals). */
interface DirectCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(query: { nodeId: string }): Promise<{
    fetch(request: object): Promise<{ responses: { topicName: string; partitions: FetchedPartition[] }[] }>;
  }>;
}

/** kafkajs's Batch: decodes one fetched partition, dropping aborted records and control records. */
const KafkajsBatch = createRequire(import.meta.url)('kafkajs/src/consumer/batch.js') as new (
  topic: string,
  fetchedOffset: string,
  data: FetchedPartition,
) => { readonly messages: KafkajsMessage[]; readonly messagesWithinOffset: KafkajsMessage[] };

/** How long a complete read waits without progress before it fails (a transaction times out sooner). */
const COMPLETE_WAIT_MS = 60_000;

export class DirectReader {
  private clusterPromise: Promise<DirectCluster> | undefined;

  constructor(private readonly kafka: Kafka) {}

  /** A kafkajs cluster client of our own (no group), for direct fetches. */
  private cluster(): Promise<DirectCluster> {
    this.clusterPromise ??= (async () => {
      const symbol = Object.getOwnPropertySymbols(this.kafka).find((s) => s.description === 'private:Kafka:createCluster');
      const create = symbol ? (this.kafka as unknown as Record<symbol, unknown>)[symbol] : undefined;
      if (typeof create !== 'function') throw new Error('this kafkajs version offers no cluster client; cannot read partitions directly');
      const cluster = (create as (o: object) => DirectCluster)({ allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED });
      await cluster.connect();
      return cluster;
    })();
    this.clusterPromise.catch(() => (this.clusterPromise = undefined));
    return this.clusterPromise;
  }

  /**
   * Reads [from, to) of one partition without joining any consumer group (a restore must not cost a
   * group join per changelog, nor a rebalance of anyone): read_committed fetches from the
   * partition's leader, decoded by kafkajs's own batch code (which drops aborted records and
   * transaction markers). Stops at the last stable offset when `to` lies beyond it, unless
   * `complete`: a restore must read every offset below `to`. A fetch that returns nothing there
   * (an open transaction holds the stable offset below it; a leader just elected whose high
   * watermark has not caught up) is then tried again, and the read fails after COMPLETE_WAIT_MS
   * without progress. A restore that stopped early and checkpointed `to` left out committed state
   * (a rolling restart showed two requests for one URL).
   */
  async *read(topic: string, partition: number, from: number, to: number, complete = false): AsyncIterable<readonly LogRecord[]> {
    if (from >= to) return;
    const cluster = await this.cluster();
    await cluster.addTargetTopic(topic);
    let position = from;
    let progressAt = Date.now();
    for (let attempt = 0; position < to; ) {
      let data: FetchedPartition;
      try {
        const leaders = cluster.findLeaderForPartitions(topic, [partition]);
        const nodeId = Object.keys(leaders)[0];
        if (nodeId === undefined) throw new Error(`no leader for ${topic}[${partition}]`);
        const broker = await cluster.findBroker({ nodeId });
        const response = await broker.fetch({
          isolationLevel: READ_COMMITTED,
          maxWaitTime: 100,
          minBytes: 1,
          maxBytes: 64 * 1024 * 1024,
          topics: [{ topic, partitions: [{ partition, fetchOffset: String(position), maxBytes: 16 * 1024 * 1024 }] }],
        });
        const found = response.responses.find((r) => r.topicName === topic)?.partitions.find((p) => p.partition === partition);
        if (!found) throw new Error(`fetch of ${topic}[${partition}] returned no data`);
        data = found;
        attempt = 0;
      } catch (err) {
        if (classifyError(err, 'commit') !== 'transient' || ++attempt > 20) throw err;
        await cluster.refreshMetadata().catch(() => undefined);
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
        continue;
      }
      const batch = new KafkajsBatch(topic, String(position), data);
      const within = batch.messagesWithinOffset;
      if (within.length === 0) {
        // Nothing past `position`: the end of what read_committed may see.
        const stuck = Number(data.lastStableOffset ?? data.highWatermark) <= position || Number(data.highWatermark) <= position;
        if (stuck && !complete) return;
        if (stuck && Date.now() - progressAt > COMPLETE_WAIT_MS) {
          throw new Error(`could not read ${topic}[${partition}] to offset ${to}: stuck at ${position} for ${COMPLETE_WAIT_MS / 1000} s (high watermark ${data.highWatermark}, last stable offset ${data.lastStableOffset ?? '?'})`);
        }
        if (stuck) {
          await cluster.refreshMetadata().catch(() => undefined);
          await new Promise((r) => setTimeout(r, 200));
        }
        continue;
      }
      progressAt = Date.now();
      const records = batch.messages.map((m) => toLogRecord(topic, partition, m)).filter((r) => r.offset >= from && r.offset < to);
      if (records.length > 0) yield records;
      position = Number(within[within.length - 1]!.offset) + 1;
    }
  }

  async close(): Promise<void> {
    if (this.clusterPromise) await (await this.clusterPromise.catch(() => undefined))?.disconnect().catch(() => undefined);
    this.clusterPromise = undefined;
  }
}
