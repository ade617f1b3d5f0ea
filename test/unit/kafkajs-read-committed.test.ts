// meguri's replacement for kafkajs 2.2.4's read_committed filter (services/runtime/kafka/read-committed.cjs).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { filterAbortedMessages, isAbortMarker } from '../../services/runtime/kafka/read-committed.cjs';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';

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

  it('keeps everything when nothing was aborted, and tells abort markers from commit markers', () => {
    const messages = [data(0, '1'), control(1, '1', 1)];
    assert.equal(filterAbortedMessages({ messages, abortedTransactions: [] }), messages);
    assert.equal(isAbortMarker({ key: marker(0) }), true);
    assert.equal(isAbortMarker({ key: marker(1) }), false);
    assert.equal(isAbortMarker({ key: null }), false);
  });

  it('is the filter kafkajs uses when loaded through services/runtime/kafka/kafkajs.ts', async () => {
    assert.equal(typeof kafkajs.Kafka, 'function');
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const kafkajsDir = require.resolve('kafkajs/package.json').replace(/package\.json$/, '');
    const cached = require.cache[`${kafkajsDir}src/consumer/filterAbortedMessages.js`];
    assert.equal(cached?.exports, filterAbortedMessages);
  });
});
