/**
 * Host queues on real RocksDB stores: a queued URL whose score rises moves up in memory without a
 * write to the `queues` store, and a queue loaded again from the store (a restart, or a host the
 * cache had dropped) is in the same order, made from the scores stored with the URLs. Queue ranks
 * (a key's parts as numbers) order entries exactly as their keys' strings do.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TaskStores } from '../../services/runtime/task-stores.ts';
import type { TaskStore } from '../../services/runtime/store.ts';
import { QueueCache } from '../../services/scheduler/queue-cache.ts';
import type { QueueOrder } from '../../services/scheduler/queue-cache.ts';
import { KNOWN_GROUP, compareQueueRanks, knownQueueKey, queueKey, queueOrder, queueRank, rescoredInverted } from '../../services/scheduler/state.ts';
import type { UrlState } from '../../services/scheduler/state.ts';
import { REDIRECT_QUEUE_BOOST } from '../../services/scheduler/redirects.ts';
import { tempDir, removeDir } from '../support/transports.ts';

const HOST = 'h.test';

/** The rank of `key` with the score now `score`, as the queue cache moves a rescored entry. */
function rescored(key: string, score: number): ReturnType<typeof queueRank> {
  const rank = queueRank(HOST, key);
  rank.inverted = rescoredInverted(rank, score);
  return rank;
}

describe('queue ranks', () => {
  it('compare as the keys do: rounds after plain new URLs, known URLs last, then score and sequence', () => {
    const keys: string[] = [];
    let seq = 0;
    for (const round of [0, 1, 2, 12, 999]) for (const score of [0, 0.000001, 0.5, 1.25, 3, 1e6, 1e8 + 2]) keys.push(queueKey(HOST, score, seq++ % 5, round));
    for (const gamma of [0, 0.25, 1]) keys.push(knownQueueKey(HOST, gamma, seq++));
    const byString = [...keys].sort();
    const byRank = [...keys].sort((a, b) => compareQueueRanks(queueRank(HOST, a), queueRank(HOST, b)));
    assert.deepEqual(byRank, byString);
    for (const a of keys) for (const b of keys) assert.equal(Math.sign(compareQueueRanks(queueRank(HOST, a), queueRank(HOST, b))), a < b ? -1 : a > b ? 1 : 0);
  });

  it('a new score keeps the round, the sequence number and a redirect boost', () => {
    for (const round of [0, 3]) {
      for (const boost of [0, REDIRECT_QUEUE_BOOST]) {
        const key = queueKey(HOST, boost + 1.25, 42, round);
        assert.deepEqual(rescored(key, 1.25), queueRank(HOST, key), 'the same score gives the same rank');
        const higher = rescored(key, 7.5);
        assert.deepEqual(higher, queueRank(HOST, queueKey(HOST, boost + 7.5, 42, round)));
        assert.ok(compareQueueRanks(higher, queueRank(HOST, key)) < 0, 'a higher score sorts first');
        assert.equal(higher.group, round);
      }
    }
    const boosted = rescored(queueKey(HOST, REDIRECT_QUEUE_BOOST, 1), 0.5);
    assert.ok(compareQueueRanks(boosted, queueRank(HOST, queueKey(HOST, 1000, 0))) < 0, 'a redirect target stays ahead of every plain score');
  });

  it('queueOrder leaves known URLs and stale entries at their key', () => {
    const key = queueKey(HOST, 1, 5);
    const queued: UrlState = { status: 'queued', depth: 1, cgiHops: 0, score: 3, queueKey: key };
    assert.deepEqual(queueOrder(HOST, key, queued), queueRank(HOST, queueKey(HOST, 3, 5)));
    assert.deepEqual(queueOrder(HOST, key, { ...queued, status: 'done' }), queueRank(HOST, key));
    assert.deepEqual(queueOrder(HOST, key, { ...queued, queueKey: queueKey(HOST, 1, 6) }), queueRank(HOST, key));
    assert.deepEqual(queueOrder(HOST, key, undefined), queueRank(HOST, key));
    const known = knownQueueKey(HOST, 0.4, 9);
    assert.deepEqual(queueOrder(HOST, known, { ...queued, queueKey: known }), queueRank(HOST, known));
  });
});

