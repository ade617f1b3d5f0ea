/**
 * Throughput of the embedded log: appends of 1 KB records in batches of 500 (one send at a time and
 * with several in flight), raw partition reads, and a consumer group that commits after every batch.
 * Usage: tsx bench/embedded-log.bench.ts [records=200000] [partitions=8] [payload=random|text] [fsync=both|off|on]
 * (random bytes do not compress: the worst case for RocksDB; text compresses like HTML would).
 * Each case runs without and with fsync (`--fsync` / MEGURI_FSYNC: every write batch synced to
 * disk), plus small commits — one record and its offset per commit, one at a time — where the
 * fsync of every commit costs most.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { EmbeddedTransport } from '../services/runtime/embedded/index.ts';
import type { OutRecord } from '../services/runtime/transport.ts';
import { machineInfo, machineLine } from './machine.ts';

const total = Number(process.argv[2] ?? 200_000);
const partitions = Number(process.argv[3] ?? 8);
const BATCH = 500;
const payload =
  process.argv[4] === 'text'
    ? Buffer.from('<p>The quick brown fox jumps over the lazy dog. </p>\n'.repeat(20).slice(0, 1024))
    : randomBytes(1024);

function batchOf(topic: string, start: number): OutRecord[] {
  return Array.from({ length: BATCH }, (_, i) => ({ topic, key: `host-${(start + i) % 5000}.example`, value: payload }));
}

function rate(n: number, ms: number): string {
  return `${Math.round(n / (ms / 1000)).toLocaleString('en-US')} rec/s (${((n * payload.length) / 1048576 / (ms / 1000)).toFixed(1)} MiB/s)`;
}

const SMALL_COMMITS = 2000;

async function main(sync: boolean): Promise<void> {
  console.log(`-- fsync ${sync ? 'on' : 'off'}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meguri-elog-bench-'));
  const t = await EmbeddedTransport.open({ dir, logger: pino({ level: 'silent' }), maintenanceIntervalMs: 0, sync });
  try {
    await t.ensureTopics([{ name: 'small', partitions: 1 }]);
    const small = await t.join({ groupId: 'small-bench', topics: ['small'], onAssigned: async () => undefined, onRevoked: async () => undefined, eachBatch: async () => undefined });
    const s0 = performance.now();
    for (let i = 0; i < SMALL_COMMITS; i++) {
      await small.commit({ transactional: true, scope: 'small', outputs: [{ topic: 'small', key: `k${i}`, value: payload }], offsets: [] });
    }
    const smallMs = performance.now() - s0;
    console.log(`small commits, 1 at a time: ${Math.round(SMALL_COMMITS / (smallMs / 1000)).toLocaleString('en-US')} commits/s (${((smallMs * 1000) / SMALL_COMMITS).toFixed(0)} µs each)`);
    await small.stop();

    await t.ensureTopics([
      { name: 'seq', partitions },
      { name: 'par', partitions },
    ]);

    let t0 = performance.now();
    for (let n = 0; n < total; n += BATCH) await t.send(batchOf('seq', n));
    console.log(`append, 1 send in flight:  ${rate(total, performance.now() - t0)}`);

    t0 = performance.now();
    let next = 0;
    const writer = async (): Promise<void> => {
      while (next < total) {
        const start = next;
        next += BATCH;
        await t.send(batchOf('par', start));
      }
    };
    await Promise.all([writer(), writer(), writer(), writer()]);
    console.log(`append, 4 sends in flight: ${rate(total, performance.now() - t0)}`);

    t0 = performance.now();
    let read = 0;
    for (let p = 0; p < partitions; p++) {
      for await (const chunk of t.readPartition('seq', p, 0, Number.MAX_SAFE_INTEGER)) read += chunk.length;
    }
    console.log(`readPartition:             ${rate(read, performance.now() - t0)}`);

    t0 = performance.now();
    let consumed = 0;
    let finish: () => void = () => undefined;
    const allConsumed = new Promise<void>((resolve) => (finish = resolve));
    const member = await t.join({
      groupId: 'bench',
      topics: ['seq'],
      onAssigned: async () => undefined,
      onRevoked: async () => undefined,
      eachBatch: async (batch) => {
        const last = batch.records[batch.records.length - 1];
        if (last) {
          await member.commit({ transactional: true, scope: `bench-${batch.partition}`, outputs: [], offsets: [{ topic: batch.topic, partition: batch.partition, offset: last.offset + 1 }] });
        }
        consumed += batch.records.length;
        if (consumed >= total) finish();
      },
    });
    await allConsumed;
    console.log(`group consume + commit:    ${rate(consumed, performance.now() - t0)}`);
    await member.stop();
  } finally {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(machineLine(machineInfo()));
console.log(`${total.toLocaleString('en-US')} records of ${payload.length} B, ${partitions} partitions, batches of ${BATCH}; data in ${os.tmpdir()}`);
const mode = process.argv[5] ?? 'both';
if (mode !== 'on') await main(false);
if (mode !== 'off') await main(true);
