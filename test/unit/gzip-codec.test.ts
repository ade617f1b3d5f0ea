import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { DEFAULT_GZIP_LEVEL, expectedInflatedBytes, gzipCodec, outputChunkSize } from '../../services/runtime/kafka/gzip-codec.ts';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';

// A page-like body: repetitive enough that gzip levels give different output.
const body = Buffer.from(Array.from({ length: 400 }, (_, i) => `<p>paragraph ${i % 37} of the page, word ${(i * 7919) % 101}</p>`).join('\n'));

function kafkajsGzip(): { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> } {
  const codecs = kafkajs.CompressionCodecs as unknown as Record<number, () => ReturnType<typeof kafkajsGzip>>;
  return codecs[kafkajs.CompressionTypes.GZIP]!();
}

describe('gzip codec of the Kafka producers', () => {
  it('compresses at its level and decompresses any gzip', async () => {
    for (const level of [1, 6, 9]) {
      const out = await gzipCodec(level).compress({ buffer: body });
      assert.deepEqual(out, gzipSync(body, { level }), `level ${level}`);
      assert.deepEqual(gunzipSync(out), body);
      assert.deepEqual(await gzipCodec(1).decompress(out), body);
    }
    assert.ok(gzipSync(body, { level: 1 }).length !== gzipSync(body, { level: 9 }).length, 'the levels differ on this body');
  });

  it('sizes zlib\'s output chunk from the gzip trailer, within bounds; a wrong trailer fails gzip\'s own check', async () => {
    const gz = gzipSync(body);
    assert.equal(expectedInflatedBytes(gz), body.length + 1);
    // Not gzip (zlib's deflate, which unzip also reads): a guess from the input's size.
    const deflated = deflateSync(body);
    assert.equal(expectedInflatedBytes(deflated), deflated.length * 4);
    assert.deepEqual(await gzipCodec(1).decompress(deflated), body);
    assert.equal(outputChunkSize(10), 16 * 1024);
    assert.equal(outputChunkSize(300_000), 300_000);
    assert.equal(outputChunkSize(2 ** 32), 16 * 1024 * 1024);
    // A trailer that understates the size or overstates it (the chunk is capped): zlib still
    // checks the length it read against it.
    for (const isize of [1, 0xffffffff]) {
      const lying = Buffer.from(gz);
      lying.writeUInt32LE(isize, lying.length - 4);
      await assert.rejects(gzipCodec(1).decompress(lying), /size|check/i, 'zlib checks ISIZE itself');
    }
    // Batches far larger than one chunk.
    const big = Buffer.concat(Array.from({ length: 60 }, () => body));
    const packed = await gzipCodec(1).compress({ buffer: big });
    assert.deepEqual(await gzipCodec(1).decompress(packed), big);
  });

  it('refuses a level outside 1-9', () => {
    for (const bad of [0, 10, 1.5, Number.NaN]) assert.throws(() => gzipCodec(bad), RangeError);
  });

  it('a Kafka transport installs its level in kafkajs (level 1 unless told)', async () => {
    const brokers = ['127.0.0.1:9'];
    const a = new KafkaTransport({ brokers });
    assert.equal(DEFAULT_GZIP_LEVEL, 1);
    assert.deepEqual(await kafkajsGzip().compress({ buffer: body }), gzipSync(body, { level: 1 }));
    const b = new KafkaTransport({ brokers, gzipLevel: 9 });
    assert.deepEqual(await kafkajsGzip().compress({ buffer: body }), gzipSync(body, { level: 9 }));
    assert.deepEqual(await kafkajsGzip().decompress(gzipSync(body, { level: 6 })), body);
    await Promise.all([a.close(), b.close()]);
  });
});
