// meguri's replacement for kafkajs 2.2.4's read_committed filter (services/runtime/kafka/read-committed.cjs).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { filterAbortedMessages, isAbortMarker } from '../../services/runtime/kafka/read-committed.cjs';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const kafkajsSrc = path.join(path.dirname(require.resolve('kafkajs/package.json')), 'src');

interface KafkajsBatch {
  readonly messages: readonly { offset: string }[];
}
/** kafkajs's Batch (src/consumer/batch.js), which runs a fetch's records through the filter kafkajs loaded. */
const Batch = require(path.join(kafkajsSrc, 'consumer', 'batch.js')) as new (topic: string, fetchedOffset: string, partitionData: Record<string, unknown>) => KafkajsBatch;

const marker = (type: 0 | 1): Buffer => Buffer.from([0, 0, 0, type]);
const data = (offset: number, producerId: string, inTransaction = true) => ({
  offset: String(offset),
  key: Buffer.from(`k${offset}`),
  isControlRecord: false,
  batchContext: { producerId, inTransaction },
});
const control = (offset: number, producerId: string, type: 0 | 1) => ({
  offset: String(offset),
  key: marker(type),
  isControlRecord: true,
  batchContext: { producerId, inTransaction: true },
});
const offsets = (messages: readonly { offset: string; isControlRecord: boolean }[]): number[] =>
  messages.filter((m) => !m.isControlRecord).map((m) => Number(m.offset));

// The interleaving seen on a real cluster: P2's transaction starts at 2033, P1's at 2034; P1's
// abort marker is at 2035 and P2's at 2036, so the broker lists P1 first. P3 commits one
// transaction before them and one around them, and P1 commits another after.
const interleaved = [
  data(2030, '3'),
  control(2031, '3', 1),
  data(2032, '3'),
  data(2033, '2'),
  data(2034, '1'),
  control(2035, '1', 0),
  control(2036, '2', 0),
  data(2037, '3'),
  control(2038, '3', 1),
  data(2039, '1'),
  control(2040, '1', 1),
];
// The broker's aborted-transaction index, in the order it aborted them (lastOffset: the marker).
const abortIndex = [
  { producerId: '1', firstOffset: '2034', lastOffset: 2035 },
  { producerId: '2', firstOffset: '2033', lastOffset: 2036 },
];

describe('read_committed filter', () => {
  it('drops the records of aborted transactions listed out of first-offset order', () => {
    // A (pid 1) starts at 0, B (pid 2) at 1; B aborts first, so the broker lists B before A.
    const messages = [data(0, '1'), data(1, '2'), control(2, '2', 0), data(3, '1'), control(4, '1', 0), data(5, '3'), control(6, '3', 1)];
    const aborted = [
      { producerId: '2', firstOffset: '1' },
      { producerId: '1', firstOffset: '0' },
    ];
    assert.deepEqual(offsets(filterAbortedMessages({ messages, abortedTransactions: aborted })), [5]);
  });

  it('starts every aborted transaction that began before a fetch that starts mid-way', () => {
    // Fetched from offset 10; three producers' aborted transactions began before it.
    const messages = [data(10, '3'), data(11, '2'), data(12, '1'), control(13, '1', 0), control(14, '2', 0), control(15, '3', 0), data(16, '4')];
    const aborted = ['1', '2', '3'].map((pid, i) => ({ producerId: pid, firstOffset: String(7 - i) }));
    assert.deepEqual(offsets(filterAbortedMessages({ messages, abortedTransactions: aborted })), [16]);
  });

  it("keeps a producer's committed transaction after its aborted one, and records outside transactions", () => {
    const messages = [data(0, '1'), control(1, '1', 0), data(2, '1'), data(3, '9', false), control(4, '1', 1)];
    assert.deepEqual(offsets(filterAbortedMessages({ messages, abortedTransactions: [{ producerId: '1', firstOffset: '0' }] })), [2, 3]);
  });

  it('drops two interleaved aborted transactions listed later-first, at every fetch start, and keeps the committed records around them', () => {
    const expected: Record<number, number[]> = {
      2030: [2030, 2032, 2037, 2039],
      2033: [2037, 2039],
      2034: [2037, 2039],
      2035: [2037, 2039],
      2036: [2037, 2039],
      2037: [2037, 2039],
    };
    for (const [start, kept] of Object.entries(expected)) {
      const fetched = interleaved.filter((m) => Number(m.offset) >= Number(start));
      // A fetch lists the aborted transactions not ended before it starts: both from 2030 to 2035.
      const aborted = abortIndex.filter((t) => t.lastOffset >= Number(start)).map(({ producerId, firstOffset }) => ({ producerId, firstOffset }));
      if (Number(start) <= 2035) assert.deepEqual(aborted.map((t) => t.firstOffset), ['2034', '2033']);
      assert.deepEqual(offsets(filterAbortedMessages({ messages: fetched, abortedTransactions: aborted })), kept, `filter, fetch from ${start}`);
      // Through kafkajs's Batch, as a consumer gets it: with the fetched records only, and with a
      // record batch that begins before the fetch offset (kafkajs drops those records first).
      for (const messages of [fetched, interleaved]) {
        const batch = new Batch('t', start, { partition: 0, highWatermark: '2041', messages, abortedTransactions: aborted });
        assert.deepEqual(
          batch.messages.map((m) => Number(m.offset)),
          kept,
          `Batch, fetch from ${start} (${messages.length} records)`,
        );
      }
    }
  });

  it("kafkajs 2.2.4's own filter delivers P2's aborted record in the same case (the defect)", () => {
    const filterPath = path.join(kafkajsSrc, 'consumer', 'filterAbortedMessages.js');
    const saved = require.cache[filterPath];
    delete require.cache[filterPath];
    let kafkajsFilter: typeof filterAbortedMessages;
    try {
      kafkajsFilter = require(filterPath) as typeof filterAbortedMessages;
    } finally {
      if (saved) require.cache[filterPath] = saved;
    }
    assert.notEqual(kafkajsFilter, filterAbortedMessages);
    const abortedTransactions = abortIndex.map(({ producerId, firstOffset }) => ({ producerId, firstOffset }));
    assert.deepEqual(offsets(kafkajsFilter({ messages: interleaved, abortedTransactions })), [2030, 2032, 2033, 2037, 2039]);
  });

  it('keeps everything when nothing was aborted, and tells abort markers from commit markers', () => {
    const messages = [data(0, '1'), control(1, '1', 1)];
    assert.equal(filterAbortedMessages({ messages, abortedTransactions: [] }), messages);
    assert.equal(isAbortMarker({ key: marker(0) }), true);
    assert.equal(isAbortMarker({ key: marker(1) }), false);
    assert.equal(isAbortMarker({ key: null }), false);
  });

  it('is the filter kafkajs uses when loaded through services/runtime/kafka/kafkajs.ts', () => {
    assert.equal(typeof kafkajs.Kafka, 'function');
    const kafkajsDir = require.resolve('kafkajs/package.json').replace(/package\.json$/, '');
    const cached = require.cache[`${kafkajsDir}src/consumer/filterAbortedMessages.js`];
    assert.equal(cached?.exports, filterAbortedMessages);
  });
});
