/**
 * Topic settings for real clusters, on the real (single) broker: `meguri topics create` asks for 3
 * copies with 2 in sync and says clearly that one broker cannot hold them; replication and
 * min.insync.replicas reach the broker; producers wait for all in-sync copies (acks=all); a pod does
 * not create topics unless told to, and a missing topic stops it with the topic and the command named.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ReplicationError } from '../../services/runtime/index.ts';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';
import { kafkaBrokers, removeDir, tempDir, uniquePrefix, waitFor } from '../support/transports.ts';

const bin = fileURLToPath(new URL('../../bin/meguri.js', import.meta.url));

/** The environment without the single-broker replication the test runner sets. */
function envWithoutReplication(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MEGURI_LOG_LEVEL: 'warn' };
  delete env.MEGURI_REPLICATION_FACTOR;
  delete env.MEGURI_MIN_INSYNC_REPLICAS;
  delete env.MEGURI_CREATE_TOPICS;
  return { ...env, ...extra };
}

async function replicasOf(brokers: string[], topic: string): Promise<number> {
  const admin = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    return meta.topics[0]!.partitions[0]!.replicas.length;
  } finally {
    await admin.disconnect();
  }
}

describe('topic settings for real clusters', { timeout: 180_000 }, () => {
  const brokers = kafkaBrokers();

  it('`meguri topics create` defaults to 3 copies and refuses a single broker with the flags that work', async () => {
    const prefix = uniquePrefix();
    const refused = spawnSync(process.execPath, [bin, 'topics', 'create', '--kafka', brokers.join(','), '--topic-prefix', prefix], { encoding: 'utf8', env: envWithoutReplication() });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /replication factor 3 needs at least 3 brokers, but the cluster has 1/);
    assert.match(refused.stderr, /--replication-factor 1 --min-insync-replicas 1/);
    const t = new KafkaTransport({ brokers });
    try {
      assert.deepEqual((await t.listTopics()).filter((n) => n.startsWith(prefix)), [], 'nothing created');
    } finally {
      await t.close();
    }

    const created = spawnSync(process.execPath, [bin, 'topics', 'create', '--kafka', brokers.join(','), '--topic-prefix', prefix, '--partitions', '2', '--replication-factor', '1'], {
      encoding: 'utf8',
      env: envWithoutReplication(),
    });
    assert.equal(created.status, 0, created.stderr);
    assert.match(created.stdout, new RegExp(`created  ${prefix.replace('.', '\\.')}pages  partitions=2  cleanup=delete  replication=1  min\\.insync\\.replicas=1`));
    const reader = new KafkaTransport({ brokers });
    try {
      const pages = await reader.describeTopic(`${prefix}pages`);
      assert.equal(pages?.config['min.insync.replicas'], '1');
      assert.equal(await replicasOf(brokers, `${prefix}pages`), 1);
    } finally {
      await reader.close();
    }
  });

  it('the transport fails a factor above the broker count, or lowers its defaults when asked', async () => {
    const prefix = uniquePrefix();
    const strict = new KafkaTransport({ brokers, replication: { factor: 3, minInsyncReplicas: 2 } });
    const capped = new KafkaTransport({ brokers, replication: { factor: 3, minInsyncReplicas: 2, capToBrokers: true } });
    try {
      await assert.rejects(strict.ensureTopics([{ name: `${prefix}strict`, partitions: 1 }]), (err: unknown) => err instanceof ReplicationError && /cluster has 1/.test(err.message));
      await capped.ensureTopics([{ name: `${prefix}capped`, partitions: 1 }]);
      assert.equal((await capped.describeTopic(`${prefix}capped`))?.config['min.insync.replicas'], '1');
      assert.equal(await strict.describeTopic(`${prefix}strict`), undefined);
    } finally {
      await strict.close();
      await capped.close();
    }
  });

  it('every produce request, plain and transactional, asks for acks=all', async () => {
    // One broker cannot refuse a write for want of replicas (it lowers min.insync.replicas to the
    // replica count), so the requests are watched at the kafkajs producer the transport uses.
    const topic = `${uniquePrefix()}acks`;
    const t = new KafkaTransport({ brokers });
    const acks: unknown[] = [];
    const client = t.client;
    const makeProducer = client.producer.bind(client);
    client.producer = (config) => {
      const producer = makeProducer(config);
      const sendBatch = producer.sendBatch.bind(producer);
      producer.sendBatch = (batch) => (acks.push(batch.acks), sendBatch(batch));
      const transaction = producer.transaction.bind(producer);
      producer.transaction = async () => {
        const tx = await transaction();
        const txSendBatch = tx.sendBatch.bind(tx);
        tx.sendBatch = (batch) => (acks.push(batch.acks), txSendBatch(batch));
        return tx;
      };
      return producer;
    };
    try {
      await t.ensureTopics([{ name: topic, partitions: 1 }]);
      await t.send([{ topic, key: 'plain', value: Buffer.from('1') }]);
      // A transactional scope is claimed (InitProducerId) before its first commit, as a task's open does.
      await t.fenceScope(`${topic}-tx`);
      await t.commitFor(`${topic}-group`, undefined as never, { transactional: true, scope: `${topic}-tx`, outputs: [{ topic, key: 'tx', value: Buffer.from('2') }], offsets: [] });
      assert.deepEqual(acks, [-1, -1]);
      // The commit marker is written just after the commit returns.
      await waitFor('the plain record, the transactional one and its commit marker', async () => (await t.describeTopic(topic))?.partitions[0]?.high === 3, 10_000);
    } finally {
      await t.close();
    }
  });

  it('records of a gzip topic (pages) are sent gzip-compressed and read back as sent', async () => {
    const prefix = uniquePrefix();
    const t = new KafkaTransport({ brokers });
    const sent: { compression: unknown; topics: string[] }[] = [];
    const client = t.client;
    const makeProducer = client.producer.bind(client);
    client.producer = (config) => {
      const producer = makeProducer(config);
      const sendBatch = producer.sendBatch.bind(producer);
      producer.sendBatch = (batch) => (sent.push({ compression: batch.compression, topics: batch.topicMessages!.map((m) => m.topic) }), sendBatch(batch));
      return producer;
    };
    try {
      await t.ensureTopics([
        { name: `${prefix}pages`, partitions: 1, config: { 'compression.type': 'gzip' } },
        { name: `${prefix}links`, partitions: 1 },
      ]);
      const page = Buffer.from(JSON.stringify({ body: '<p>the same paragraph again</p>'.repeat(600) }));
      await t.send([
        { topic: `${prefix}pages`, key: 'h', value: page },
        { topic: `${prefix}links`, key: 'h', value: Buffer.from('{"link":1}') },
      ]);
      assert.deepEqual(
        sent.map((b) => [b.compression, b.topics]),
        [
          [kafkajs.CompressionTypes.GZIP, [`${prefix}pages`]],
          [kafkajs.CompressionTypes.None, [`${prefix}links`]],
        ],
      );
      const back: Buffer[] = [];
      for await (const chunk of t.readPartition(`${prefix}pages`, 0, 0, 1)) for (const r of chunk) back.push(r.value!);
      assert.deepEqual(back, [page]);
    } finally {
      await t.close();
    }
  });

  it('a pod does not create topics unless MEGURI_CREATE_TOPICS=true; a missing topic stops it with the command to run', async () => {
    const prefix = uniquePrefix();
    const dataDir = tempDir();
    try {
      const refused = spawnSync(process.execPath, [bin, 'run', 'parser', '--kafka', brokers.join(','), '--topic-prefix', prefix, '--data', dataDir, '--http-port', '0'], {
        encoding: 'utf8',
        env: envWithoutReplication({ MEGURI_HTTP_PORT: '0' }),
        timeout: 60_000,
      });
      assert.equal(refused.status, 1, `exit status (stderr: ${refused.stderr})`);
      assert.match(refused.stderr, new RegExp(`${prefix.replace('.', '\\.')}pages`));
      assert.match(refused.stderr, /meguri topics create --kafka <brokers> --topic-prefix \S+ --partitions 8/);
      assert.match(refused.stderr, /MEGURI_CREATE_TOPICS=true/);
      const t = new KafkaTransport({ brokers });
      try {
        assert.deepEqual((await t.listTopics()).filter((n) => n.startsWith(prefix)), [], 'the pod created nothing');
      } finally {
        await t.close();
      }

      // Told to, it creates them with the replication it is given.
      const child = spawn(process.execPath, [bin, 'run', 'parser', '--kafka', brokers.join(','), '--topic-prefix', prefix, '--data', dataDir, '--http-port', '0'], {
        env: envWithoutReplication({ MEGURI_CREATE_TOPICS: 'true', MEGURI_REPLICATION_FACTOR: '1', MEGURI_PARTITIONS: '2' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const reader = new KafkaTransport({ brokers });
        try {
          // Until the pod has made it and its partitions have leaders, describing it may fail.
          const described = (): ReturnType<typeof reader.describeTopic> => reader.describeTopic(`${prefix}pages`).catch(() => undefined);
          const deadline = Date.now() + 60_000;
          while (!(await described()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
          const pages = await described();
          assert.ok(pages, `the pod created ${prefix}pages (output: ${out.slice(-2000)})`);
          assert.equal(pages.partitions.length, 2);
          assert.equal(pages.config['min.insync.replicas'], '1');
        } finally {
          await reader.close();
        }
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    } finally {
      removeDir(dataDir);
    }
  });
});
