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
  // A few retries: enough for a busy broker, not the ~15 s kafkajs spends by default on one gone.
  const admin = new kafkajs.Kafka({ clientId: 'meguri-bench-cleanup', brokers: [...brokers], logLevel: kafkajs.logLevel.NOTHING, connectionTimeout: 3_000, retry: { retries: 2 } }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    return topics.length;
  } finally {
    await admin.disconnect();
  }
}

/** A broker address a benchmark was given that nothing answers at. */
export class BrokerUnreachableError extends Error {
  constructor(brokers: readonly string[], cause: unknown) {
    super(
      `no Kafka broker answers at ${brokers.join(',')} (${cause instanceof Error ? cause.message : String(cause)}); ` +
        'start the local one with `bash deploy/local/kafka.sh start`, which prints its address (KAFKA_BROKERS=…), and pass that to --kafka',
      { cause },
    );
    this.name = 'BrokerUnreachableError';
  }
}

/**
 * Fails at once when no broker answers at `brokers`, before a benchmark spends minutes on the
 * contenders that run first (kafkajs would otherwise retry for ~15 s at the Kafka run's start and
 * the run's clean-up would fail in turn).
 */
export async function assertBrokerReachable(brokers: readonly string[]): Promise<void> {
  const admin = new kafkajs.Kafka({
    clientId: 'meguri-bench-check',
    brokers: [...brokers],
    logLevel: kafkajs.logLevel.NOTHING,
    connectionTimeout: 3_000,
    retry: { retries: 1 },
  }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
  } catch (err) {
    throw new BrokerUnreachableError(brokers, err);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** assertBrokerReachable for a benchmark's start: the reason on stderr and exit code 2 instead of a stack. */
export async function requireBroker(brokers: readonly string[], bench: string): Promise<void> {
  try {
    await assertBrokerReachable(brokers);
  } catch (err) {
    console.error(`${bench}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
}

/**
 * deleteTopicsWithPrefix for a run's `finally`: a failure is reported on stderr instead of thrown,
 * so that it never hides the error that ended the run (a broker gone away, a crawl that failed).
 */
export async function removeRunTopics(brokers: readonly string[], prefix: string): Promise<void> {
  try {
    await deleteTopicsWithPrefix(brokers, prefix);
  } catch (err) {
    console.error(`could not delete the run's topics (${prefix}*): ${err instanceof Error ? err.message : String(err)}`);
  }
}
