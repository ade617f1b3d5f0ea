/**
 * The task lifecycle under faults, on the embedded log and on the real Kafka broker: commits that
 * fail (retried, nothing dead-lettered, state after a failed batch equal to the last committed one
 * even when the processor mutated cached objects), a task whose open fails (nothing runs on an
 * unrestored store; it is opened again), oversized outputs (shrunk or dead-lettered; the offset
 * moves on), fencing at open (the old owner's commit is refused once a new owner opened), and a
 * consumer that crashes for good (the service stops, /healthz says so).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { StreamService, TaskMigratedError, startHealthServer, silentLogger } from '../../services/runtime/index.ts';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import type { GroupMember, GroupMemberOptions, KeyValueDb, OutRecord, ServiceDefinition, Transport } from '../../services/runtime/index.ts';
import { SCHEMA_VERSION, linksRecord, deadletterRecord, decodePageRecord } from '../../schemas/index.ts';
import type { LinksRecord, PageRecord } from '../../schemas/index.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { counterService } from './fixtures/counter-service.ts';
import { transportKinds, openTransport, tempDir, removeDir, uniquePrefix, waitFor, readAll, readAllBytes, kafkaBrokers } from '../support/transports.ts';

function seed(url: string): Buffer {
  return Buffer.from(JSON.stringify(linksRecord.parse({ v: SCHEMA_VERSION, type: 'seed', url, addedAt: Date.now() })));
}

/** `n` seeds over 20 hosts and 80 URLs. */
function input(prefix: string, n: number): OutRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const url = `http://h${i % 20}.test/p${i % 80}`;
    return { topic: `${prefix}links`, key: new URL(url).hostname, value: seed(url) };
  });
}

/** Each URL's `changes` titles must be exactly 1..n (exactly-once counting). */
function assertCountsExact(records: { value: string | null }[], perUrl: number, urls: number): void {
  const titles = new Map<string, number[]>();
  for (const r of records) {
    const v = JSON.parse(r.value!) as { url: string; title: string };
    titles.set(v.url, [...(titles.get(v.url) ?? []), Number(v.title)]);
  }
  assert.equal(titles.size, urls);
  for (const [url, list] of titles) assert.deepEqual(list.sort((a, b) => a - b), Array.from({ length: perUrl }, (_, i) => i + 1), `${url} counted 1..${perUrl} once each`);
}

/**
 * A counter whose state objects are mutated in place — the habit that, with a cache keeping
 * uncommitted mutations, made a failed batch leave its effects behind.
 */
function mutatingCounter(): ServiceDefinition<LinksRecord> {
  return {
    name: 'mutating',
    inputs: ['links'],
    outputs: ['changes'],
    stores: [{ name: 'counts', changelog: true }],
    guarantee: 'exactly-once',
    maxBatchRecords: 20,
    createProcessor: () => ({
      async process(records, ctx) {
        const counts = ctx.store<{ n: number }>('counts');
        for (const r of records) {
          const url = urlOf(r.value);
          const state = (await counts.get(url)) ?? { n: 0 };
          state.n += 1;
          counts.put(url, state);
          ctx.emit('changes', url, { v: SCHEMA_VERSION, url, time: ctx.now(), kind: state.n === 1 ? 'new' : 'changed', title: String(state.n) });
        }
      },
    }),
  };
}

