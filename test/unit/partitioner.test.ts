import { test } from 'node:test';
import assert from 'node:assert/strict';
import { murmur2, partitionForKey } from '../../services/runtime/partitioner.ts';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';

/** kafkajs's DefaultPartitioner (Kafka's Java-compatible one), the reference. */
const reference = kafkajs.Partitioners.DefaultPartitioner();
const metadata = (count: number): { partitionId: number; leader: number; partitionErrorCode: number; replicas: number[]; isr: number[] }[] =>
  Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));

test('keys land on the partition Kafka\'s default partitioner picks: hosts, URLs, every length, non-ASCII', () => {
  const keys = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'example.com', 'h17.sim.test:8080', 'http://h3.sim.test:8080/p/12.html?x=1', 'bücher.example', '日本語.jp', '😀 emoji', 'ÿ\u0080\u07ff\uffff'];
  let seed = 11;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  for (let i = 0; i < 3000; i++) {
    const length = next() % 90;
    const wide = i % 3 === 0;
    keys.push(Array.from({ length }, () => String.fromCharCode(wide ? 32 + (next() % 0x2fff) : 32 + (next() % 95))).join(''));
  }
  for (const key of keys) {
    for (const count of [1, 2, 3, 4, 12, 64, 1000]) {
      const expected = reference({ topic: 't', partitionMetadata: metadata(count), message: { key, value: null } });
      assert.equal(partitionForKey(key, count), expected, `${JSON.stringify(key)} over ${count} partitions`);
    }
  }
});

test('murmur2 matches values Kafka\'s Java client gives', () => {
  // Utils.murmur2 of the UTF-8 bytes, as in Kafka's own UtilsTest.
  assert.equal(murmur2('21'), -973932308);
  assert.equal(murmur2('foobar'), -790332482);
  assert.equal(murmur2('a-little-bit-long-string'), -985981536);
  assert.equal(murmur2('a-little-bit-longer-string'), -1486304829);
  assert.equal(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971);
  assert.equal(murmur2('abc'), 479470107);
});

test('records without a key go round the partitions; a bad partition count is refused', () => {
  const seen = new Set(Array.from({ length: 8 }, () => partitionForKey(null, 4)));
  assert.deepEqual([...seen].sort(), [0, 1, 2, 3]);
  assert.throws(() => partitionForKey('a', 0), RangeError);
  assert.throws(() => partitionForKey('a', 1.5), RangeError);
});
