/**
 * How the Kafka transport splits a send into produce requests (services/runtime/kafka/records.ts):
 * within the request size, and within each topic's own max.message.bytes, which the broker checks
 * against every partition's batch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approxRecordBytes, chunkBySize } from '../../services/runtime/kafka/records.ts';
import type { OutRecord } from '../../services/runtime/index.ts';

const record = (topic: string, bytes: number, i: number): OutRecord => ({ topic, key: `k${i}`, value: Buffer.alloc(bytes, 97) });

function topicBytes(chunk: readonly OutRecord[], topic: string): number {
  return chunk.filter((r) => r.topic === topic).reduce((s, r) => s + approxRecordBytes(r), 0);
}

test('a send is split into requests of at most the request size, in order, nothing lost', () => {
  const records = Array.from({ length: 400 }, (_, i) => record('a', 10_000, i));
  const chunks = [...chunkBySize(records, 768 * 1024)];
  assert.ok(chunks.length >= 5);
  assert.deepEqual(chunks.flat(), records);
  for (const c of chunks) assert.ok(c.reduce((s, r) => s + approxRecordBytes(r), 0) <= 768 * 1024);
});

test("each topic's records in a request stay below that topic's limit, other topics keep the request size", () => {
  // 3 MB of `small` (limit 256 KiB) interleaved with 3 MB of `big` (no limit of its own).
  const records: OutRecord[] = [];
  for (let i = 0; i < 300; i++) records.push(record('small', 10_000, i), record('big', 10_000, i));
  const limits: Record<string, number> = { small: 256 * 1024 };
  const chunks = [...chunkBySize(records, 768 * 1024, (t) => limits[t])];
  assert.deepEqual(chunks.flat(), records, 'in order, nothing lost');
  for (const c of chunks) {
    assert.ok(topicBytes(c, 'small') <= 256 * 1024 - 1024, `small: ${topicBytes(c, 'small')} bytes in one request`);
    assert.ok(topicBytes(c, 'small') + topicBytes(c, 'big') <= 768 * 1024);
  }
  // Without the topic's limit the same send goes in fewer, larger requests.
  assert.ok([...chunkBySize(records, 768 * 1024)].length < chunks.length);
});

test('a record larger than its topic limit goes alone (the broker, not the split, refuses it)', () => {
  const records = [record('t', 100, 0), record('t', 300_000, 1), record('t', 100, 2)];
  const chunks = [...chunkBySize(records, 768 * 1024, () => 256 * 1024)];
  assert.deepEqual(
    chunks.map((c) => c.map((r) => r.key)),
    [['k0'], ['k1'], ['k2']],
  );
});
