/**
 * Platform throughput: produce → consume → state write → commit, 1 KB records, one partition with a
 * state store, on the embedded log and on Kafka (when KAFKA_BROKERS is set, or --kafka host:port).
 *
 *   npm run bench:platform -- [--records 50000] [--kafka 127.0.0.1:9092] [--json]
 */
import { parseArgs } from 'node:util';
import { SCHEMA_VERSION } from '../schemas/index.ts';
import type { LinksRecord } from '../schemas/index.ts';
import { StreamService, createTransport } from '../services/runtime/index.ts';
import type { ServiceDefinition, Transport } from '../services/runtime/index.ts';
import { tempDir, removeDir, uniquePrefix } from '../test/support/transports.ts';
import { machineInfo, machineLine } from './machine.ts';
import { crawlCatalog } from '../topology/catalog.ts';
import { removeRunTopics, requireBroker } from './kafka-topics.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '50000' },
    kafka: { type: 'string', default: process.env.KAFKA_BROKERS ?? '' },
    json: { type: 'boolean', default: false },
    batch: { type: 'string', default: '1000' },
  },
});
const N = Number(values.records);

function definition(batch: number, onDone: () => void): ServiceDefinition<LinksRecord> {
  let seen = 0;
  return {
    name: 'bench',
    inputs: ['links'],
    outputs: ['changes'],
    stores: [{ name: 'counts', changelog: true, description: 'bench' }],
    guarantee: 'exactly-once',
    maxBatchRecords: batch,
    createProcessor: () => ({
      async process(records, ctx) {
        const store = ctx.store<number>('counts');
        for (const r of records) store.put(r.value.type === 'links' ? r.value.source : r.value.url, (r.offset % 7) + 1);
        seen += records.length;
        if (seen >= N) onDone();
      },
    }),
  };
}

async function run(kind: 'embedded' | 'kafka'): Promise<Record<string, number | string>> {
  const dir = tempDir('meguri-bench-');
  const transport: Transport = await createTransport({ transport: kind, kafkaBrokers: values.kafka ? values.kafka.split(',') : [], dataDir: dir });
  const prefix = uniquePrefix();
  let finished!: () => void;
  const done = new Promise<void>((r) => (finished = r));
  const service = new StreamService(definition(Number(values.batch), () => finished()), { transport, catalog: crawlCatalog, dataDir: dir, topicPrefix: prefix, partitions: 1 });
  await transport.ensureTopics(service.topicDefinitions(1));
  const pad = 'x'.repeat(1024 - 90);
  const t0 = performance.now();
  const chunk = 2000;
  for (let i = 0; i < N; i += chunk) {
    const recs = [];
    for (let j = i; j < Math.min(N, i + chunk); j++) {
      const value: LinksRecord = { v: SCHEMA_VERSION, type: 'seed', url: `http://h${j % 100}.bench.test/${j}?${pad}`, addedAt: 1 };
      recs.push({ topic: `${prefix}links`, key: `h${j % 100}.bench.test`, value: Buffer.from(JSON.stringify(value)) });
    }
    await transport.send(recs);
  }
  const produceS = (performance.now() - t0) / 1000;
  const rssBefore = process.memoryUsage().rss;
  const t1 = performance.now();
  await service.start();
  await done;
  const consumeS = (performance.now() - t1) / 1000;
  await service.stop();
  await transport.close();
  removeDir(dir);
  if (kind === 'kafka') await removeRunTopics(values.kafka.split(','), prefix);
  return {
    transport: kind,
    records: N,
    produceRecordsPerS: Math.round(N / produceS),
    consumeStateCommitRecordsPerS: Math.round(N / consumeS),
    endToEndRecordsPerS: Math.round(N / (produceS + consumeS)),
    rssMiB: Math.round(Math.max(rssBefore, process.memoryUsage().rss) / 2 ** 20),
  };
}

if (values.kafka) await requireBroker(values.kafka.split(','), 'bench:platform');
const results = [await run('embedded')];
if (values.kafka) results.push(await run('kafka'));
const machine = machineInfo();
if (values.json) console.log(JSON.stringify({ machine, results }, null, 2));
else {
  console.log(machineLine(machine));
  console.table(results);
}
process.exit(0);
