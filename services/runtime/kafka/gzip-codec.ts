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

/** zlib's own output chunk (16 KiB): the least a call is given. */
const MIN_CHUNK = 16 * 1024;
/** The most one output chunk takes; a larger output simply takes more chunks. */
const MAX_CHUNK = 16 * 1024 * 1024;

/**
 * zlib's output chunk for a record batch: room for all of it at once. With the default 16 KiB, a
 * batch of ten 20 KB pages took a dozen rounds between the event loop and the thread pool each way,
 * and 1.6 times the CPU of one round (bench/compression.bench.ts).
 */
export function outputChunkSize(expectedBytes: number): number {
  return Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Math.ceil(expectedBytes)));
}

/**
 * The size a gzip member says it decompresses to (its trailer's ISIZE, RFC 1952), or a guess for
 * other input. Only a hint for the output chunk: a wrong trailer costs more chunks, not an error.
 */
export function expectedInflatedBytes(buffer: Buffer): number {
  if (buffer.length >= 18 && buffer[0] === 0x1f && buffer[1] === 0x8b) return buffer.readUInt32LE(buffer.length - 4) + 1;
  return buffer.length * 4;
}

export function gzipCodec(level: number): KafkaCodec {
  if (!Number.isInteger(level) || level < 1 || level > 9) throw new RangeError(`gzip level must be an integer from 1 to 9, not ${level}`);
  return {
    // Deflate's output stays below its input plus a few bytes per 16 KiB block.
    compress: (encoder) => gzipAsync(encoder.buffer, { level, chunkSize: outputChunkSize(encoder.buffer.length + 1024) }),
    decompress: (buffer) => unzipAsync(buffer, { chunkSize: outputChunkSize(expectedInflatedBytes(buffer)) }),
  };
}

/** Makes kafkajs compress gzip batches at `level` in this process. */
export function useGzipLevel(level: number): void {
  const codec = gzipCodec(level);
  (kafkajs.CompressionCodecs as Record<number, () => KafkaCodec>)[kafkajs.CompressionTypes.GZIP] = () => codec;
}
