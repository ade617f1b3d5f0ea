import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionFeed } from '../../services/runtime/kafka/partition-feed.ts';
import type { PartitionFeedOptions } from '../../services/runtime/kafka/partition-feed.ts';
import type { ConsumedBatch, LogRecord } from '../../services/runtime/transport.ts';

function batch(from: number, to: number, step = 1): ConsumedBatch {
  const records: LogRecord[] = [];
  for (let o = from; o < to; o += step) records.push({ topic: 't', partition: 0, offset: o, key: null, value: null, timestamp: 0, headers: {} });
  return { topic: 't', partition: 0, records, highWatermark: to };
}

const offsets = (b: ConsumedBatch): number[] => b.records.map((r) => r.offset);

/** A deliver whose batches finish only when the test says so. */
function gatedDeliver(): { deliver: PartitionFeedOptions['deliver']; seen: number[][]; release: (err?: Error) => void; waiting: () => number } {
  const seen: number[][] = [];
  const gates: { resolve: () => void; reject: (e: Error) => void }[] = [];
  return {
    seen,
    deliver: (b) => {
      seen.push(offsets(b));
      return new Promise<void>((resolve, reject) => gates.push({ resolve, reject }));
    },
    release: (err) => {
      const g = gates.shift();
      if (!g) throw new Error('nothing is being delivered');
      if (err) g.reject(err);
      else g.resolve();
    },
    waiting: () => gates.length,
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('batches are delivered one at a time, in order, while later ones are queued', async () => {
  const d = gatedDeliver();
  const feed = new PartitionFeed({ maxQueued: 2, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 3));
  feed.push(batch(3, 5));
  feed.push(batch(5, 6));
  await tick();
  assert.deepEqual(d.seen, [[0, 1, 2]], 'the second waits until the first is done');
  assert.equal(d.waiting(), 1);
  assert.equal(feed.queued, 2);
  d.release();
  await tick();
  assert.deepEqual(d.seen, [[0, 1, 2], [3, 4]]);
  d.release();
  await tick();
  d.release();
  await feed.idle();
  assert.deepEqual(d.seen, [[0, 1, 2], [3, 4], [5]]);
  assert.equal(feed.busy, false);
});

test('waitForRoom holds a fetch while maxQueued batches wait, and lets it go when one starts', async () => {
  const d = gatedDeliver();
  const feed = new PartitionFeed({ maxQueued: 1, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 1));
  await tick();
  feed.push(batch(1, 2));
  let roomy = false;
  const room = feed.waitForRoom().then(() => (roomy = true));
  await tick();
  assert.equal(roomy, false, 'one batch waits already');
  d.release();
  await room;
  assert.equal(roomy, true);
  d.release();
  await feed.idle();
});

test('batches waiting when the previous one ends are merged up to maxMergedRecords', async () => {
  const d = gatedDeliver();
  const feed = new PartitionFeed({ maxQueued: 10, maxMergedRecords: 5, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 2));
  await tick();
  feed.push(batch(2, 4), batch(4, 6), batch(6, 8), batch(8, 9));
  d.release();
  await tick();
  assert.deepEqual(d.seen[1], [2, 3, 4, 5], 'two batches of 2 fit in 5 records, a third would not');
  d.release();
  await tick();
  assert.deepEqual(d.seen[2], [6, 7, 8]);
  d.release();
  await feed.idle();
  const merged = new PartitionFeed({ maxQueued: 10, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  merged.push(batch(0, 1), batch(1, 2));
  await tick();
  assert.deepEqual(d.seen.at(-1), [0], 'no merging without maxMergedRecords');
  d.release();
  await tick();
  d.release();
  await merged.idle();
});

test('a batch larger than maxMergedRecords is delivered in pieces of that size, in order', async () => {
  const d = gatedDeliver();
  const feed = new PartitionFeed({ maxQueued: 2, maxMergedRecords: 4, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 10), batch(10, 11));
  for (let i = 0; i < 3; i++) {
    await tick();
    d.release();
  }
  await feed.idle();
  assert.deepEqual(d.seen, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]], 'cut to 4, and the tail merged with the next batch');
});

test('a batch handed back drops what was queued after it and asks to fetch again from its first offset', async () => {
  const d = gatedDeliver();
  const handedBack: number[] = [];
  const feed = new PartitionFeed({ maxQueued: 5, deliver: d.deliver, onHandedBack: (offset) => void handedBack.push(offset), active: () => true });
  feed.push(batch(0, 2), batch(2, 4), batch(4, 6));
  await tick();
  d.release();
  await tick();
  const epoch = feed.epoch;
  d.release(new Error('task not running'));
  await feed.idle();
  assert.deepEqual(handedBack, [2]);
  assert.deepEqual(d.seen, [[0, 1], [2, 3]], 'the batch after the failed one was never delivered');
  assert.notEqual(feed.epoch, epoch, 'a fetch that waited for room before the hand-back sees a new epoch');
  // Fetched again from offset 2: accepted although the feed had taken up to 6 before.
  feed.push(batch(2, 6));
  await tick();
  assert.deepEqual(d.seen.at(-1), [2, 3, 4, 5]);
  d.release();
  await feed.idle();
});

test('records the feed already took are skipped when fetched again (a rebalance that kept the partition)', async () => {
  const d = gatedDeliver();
  const feed = new PartitionFeed({ maxQueued: 5, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 4));
  await tick();
  feed.push(batch(4, 8));
  // kafkajs starts again from the committed offset 2 while 0-3 are in progress and 4-7 queued.
  feed.push(batch(2, 10));
  d.release();
  await tick();
  assert.deepEqual(d.seen[1], [4, 5, 6, 7]);
  d.release();
  await tick();
  assert.deepEqual(d.seen[2], [8, 9]);
  d.release();
  await feed.idle();
  // Offsets may jump (transaction markers): a later batch is taken whole.
  feed.push(batch(11, 15, 2));
  await tick();
  assert.deepEqual(d.seen[3], [11, 13]);
  d.release();
  await feed.idle();
});

test('drop() forgets the queue but lets the batch in progress finish; a new epoch marks stale fetches', async () => {
  const d = gatedDeliver();
  const feed = new PartitionFeed({ maxQueued: 1, deliver: d.deliver, onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 1));
  await tick();
  feed.push(batch(1, 2));
  const epoch = feed.epoch;
  const room = feed.waitForRoom();
  feed.drop();
  await room;
  assert.notEqual(feed.epoch, epoch);
  assert.equal(feed.queued, 0);
  let idle = false;
  const done = feed.idle().then(() => (idle = true));
  await tick();
  assert.equal(idle, false, 'still delivering offset 0');
  d.release();
  await done;
  assert.deepEqual(d.seen, [[0]]);
  // What was dropped was never delivered: it is accepted again when fetched again.
  feed.push(batch(1, 2));
  await tick();
  assert.deepEqual(d.seen.at(-1), [1]);
  d.release();
  await feed.idle();
});

test('a partition that is no longer active stops after the batch in progress', async () => {
  const d = gatedDeliver();
  let active = true;
  const feed = new PartitionFeed({ maxQueued: 5, deliver: d.deliver, onHandedBack: () => {}, active: () => active });
  feed.push(batch(0, 1), batch(1, 2), batch(2, 3));
  await tick();
  active = false;
  d.release();
  await feed.idle();
  assert.deepEqual(d.seen, [[0]]);
  assert.equal(feed.queued, 0);
});

test('with minIntervalMs, what arrives within the interval goes in one delivery; a full merge goes at once', async () => {
  const seen: { offsets: number[]; at: number }[] = [];
  const t0 = performance.now();
  const feed = new PartitionFeed({
    maxQueued: 100,
    maxMergedRecords: 10,
    minIntervalMs: 150,
    deliver: async (b) => void seen.push({ offsets: offsets(b), at: performance.now() - t0 }),
    onHandedBack: () => {},
    active: () => true,
  });
  feed.push(batch(0, 2)); // the first batch goes at once: nothing was delivered before
  await tick();
  feed.push(batch(2, 4));
  feed.push(batch(4, 6));
  await tick();
  assert.equal(seen.length, 1, 'the next batch waits for the interval');
  await feed.idle();
  assert.deepEqual(seen.map((s) => s.offsets), [[0, 1], [2, 3, 4, 5]]);
  assert.ok(seen[1]!.at - seen[0]!.at >= 140, `second delivery ${seen[1]!.at - seen[0]!.at} ms after the first`);
  // A merge that reaches maxMergedRecords does not wait out the interval.
  const before = performance.now();
  feed.push(batch(6, 16));
  await feed.idle();
  assert.deepEqual(seen[2]!.offsets, [6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
  assert.ok(performance.now() - before < 100, 'a full merge went at once');
});

test('a drop ends the wait for the interval and delivers nothing of the dropped queue', async () => {
  const seen: number[][] = [];
  const feed = new PartitionFeed({ maxQueued: 100, minIntervalMs: 60_000, deliver: async (b) => void seen.push(offsets(b)), onHandedBack: () => {}, active: () => true });
  feed.push(batch(0, 2));
  await tick();
  feed.push(batch(2, 4));
  await tick();
  const before = performance.now();
  feed.drop();
  await feed.idle();
  assert.ok(performance.now() - before < 1000);
  assert.deepEqual(seen, [[0, 1]]);
});
