/**
 * Pipelined delivery on the real Kafka broker (services/runtime/kafka/partition-feed.ts): kafkajs
 * fetches on while a partition works, batches that waited are committed together, a task still
 * processes at most maxBatchRecords at a time, every record is counted exactly once, and a batch
 * handed back (its task not running yet) is read again from its first offset with nothing after it
 * processed first.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { StreamService } from '../../services/runtime/index.ts';
import type { LinksRecord, TopicRecords } from '../../schemas/index.ts';
import type { OutRecord, ServiceDefinition, Transport } from '../../services/runtime/index.ts';
import { SCHEMA_VERSION, linksRecord } from '../../schemas/index.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { openTransport, tempDir, removeDir, uniquePrefix, waitFor, readAll } from '../support/transports.ts';

function seeds(prefix: string, from: number, n: number): OutRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const url = `http://h.test/p${from + i}`;
    return { topic: `${prefix}links`, key: 'h.test', partition: 0, value: Buffer.from(JSON.stringify(linksRecord.parse({ v: SCHEMA_VERSION, type: 'seed', url, addedAt: Date.now() }))) };
  });
}

interface Observed {
  calls: number[][];
}

/** Counts each URL (exactly once shows as titles 1 only) and records the URLs of every process() call. */
function recordingCounter(observed: Observed, options: { delayMs: number; maxBatchRecords: number; slowFirstOpenMs?: number }): ServiceDefinition<LinksRecord, TopicRecords> {
  let slowOpen = options.slowFirstOpenMs ?? 0;
  return {
    name: 'recorder',
    inputs: ['links'],
    outputs: ['changes'],
    stores: [{ name: 'counts', changelog: true }],
    guarantee: 'exactly-once',
    maxBatchRecords: options.maxBatchRecords,
    createProcessor: () => ({
      async init() {
        // A task that opens slowly: on Kafka a batch waits a second for it, then is handed back.
        const wait = slowOpen;
        slowOpen = 0;
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      },
      async process(records, ctx) {
        const counts = ctx.store<number>('counts');
        observed.calls.push(records.map((r) => Number((r.value.type === 'seed' ? r.value.url : '').split('/p')[1])));
        for (const r of records) {
          const url = r.value.type === 'seed' ? r.value.url : '';
          const n = ((await counts.get(url)) ?? 0) + 1;
          counts.put(url, n);
          ctx.emit('changes', url, { v: SCHEMA_VERSION, url, time: ctx.now(), kind: n === 1 ? 'new' : 'changed', title: String(n) });
        }
        await new Promise((r) => setTimeout(r, options.delayMs));
      },
    }),
  };
}

describe('pipelined delivery on kafka', { timeout: 180_000 }, () => {
  let dir: string;
  let transport: Transport;
  before(async () => {
    dir = tempDir();
    transport = await openTransport('kafka', dir);
  });
  after(async () => {
    await transport.close();
    removeDir(dir);
  });

  it('commits batches that waited together, processes them maxBatchRecords at a time, in order, each record once', async () => {
    const prefix = uniquePrefix();
    const observed: Observed = { calls: [] };
    const service = new StreamService(recordingCounter(observed, { delayMs: 20, maxBatchRecords: 10 }), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1 });
    await service.start();
    await service.ready();
    // Sent while the service runs, in sends of 50: fetches keep arriving while it works.
    for (let i = 0; i < 600; i += 50) await transport.send(seeds(prefix, i, 50));
    await waitFor('every record counted', async () => (await readAll(transport, `${prefix}changes`)).length >= 600, 90_000, 200);
    await new Promise((r) => setTimeout(r, 500));
    const out = await readAll(transport, `${prefix}changes`);
    assert.equal(out.length, 600, 'one output per input');
    assert.ok(out.every((r) => (JSON.parse(r.value!) as { title: string }).title === '1'), 'no record counted twice');
    const order = observed.calls.flat();
    assert.deepEqual(order, Array.from({ length: 600 }, (_, i) => i), 'every record processed once, in offset order');
    assert.ok(observed.calls.every((c) => c.length <= 10), `process() never saw more than maxBatchRecords: ${Math.max(...observed.calls.map((c) => c.length))}`);
    const commits = (await service.metrics.commitSeconds.get()).values.find((v) => v.metricName === 'meguri_commit_seconds_count')?.value ?? 0;
    assert.ok(commits > 0 && commits <= observed.calls.length / 2, `${commits} commits for ${observed.calls.length} process() calls: batches that waited were committed together`);
    await service.stop();
  });

  it('with a transaction interval, records that trickle in go in one transaction per interval, each once, in order', async () => {
    const prefix = uniquePrefix();
    const observed: Observed = { calls: [] };
    const intervalMs = 400;
    const service = new StreamService(recordingCounter(observed, { delayMs: 0, maxBatchRecords: 500 }), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1, transactionIntervalMs: intervalMs });
    await service.start();
    await service.ready();
    // One record every 20 ms for about 4 s: without the interval, nearly a transaction per record.
    const started = performance.now();
    for (let i = 0; i < 200; i++) {
      await transport.send(seeds(prefix, i, 1));
      await new Promise((r) => setTimeout(r, 20));
    }
    const sendingMs = performance.now() - started;
    await waitFor('every record counted', async () => (await readAll(transport, `${prefix}changes`)).length >= 200, 90_000, 200);
    await new Promise((r) => setTimeout(r, 500));
    const out = await readAll(transport, `${prefix}changes`);
    assert.equal(out.length, 200, 'one output per input');
    assert.ok(out.every((r) => (JSON.parse(r.value!) as { title: string }).title === '1'), 'no record counted twice');
    assert.deepEqual(observed.calls.flat(), Array.from({ length: 200 }, (_, i) => i), 'every record processed once, in offset order');
    const commits = (await service.metrics.commitSeconds.get()).values.find((v) => v.metricName === 'meguri_commit_seconds_count')?.value ?? 0;
    const bound = Math.ceil(sendingMs / intervalMs) + 3;
    assert.ok(commits > 0 && commits <= bound, `${commits} commits over ${Math.round(sendingMs)} ms of sends, at most ${bound} with a ${intervalMs} ms interval`);
    await service.stop();
  });

  it('a batch handed back is read again from its first offset; nothing queued after it runs first', async () => {
    const prefix = uniquePrefix();
    const observed: Observed = { calls: [] };
    await transport.ensureTopics([{ name: `${prefix}links`, partitions: 1 }]);
    // Records wait in the topic before the service starts, so the first fetches bring many batches.
    for (let i = 0; i < 300; i += 50) await transport.send(seeds(prefix, i, 50));
    const service = new StreamService(recordingCounter(observed, { delayMs: 5, maxBatchRecords: 25, slowFirstOpenMs: 2500 }), { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1 });
    await service.start();
    await waitFor('every record counted', async () => (await readAll(transport, `${prefix}changes`)).length >= 300, 90_000, 200);
    await new Promise((r) => setTimeout(r, 500));
    const out = await readAll(transport, `${prefix}changes`);
    assert.equal(out.length, 300);
    assert.deepEqual(observed.calls.flat(), Array.from({ length: 300 }, (_, i) => i), 'in order from offset 0, each once');
    await service.stop();
  });
});
