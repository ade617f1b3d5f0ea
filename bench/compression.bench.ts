/**
 * Compression of `pages` records: how many bytes the broker stores and what it costs in CPU, for
 * gzip (built into kafkajs) and, when their kafkajs codec packages can be loaded, Snappy, LZ4 and
 * ZStandard. Records are real `pages` records of the simulated web (≈ 21.8 KB HTML bodies in JSON),
 * compressed in batches of 1, 10 and 50 records, as a producer compresses one partition's records
 * of one send. With KAFKA_BROKERS set, each codec also produces and reads back records on the broker.
 * Usage: tsx bench/compression.bench.ts [records=400]
 * Optional codec packages are looked up in the project and in BENCH_CODEC_DIR (a directory with a
 * node_modules where they were installed), so they need not be dependencies to be measured.
 */
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gzip, unzip } from 'node:zlib';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { SCHEMA_VERSION, encodePageRecord } from '../schemas/index.ts';
import { SimWeb } from '../services/simweb/index.ts';
import { KafkaTransport } from '../services/runtime/kafka/kafka-transport.ts';
import { kafkajs } from '../services/runtime/kafka/kafkajs.ts';
import { DEFAULT_GZIP_LEVEL, gzipCodec } from '../services/runtime/kafka/gzip-codec.ts';
import { machineInfo, machineLine } from './machine.ts';

interface Codec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

const total = Number(process.argv[2] ?? 400);
const requireHere = createRequire(import.meta.url);
const gzipAsync = promisify(gzip);
const unzipAsync = promisify(unzip);
const codecDir = process.env.BENCH_CODEC_DIR ? resolve(process.env.BENCH_CODEC_DIR) : undefined;
const requireThere = codecDir ? createRequire(join(codecDir, 'package.json')) : undefined;

/** A codec package's factory, or why it could not be loaded. */
function loadCodec(name: string): { codec?: Codec; missing?: string } {
  for (const req of [requireHere, requireThere]) {
    if (!req) continue;
    try {
      const mod = req(name) as (() => Codec) | { default: () => Codec };
      const factory = typeof mod === 'function' ? mod : mod.default;
      const codec = factory();
      return { codec };
    } catch (err) {
      const message = (err as Error).message.split('\n')[0] ?? '';
      if (!/Cannot find module/.test(message)) return { missing: message };
    }
  }
  return { missing: 'not installed' };
}

async function pageRecords(): Promise<Buffer[]> {
  const web = await SimWeb.start({ seed: 7, hosts: 20, pagesPerHost: Math.ceil(total / 20) });
  try {
    const out: Buffer[] = [];
    const urls = Array.from({ length: 20 }, (_, host) => web.pageUrls(host));
    for (let page = 0; out.length < total; page++) {
      for (let host = 0; host < 20 && out.length < total; host++) {
        const url = new URL(urls[host]![page % urls[host]!.length]!);
        const res = await request(`http://127.0.0.1:${web.port}${url.pathname}`, { headers: { host: url.host } });
        const body = Buffer.from(await res.body.arrayBuffer());
        const now = Date.now();
        out.push(
          encodePageRecord({
            v: SCHEMA_VERSION,
            request: { v: SCHEMA_VERSION, requestId: `r${out.length}`, url: url.href, host: url.host, reason: 'new', score: 0.5, depth: 1, cgiHops: 0, attempt: 1, issuedAt: now },
            finalUrl: url.href,
            redirects: [],
            status: res.statusCode,
            headers: { 'content-type': String(res.headers['content-type'] ?? ''), etag: String(res.headers.etag ?? '') },
            contentType: 'text/html',
            body,
            bodyTruncated: false,
            bytes: body.length,
            decodedBytes: body.length,
            timing: { startedAt: now, ttfbMs: 3, totalMs: 5 },
            fetchedAt: now,
          }),
        );
      }
    }
    return out;
  } finally {
    await web.close();
  }
}

function batches(records: readonly Buffer[], size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < records.length; i += size) out.push(Buffer.concat(records.slice(i, i + size)));
  return out;
}

const mb = (bytes: number, ms: number): string => `${(bytes / 1048576 / (ms / 1000)).toFixed(0)} MiB/s`;

