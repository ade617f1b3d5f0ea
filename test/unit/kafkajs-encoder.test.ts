// meguri's build of kafkajs 2.2.4's protocol encoder: kafkajs's own source with unfilled buffers
// (services/runtime/kafka/unfilled-encoder.cjs, installed by kafkajs.cjs).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import unfilled from '../../services/runtime/kafka/unfilled-encoder.cjs';
import '../../services/runtime/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
const encoderPath = path.join(kafkajsDir, 'src', 'protocol', 'encoder.js');

interface EncoderLike {
  writeInt8(v: number): EncoderLike;
  writeInt16(v: number): EncoderLike;
  writeInt32(v: number): EncoderLike;
  writeInt64(v: number | string): EncoderLike;
  writeString(v: string | null): EncoderLike;
  writeVarIntString(v: string | null): EncoderLike;
  writeBytes(v: Buffer | string | null): EncoderLike;
  writeVarIntBytes(v: Buffer | string | null): EncoderLike;
  writeVarInt(v: number): EncoderLike;
  writeArray(v: unknown[], type?: string): EncoderLike;
  writeEncoder(e: EncoderLike): EncoderLike;
  readonly buffer: Buffer;
}
type EncoderClass = new (initialSize?: number) => EncoderLike;

/** A run of writes of every kind, growing the buffer through several sizes. */
function encodeSample(E: EncoderClass, seed: number): Buffer {
  const big = Buffer.alloc(20_000 + seed, seed & 0xff);
  const inner = new E().writeVarIntString(`inner-${seed}`).writeInt32(-seed);
  const e = new E(seed % 3 === 0 ? 1 : 511)
    .writeInt8(-3)
    .writeInt16(seed)
    .writeInt32(0x7fffffff - seed)
    .writeInt64(String(BigInt(seed) * 1_000_000_007n))
    .writeString('kafka')
    .writeString(null)
    .writeVarIntString('ページ')
    .writeVarIntString(null)
    .writeBytes(Buffer.from('abc'))
    .writeBytes(null)
    .writeVarIntBytes(big)
    .writeVarInt(-seed * 300)
    .writeArray(['a', 'bb', 'ccc'], 'string')
    .writeArray([1, 2, 3], 'number')
    .writeEncoder(inner);
  for (let i = 0; i < 200; i++) e.writeVarIntBytes(Buffer.alloc(i * 7, i));
  return e.buffer;
}

describe('kafkajs protocol encoder with unfilled buffers', () => {
  it('writes exactly the bytes of kafkajs’s own encoder', () => {
    const reference = unfilled.compileEncoder(encoderPath, Buffer) as EncoderClass;
    const mine = require(encoderPath) as EncoderClass;
    assert.notEqual(mine, reference);
    for (const seed of [0, 1, 2, 3, 17, 255, 4097]) assert.ok(encodeSample(mine, seed).equals(encodeSample(reference, seed)), `seed ${seed}`);
  });

  it('hands out only the bytes written, even over recycled memory', () => {
    // Dirty the pool the unfilled buffers come from, then check nothing of it shows.
    for (let i = 0; i < 100; i++) Buffer.allocUnsafe(512).fill(0xee);
    const E = require(encoderPath) as EncoderClass;
    const out = new E().writeInt32(1).writeVarIntString('x').buffer;
    assert.equal(out.toString('hex'), '000000010278');
  });

  it('is the encoder kafkajs loaded through meguri builds its record batches with', async () => {
    const { RecordBatch } = require(path.join(kafkajsDir, 'src', 'protocol', 'recordBatch', 'v0', 'index.js')) as {
      RecordBatch: (o: { records: EncoderLike[]; firstTimestamp: number; maxTimestamp: number }) => Promise<EncoderLike>;
    };
    const Record = require(path.join(kafkajsDir, 'src', 'protocol', 'recordBatch', 'record', 'v0', 'index.js')) as (o: { offsetDelta: number; timestampDelta: number; key: Buffer | null; value: Buffer; headers: Record<string, Buffer> }) => EncoderLike;
    const decodeBatch = require(path.join(kafkajsDir, 'src', 'protocol', 'recordBatch', 'v0', 'decoder.js')) as (d: unknown) => Promise<{ records: { key: Buffer | null; value: Buffer; headers: Record<string, Buffer>; offset: string }[] }>;
    const Decoder = require(path.join(kafkajsDir, 'src', 'protocol', 'decoder.js')) as new (b: Buffer) => unknown;
    const values = [Buffer.from('{"a":1}'), Buffer.alloc(22_000, 0x41), Buffer.from('')];
    const records = values.map((value, i) => Record({ offsetDelta: i, timestampDelta: i, key: i === 1 ? null : Buffer.from(`k${i}`), value, headers: { h: Buffer.from(`v${i}`) } }));
    const batch = await RecordBatch({ records, firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_002 });
    assert.ok(batch instanceof (require(encoderPath) as EncoderClass));
    const decoded = await decodeBatch(new Decoder(batch.buffer));
    assert.deepEqual(
      decoded.records.map((r) => ({ key: r.key?.toString() ?? null, value: r.value.toString('hex'), h: r.headers.h!.toString(), offset: r.offset })),
      values.map((v, i) => ({ key: i === 1 ? null : `k${i}`, value: v.toString('hex'), h: `v${i}`, offset: String(i) })),
    );
  });
});

describe('compileEncoder on a kafkajs whose encoder moved', () => {
  it('fails with a message that names the file and the likely cause', () => {
    assert.throws(() => unfilled.compileEncoder(path.join(kafkajsDir, 'src', 'protocol', 'no-such-encoder.js'), Buffer), /could not read kafkajs's protocol encoder at .*no-such-encoder\.js \(a different kafkajs version\?\)/);
  });
});
