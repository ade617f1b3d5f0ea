import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DEFAULT_GZIP_LEVEL, gzipCodec } from '../../services/runtime/kafka/gzip-codec.ts';
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