/** Queues on real RocksDB stores, ordered on load by the scores a test keeps beside them. */
interface QueueBench {
  readonly store: TaskStore<string>;
  readonly scores: Map<string, number>;
  readonly keys: Map<string, string>;
  readonly orderOf: QueueOrder;
  /** Writes the store's pending entries to RocksDB as a commit does. */
  commit(): Promise<void>;
}

async function withQueues(dir: string, fn: (q: QueueBench) => Promise<void>): Promise<void> {
  const stores = await TaskStores.open(dir, 'scheduler', 0, ['queues']);
  try {
    const store = stores.store<string>('queues');
    const scores = new Map<string, number>();
    const keys = new Map<string, string>();
    const orderOf: QueueOrder = async (host, stored) =>
      stored.map((e) => queueOrder(host, e.key, { status: 'queued', queueKey: keys.get(e.url), score: scores.get(e.url) ?? 0 }));
    const commit = async (): Promise<void> => {
      await stores.db.batch(store.pendingOps());
      stores.committed();
    };
    await fn({ store, scores, keys, orderOf, commit });
  } finally {
    await stores.close();
  }
}

describe('QueueCache', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) removeDir(dir);
    dir = undefined;
  });

  it('reorders in memory without a store write, and a reload gives the same order', async () => {
    dir = tempDir('meguri-queue-order-');
    await withQueues(dir, async ({ store, scores, keys, orderOf, commit }) => {
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
        first.rescore(HOST, keys.get(url)!, score);
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
      reloaded.add(HOST, head.key, head.url, head.rank);
      assert.equal((await reloaded.head(HOST))?.url, head.url);
      await commit();
      assert.equal((await reloaded.all(HOST)).length, 20);

      // A rescored entry is still found by its key: rescored again, then removed.
      const url10 = `http://${HOST}/p10`;
      for (const score of [80, 90]) {
        scores.set(url10, score);
        reloaded.rescore(HOST, keys.get(url10)!, score);
        assert.equal((await reloaded.head(HOST))?.url, url10, `rescored to ${score}, it leads`);
      }
      reloaded.remove(HOST, keys.get(url10)!);
      const left = await reloaded.all(HOST);
      assert.equal(left.length, 19);
      assert.ok(!left.some((e) => e.url === url10), 'removed by the key it was queued under');
      for (let i = 1; i < left.length; i++) assert.ok(compareQueueRanks(left[i - 1]!.rank, left[i]!.rank) < 0, 'the list stays sorted');
    });
  });

  it('starts a queue the caller knows is empty in memory, without reading the store, within its entry budget', async () => {
    dir = tempDir('meguri-queue-empty-');
    await withQueues(dir, async ({ store, orderOf, commit }) => {
      let ranges = 0;
      const counted: TaskStore<string> = Object.create(store) as TaskStore<string>;
      counted.range = (query) => {
        ranges++;
        return store.range(query);
      };
      const cache = new QueueCache(counted, orderOf, 3);
      const hosts = ['a.test', 'b.test', 'c.test', 'd.test'];
      for (const [i, host] of hosts.entries()) cache.add(host, queueKey(host, 1, i), `http://${host}/`, undefined, 0);
      // The last three fit the budget of 3 entries: answered from memory.
      for (const host of hosts.slice(1)) assert.equal((await cache.head(host))?.url, `http://${host}/`);
      assert.equal(ranges, 0, 'no store read for a queue started empty');
      // The first was let go to stay within the budget: read back from the store, entry and all.
      await commit();
      assert.equal((await cache.head('a.test'))?.url, 'http://a.test/');
      assert.equal(ranges, 1);
      // A count the caller does not know, or one above zero, leaves the queue to be read.
      cache.add('e.test', queueKey('e.test', 1, 9), 'http://e.test/1');
      cache.add('f.test', queueKey('f.test', 1, 10), 'http://f.test/2', undefined, 1);
      await commit();
      assert.equal(await cache.knownCount('e.test'), 0);
      assert.equal((await cache.head('f.test'))?.url, 'http://f.test/2');
      assert.equal(ranges, 3);
    });
  });

  it('keeps the order a fresh sort gives through many moves up and down, to both ends and in place', async () => {
    dir = tempDir('meguri-queue-moves-');
    await withQueues(dir, async ({ store, scores, keys, orderOf, commit }) => {
      const cache = new QueueCache(store, orderOf);
      await cache.head(HOST);
      const n = 60;
      for (let i = 0; i < n; i++) {
        const url = `http://${HOST}/m${i}`;
        // Rounds 0 and 1, and a redirect boost on a few: moves stay within their group.
        const key = i % 9 === 0 ? queueKey(HOST, REDIRECT_QUEUE_BOOST + 1, i) : queueKey(HOST, 1, i, i % 2);
        scores.set(url, 1);
        keys.set(url, key);
        cache.add(HOST, key, url);
      }
      let seed = 7;
      const random = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
      const expected = async (): Promise<string[]> => (await new QueueCache(store, orderOf).all(HOST)).map((e) => e.url);
      await commit();
      for (let step = 0; step < 400; step++) {
        const url = `http://${HOST}/m${Math.floor(random() * n)}`;
        const pick = random();
        // Far up, far down, a small step either way, or the same score again.
        const score = pick < 0.2 ? 1e6 * random() : pick < 0.4 ? random() / 1e3 : pick < 0.9 ? scores.get(url)! * (0.9 + random() / 5) : scores.get(url)!;
        scores.set(url, score);
        cache.rescore(HOST, keys.get(url)!, score);
        if (step % 40 === 39) assert.deepEqual((await cache.all(HOST)).map((e) => e.url), await expected(), `after ${step + 1} moves`);
      }
      const list = await cache.all(HOST);
      assert.equal(list.length, n);
      for (let i = 1; i < list.length; i++) assert.ok(compareQueueRanks(list[i - 1]!.rank, list[i]!.rank) < 0, 'sorted');
    });
  });

  it('answers head, headNew, headKnown and knownCount as a sorted list would through adds, takes and moves of new and known URLs', async () => {
    dir = tempDir('meguri-queue-mixed-');
    await withQueues(dir, async ({ store, scores, keys, orderOf, commit }) => {
      const cache = new QueueCache(store, orderOf);
      await cache.head(HOST);
      // The model: every queued entry's current rank, by key.
      const model = new Map<string, { url: string; rank: ReturnType<typeof queueRank> }>();
      let seed = 11;
      const random = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
      let seq = 0;
      for (let step = 0; step < 3000; step++) {
        const pick = random();
        const queued = [...model.keys()];
        if (pick < 0.35 || queued.length === 0) {
          const url = `http://${HOST}/x${seq}`;
          const known = random() < 0.3;
          const score = random() * 10;
          const key = known ? knownQueueKey(HOST, random(), seq) : queueKey(HOST, score, seq, random() < 0.2 ? 1 : 0);
          seq++;
          scores.set(url, score);
          keys.set(url, key);
          cache.add(HOST, key, url);
          model.set(key, { url, rank: queueRank(HOST, key) });
        } else if (pick < 0.6) {
          const key = queued[Math.floor(random() * queued.length)]!;
          cache.remove(HOST, key);
          model.delete(key);
        } else {
          const key = queued[Math.floor(random() * queued.length)]!;
          const entry = model.get(key)!;
          const score = random() < 0.5 ? scores.get(entry.url)! * 2 : random();
          scores.set(entry.url, score);
          cache.rescore(HOST, key, score);
          if (entry.rank.group !== KNOWN_GROUP) entry.rank.inverted = rescoredInverted(entry.rank, score);
        }
        const sorted = [...model.entries()].sort((a, b) => compareQueueRanks(a[1].rank, b[1].rank)).map(([key]) => key);
        const knownKeys = sorted.filter((k) => model.get(k)!.rank.group === KNOWN_GROUP);
        const newKeys = sorted.filter((k) => model.get(k)!.rank.group !== KNOWN_GROUP);
        assert.equal((await cache.head(HOST))?.key, sorted[0], `head after step ${step}`);
        assert.equal((await cache.headNew(HOST))?.key, newKeys[0], `headNew after step ${step}`);
        assert.equal((await cache.headKnown(HOST))?.key, knownKeys[0], `headKnown after step ${step}`);
        assert.equal(await cache.knownCount(HOST), knownKeys.length);
        if (step % 250 === 249) {
          assert.deepEqual((await cache.all(HOST)).map((e) => e.key), sorted, `all() after step ${step}`);
          await commit();
          const reloaded = new QueueCache(store, orderOf);
          assert.deepEqual((await reloaded.all(HOST)).map((e) => e.key), sorted, `a reload after step ${step}`);
        }
      }
      assert.ok(model.size > 100, `the queue held ${model.size} entries at the end`);
    });
  });
});
