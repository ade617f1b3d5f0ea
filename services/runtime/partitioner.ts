/**
 * Key → partition with Kafka's default partitioner (murmur2, positive, modulo partition count).
 * Both transports call this, so a host lands on the same partition number on the embedded log and on
 * Kafka. kafkajs's own DefaultPartitioner is reused rather than re-implemented, so the two can never
 * drift apart.
 */
import { kafkajs } from './kafka/kafkajs.ts';
import type { PartitionMetadata } from 'kafkajs';

const defaultPartitioner = kafkajs.Partitioners.DefaultPartitioner();
const metadataCache = new Map<number, PartitionMetadata[]>();

function metadataFor(count: number): PartitionMetadata[] {
  let meta = metadataCache.get(count);
  if (!meta) {
    meta = Array.from({ length: count }, (_, partitionId) => ({
      partitionId,
      leader: 0,
      partitionErrorCode: 0,
      replicas: [0],
      isr: [0],
    }));
    metadataCache.set(count, meta);
  }
  return meta;
}

let roundRobin = 0;

/**
 * Recent key → partition answers per partition count. Keys are host names, few and hot (every link
 * to a host asks again), and murmur2 over kafkajs's Long arithmetic costs microseconds each.
 */
const answers = new Map<number, Map<string, number>>();
const ANSWERS_KEPT = 50_000;

/** Partition for `key` among `partitions`; records without a key are spread round-robin. */
export function partitionForKey(key: string | null, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`invalid partition count ${partitions}`);
  if (key == null) return roundRobin++ % partitions;
  let known = answers.get(partitions);
  if (!known) answers.set(partitions, (known = new Map()));
  const cached = known.get(key);
  if (cached !== undefined) return cached;
  const partition = defaultPartitioner({ topic: '', partitionMetadata: metadataFor(partitions), message: { key, value: null } });
  if (known.size >= ANSWERS_KEPT) known.clear();
  known.set(key, partition);
  return partition;
}
