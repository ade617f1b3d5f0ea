// Proves the broker behind KAFKA_BROKERS supports what the pipeline relies on:
// multi-partition topics, idempotent produce, transactions (commit and abort)
// and consumer groups that read committed records only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { Admin, Consumer, KafkaMessage, LogEntry, Producer } from 'kafkajs';

const PARTITIONS = 3;
const PER_PARTITION = 4;

function brokersFromEnv(): string[] {
  const raw = process.env.KAFKA_BROKERS?.trim();
  if (!raw) {
    assert.fail(
      'KAFKA_BROKERS is not set: start a broker with `bash deploy/local/kafka.sh start` ' +
        'and run this test with KAFKA_BROKERS=<host:port> (the test runner sets it).',
    );
  }
  return raw.split(',').map((b) => b.trim()).filter((b) => b.length > 0);
}

interface Seen {
  partition: number;
  value: string;
}

// Consumes `topic` from the beginning until `done` holds for what was seen,
// then stops. Records the values in arrival order.
async function consumeUntil(
  consumer: Consumer,
  topic: string,
  done: (seen: readonly Seen[]) => boolean,
  timeoutMs: number,
): Promise<Seen[]> {
  const seen: Seen[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`timed out after ${timeoutMs} ms; saw ${JSON.stringify(seen)}`));
    }, timeoutMs);
    consumer
      .run({
        eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
          seen.push({ partition, value: message.value?.toString('utf8') ?? '' });
          if (done(seen)) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch((err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      });
  });
  await consumer.stop();
  return seen;
}

function batch(prefix: string): { partition: number; value: string }[] {
  const out: { partition: number; value: string }[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    for (let i = 0; i < PER_PARTITION; i++) out.push({ partition: p, value: `${prefix}-p${p}-${i}` });
  }
  return out;
}

test('real broker: idempotent and transactional produce, read_committed consume', { timeout: 120_000 }, async (t) => {
  const brokers = brokersFromEnv();
  // kafkajs logs retriable errors (coordinator still loading, concurrent
  // transaction) at ERROR; they are normal on a fresh broker, so keep them
  // quiet and show them only when the test fails.
  const clientLog: string[] = [];
  const runId = `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
  const topic = `meguri-broker-test-${runId}`;

  const kafka = new Kafka({
    clientId: `meguri-broker-test-${runId}`,
    brokers,
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      clientLog.push(`${entry.namespace}: ${entry.log.message} ${JSON.stringify(entry.log)}`);
    },
    connectionTimeout: 3000,
    retry: { retries: 8, initialRetryTime: 100 },
  });

  const admin: Admin = kafka.admin();
  const producers: Producer[] = [];
  const consumers: Consumer[] = [];
  let topicCreated = false;

  try {
    await admin.connect();
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
      waitForLeaders: true,
    });
    assert.equal(created, true, `topic ${topic} already existed`);
    topicCreated = true;
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    assert.equal(meta.topics[0]?.partitions.length, PARTITIONS);

    // Plain idempotent producer.
    const idempotent = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producers.push(idempotent);
    await idempotent.connect();
    const plain = batch('plain');
    const acks = await idempotent.send({ topic, acks: -1, messages: plain });
    assert.equal(acks.length, PARTITIONS, 'every partition acknowledged a write');

    // Transactional producer: one committed, one aborted, then another
    // committed batch written after the aborted one. Seeing that last batch in
    // every partition means the consumer has read past the aborted records.
    const transactional = kafka.producer({
      transactionalId: `meguri-broker-test-tx-${runId}`,
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producers.push(transactional);
    await transactional.connect();

    const committed = batch('committed');
    const tx1 = await transactional.transaction();
    await tx1.send({ topic, messages: committed });
    await tx1.commit();

    const aborted = batch('aborted');
    const tx2 = await transactional.transaction();
    await tx2.send({ topic, messages: aborted });
    await tx2.abort();

    const after = batch('after-abort');
    const tx3 = await transactional.transaction();
    await tx3.send({ topic, messages: after });
    await tx3.commit();

    const expected = [...plain, ...committed, ...after].map((m) => m.value).sort();
    const lastPerPartition = new Set(
      Array.from({ length: PARTITIONS }, (_, p) => `after-abort-p${p}-${PER_PARTITION - 1}`),
    );
    const reachedEnd = (seen: readonly Seen[]): boolean =>
      [...lastPerPartition].every((v) => seen.some((s) => s.value === v));

    const committedReader = kafka.consumer({
      groupId: `meguri-broker-test-committed-${runId}`,
      readUncommitted: false,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    consumers.push(committedReader);
    const seenCommitted = await consumeUntil(committedReader, topic, reachedEnd, 60_000);
    const values = seenCommitted.map((s) => s.value);
    assert.deepEqual(
      values.filter((v) => v.startsWith('aborted-')),
      [],
      'a read_committed consumer must not see aborted records',
    );
    assert.deepEqual([...values].sort(), expected, 'exactly the committed and plain records, each once');
    for (const s of seenCommitted) {
      assert.match(s.value, new RegExp(`-p${s.partition}-`), 'record landed in the partition it was sent to');
    }
    // Per-partition order is preserved: plain, then committed, then after-abort.
    for (let p = 0; p < PARTITIONS; p++) {
      const inPartition = seenCommitted.filter((s) => s.partition === p).map((s) => s.value);
      const want = [plain, committed, after].flatMap((b) => b.filter((m) => m.partition === p).map((m) => m.value));
      assert.deepEqual(inPartition, want, `order in partition ${p}`);
    }

    // Control: the aborted records really are in the log, so their absence
    // above comes from the isolation level, not from a failed write.
    const uncommittedReader = kafka.consumer({
      groupId: `meguri-broker-test-uncommitted-${runId}`,
      readUncommitted: true,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    consumers.push(uncommittedReader);
    const seenAll = await consumeUntil(uncommittedReader, topic, reachedEnd, 60_000);
    assert.deepEqual(
      seenAll.map((s) => s.value).filter((v) => v.startsWith('aborted-')).sort(),
      aborted.map((m) => m.value).sort(),
      'a read_uncommitted consumer sees the aborted records',
    );
  } catch (err) {
    for (const line of clientLog.slice(-50)) t.diagnostic(line);
    throw err;
  } finally {
    for (const c of consumers) await c.disconnect().catch(() => undefined);
    for (const p of producers) await p.disconnect().catch(() => undefined);
    if (topicCreated) await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
});
