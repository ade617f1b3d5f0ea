// Several transactional producers write one partition with their transactions interleaved and ended
// out of start order — as the scheduler's concurrent partition tasks do on `changes` — so the
// broker's list of aborted transactions is not sorted by first offset. Every way meguri reads Kafka
// (a service's group member, readPartition for restores and replay, `meguri tail`) and the
// subscriber example in docs/topics.md must deliver exactly the committed records, in order.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import type { LogRecord } from '../../services/runtime/index.ts';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';
import type { Producer, Transaction } from 'kafkajs';
import { mulberry32 } from '../../services/common/random.ts';
import { tailCommand } from '../../services/cli/tail.ts';
import { kafkaBrokers, uniquePrefix, waitFor } from '../support/transports.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PRODUCERS = 5;

interface Written {
  offset: number;
  value: string;
  committed: boolean;
}

const changeValue = (id: string): string => JSON.stringify({ v: 1, kind: 'new', url: `http://tx.sim.test/${id}`, time: 1, title: id });

/**
 * Writes the interleaving and returns every record with its offset and fate. Sends are awaited one
 * at a time, so the offsets follow the order of the script.
 */
async function writeInterleaved(producers: Producer[], topic: string, seed: number): Promise<{ written: Written[]; abortOrder: number[] }> {
  const written: Written[] = [];
  /** First offsets of the aborted transactions, in the order they were aborted (the broker's index order). */
  const abortOrder: number[] = [];
  const open = new Map<number, { tx: Transaction; records: Written[] }>();
  let n = 0;
  const send = async (p: number): Promise<void> => {
    const id = `p${p}-${n++}`;
    const value = changeValue(id);
    const state = open.get(p)!;
    const [meta] = await state.tx.send({ topic, messages: [{ key: id, value, partition: 0 }] });
    const record = { offset: Number(meta!.baseOffset), value, committed: false };
    state.records.push(record);
    written.push(record);
  };
  const begin = async (p: number): Promise<void> => {
    open.set(p, { tx: await producers[p]!.transaction(), records: [] });
    await send(p);
  };
  const end = async (p: number, commit: boolean): Promise<void> => {
    const state = open.get(p)!;
    open.delete(p);
    if (commit) {
      await state.tx.commit();
      for (const r of state.records) r.committed = true;
    } else {
      await state.tx.abort();
      abortOrder.push(state.records[0]!.offset);
    }
  };

  // The plain case first: B starts after A and aborts before it, so the broker lists B before A.
  await begin(0);
  await begin(1);
  await send(0);
  await end(1, false);
  await send(0);
  await end(0, false);
  await begin(2);
  await end(2, true);

  // Then a seeded mix: at most one open transaction per producer (as Kafka allows), each ended by a
  // commit or an abort at a random later step.
  const random = mulberry32(seed);
  for (let step = 0; step < 120; step++) {
    const p = Math.floor(random() * PRODUCERS);
    if (!open.has(p)) await begin(p);
    else if (random() < 0.55) await send(p);
    else await end(p, random() < 0.5);
  }
  for (const p of [...open.keys()]) await end(p, false);
  // A committed record last, so a reader that shows it has read past every aborted record.
  await begin(0);
  await end(0, true);
  return { written, abortOrder };
}

/** Runs the change-feed subscriber of docs/topics.md, pointed at the test topic, until it prints `last`. */
async function runReadmeSubscriber(brokers: string[], topic: string, group: string, last: string): Promise<string[]> {
  const readme = readFileSync(join(root, 'docs', 'topics.md'), 'utf8');
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const example = blocks.find((b) => b.includes("topics: ['changes']"));
  assert.ok(example, 'docs/topics.md has a kafkajs subscriber example for `changes`');
  const code = example
    .replace("['localhost:9092']", JSON.stringify(brokers))
    .replace("topics: ['changes']", `topics: [${JSON.stringify(topic)}]`)
    .replace(/groupId: '[^']+'/, `groupId: ${JSON.stringify(group)}`);
  assert.notEqual(code, example, 'the example could be pointed at the test broker');
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  try {
    await waitFor(`the docs' subscriber to print ${last} (stderr: ${stderr.slice(-2000)})`, () => lines.some((l) => l.includes(last)) || child.exitCode !== null, 60_000);
    assert.equal(child.exitCode, null, `the docs' subscriber exited early: ${stderr.slice(-2000)}`);
    return lines;
  } finally {
    child.kill('SIGKILL');
  }
}

