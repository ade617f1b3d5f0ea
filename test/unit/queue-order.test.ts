/**
 * Host queues on real RocksDB stores: a queued URL whose score rises moves up in memory without a
 * write to the `queues` store, and a queue loaded again from the store (a restart, or a host the
 * cache had dropped) is in the same order, made from the scores stored with the URLs.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TaskStores } from '../../services/runtime/store.ts';
import { QueueCache } from '../../services/scheduler/queue-cache.ts';
import type { QueueOrder } from '../../services/scheduler/queue-cache.ts';
import { knownQueueKey, queueKey, queueKeyRound, queueOrder, rescoredQueueKey } from '../../services/scheduler/state.ts';
import type { UrlState } from '../../services/scheduler/state.ts';
import { REDIRECT_QUEUE_BOOST } from '../../services/scheduler/redirects.ts';
import { tempDir, removeDir } from '../support/transports.ts';

const HOST = 'h.test';

describe('rescoredQueueKey', () => {
  it('keeps the round, the sequence number and a redirect boost; only the score changes', () => {
    for (const round of [0, 3]) {
      for (const boost of [0, REDIRECT_QUEUE_BOOST]) {
        const key = queueKey(HOST, boost + 1.25, 42, round);
        assert.equal(rescoredQueueKey(HOST, key, 1.25), key, 'the same score gives the same key');
        const higher = rescoredQueueKey(HOST, key, 7.5);
        assert.equal(higher, queueKey(HOST, boost + 7.5, 42, round));
        assert.ok(higher < key, 'a higher score sorts first');
        assert.equal(queueKeyRound(HOST, higher), round);
      }
    }
    const boosted = rescoredQueueKey(HOST, queueKey(HOST, REDIRECT_QUEUE_BOOST, 1), 0.5);
    assert.ok(boosted < queueKey(HOST, 1000, 0), 'a redirect target stays ahead of every plain score');
  });

  it('queueOrder leaves known URLs and stale entries at their key', () => {
    const key = queueKey(HOST, 1, 5);
    const queued: UrlState = { st: 'queued', d: 1, c: 0, s: 3, q: key };
    assert.equal(queueOrder(HOST, key, queued), queueKey(HOST, 3, 5));
    assert.equal(queueOrder(HOST, key, { ...queued, st: 'done' }), key);
    assert.equal(queueOrder(HOST, key, { ...queued, q: queueKey(HOST, 1, 6) }), key);
    assert.equal(queueOrder(HOST, key, undefined), key);
    const known = knownQueueKey(HOST, 0.4, 9);
    assert.equal(queueOrder(HOST, known, { ...queued, q: known }), known);
  });
});

describe('QueueCache', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) removeDir(dir);
    dir = undefined;
  });

  it('reorders in memory without a store write, and a reload gives the same order', async () => {
    dir = tempDir('meguri-queue-order-');
    const stores = await TaskStores.open(dir, 'scheduler', 0, ['queues']);
    try {
      const store = stores.store<string>('queues');
      const scores = new Map<string, number>();
      const keys = new Map<string, string>();
      const orderOf: QueueOrder = async (host, stored) =>
        stored.map((e) => queueOrder(host, e.key, { st: 'queued', q: keys.get(e.url), s: scores.get(e.url) ?? 0 }));
      const commit = async (): Promise<void> => {
        await stores.db.batch(store.pendingOps());
        stores.committed();
      };

      const first = new QueueCache(store, orderOf);
      await first.head(HOST); // loaded (empty), so adds go to memory too
      for (let i = 0; i < 20; i++) {
        const url = `http://${HOST}/p${i}`;
        const score = (i % 7) + 0.5;
        const key = queueKey(HOST, score, i);
        scores.set(url, score);
        keys.set(url, key);
        first.add(HOST, key, url);
      }
      await commit();
      const storedBefore = (await first.all(HOST)).map((e) => e.key).sort();

      // Links raise the scores of a few queued URLs, as incremental PageRank does.
      for (const [i, score] of [[3, 50], [17, 9.25], [10, 0.75]] as const) {
        const url = `http://${HOST}/p${i}`;
        scores.set(url, score);
        first.reorder(HOST, keys.get(url)!, rescoredQueueKey(HOST, keys.get(url)!, score));
      }
      assert.equal(store.pendingCount, 0, 'a score change writes nothing to the queues store');
      const order = (await first.all(HOST)).map((e) => e.url);
      assert.equal(order[0], `http://${HOST}/p3`, 'the URL that gained most comes first');
      assert.equal((await first.head(HOST))?.url, `http://${HOST}/p3`);

      const reloaded = new QueueCache(store, orderOf);
      assert.deepEqual((await reloaded.all(HOST)).map((e) => e.url), order, 'a reload orders by the stored scores');
      assert.deepEqual((await reloaded.all(HOST)).map((e) => e.key).sort(), storedBefore, 'the stored keys are the ones queued');

      // Taking the head removes its stored entry; putting it back keeps its place.
      const head = (await reloaded.head(HOST))!;
      reloaded.remove(HOST, head.key);
      assert.notEqual((await reloaded.head(HOST))?.url, head.url);
      reloaded.add(HOST, head.key, head.url, head.order);
      assert.equal((await reloaded.head(HOST))?.url, head.url);
      await commit();
      assert.equal((await reloaded.all(HOST)).length, 20);
    } finally {
      await stores.close();
    }
  });
});
