/**
 * The gzip codec meguri's Kafka producers compress with. kafkajs's own codec uses zlib's default
 * level (6); level 1 costs about a quarter of the CPU for ~15 % more bytes on `pages` records
 * (docs/benchmarks.md, "Compression of `pages`"), and the fetcher pays that CPU for every page.
 * Consumers are unaffected: every gzip level decodes the same way, in any Kafka client.
 *
 * kafkajs keeps one codec per compression type for the whole process, so the level is per process.
 */
import { promisify } from 'node:util';
import { gzip, unzip } from 'node:zlib';
import { kafkajs } from './kafkajs.ts';

export const DEFAULT_GZIP_LEVEL = 1;

const gzipAsync = promisify(gzip);
const unzipAsync = promisify(unzip);

/** What kafkajs calls a codec: compress the encoded record batch, decompress a fetched one. */
export interface KafkaCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

export function gzipCodec(level: number): KafkaCodec {
  if (!Number.isInteger(level) || level < 1 || level > 9) throw new RangeError(`gzip level must be an integer from 1 to 9, not ${level}`);
  return {
    compress: (encoder) => gzipAsync(encoder.buffer, { level }),
    decompress: (buffer) => unzipAsync(buffer),
  };
}

/** Makes kafkajs compress gzip batches at `level` in this process. */
export function useGzipLevel(level: number): void {
  const codec = gzipCodec(level);
  (kafkajs.CompressionCodecs as Record<number, () => KafkaCodec>)[kafkajs.CompressionTypes.GZIP] = () => codec;
}