/** A transport whose methods are the real ones except those `overrides` replaces. */
function withOverrides(real: Transport, overrides: Partial<Transport>): Transport {
  return new Proxy(real, {
    get(target, prop) {
      if (prop in overrides) return (overrides as Record<string | symbol, unknown>)[prop];
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The error kafkajs raises while the group coordinator moves (a broker restart). */
function coordinatorMoving(): Error {
  return new kafkajs.KafkaJSProtocolError({ message: 'This is not the correct coordinator for this group', type: 'NOT_COORDINATOR_FOR_GROUP', code: 16, retriable: true } as never);
}

/**
 * A send whose answer is lost: armed, the next send wrapped by `after` reaches the broker and then
 * fails as a coordinator move does (transient), as when the broker goes down before it answers.
 */
class LostAnswer {
  armed = false;

  after<B, R>(send: (batch: B) => Promise<R>): (batch: B) => Promise<R> {
    return async (batch) => {
      const sent = await send(batch);
      if (this.armed) {
        this.armed = false;
        throw coordinatorMoving();
      }
      return sent;
    };
  }
}

type Commit = Parameters<GroupMember['commit']>[0];

/** `transport` whose group members pass every commit through `hook` (which calls `commitNow` to let it through). */
function withCommitHook(transport: Transport, hook: (commit: Commit, commitNow: (c: Commit) => ReturnType<GroupMember['commit']>) => ReturnType<GroupMember['commit']>): Transport {
  return withOverrides(transport, {
    join: async (options: GroupMemberOptions): Promise<GroupMember> => {
      const member = await transport.join(options);
      return new Proxy(member, {
        get(target, prop) {
          if (prop === 'commit') return (commit: Commit) => hook(commit, (c) => target.commit(c));
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    },
  });
}

async function sumMetric(metric: { get(): Promise<{ values: { value: number; labels: Record<string, string | number> }[] }> }, labels: Record<string, string> = {}): Promise<number> {
  return (await metric.get()).values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((s, v) => s + v.value, 0);
}

for (const kind of transportKinds) {
  describe(`task lifecycle on ${kind}`, { timeout: 240_000 }, () => {
    let dir: string;
    let transport: Transport;
    before(async () => {
      dir = tempDir();
      transport = await openTransport(kind, dir);
    });
    after(async () => {
      await transport.close();
      removeDir(dir);
    });

    it('retries failed commits without dead-lettering, and a failed batch leaves the last committed state', async () => {
      const prefix = uniquePrefix();
      // Armed once every URL has committed state, so the processor mutates cached objects.
      let failuresLeft = 0;
      const failing = withCommitHook(transport, (commit, commitNow) => {
        // Fail after the processor ran (and mutated its cached state objects).
        if (commit.offsets.length > 0 && failuresLeft > 0) {
          failuresLeft--;
          return Promise.reject(coordinatorMoving());
        }
        return commitNow(commit);
      });
      const service = new StreamService(mutatingCounter(), { transport: failing, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2 });
      await service.start();
      await service.ready();
      await transport.send(input(prefix, 80));
      await waitFor('every URL counted once', async () => (await readAll(transport, `${prefix}changes`)).length >= 80, 60_000, 200);
      failuresLeft = 6;
      await transport.send(input(prefix, 320));
      await waitFor('every record counted', async () => (await readAll(transport, `${prefix}changes`)).length >= 400, 90_000, 200);
      await new Promise((r) => setTimeout(r, 500));
      const out = await readAll(transport, `${prefix}changes`);
      assert.equal(failuresLeft, 0, 'the commits did fail');
      assert.equal(out.length, 400, 'one output per input, none doubled by a retry');
      assertCountsExact(out, 5, 80);
      assert.equal((await readAll(transport, `${prefix}deadletter`)).length, 0, 'nothing dead-lettered for a commit failure');
      assert.equal(await sumMetric(service.metrics.deadletters), 0);
      assert.ok((await sumMetric(service.metrics.taskErrors, { recovery: 'transient', stage: 'commit' })) >= 6);
      await service.stop();
    });

    it('a concurrent task whose offset commit fails after a successful send does not send its outputs again', async () => {
      const prefix = uniquePrefix();
      let offsetFailuresLeft = 5;
      const failing = withCommitHook(transport, (commit, commitNow) => {
        if (commit.offsets.length > 0 && commit.outputs.length === 0 && offsetFailuresLeft > 0) {
          offsetFailuresLeft--;
          return Promise.reject(coordinatorMoving());
        }
        return commitNow(commit);
      });
      const echo: ServiceDefinition<LinksRecord> = {
        name: 'echo',
        inputs: ['links'],
        outputs: ['changes'],
        guarantee: 'at-least-once',
        concurrent: {
          maxInFlight: 4,
          flushIntervalMs: 20,
          createRecordProcessor: () => ({
            async processRecord(record, ctx) {
              ctx.emit('changes', urlOf(record.value), { v: SCHEMA_VERSION, url: urlOf(record.value), time: 1, kind: 'new', title: String(record.offset) });
            },
          }),
        },
      };
      const service = new StreamService(echo, { transport: failing, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1 });
      await service.start();
      await service.ready();
      await transport.send(input(prefix, 200));
      await waitFor('every offset committed', async () => (await transport.committedOffsets(service.groupId, `${prefix}links`)).reduce((s, o) => s + o.offset, 0) === 200, 60_000, 100);
      assert.equal(offsetFailuresLeft, 0, 'offset commits did fail');
      const out = await readAll(transport, `${prefix}changes`);
      assert.equal(out.length, 200, 'each output sent once');
      assert.equal(new Set(out.map((r) => JSON.parse(r.value!).title)).size, 200);
      await service.stop();
    });

    it('a concurrent task sends outputs at every flush but commits its offset at most every commitIntervalMs, and at once when it closes', async () => {
      const prefix = uniquePrefix();
      const offsetCommits: number[] = [];
      let sends = 0;
      const counting = withCommitHook(transport, (commit, commitNow) => {
        if (commit.offsets.length > 0) offsetCommits.push(performance.now());
        if (commit.outputs.length > 0) sends++;
        return commitNow(commit);
      });
      const intervalMs = 400;
      const echo: ServiceDefinition<LinksRecord> = {
        name: 'echo',
        inputs: ['links'],
        outputs: ['changes'],
        guarantee: 'at-least-once',
        concurrent: {
          maxInFlight: 4,
          flushIntervalMs: 20,
          // The operator's setting (the service's options, MEGURI_COMMIT_INTERVAL_MS) wins over this.
          commitIntervalMs: 50,
          createRecordProcessor: () => ({
            async processRecord(record, ctx) {
              ctx.emit('changes', urlOf(record.value), { v: SCHEMA_VERSION, url: urlOf(record.value), time: 1, kind: 'new', title: String(record.offset) });
            },
          }),
        },
      };
      const service = new StreamService(echo, { transport: counting, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1, commitIntervalMs: intervalMs });
      await service.start();
      await service.ready();
      // Records trickle in for ~2 s, so there is something to send at most flushes.
      for (let i = 0; i < 20; i++) {
        await transport.send(input(prefix, 10));
        await new Promise((r) => setTimeout(r, 100));
      }
      await waitFor('every output sent', async () => (await readAll(transport, `${prefix}changes`)).length === 200, 60_000, 100);
      await service.stop();
      const committed = (await transport.committedOffsets(service.groupId, `${prefix}links`)).reduce((s, o) => s + o.offset, 0);
      assert.equal(committed, 200, 'the clean close committed the last offset');
      assert.ok(sends >= 10, `outputs went out flush by flush (${sends} sends)`);
      // Every gap but the close's is at least the interval (a little timer slack allowed).
      const gaps = offsetCommits.slice(1, -1).map((t, i) => t - offsetCommits[i]!);
      assert.ok(gaps.every((g) => g >= intervalMs - 5), `offset commits at most every ${intervalMs} ms: gaps ${gaps.map((g) => g.toFixed(0)).join(', ')}`);
      assert.ok(offsetCommits.length < sends, `fewer offset commits (${offsetCommits.length}) than sends (${sends})`);
    });

    it('runs nothing over a store that was not restored: a failed open closes the task and opens it again', async () => {
      const prefix = uniquePrefix();
      const dirA = tempDir();
      const a = new StreamService(counterService(), { transport, catalog: crawlCatalog, dataDir: dirA, topicPrefix: prefix, partitions: 2 });
      await a.start();
      await a.ready();
      await transport.send(input(prefix, 240));
      await waitFor('A counted everything', async () => (await readAll(transport, `${prefix}changes`)).length === 240, 60_000, 200);
      await a.stop();
      removeDir(dirA);
      // B starts on an empty disk; its first attempts to open its stores fail: on Kafka reading the
      // changelogs, on the embedded log reading the stores the log keeps.
      let describeFailures = 3;
      const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9092'), { code: 'ECONNREFUSED' });
      const flaky = withOverrides(
        transport,
        kind === 'kafka'
          ? {
              describeTopic: async (name: string) => {
                if (name.endsWith('.changelog') && describeFailures > 0) {
                  describeFailures--;
                  throw refused();
                }
                return transport.describeTopic(name);
              },
            }
          : {
              inlineState: (groupId: string, partition: number) => {
                const inline = transport.inlineState!(groupId, partition);
                const db: KeyValueDb = {
                  get: async (key) => {
                    if (describeFailures > 0) {
                      describeFailures--;
                      throw refused();
                    }
                    return inline.db.get(key);
                  },
                  getMany: (keys) => inline.db.getMany(keys),
                  batch: (ops) => inline.db.batch(ops),
                  range: (options) => inline.db.range(options),
                };
                return { db, keyPrefix: inline.keyPrefix };
              },
            },
      );
      const b = new StreamService(counterService(), { transport: flaky, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2 });
      await b.start();
      await transport.send(input(prefix, 80));
      await b.ready();
      assert.equal(describeFailures, 0, 'the opens did fail');
      assert.ok((await sumMetric(b.metrics.taskErrors, { stage: 'open' })) >= 3);
      await waitFor('B counted the new records', async () => (await readAll(transport, `${prefix}changes`)).length === 320, 60_000, 200);
      // Counts continue from the restored state: no URL restarted at 1.
      assertCountsExact(await readAll(transport, `${prefix}changes`), 4, 80);
      await b.stop();
    });

    it('shrinks an oversized page, dead-letters other oversized outputs, and the offset moves on', async () => {
      const prefix = uniquePrefix();
      const bigBody = Buffer.from('<p>"x"</p>\n'.repeat(900_000)); // ~10 MB: above the pages limit (8 MiB)
      const definition: ServiceDefinition<LinksRecord> = {
        name: 'oversize',
        inputs: ['links'],
        outputs: ['pages', 'changes'],
        guarantee: 'at-least-once',
        concurrent: {
          maxInFlight: 2,
          createRecordProcessor: () => ({
            async processRecord(record, ctx) {
              const url = urlOf(record.value);
              const page: PageRecord = {
                v: SCHEMA_VERSION,
                request: { v: SCHEMA_VERSION, requestId: `r-${record.offset}`, url, host: new URL(url).hostname, reason: 'seed', score: 0, depth: 0, cgiHops: 0, attempt: 1, issuedAt: 1 },
                finalUrl: url,
                redirects: [],
                status: 200,
                headers: {},
                body: bigBody,
                bodyTruncated: false,
                bytes: bigBody.length,
                decodedBytes: bigBody.length,
                timing: { startedAt: 1, totalMs: 1 },
                fetchedAt: 1,
              };
              ctx.emit('pages', record.key, page);
              // 1.5 MB: above the 1 MiB default of `changes`, and nothing to cut.
              ctx.emit('changes', url, { v: SCHEMA_VERSION, url, time: 1, kind: 'new', title: 'y'.repeat(1_500_000) });
              ctx.emit('changes', url, { v: SCHEMA_VERSION, url, time: 1, kind: 'new', title: 'small' });
            },
          }),
        },
      };
      const service = new StreamService(definition, { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1 });
      await service.start();
      await service.ready();
      await transport.send(input(prefix, 3));
      await waitFor('the offset moved past every input', async () => (await transport.committedOffsets(service.groupId, `${prefix}links`)).reduce((s, o) => s + o.offset, 0) === 3, 60_000, 200);
      const pages = (await readAllBytes(transport, `${prefix}pages`)).map((r) => decodePageRecord(r.value!));
      assert.equal(pages.length, 3, 'each page sent once, not resent');
      for (const p of pages) {
        assert.equal(p.bodyTruncated, true);
        assert.match(p.bodyTruncatedReason ?? '', /max\.message\.bytes/);
        assert.ok(bigBody.subarray(0, p.body!.length).equals(p.body!) && p.body!.length > 1_000_000);
      }
      const changes = await readAll(transport, `${prefix}changes`);
      assert.equal(changes.length, 3, 'the small changes were sent, the oversized ones were not');
      const dead = (await readAll(transport, `${prefix}deadletter`)).map((r) => deadletterRecord.parse(JSON.parse(r.value!)));
      assert.equal(dead.length, 3);
      for (const d of dead) {
        assert.equal(d.code, 'MEGURI_ERR_RECORD_TOO_LARGE');
        assert.match(d.reason, /output to changes not sent: \d+-byte record exceeds the \d+-byte max\.message\.bytes/);
        assert.equal(d.origin.topic, `${prefix}links`);
      }
      assert.equal(await sumMetric(service.metrics.truncatedOutputs), 3);
      await service.stop();
    });
  });
}

describe('fencing, handovers, long work and crashes on kafka', { timeout: 300_000 }, () => {
  let transport: KafkaTransport;
  before(() => {
    transport = new KafkaTransport({ brokers: kafkaBrokers() });
  });
  after(async () => {
    await transport.close();
  });

  it('fences at open: once a new owner opened the scope, the old owner\'s commit is refused and it does not fence back', async () => {
    const topic = `${uniquePrefix()}fenced`;
    await transport.ensureTopics([{ name: topic, partitions: 1 }]);
    const scope = `${topic}-group.0`;
    const oldOwner = new KafkaTransport({ brokers: kafkaBrokers() });
    const newOwner = new KafkaTransport({ brokers: kafkaBrokers() });
    try {
      const noConsumer = undefined as never;
      await oldOwner.fenceScope(scope);
      await oldOwner.commitFor('g', noConsumer, { transactional: true, scope, outputs: [{ topic, key: 'k', value: Buffer.from('old-1'), partition: 0 }], offsets: [] });
      // The new owner opens: nothing committed yet, but the old owner is already fenced.
      await newOwner.fenceScope(scope);
      await assert.rejects(
        oldOwner.commitFor('g', noConsumer, { transactional: true, scope, outputs: [{ topic, key: 'k', value: Buffer.from('old-2'), partition: 0 }], offsets: [] }),
        (err: unknown) => err instanceof TaskMigratedError,
      );
      // A retry by the old owner must not build a new producer (that would fence the new owner).
      await assert.rejects(
        oldOwner.commitFor('g', noConsumer, { transactional: true, scope, outputs: [{ topic, key: 'k', value: Buffer.from('old-3'), partition: 0 }], offsets: [] }),
        (err: unknown) => err instanceof TaskMigratedError && /no transactional producer/.test(err.message),
      );
      await newOwner.commitFor('g', noConsumer, { transactional: true, scope, outputs: [{ topic, key: 'k', value: Buffer.from('new-1'), partition: 0 }], offsets: [] });
      const values = (await readAll(transport, topic)).map((r) => r.value);
      assert.deepEqual(values, ['old-1', 'new-1'], 'only committed records of the rightful owners');
    } finally {
      await oldOwner.close();
      await newOwner.close();
    }
  });

  it('a plain send that failed after its records reached the broker releases the shared producer', async () => {
    // The same lost answer on the idempotent producer of at-least-once services: kafkajs rolls back
    // the sequence numbers of a failed send, so the next batch of that producer would reuse them and
    // the broker would drop it as a duplicate while acknowledging it. The next send uses a new producer.
    const topic = `${uniquePrefix()}lost-plain-answer`;
    await transport.ensureTopics([{ name: topic, partitions: 1 }]);
    const sender = new KafkaTransport({ brokers: kafkaBrokers() });
    const lost = new LostAnswer();
    let producersMade = 0;
    const kafka = sender.client;
    const makeProducer = kafka.producer.bind(kafka);
    kafka.producer = ((config) => {
      const producer = makeProducer(config);
      producersMade++;
      producer.sendBatch = lost.after(producer.sendBatch.bind(producer));
      return producer;
    }) as typeof kafka.producer;
    const sendOf = (value: string): Promise<unknown> => sender.send([{ topic, key: 'k', value: Buffer.from(value), partition: 0 }]);
    try {
      await sendOf('a');
      await sendOf('b');
      assert.equal(producersMade, 1, 'sends share one producer');
      lost.armed = true;
      await assert.rejects(sendOf('c'));
      assert.equal(lost.armed, false, 'the send did reach the broker before it failed');
      await sendOf('d');
      assert.equal(producersMade, 2, 'the send after the failure started a new producer');
      await waitFor('every record visible', async () => (await readAll(transport, topic)).length >= 4, 30_000, 100);
      assert.deepEqual((await readAll(transport, topic)).map((r) => r.value), ['a', 'b', 'c', 'd'], 'nothing sent after the failure was dropped');
    } finally {
      await sender.close();
    }
  });

  it('a transaction that failed after its records reached the broker is never retried on that producer', async () => {
    // A broker going down can write a produce request and lose its answer. kafkajs then still holds
    // the sequence numbers it sent, so a retry on the same producer and epoch would reuse them and the
    // broker would drop the retried records as duplicates of the aborted ones while acknowledging
    // them. Here the send reaches the broker and then fails as a coordinator move does (transient).
    const topic = `${uniquePrefix()}lost-answer`;
    await transport.ensureTopics([{ name: topic, partitions: 1 }]);
    const scope = `${topic}-group.0`;
    const owner = new KafkaTransport({ brokers: kafkaBrokers() });
    const lost = new LostAnswer();
    const kafka = owner.client;
    const makeProducer = kafka.producer.bind(kafka);
    kafka.producer = ((config) => {
      const producer = makeProducer(config);
      const begin = producer.transaction.bind(producer);
      producer.transaction = async () => {
        const tx = await begin();
        return { ...tx, sendBatch: lost.after(tx.sendBatch.bind(tx)) };
      };
      return producer;
    }) as typeof kafka.producer;
    const commitOf = (value: string): Promise<unknown> =>
      owner.commitFor('g', undefined as never, { transactional: true, scope, outputs: [{ topic, key: 'k', value: Buffer.from(value), partition: 0 }], offsets: [] });
    try {
      await owner.fenceScope(scope);
      await commitOf('a');
      lost.armed = true;
      await assert.rejects(commitOf('b'), (err: unknown) => err instanceof TaskMigratedError, 'a failed transaction is reported as migrated, even for a transient error');
      assert.equal(lost.armed, false, 'the send did reach the broker before it failed');
      await assert.rejects(commitOf('c'), (err: unknown) => err instanceof TaskMigratedError && /no transactional producer/.test(err.message), 'the producer was released: no commit until the task opens again');
      // The task opens again: a fresh producer (new epoch, new sequence numbers) commits.
      await owner.fenceScope(scope);
      await commitOf('d');
      // The commit marker is written just after the commit returns: wait until read_committed shows it.
      const values = async (): Promise<(string | null)[]> => (await readAll(transport, topic)).map((r) => r.value);
      await waitFor('the last commit visible', async () => (await values()).includes('d'), 30_000, 100);
      assert.deepEqual(await values(), ['a', 'd'], 'the failed transaction aborted; nothing committed on the released producer');
    } finally {
      await owner.close();
    }
  });

  it('a service whose partition was claimed by a new owner closes that task dirty, rejoins, restores and counts exactly once', async () => {
    const prefix = uniquePrefix();
    const service = new StreamService(counterService(), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2 });
    await service.start();
    await service.ready();
    await transport.send(input(prefix, 160));
    await waitFor('first records counted', async () => (await readAll(transport, `${prefix}changes`)).length === 160, 60_000, 200);
    // Another instance opens partition 0's task (as a new owner would after a rebalance).
    const intruder = new KafkaTransport({ brokers: kafkaBrokers() });
    try {
      await intruder.fenceScope(`${service.groupId}.0`);
      await transport.send(input(prefix, 160));
      await waitFor('all records counted after the migration', async () => (await readAll(transport, `${prefix}changes`)).length === 320, 90_000, 200);
      assertCountsExact(await readAll(transport, `${prefix}changes`), 4, 80);
      assert.ok((await sumMetric(service.metrics.taskErrors, { recovery: 'migrated' })) >= 1, 'the fenced commit was classified as migrated');
      assert.equal(await sumMetric(service.metrics.deadletters), 0);
      await waitFor('the service runs again', () => service.isReady(), 30_000);
    } finally {
      await intruder.close();
      await service.stop();
    }
  });

  it('hands a partition A → B → A: the returning owner opens a fresh producer and its first commit succeeds', async () => {
    const prefix = uniquePrefix();
    const a = new StreamService(counterService(), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2, memberName: 'a' });
    await a.start();
    await a.ready();
    await transport.send(input(prefix, 160));
    await waitFor('A counted', async () => (await readAll(transport, `${prefix}changes`)).length === 160, 60_000, 200);
    const second = new KafkaTransport({ brokers: kafkaBrokers() });
    const b = new StreamService(counterService(), { transport: second, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2, memberName: 'b' });
    try {
      await b.start();
      await waitFor('A and B share the partitions', () => a.assignedPartitions().length === 1 && b.assignedPartitions().length === 1 && a.isReady() && b.isReady(), 60_000, 100);
      await transport.send(input(prefix, 160));
      await waitFor('A and B counted', async () => (await readAll(transport, `${prefix}changes`)).length === 320, 60_000, 200);
      await b.stop();
      await waitFor('A owns both partitions again', () => a.assignedPartitions().length === 2 && a.isReady(), 60_000, 100);
      await transport.send(input(prefix, 160));
      await waitFor('A counted after the handback', async () => (await readAll(transport, `${prefix}changes`)).length === 480, 60_000, 200);
      assertCountsExact(await readAll(transport, `${prefix}changes`), 6, 80);
      assert.equal(await sumMetric(a.metrics.taskErrors, { recovery: 'migrated' }), 0, 'no commit of A was refused');
    } finally {
      await b.stop();
      await second.close();
      await a.stop();
    }
  });

  it('keeps its membership through a restore and a batch longer than the session timeout', async () => {
    const prefix = uniquePrefix();
    const dirA = tempDir();
    const a = new StreamService(counterService(), { transport, catalog: crawlCatalog, dataDir: dirA, topicPrefix: prefix, partitions: 2 });
    await a.start();
    await a.ready();
    await transport.send(input(prefix, 160));
    await waitFor('A counted', async () => (await readAll(transport, `${prefix}changes`)).length === 160, 60_000, 200);
    await a.stop();
    removeDir(dirA);
    // B restores on an empty disk, each changelog read held up past the 10 s session timeout, then
    // spends as long again on one batch.
    const slowRestore = withOverrides(transport, {
      readPartition: (topic: string, partition: number, from: number, to: number) => ({
        async *[Symbol.asyncIterator]() {
          await new Promise((r) => setTimeout(r, 12_000));
          yield* transport.readPartition(topic, partition, from, to);
        },
      }),
    });
    const b = new StreamService(counterService({ delayMs: 12_000, maxBatchRecords: 500 }), { transport: slowRestore, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2 });
    try {
      const opened = Date.now();
      await b.start();
      await b.ready();
      assert.ok(Date.now() - opened > 12_000, 'the restore was slow');
      await transport.send(input(prefix, 80));
      await waitFor('B counted', async () => (await readAll(transport, `${prefix}changes`)).length === 240, 120_000, 500);
      assertCountsExact(await readAll(transport, `${prefix}changes`), 3, 80);
      assert.equal(await sumMetric(b.metrics.taskStates, { state: 'restoring' }), 2, 'each task restored once: the member was never evicted');
      assert.equal(await sumMetric(b.metrics.taskErrors, { recovery: 'migrated' }), 0);
    } finally {
      await b.stop();
    }
  });

  it('a consumer that crashes for good is restarted, and when it keeps crashing the service stops; /healthz reports it', async () => {
    const prefix = uniquePrefix();
    const groupId = `${prefix}crashing`;
    await transport.ensureTopics([{ name: `${prefix}links`, partitions: 1 }]);
    // A member of the same group speaking another assignment protocol: our join is refused with
    // INCONSISTENT_GROUP_PROTOCOL, which kafkajs does not restart from.
    const other = transport.client.consumer({
      groupId,
      partitionAssigners: [
        () => ({
          name: 'OtherAssigner',
          version: 1,
          protocol: ({ topics }: { topics: string[] }) => ({ name: 'OtherAssigner', metadata: kafkajs.AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }) }),
          assign: async ({ members }: { members: { memberId: string }[] }) =>
            members.map((m) => ({ memberId: m.memberId, memberAssignment: kafkajs.AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: {}, userData: Buffer.alloc(0) }) })),
        }),
      ],
    });
    await other.connect();
    await other.subscribe({ topics: [`${prefix}links`] });
    await other.run({ eachMessage: async () => {} });
    let fatal: Error | undefined;
    const service = new StreamService(counterService(), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, groupId, partitions: 1, onFatal: (err) => (fatal = err) });
    const health = await startHealthServer([service], 0, '127.0.0.1', silentLogger);
    try {
      await service.start();
      await waitFor('the service stopped on its crashed consumer', () => fatal !== undefined, 60_000);
      assert.equal(service.isAlive(), false);
      assert.match(fatal!.message, /crashed 4 times/, 'restarted three times first');
      const res = await fetch(`http://127.0.0.1:${health.port}/healthz`);
      assert.equal(res.status, 503);
      assert.match(await res.text(), /fatal/);
    } finally {
      await health.close();
      await service.stop();
      await other.disconnect();
    }
  });
});

/** The URL a test record is about (these tests send seeds and single links). */
function urlOf(record: LinksRecord): string {
  return record.type === 'links' ? record.source : record.url;
}
