/**
 * The stream platform's acceptance tests, each on the embedded log AND on the real Kafka broker:
 * murmur2 partitioning and per-partition order, consumer-group split and rebalance, replay from an
 * offset and from a timestamp, dead-lettering of invalid records, crash safety with kill -9 in the
 * middle of a batch (exactly-once: no loss, no duplicate), and state migration to an empty member.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { StreamService, partitionForKey } from '../../services/runtime/index.ts';
import type { Transport, TopicPartition, GroupMember, OutRecord } from '../../services/runtime/index.ts';
import { SCHEMA_VERSION, linksRecord, deadletterRecord, encodePageRecord } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { parserService } from '../../services/parser/service.ts';
import { counterService } from './fixtures/counter-service.ts';
import { transportKinds, openTransport, tempDir, removeDir, uniquePrefix, waitFor, readAll } from '../support/transports.ts';
import type { TransportKind } from '../support/transports.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

const counterScript = fileURLToPath(new URL('./fixtures/counter-service.ts', import.meta.url));

function seed(url: string, addedAt = Date.now()): Buffer {
  return Buffer.from(JSON.stringify(linksRecord.parse({ v: SCHEMA_VERSION, type: 'seed', url, addedAt })));
}

function hostOf(url: string): string {
  return new URL(url).hostname;
}

/** Input of the counter service: `n` seeds over 40 hosts and 160 URLs (each URL seen n/160 times). */
function counterInput(prefix: string, n: number): OutRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const url = `http://h${i % 40}.test/p${i % 160}`;
    return { topic: `${prefix}links`, key: hostOf(url), value: seed(url) };
  });
}

