/**
 * Benchmarks on Kafka write into the broker they are given (deploy/local's, usually), each run
 * under a topic prefix of its own. Those topics hold the run's pages, links and changelogs — a
 * 20,000-page crawl leaves ~0.5 GB — so a run removes them when it ends, or repeated runs fill the
 * broker's disk.
 */
import { kafkajs } from '../services/runtime/kafka/kafkajs.ts';

/** Deletes every topic whose name starts with `prefix` (never the empty prefix); returns how many. */
export async function deleteTopicsWithPrefix(brokers: readonly string[], prefix: string): Promise<number> {
  if (prefix === '') throw new RangeError('refusing to delete topics without a prefix');
  const admin = new kafkajs.Kafka({ clientId: 'meguri-bench-cleanup', brokers: [...brokers], logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    return topics.length;
  } finally {
    await admin.disconnect();
  }
}
