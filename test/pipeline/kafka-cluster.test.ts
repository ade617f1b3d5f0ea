// A three-node KRaft cluster of its own (deploy/local/kafka.sh start --brokers 3): a topic with 3
// copies and 2 in sync keeps taking acks=all writes while one node is stopped, takes the node back
// into every ISR once it is started again, and keeps taking writes after another node is killed
// with SIGKILL. Nothing written is lost on the way.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { Consumer, LogEntry, Producer } from 'kafkajs';
import { LocalBroker } from '../support/local-broker.ts';

const kafkaScript = fileURLToPath(new URL('../../deploy/local/kafka.sh', import.meta.url));
const PARTITIONS = 3;
const PER_PARTITION = 5;

function batch(prefix: string): { partition: number; value: string }[] {
  const out: { partition: number; value: string }[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    for (let i = 0; i < PER_PARTITION; i++) out.push({ partition: p, value: `${prefix}-p${p}-${i}` });
  }
  return out;
}

/**
 * Writes a batch with acks=all, one request per partition. kafkajs 2.2.4 retries a send to several
 * leaders without the partitions whose leader moved to a broker that had already answered, and
 * still reports success: with one partition per send, a lost write here is the cluster's doing.
 */
async function sendAll(producer: Producer, topic: string, messages: readonly { partition: number; value: string }[]): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) {
    await producer.send({ topic, acks: -1, messages: messages.filter((m) => m.partition === p) });
  }
}

/** kafka.sh run against the cluster's state dir: its stdout and exit code. */
function script(stateDir: string, ...args: string[]): { stdout: string; status: number | null } {
  const out = spawnSync('bash', [kafkaScript, ...args], { env: { ...process.env, MEGURI_KAFKA_STATE_DIR: stateDir }, stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' });
  return { stdout: out.stdout, status: out.status };
}

/** Reads `topic` from the beginning with a new group until every value in `want` was seen. */
async function readAll(consumer: Consumer, topic: string, want: ReadonlySet<string>, timeoutMs: number): Promise<string[]> {
  const seen: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const missing = new Set(want);
    const timer = setTimeout(() => reject(new Error(`read ${seen.length} of ${want.size} values within ${timeoutMs} ms; missing ${[...missing].join(' ')}`)), timeoutMs);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          const value = message.value?.toString('utf8') ?? '';
          seen.push(value);
          missing.delete(value);
          if (missing.size === 0) {
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

test('3-node cluster: acks=all with a node stopped, back in sync after its restart, writes after a SIGKILL', { timeout: 300_000 }, async (t) => {
  const started = Date.now();
  const step = (what: string) => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
  const cluster = await LocalBroker.start({ nodes: 3 });
  step(`cluster up on ${cluster.brokers}`);
  const runId = `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
  const topic = `meguri-cluster-test-${runId}`;
  const clientLog: string[] = [];
  const kafka = new Kafka({
    clientId: `meguri-cluster-test-${runId}`,
    brokers: cluster.brokers.split(','),
    logLevel: logLevel.WARN,
    // Leader moves log retriable errors at ERROR; shown only when the test fails.
    logCreator: () => (entry: LogEntry) => {
      clientLog.push(`${entry.namespace}: ${entry.log.message}`);
    },
    connectionTimeout: 2000,
    retry: { retries: 12, initialRetryTime: 200, maxRetryTime: 3000 },
  });
  const admin = kafka.admin();
  const producers: Producer[] = [];
  const consumers: Consumer[] = [];
  try {
    assert.deepEqual(cluster.nodeIds(), [1, 2, 3]);
    const env = script(cluster.stateDir, 'env');
    assert.equal(env.status, 0);
    assert.match(env.stdout, /^MEGURI_REPLICATION_FACTOR=3$/m);
    assert.match(env.stdout, /^MEGURI_MIN_INSYNC_REPLICAS=2$/m);
    assert.ok(env.stdout.split('\n').includes(`KAFKA_BROKERS=${cluster.brokers}`), env.stdout);

    await admin.connect();
    // Every node registered; the node kafkajs asks may list a node the controller unfenced a moment
    // after its own readiness (on a loaded machine, seconds later).
    let registered: number[] = [];
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      registered = (await admin.describeCluster()).brokers.map((b) => b.nodeId).sort();
      if (registered.length === 3) break;
    }
    assert.deepEqual(registered, [1, 2, 3]);
    await admin.createTopics({
      topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
      // kafkajs's wait for leaders gives up when a node has not heard of the topic yet; this one retries.
      waitForLeaders: false,
    });
    await cluster.waitInSync([topic]);

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    producers.push(producer);
    await producer.connect();
    const first = batch('all-up');
    await sendAll(producer, topic, first);
    const reader = kafka.consumer({ groupId: `meguri-cluster-test-a-${runId}`, sessionTimeout: 10_000, heartbeatInterval: 1000 });
    consumers.push(reader);
    const seenFirst = await readAll(reader, topic, new Set(first.map((m) => m.value)), 60_000);
    assert.equal(seenFirst.length, first.length);
    step('topic written and read with all three nodes up');

    await cluster.stopNode(2);
    assert.equal(cluster.nodePid(2), undefined);
    const status = script(cluster.stateDir, 'status');
    assert.equal(status.status, 2, 'status exits 2 with some nodes down');
    assert.match(status.stdout, /^2 \S+ stopped$/m);
    step('node 2 stopped');
    const second = batch('node2-down');
    await sendAll(producer, topic, second);
    step('acks=all write with node 2 down');

    await cluster.startNode(2);
    assert.ok(cluster.nodePid(2), 'node 2 has a pid again');
    step('node 2 started');
    await cluster.waitInSync([topic, '__consumer_offsets']);
    step('every partition back to 3 in sync');

    await cluster.kill9Node(1);
    assert.equal(cluster.nodePid(1), undefined);
    step('node 1 killed');
    const third = batch('node1-killed');
    await sendAll(producer, topic, third);
    step('acks=all write with node 1 killed');

    const after = kafka.consumer({ groupId: `meguri-cluster-test-b-${runId}`, sessionTimeout: 10_000, heartbeatInterval: 1000 });
    consumers.push(after);
    const want = new Set([...first, ...second, ...third].map((m) => m.value));
    const seen = await readAll(after, topic, want, 90_000);
    assert.deepEqual(new Set(seen), want, 'every write is there, nothing else');
    step(`all ${want.size} values read back with node 1 down`);

    for (const c of consumers) await c.disconnect();
    for (const p of producers) await p.disconnect();
    await admin.disconnect();
    assert.equal(script(cluster.stateDir, 'reset').status, 0);
    assert.equal(existsSync(cluster.stateDir), false, 'reset deleted the state dir');
    step('reset');
  } catch (err) {
    for (const line of clientLog.slice(-40)) t.diagnostic(line);
    // The state dir goes below: the nodes' last warnings now.
    for (const id of cluster.nodeIds()) {
      const log = existsSync(cluster.serverLog(id)) ? readFileSync(cluster.serverLog(id), 'utf8') : '';
      for (const line of log.split('\n').filter((l) => / (WARN|ERROR) /.test(l)).slice(-8)) t.diagnostic(`node ${id}: ${line}`);
    }
    throw err;
  } finally {
    for (const c of consumers) await c.disconnect().catch(() => undefined);
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    cluster.destroy();
  }
});