async function measure(name: string, codec: Codec, records: readonly Buffer[]): Promise<void> {
  const raw = records.reduce((n, r) => n + r.length, 0);
  for (const size of [1, 10, 50]) {
    const input = batches(records, size);
    // One warm-up pass, then the timed one.
    for (const b of input.slice(0, 5)) await codec.compress({ buffer: b });
    // CPU of the whole process: what zlib's thread pool does and what the event loop spends around it.
    let cpu0 = process.cpuUsage();
    let t0 = performance.now();
    const compressed: Buffer[] = [];
    for (const b of input) compressed.push(await codec.compress({ buffer: b }));
    const compressMs = performance.now() - t0;
    const compressCpu = process.cpuUsage(cpu0);
    cpu0 = process.cpuUsage();
    t0 = performance.now();
    for (const c of compressed) await codec.decompress(c);
    const decompressMs = performance.now() - t0;
    const decompressCpu = process.cpuUsage(cpu0);
    const cpuPerRecord = (u: NodeJS.CpuUsage): string => ((u.user + u.system) / records.length).toFixed(0);
    const stored = compressed.reduce((n, c) => n + c.length, 0);
    console.log(
      `${name.padEnd(14)} batch ${String(size).padStart(2)}: ${(stored / records.length / 1024).toFixed(1).padStart(5)} KiB/record stored (${((100 * stored) / raw).toFixed(1)}% of raw), ` +
        `compress ${((compressMs * 1000) / records.length).toFixed(0)} µs/record (${mb(raw, compressMs)}, ${cpuPerRecord(compressCpu)} µs CPU), ` +
        `decompress ${((decompressMs * 1000) / records.length).toFixed(0)} µs/record (${mb(raw, decompressMs)}, ${cpuPerRecord(decompressCpu)} µs CPU)`,
    );
  }
}

/** Produces every record (10 per send) with the codec through kafkajs and reads them back. */
async function onBroker(brokers: string[], name: string, type: number, records: readonly Buffer[]): Promise<void> {
  const topic = `bench-compression-${name}-${Date.now()}`;
  const transport = new KafkaTransport({ brokers });
  const client = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING });
  const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
  try {
    await transport.ensureTopics([{ name: topic, partitions: 1, config: { 'max.message.bytes': String(8 * 1024 * 1024), 'compression.type': 'producer' } }]);
    await producer.connect();
    let t0 = performance.now();
    for (let i = 0; i < records.length; i += 10) {
      await producer.send({ topic, acks: -1, compression: type, messages: records.slice(i, i + 10).map((value, j) => ({ key: `k${i + j}`, value, partition: 0 })) });
    }
    const produceMs = performance.now() - t0;
    t0 = performance.now();
    let read = 0;
    for await (const chunk of transport.readPartition(topic, 0, 0, records.length)) read += chunk.length;
    const readMs = performance.now() - t0;
    console.log(`${name.padEnd(8)} on the broker: produce ${Math.round(records.length / (produceMs / 1000))} records/s, read back ${Math.round(read / (readMs / 1000))} records/s`);
  } finally {
    await producer.disconnect().catch(() => undefined);
    await transport.close();
  }
}

const records = await pageRecords();
const raw = records.reduce((n, r) => n + r.length, 0);
console.log(machineLine(machineInfo()));
console.log(`${records.length} pages records, ${(raw / records.length / 1024).toFixed(1)} KiB each on average (JSON with the HTML body)`);
const Types = kafkajs.CompressionTypes;
const Codecs = kafkajs.CompressionCodecs as unknown as Record<number, () => Codec>;
const gzipLevel1 = (chunkSize?: number): Codec => ({
  compress: (encoder) => gzipAsync(encoder.buffer, { level: 1, ...(chunkSize ? { chunkSize } : {}) }),
  decompress: (buffer) => unzipAsync(buffer, chunkSize ? { chunkSize } : {}),
});
const candidates: { name: string; type: number; codec?: Codec; missing?: string }[] = [
  { name: 'gzip', type: Types.GZIP, codec: Codecs[Types.GZIP]!() as Codec },
  // meguri's producers: level 1, output chunks sized to the batch (gzip-codec.ts); before, zlib's 16 KiB.
  { name: 'gzip-1', type: Types.GZIP, codec: gzipCodec(DEFAULT_GZIP_LEVEL) },
  { name: 'gzip-1 16 KiB', type: Types.GZIP, codec: gzipLevel1(16 * 1024) },
  { name: 'snappy', type: Types.Snappy, ...loadCodec('kafkajs-snappy') },
  { name: 'lz4', type: Types.LZ4, ...loadCodec('kafkajs-lz4') },
  { name: 'zstd', type: Types.ZSTD, ...loadCodec('@kafkajs/zstd') },
];
for (const c of candidates) {
  if (!c.codec) {
    console.log(`${c.name.padEnd(14)} skipped: ${c.missing}`);
    continue;
  }
  await measure(c.name, c.codec, records);
}
const brokers = process.env.KAFKA_BROKERS?.split(',').filter(Boolean);
if (brokers && brokers.length > 0) {
  await onBroker(brokers, 'none', Types.None, records);
  for (const c of candidates) {
    if (!c.codec) continue;
    Codecs[c.type] = () => c.codec!;
    await onBroker(brokers, c.name, c.type, records);
  }
}