function spawnCounter(kind: TransportKind, dataDir: string, prefix: string, stateDir: string, delayMs: number): { child: ChildProcess; lines: AsyncIterableIterator<string>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', counterScript, kind, dataDir, prefix, stateDir], {
    env: { ...process.env, COUNTER_DELAY_MS: String(delayMs), MEGURI_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

async function waitForLine(lines: AsyncIterableIterator<string>, pred: (obj: Record<string, unknown>) => boolean): Promise<void> {
  for (;;) {
    const { value, done } = await lines.next();
    if (done) throw new Error('child exited before the expected output');
    const obj = JSON.parse(value) as Record<string, unknown>;
    if (pred(obj)) return;
  }
}

/** Checks exactly-once output of the counter: each URL's titles are 1..n, each once. */
function assertExactlyOnce(records: { value: string | null }[], expectedPerUrl: number, urls: number): void {
  const titles = new Map<string, number[]>();
  for (const r of records) {
    const v = JSON.parse(r.value!) as { url: string; title: string };
    const list = titles.get(v.url) ?? [];
    titles.set(v.url, list);
    list.push(Number(v.title));
  }
  assert.equal(titles.size, urls, 'every URL produced output');
  for (const [url, list] of titles) {
    list.sort((a, b) => a - b);
    assert.deepEqual(list, Array.from({ length: expectedPerUrl }, (_, i) => i + 1), `outputs of ${url} are 1..${expectedPerUrl} exactly once`);
  }
}

for (const kind of transportKinds) {
  describe(`stream platform on ${kind}`, { timeout: 240_000 }, () => {
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

    it('puts keyed records on the murmur2 partition and keeps per-partition order', async () => {
      const topic = `${uniquePrefix()}keyed`;
      await transport.ensureTopics([{ name: topic, partitions: 6 }]);
      const keys = Array.from({ length: 300 }, (_, i) => `host-${i % 37}.example`);
      const meta = await transport.send(keys.map((key, i) => ({ topic, key, value: Buffer.from(String(i)) })));
      for (let i = 0; i < keys.length; i++) {
        assert.equal(meta[i]!.partition, partitionForKey(keys[i]!, 6));
        assert.equal(await transport.partitionFor(topic, keys[i]!), partitionForKey(keys[i]!, 6));
      }
      const all = await readAll(transport, topic);
      assert.equal(all.length, 300);
      for (const r of all) assert.equal(r.partition, partitionForKey(r.key!, 6), 'record is on its key partition');
      // Per key, values come back in send order.
      const byKey = new Map<string, number[]>();
      for (const r of all.sort((a, b) => a.partition - b.partition || a.offset - b.offset)) {
        const list = byKey.get(r.key!) ?? [];
        byKey.set(r.key!, list);
        list.push(Number(r.value));
      }
      for (const list of byKey.values()) assert.deepEqual(list, [...list].sort((a, b) => a - b));
    });

    it('splits partitions between two group members and rebalances when one leaves', async () => {
      const topic = `${uniquePrefix()}group`;
      const groupId = `${topic}-g`;
      await transport.ensureTopics([{ name: topic, partitions: 4 }]);
      const second = await openTransport(kind, dir);
      const seen = new Map<string, number>();
      const assignments: Record<string, TopicPartition[]> = { a: [], b: [] };
      const join = (t: Transport, name: 'a' | 'b'): Promise<GroupMember> => {
        let member: GroupMember | undefined;
        const p = t.join({
          groupId,
          topics: [topic],
          memberName: name,
          onAssigned: async (tps) => void (assignments[name] = [...assignments[name]!, ...tps]),
          onRevoked: async (tps) => void (assignments[name] = assignments[name]!.filter((x) => !tps.some((y) => y.partition === x.partition))),
          eachBatch: async (batch) => {
            for (const r of batch.records) seen.set(r.value!.toString(), (seen.get(r.value!.toString()) ?? 0) + 1);
            const last = batch.records[batch.records.length - 1]!;
            await member!.commit({ transactional: false, outputs: [], offsets: [{ topic, partition: batch.partition, offset: last.offset + 1 }] });
          },
        });
        return p.then((m) => (member = m));
      };
      const a = await join(transport, 'a');
      const b = await join(second, 'b');
      await waitFor('both members assigned', () => assignments.a!.length > 0 && assignments.b!.length > 0 && assignments.a!.length + assignments.b!.length === 4, 60000);
      assert.equal(new Set([...assignments.a!, ...assignments.b!].map((tp) => tp.partition)).size, 4, 'each partition owned once');
      await transport.send(Array.from({ length: 200 }, (_, i) => ({ topic, key: `k${i}`, value: Buffer.from(`r${i}`) })));
      await waitFor('first 200 consumed', () => seen.size === 200, 60000);
      await b.stop();
      await second.close();
      await waitFor('a owns every partition', () => assignments.a!.length === 4, 60000);
      await transport.send(Array.from({ length: 200 }, (_, i) => ({ topic, key: `k${i}`, value: Buffer.from(`s${i}`) })));
      await waitFor('all 400 consumed', () => seen.size === 400, 60000);
      await a.stop();
      assert.ok([...seen.values()].every((n) => n === 1), 'no record consumed twice across the handover');
    });

    it('replays a topic into a new group from offset 0 and from a timestamp', async () => {
      const topic = `${uniquePrefix()}replay`;
      await transport.ensureTopics([{ name: topic, partitions: 2 }]);
      const t0 = Date.now() - 60_000;
      await transport.send(Array.from({ length: 50 }, (_, i) => ({ topic, key: `k${i}`, value: Buffer.from(`old${i}`), timestamp: t0 + i })));
      const cut = Date.now() - 1000;
      await transport.send(Array.from({ length: 30 }, (_, i) => ({ topic, key: `k${i}`, value: Buffer.from(`new${i}`), timestamp: cut + 500 + i })));
      const consume = async (groupId: string): Promise<string[]> => {
        const got: string[] = [];
        const m = await transport.join({ groupId, topics: [topic], onAssigned: async () => {}, onRevoked: async () => {}, eachBatch: async (b) => void got.push(...b.records.map((r) => r.value!.toString())) });
        await waitFor(`group ${groupId} read its records`, () => got.length >= (groupId.endsWith('zero') ? 80 : 30), 60000);
        await new Promise((r) => setTimeout(r, 300));
        await m.stop();
        return got;
      };
      const all = await consume(`${topic}-zero`);
      assert.equal(all.length, 80);
      const fromTime = `${topic}-time`;
      const offsets = await Promise.all([0, 1].map(async (partition) => ({ topic, partition, offset: await transport.offsetForTimestamp(topic, partition, cut) })));
      await transport.setCommittedOffsets(fromTime, offsets);
      assert.deepEqual((await transport.committedOffsets(fromTime, topic)).map((o) => o.offset), offsets.map((o) => o.offset));
      const recent = await consume(fromTime);
      assert.equal(recent.length, 30);
      assert.ok(recent.every((v) => v.startsWith('new')), 'only records at or after the timestamp');
    });

    it('sends a record that fails its schema to deadletter with the reason and keeps running', async () => {
      const prefix = uniquePrefix();
      const service = new StreamService(counterService(), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 2 });
      await service.start();
      await service.ready();
      await transport.send([
        { topic: `${prefix}links`, key: 'a.test', value: seed('http://a.test/1') },
        { topic: `${prefix}links`, key: 'a.test', value: Buffer.from('{"v":1,"type":"seed","url":"ftp://nope"}') },
        { topic: `${prefix}links`, key: 'a.test', value: Buffer.from('not json at all') },
        { topic: `${prefix}links`, key: 'a.test', value: seed('http://a.test/2') },
      ]);
      await waitFor('outputs for the two valid records', async () => (await readAll(transport, `${prefix}changes`)).length === 2, 60000);
      const dead = (await readAll(transport, `${prefix}deadletter`)).map((r) => deadletterRecord.parse(JSON.parse(r.value!)));
      assert.equal(dead.length, 2);
      const schemaFail = dead.find((d) => d.code === 'MEGURI_ERR_SCHEMA')!;
      assert.match(schemaFail.reason, /url/);
      assert.equal(schemaFail.origin.topic, `${prefix}links`);
      assert.equal(schemaFail.value, '{"v":1,"type":"seed","url":"ftp://nope"}');
      assert.ok(dead.some((d) => d.code === 'MEGURI_ERR_DECODE' && d.value === 'not json at all'));
      const dlCount = (await service.metrics.deadletters.get()).values.reduce((sum, v) => sum + v.value, 0);
      assert.equal(dlCount, 2, 'the dead-letter counter counts both');
      await service.stop();
    });

    for (const workers of [0, 1]) {
      it(`the parser${workers > 0 ? ' with a parse pool' : ''} reads framed pages and dead-letters the ones it cannot read, bytes intact`, async () => {
        const prefix = uniquePrefix();
        const parser = parserService({ workers });
        const service = new StreamService(parser, { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1 });
        await service.start();
        await service.ready();
        const url = 'http://a.test/p';
        const page: PageRecord = {
          v: SCHEMA_VERSION,
          request: { v: SCHEMA_VERSION, requestId: 'r1', url, host: 'a.test', reason: 'new', score: 0, depth: 0, cgiHops: 0, attempt: 1, issuedAt: 1 },
          finalUrl: url,
          redirects: [],
          status: 200,
          headers: { 'content-type': 'text/html; charset=iso-8859-1' },
          contentType: 'text/html',
          body: Buffer.from('<title>caf\xe9</title><a href="/q">q</a>', 'latin1'),
          bodyTruncated: false,
          bytes: 40,
          decodedBytes: 40,
          timing: { startedAt: 1, totalMs: 1 },
          fetchedAt: 2,
        };
        const good = encodePageRecord(page);
        const cutShort = good.subarray(0, good.length - 3);
        const garbage = Buffer.from([0x4d, 0x47, 0x50, 0x01, 0xff, 0x00, 0x00, 0x00, 0x80, 0x81]);
        const badHeader = encodePageRecord({ ...page, status: -5 });
        await transport.send([good, cutShort, garbage, badHeader].map((value) => ({ topic: `${prefix}pages`, key: 'a.test', value })));
        await waitFor('the good page parsed', async () => (await readAll(transport, `${prefix}links`)).length === 2, 60_000);
        const links = (await readAll(transport, `${prefix}links`)).map((r) => linksRecord.parse(JSON.parse(r.value!)));
        const outcome = links.find((l) => l.type === 'outcome');
        assert.ok(outcome?.type === 'outcome');
        assert.equal(outcome.title, 'café', 'the parser decoded the Latin-1 bytes');
        await waitFor('three dead letters', async () => (await readAll(transport, `${prefix}deadletter`)).length === 3, 60_000);
        const dead = (await readAll(transport, `${prefix}deadletter`)).map((r) => deadletterRecord.parse(JSON.parse(r.value!)));
        assert.deepEqual(dead.map((d) => d.code).sort(), ['MEGURI_ERR_DECODE', 'MEGURI_ERR_DECODE', 'MEGURI_ERR_SCHEMA']);
        const short = dead.find((d) => /declares \d+ body bytes/.test(d.reason));
        assert.ok(short, dead.map((d) => d.reason).join(' | '));
        assert.equal(short.valueEncoding, 'base64');
        assert.ok(Buffer.from(short.value, 'base64').equals(cutShort), 'the dead letter keeps the exact bytes');
        await service.stop();
        await parser.close();
      });
    }

    it('survives kill -9 in the middle of a batch: no committed record lost, no output duplicated', async () => {
      const prefix = uniquePrefix();
      const stateDir = tempDir();
      // The embedded log is single-process: the child owns it while it runs.
      let t: Transport | undefined = kind === 'kafka' ? transport : await openTransport(kind, stateDir);
      const service = new StreamService(counterService(), { transport: t, catalog: crawlCatalog, dataDir: stateDir, topicPrefix: prefix, partitions: 4 });
      await t.ensureTopics(service.topicDefinitions(4));
      await t.send(counterInput(prefix, 3200));
      if (kind === 'embedded') {
        await t.close();
        t = undefined;
      }
      const logDir = stateDir;
      const first = spawnCounter(kind, logDir, prefix, stateDir, 15);
      await waitForLine(first.lines, (o) => typeof o.processed === 'number' && o.processed >= 900);
      first.child.kill('SIGKILL');
      await first.exited;
      const second = spawnCounter(kind, logDir, prefix, stateDir, 0);
      await waitForLine(second.lines, (o) => o.ready === true);
      const reader = kind === 'kafka' ? transport : undefined;
      await waitForLine(second.lines, (o) => typeof o.committed === 'number' && o.committed >= 3200);
      second.child.kill('SIGTERM');
      await second.exited;
      const check = reader ?? (await openTransport(kind, logDir));
      try {
        const out = await readAll(check, `${prefix}changes`);
        assert.equal(out.length, 3200, 'one output per input');
        assertExactlyOnce(out, 20, 160);
      } finally {
        if (!reader) await check.close();
        removeDir(stateDir);
      }
    });

    // Kafka: B restores A's stores from their changelogs. Embedded: the stores are kept in the log
    // itself, written with the commits, so B reads them where A left them and replays nothing.
    it('moves state: a member with an empty data dir carries on from a dead member\'s store', async () => {
      const prefix = uniquePrefix();
      const dirA = tempDir();
      const dirB = tempDir();
      const logOwner = kind === 'kafka' ? transport : await openTransport(kind, tempDir());
      const a = new StreamService(counterService(), { transport: logOwner, catalog: crawlCatalog, dataDir: dirA, topicPrefix: prefix, partitions: 2 });
      await a.start();
      await a.ready();
      await logOwner.send(counterInput(prefix, 800));
      await waitFor('A processed all', async () => (await readAll(logOwner, `${prefix}changes`)).length === 800, 60000, 200);
      // A dies: its stores are gone with it; B starts on an empty disk.
      await a.stop();
      removeDir(dirA);
      const b = new StreamService(counterService(), { transport: logOwner, catalog: crawlCatalog, dataDir: dirB, topicPrefix: prefix, partitions: 2 });
      await b.start();
      await b.ready();
      assert.deepEqual(b.assignedPartitions(), [0, 1]);
      const restored = (await b.metrics.restoredRecords.get()).values.reduce((sum, v) => sum + v.value, 0);
      if (kind === 'kafka') assert.ok(restored >= 160, `B replayed the changelog (${restored} records)`);
      else assert.equal(restored, 0, 'the embedded log holds the stores: nothing to replay');
      await logOwner.send(counterInput(prefix, 160));
      await waitFor('B processed the new records', async () => (await readAll(logOwner, `${prefix}changes`)).length === 960, 60000, 200);
      const out = await readAll(logOwner, `${prefix}changes`);
      assertExactlyOnce(out, 6, 160);
      await b.stop();
      if (kind === 'embedded') await logOwner.close();
      removeDir(dirB);
    });
  });
}