const ids = (values: readonly string[]): string[] => values.map((v) => (JSON.parse(v) as { title: string }).title);

describe('aborted transactions are never read (real broker)', { timeout: 240_000 }, () => {
  const brokers = kafkaBrokers();
  const prefix = uniquePrefix();
  const topic = `${prefix}changes`;
  const transport = new KafkaTransport({ brokers });
  const writer = new kafkajs.Kafka({ clientId: 'tx-writer', brokers, logLevel: kafkajs.logLevel.NOTHING });
  const producers: Producer[] = [];
  let written: Written[] = [];
  let abortOrder: number[] = [];
  let expected: string[] = [];

  before(async () => {
    await transport.ensureTopics([{ name: topic, partitions: 1 }]);
    for (let p = 0; p < PRODUCERS; p++) {
      const producer = writer.producer({ transactionalId: `${prefix}writer-${p}`, idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      producers.push(producer);
    }
    ({ written, abortOrder } = await writeInterleaved(producers, topic, 10));
    expected = written.filter((w) => w.committed).map((w) => w.value);
    assert.ok(expected.length > 20 && written.length - expected.length > 20, `a fair mix of committed and aborted records (${expected.length} of ${written.length})`);
  });

  after(async () => {
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await transport.close();
  });

  it('the writes abort transactions out of first-offset order (the case kafkajs 2.2.4 gets wrong)', () => {
    const inversions = abortOrder.filter((first, i) => i > 0 && first < abortOrder[i - 1]!).length;
    assert.ok(inversions >= 5, `aborted transactions ended out of start order ${inversions} times`);
  });

  it("a service's group member reads only committed records, in order", async () => {
    const seen: LogRecord[] = [];
    const member = await transport.join({
      groupId: `${prefix}service`,
      topics: [topic],
      onAssigned: async () => {},
      onRevoked: async () => {},
      eachBatch: async (batch) => {
        seen.push(...batch.records);
      },
    });
    try {
      const lastOffset = written.filter((w) => w.committed).at(-1)!.offset;
      await waitFor('the group member to read past the last committed record', () => seen.some((r) => r.offset >= lastOffset), 60_000);
      assert.deepEqual(ids(seen.map((r) => r.value!.toString('utf8'))), ids(expected));
    } finally {
      await member.stop();
    }
  });

  it('readPartition (restore, replay) reads only committed records, from any start offset', async () => {
    const reader = new KafkaTransport({ brokers });
    try {
      const high = written.at(-1)!.offset + 2;
      // From the start and from offsets inside open transactions: a reader that starts mid-way must
      // still skip the rest of a transaction that began before its start.
      const starts = [0, ...written.filter((_, i) => i % 9 === 4).map((w) => w.offset)];
      for (const from of starts) {
        const got: string[] = [];
        for await (const chunk of reader.readPartition(topic, 0, from, high)) for (const r of chunk) got.push(r.value!.toString('utf8'));
        const want = written.filter((w) => w.committed && w.offset >= from).map((w) => w.value);
        assert.deepEqual(ids(got), ids(want), `reading from offset ${from}`);
      }
    } finally {
      await reader.close();
    }
  });

  it('`meguri tail` prints only committed records', async () => {
    const lines: string[] = [];
    const printed = await tailCommand('changes', { kafka: brokers.join(','), data: '.data', topicPrefix: prefix }, (line) => lines.push(line));
    assert.equal(printed, expected.length);
    assert.deepEqual(ids(lines), ids(expected));
  });

  it("the subscriber example of docs/topics.md prints only committed records", async () => {
    const lastId = ids([expected.at(-1)!])[0]!;
    const lines = await runReadmeSubscriber(brokers, topic, `${prefix}readme`, `/${lastId} `);
    // kafkajs logs to stdout too; the example's own lines start with the change kind.
    const urls = lines.filter((l) => /^(new|changed|gone) /.test(l)).map((l) => l.split(' ')[1] ?? '');
    assert.deepEqual(urls, expected.map((v) => (JSON.parse(v) as { url: string }).url));
  });
});
