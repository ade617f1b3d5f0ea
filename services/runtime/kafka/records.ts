/**
 * Records between the runtime's shape (OutRecord, LogRecord) and kafkajs's, and the sizes that
 * split a large send into produce requests the broker accepts.
 */
import type { EachBatchPayload, Message, TopicMessages } from 'kafkajs';
import type { kafkajs } from './kafkajs.ts';
import { partitionForKey } from '../partitioner.ts';
import type { LogRecord, OutRecord, RecordMetadata } from '../transport.ts';

export type KafkajsMessage = EachBatchPayload['batch']['messages'][number];

/** A record's size in a produce request, near enough for splitting and merging requests. */
export function approxRecordBytes(r: OutRecord): number {
  return (r.value?.length ?? 0) + (r.key?.length ?? 0) + 64;
}

/** Room a record batch needs beside its records (its header and a margin), below a topic's limit. */
const BATCH_OVERHEAD_BYTES = 1024;

/**
 * Splits records into produce requests of at most `maxBytes` (~768 KiB, below the broker's default
 * 1 MiB), and so that the records of one topic in a request stay below that topic's own
 * `max.message.bytes` (`limitOf`): the broker checks each partition's batch against its topic's
 * limit, so a topic set lower than a request would refuse a batch of records that each fit. A large
 * commit becomes several produce requests in the same transaction.
 */
export function* chunkBySize(records: readonly OutRecord[], maxBytes = 768 * 1024, limitOf: (topic: string) => number | undefined = () => undefined): Generator<readonly OutRecord[]> {
  let start = 0;
  let size = 0;
  const perTopic = new Map<string, number>();
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const bytes = approxRecordBytes(record);
    const topicLimit = limitOf(record.topic);
    const overTopic = topicLimit !== undefined && (perTopic.get(record.topic) ?? 0) + bytes > topicLimit - BATCH_OVERHEAD_BYTES;
    if (i > start && (size + bytes > maxBytes || overTopic)) {
      yield records.slice(start, i);
      start = i;
      size = 0;
      perTopic.clear();
    }
    size += bytes;
    perTopic.set(record.topic, (perTopic.get(record.topic) ?? 0) + bytes);
  }
  if (start < records.length) yield records.slice(start);
}

/** The most one merged plain send holds (it goes out as requests of at most ~768 KiB each). */
export const MERGED_SEND_MAX_BYTES = 4 * 1024 * 1024;

export function toLogRecord(topic: string, partition: number, m: KafkajsMessage): LogRecord {
  const headers: Record<string, string> = {};
  if (m.headers) {
    for (const [k, v] of Object.entries(m.headers)) {
      if (v == null) continue;
      headers[k] = Array.isArray(v) ? String(v[0] ?? '') : v.toString();
    }
  }
  return {
    topic,
    partition,
    offset: Number(m.offset),
    key: m.key == null ? null : m.key.toString('utf8'),
    value: m.value ?? null,
    timestamp: Number(m.timestamp),
    headers,
  };
}

/** Groups records by topic with explicit partitions; remembers each record's slot for offsets. */
export async function toTopicMessages(
  records: readonly OutRecord[],
  partitionCount: (topic: string) => Promise<number>,
): Promise<{
  topicMessages: TopicMessages[];
  slots: { topic: string; partition: number; index: number }[];
}> {
  const byTopic = new Map<string, Message[]>();
  const perPartitionCount = new Map<string, number>();
  const slots: { topic: string; partition: number; index: number }[] = [];
  for (const r of records) {
    const partition = r.partition ?? partitionForKey(r.key, await partitionCount(r.topic));
    const msgs = byTopic.get(r.topic) ?? [];
    byTopic.set(r.topic, msgs);
    msgs.push({
      key: r.key,
      value: r.value,
      partition,
      ...(r.timestamp !== undefined ? { timestamp: String(r.timestamp) } : {}),
      ...(r.headers ? { headers: { ...r.headers } } : {}),
    });
    const pk = `${r.topic}\u0000${partition}`;
    const index = perPartitionCount.get(pk) ?? 0;
    perPartitionCount.set(pk, index + 1);
    slots.push({ topic: r.topic, partition, index });
  }
  return { topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })), slots };
}

/** Each record's offset, from the base offset of its partition's batch. */
export function metadataFor(
  slots: { topic: string; partition: number; index: number }[],
  results: kafkajs.RecordMetadata[],
): RecordMetadata[] {
  const base = new Map<string, number>();
  for (const r of results) base.set(`${r.topicName}\u0000${r.partition}`, Number(r.baseOffset ?? r.offset ?? -1));
  return slots.map((s) => ({
    topic: s.topic,
    partition: s.partition,
    offset: (base.get(`${s.topic}\u0000${s.partition}`) ?? -1) + s.index,
  }));
}
