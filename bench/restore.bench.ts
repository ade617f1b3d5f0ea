/**
 * Restore time of one scheduler partition on Kafka: its changelogs (urls, queues, hosts) filled with
 * N known URLs (test/support/state-prefill.ts: fetched pages, revisit index entries, host records),
 * then a cold restore into an empty RocksDB (a member that never held the partition: records/s and
 * seconds), and a warm one (the same member reopening with its checkpoint current: what a sticky
 * reassignment or a static member's restart costs).
 *
 *   npm run bench:restore -- --kafka 127.0.0.1:<port> [--urls 1000000,10000000] [--json]
 *
 * The broker's disk needs ~160 bytes per URL per size while it runs (the topics are removed after).
 */
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { KafkaTransport } from '../services/runtime/kafka/kafka-transport.ts';
import { ServiceMetrics } from '../services/runtime/metrics.ts';
import { StateManager } from '../services/runtime/state-manager.ts';
import { silentLogger } from '../services/runtime/logger.ts';
import { changelogTopicName } from '../topology/index.ts';
import { prefillSchedulerState } from '../test/support/state-prefill.ts';
import { tempDir, removeDir, uniquePrefix } from '../test/support/transports.ts';
import { assertBrokerReachable, deleteTopicsWithPrefix } from './kafka-topics.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    kafka: { type: 'string', default: process.env.KAFKA_BROKERS ?? '' },
    urls: { type: 'string', default: '1000000' },
    json: { type: 'boolean', default: false },
  },
});

const STORES = ['urls', 'hosts', 'queues'];

interface Row {
  urls: number;
  records: number;
  mib: number;
  prefillS: number;
  coldS: number;
  coldRecordsPerS: number;
  warmS: number;
  diskMiB: number;
}

async function restoreOnce(transport: KafkaTransport, group: string, dataDir: string): Promise<{ seconds: number; records: number }> {
  const metrics = new ServiceMetrics('bench-restore');
  const state = new StateManager({
    dataDir,
    groupId: group,
    partition: 0,
    stores: STORES.map((name) => ({ name, changelog: true, description: name })),
    transport,
    changelogTopic: (store) => changelogTopicName(group, store),
    logger: silentLogger,
    metrics,
  });
  const t0 = performance.now();
  await state.openAndRestore();
  const seconds = (performance.now() - t0) / 1000;
  await state.close();
  const records = (await metrics.restoredRecords.get()).values.reduce((s, v) => s + v.value, 0);
  return { seconds, records };
}

/** Disk use of a directory (du), MiB; 0 when du is missing. */
function duMiB(dir: string): number {
  const out = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
  return out.status === 0 ? Math.round(Number(out.stdout.split('\t')[0]) / 1024) : 0;
}

async function main(): Promise<void> {
  if (!values.kafka) throw new Error('give the broker: --kafka 127.0.0.1:<port> (bash deploy/local/kafka.sh start prints it)');
  const brokers = values.kafka.split(',');
  await assertBrokerReachable(brokers);
  const sizes = values.urls.split(',').map(Number);
  const rows: Row[] = [];
  for (const urls of sizes) {
    const prefix = uniquePrefix();
    const group = `${prefix}scheduler`;
    const transport = new KafkaTransport({ brokers });
    const dataDir = tempDir('meguri-bench-restore-');
    try {
      await transport.ensureTopics(STORES.map((s) => ({ name: changelogTopicName(group, s), partitions: 1, config: { 'cleanup.policy': 'compact' } })));
      const filled = await prefillSchedulerState(transport, { prefix, partitions: 1, urlsPerPartition: urls });
      if (!values.json) console.error(`${urls.toLocaleString('en-US')} URLs: ${filled.records.toLocaleString('en-US')} records written in ${(filled.ms / 1000).toFixed(1)} s`);
      const cold = await restoreOnce(transport, group, dataDir);
      const warm = await restoreOnce(transport, group, dataDir);
      rows.push({
        urls,
        records: cold.records,
        mib: Math.round(filled.bytes / 2 ** 20),
        prefillS: Math.round(filled.ms / 100) / 10,
        coldS: Math.round(cold.seconds * 10) / 10,
        coldRecordsPerS: Math.round(cold.records / cold.seconds),
        warmS: Math.round(warm.seconds * 100) / 100,
        diskMiB: duMiB(dataDir),
      });
      if (!values.json) console.error(`  cold restore ${cold.seconds.toFixed(1)} s (${cold.records.toLocaleString('en-US')} records), warm ${warm.seconds.toFixed(2)} s (${warm.records} records)`);
    } finally {
      await transport.close();
      removeDir(dataDir);
      await deleteTopicsWithPrefix(brokers, prefix).catch(() => 0);
    }
  }
  if (values.json) {
    console.log(JSON.stringify({ machine: machineInfo(), rows }, null, 2));
    return;
  }
  console.log(machineLine(machineInfo()));
  console.log('| known URLs | changelog records | MiB | cold restore (s) | records/s | warm reopen (s) | RocksDB on disk (MiB) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.urls.toLocaleString('en-US')} | ${r.records.toLocaleString('en-US')} | ${r.mib} | ${r.coldS} | ${r.coldRecordsPerS.toLocaleString('en-US')} | ${r.warmS} | ${r.diskMiB} |`);
  }
}

await main();
