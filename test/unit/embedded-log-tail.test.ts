// The embedded log's in-memory tail: kept for partitions that are being read, not for partitions
// nobody reads (changelogs while their stores run), and reads agree either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SharedLog } from '../../services/runtime/embedded/log.ts';
import type { PartitionState } from '../../services/runtime/embedded/log.ts';
import { encodeRecord } from '../../services/runtime/embedded/codec.ts';

async function withLog(fn: (log: SharedLog) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meguri-tail-'));
  const log = await SharedLog.open(dir, { sync: false, logger: pino({ level: 'silent' }) });
  try {
    await fn(log);
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function append(log: SharedLog, ps: PartitionState, from: number, n: number): Promise<void> {
  await log.append(Array.from({ length: n }, (_, i) => ({ ps, timestamp: 1_000 + from + i, encoded: encodeRecord(1_000 + from + i, `k${from + i}`, Buffer.from(`v${from + i}`), undefined) })));
}

test('a partition nobody reads keeps no tail; one being read does, and loses it when reads stop', async () => {
  await withLog(async (log) => {
    await log.ensureTopics([
      { name: 'read', partitions: 1, config: {} },
      { name: 'unread', partitions: 1, config: {} },
    ]);
    const read = log.requireTopic('read').partitions[0]!;
    const unread = log.requireTopic('unread').partitions[0]!;
    assert.equal((await log.read(read, 0, 10)).records.length, 0);
    await append(log, read, 0, 5);
    await append(log, unread, 0, 5);
    assert.equal(read.tail.records.length, 5, 'the partition being read keeps what was written');
    assert.equal(unread.tail.records.length, 0, 'the unread one keeps nothing');
    assert.equal(unread.tail.start, 5);

    // Both answer the same records, from memory and from RocksDB.
    for (const ps of [read, unread]) {
      const got = await log.read(ps, 0, 100);
      assert.deepEqual(got.records.map((r) => [r.offset, r.key, r.value?.toString(), r.timestamp]), Array.from({ length: 5 }, (_, i) => [i, `k${i}`, `v${i}`, 1_000 + i]));
    }
    // The unread partition was just read: it keeps what comes next.
    await append(log, unread, 5, 3);
    assert.equal(unread.tail.records.length, 3);
    assert.deepEqual((await log.read(unread, 6, 100)).records.map((r) => r.key), ['k6', 'k7']);

    // No read for longer than the idle limit: the tail is dropped at the next write.
    read.readAt -= 60_000;
    await append(log, read, 5, 2);
    assert.equal(read.tail.records.length, 0);
    assert.deepEqual((await log.read(read, 3, 100)).records.map((r) => r.key), ['k3', 'k4', 'k5', 'k6']);
  });
});
