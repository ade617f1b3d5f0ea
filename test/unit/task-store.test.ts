import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskStores } from '../../services/runtime/store.ts';
import { tempDir, removeDir } from '../support/transports.ts';

async function withStores(fn: (stores: TaskStores) => Promise<void>): Promise<void> {
  const dir = tempDir('meguri-store-');
  const stores = await TaskStores.open(dir, 'g', 0, ['urls', 'hosts']);
  try {
    await fn(stores);
  } finally {
    await stores.close();
    removeDir(dir);
  }
}

/** What the runtime does after a successful commit: the pending writes go to RocksDB, then the cache. */
async function commit(stores: TaskStores): Promise<void> {
  await stores.db.batch([...stores.stores.values()].flatMap((s) => s.pendingOps()));
  stores.committed();
}

test('a key written many times in a batch is serialised once, with its last value', async () => {
  await withStores(async (stores) => {
    const hosts = stores.store<{ queued: number }>('hosts');
    const state = { queued: 0 };
    for (let i = 0; i < 5; i++) {
      state.queued++;
      hosts.put('a.test', state);
    }
    assert.equal(hosts.pendingCount, 1);
    const pending = [...hosts.pending];
    assert.deepEqual(pending.map(([k, v]) => [k, v?.toString('utf8')]), [['a.test', '{"queued":5}']]);
    // Asked again without a write in between: the same buffers, not a second serialisation.
    assert.equal([...hosts.pending][0]![1], pending[0]![1]);
    hosts.put('a.test', { queued: 6 });
    assert.equal([...hosts.pending][0]![1]?.toString('utf8'), '{"queued":6}');
  });
});

test('reads see pending writes and deletes; range merges them with committed keys in order', async () => {
  await withStores(async (stores) => {
    const urls = stores.store<number>('urls');
    urls.put('b', 2);
    urls.put('d', 4);
    urls.put('f', 6);
    await commit(stores);
    urls.put('a', 1);
    urls.delete('d');
    urls.put('e', 5);
    urls.put('f', 60);
    assert.equal(await urls.get('d'), undefined);
    assert.equal(await urls.get('f'), 60);
    const all: [string, number][] = [];
    for await (const kv of urls.range()) all.push(kv);
    assert.deepEqual(all, [['a', 1], ['b', 2], ['e', 5], ['f', 60]]);
    const reversed: [string, number][] = [];
    for await (const kv of urls.range({ reverse: true, limit: 2 })) reversed.push(kv);
    assert.deepEqual(reversed, [['f', 60], ['e', 5]]);
    assert.deepEqual([...urls.pending].map(([k, v]) => [k, v === null ? null : v.toString('utf8')]), [['a', '1'], ['d', null], ['e', '5'], ['f', '60']]);
  });
});

test('discard forgets the batch; commit makes it the state RocksDB and later reads return', async () => {
  await withStores(async (stores) => {
    const urls = stores.store<{ st: string }>('urls');
    urls.put('x', { st: 'queued' });
    await commit(stores);
    urls.put('x', { st: 'fetched' });
    urls.put('y', { st: 'queued' });
    stores.discardPending();
    assert.equal(stores.hasPending(), false);
    assert.deepEqual(await urls.get('x'), { st: 'queued' });
    assert.equal(await urls.get('y'), undefined);
    urls.delete('x');
    await commit(stores);
    stores.discardPending(); // drops the cache too: the next read comes from RocksDB
    assert.equal(await urls.get('x'), undefined);
    await urls.prefetch(['x', 'z']);
    assert.equal(await urls.get('z'), undefined);
  });
});
