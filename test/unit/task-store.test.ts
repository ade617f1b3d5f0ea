import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOT_IN_MEMORY, TaskStore } from '../../services/runtime/store.ts';
import { TaskStores } from '../../services/runtime/task-stores.ts';
import { RocksDb } from '../../services/runtime/rocksdb.ts';
import { withTaskStores, commitStores } from '../support/task-stores.ts';
import { tempDir, removeDir } from '../support/transports.ts';

const withStores = (fn: (stores: TaskStores) => Promise<void>): Promise<void> => withTaskStores(['urls', 'hosts'], fn);
const commit = commitStores;

/** A RocksDB in a temporary directory for `fn`, closed and removed afterwards. */
async function withDb(prefix: string, fn: (db: RocksDb) => Promise<void>): Promise<void> {
  const dir = tempDir(prefix);
  const db = await RocksDb.open(dir);
  try {
    await fn(db);
  } finally {
    await db.close();
    removeDir(dir);
  }
}

/** Commits a lone store's pending writes into `db` as the runtime would. */
async function commitTo(db: RocksDb, store: TaskStore<number>): Promise<void> {
  await db.batch(store.pendingOps());
  store.committed();
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

test('write-behind: committed writes are read from memory until a flush puts them in RocksDB with their checkpoint', async () => {
  await withStores(async (stores) => {
    const urls = stores.store<{ st: string }>('urls');
    const raw = async (key: string): Promise<string | undefined> => (await stores.db.get(Buffer.from(`s:urls\u0000${key}`)))?.toString('utf8');
    urls.put('x', { st: 'queued' });
    urls.put('gone', { st: 'queued' });
    await commit(stores);
    urls.put('x', { st: 'fetched' });
    urls.put('y', { st: 'queued' });
    urls.delete('gone');
    urls.committedBehind(7);
    assert.equal(urls.unappliedCount, 3);
    assert.equal(await raw('x'), '{"st":"queued"}', 'not in RocksDB yet');
    assert.equal(await raw('y'), undefined);
    // With the read cache dropped (a failed batch), reads still see the committed writes.
    stores.discardPending();
    assert.equal(urls.unappliedCount, 3, 'a failed batch keeps committed writes');
    assert.deepEqual(await urls.get('x'), { st: 'fetched' });
    assert.equal(await urls.get('gone'), undefined);
    stores.discardPending();
    await urls.prefetch(['x', 'y', 'gone']);
    assert.deepEqual(urls.peek('y'), { st: 'queued' });
    assert.equal(urls.peek('gone'), undefined);
    // A range read sees them too: it flushes first.
    stores.discardPending();
    const seen: [string, { st: string }][] = [];
    for await (const e of urls.range()) seen.push(e);
    assert.deepEqual(seen, [['x', { st: 'fetched' }], ['y', { st: 'queued' }]]);
    assert.equal(urls.unappliedCount, 0);
    assert.equal(await raw('x'), '{"st":"fetched"}');
    assert.equal(await raw('gone'), undefined);
    assert.equal(await urls.checkpoint(), 7);
  });
});

test('write-behind: a key written by many commits is written once, and closing the stores writes what waits', async () => {
  const dir = tempDir('meguri-store-');
  try {
    let stores = await TaskStores.open(dir, 'g', 0, ['urls', 'hosts']);
    const hosts = stores.store<{ n: number }>('hosts');
    for (let n = 1; n <= 5; n++) {
      hosts.put('h', { n });
      hosts.committedBehind(n * 10);
    }
    assert.equal(hosts.unappliedCount, 1);
    await stores.close();
    stores = await TaskStores.open(dir, 'g', 0, ['urls', 'hosts']);
    assert.deepEqual(await stores.store<{ n: number }>('hosts').get('h'), { n: 5 });
    assert.equal(await stores.store('hosts').checkpoint(), 50);
    await stores.close();
  } finally {
    removeDir(dir);
  }
});

test('a store empty at open answers misses from memory until its cache lets a key go or a batch fails', async () => {
  const dir = tempDir('meguri-store-complete-');
  const db = await RocksDb.open(dir);
  // Counts what reaches RocksDB as reads.
  const reads = { n: 0 };
  const counted = {
    get: (key: Buffer) => (reads.n++, db.get(key)),
    getMany: (keys: Buffer[]) => (reads.n++, db.getMany(keys)),
    batch: db.batch.bind(db),
    range: db.range.bind(db),
  };
  const commitOne = (s: TaskStore<number>): Promise<void> => commitTo(db, s);
  try {
    const urls = new TaskStore<number>('urls', counted, '', 10);
    assert.equal(await urls.noteIfEmpty(), true);
    // Absent keys are answered without a prefetch, and take no cache entry.
    assert.equal(urls.peek('a'), undefined);
    await urls.prefetch(['a', 'b', 'c']);
    assert.equal(await urls.get('a'), undefined);
    assert.equal(await urls.get('zz'), undefined);
    urls.put('a', 1);
    urls.put('b', 2);
    urls.put('gone', 3);
    await commitOne(urls);
    assert.equal(await urls.get('a'), 1);
    assert.equal(urls.peek('b'), 2);
    // A delete under completeness leaves no entry behind; the key reads as absent all the same.
    urls.delete('gone');
    assert.equal(urls.peek('gone'), undefined);
    await commitOne(urls);
    assert.equal(urls.peek('gone'), undefined);
    assert.equal(await urls.get('gone'), undefined);
    assert.equal(reads.n, 0, 'no RocksDB read while every key is in memory');

    // Another store over the same keys (a reopen, a moved task) finds them: not complete.
    const again = new TaskStore<number>('urls', counted, '', 10);
    assert.equal(await again.noteIfEmpty(), false);
    assert.equal(await again.get('a'), 1);
    assert.equal(reads.n, 1);

    // The cache's budget (10 here) lets keys go: misses go to RocksDB again, and find them.
    for (let i = 0; i < 12; i++) urls.put(`k${i}`, i);
    await commitOne(urls);
    assert.equal(urls.knownCompletely, false);
    // Not complete any more: a key not in memory is not known to be absent.
    assert.equal(urls.peek('never-written'), NOT_IN_MEMORY);
    assert.equal(urls.peek('a'), NOT_IN_MEMORY);
    const before = reads.n;
    assert.equal(await urls.get('a'), 1, 'a key the cache let go is read from RocksDB');
    assert.ok(reads.n > before);
    // The deleted key, read from RocksDB, is absent there too.
    assert.equal(await urls.get('gone'), undefined);

    // A failed batch drops the cache: the same.
    const hosts = new TaskStore<number>('hosts', counted, '', 10);
    assert.equal(await hosts.noteIfEmpty(), true);
    hosts.put('h', 1);
    await commitOne(hosts);
    hosts.discard();
    assert.equal(hosts.knownCompletely, false);
    const n = reads.n;
    assert.equal(await hosts.get('h'), 1);
    assert.equal(reads.n, n + 1);
  } finally {
    await db.close();
    removeDir(dir);
  }
});

test('a batch that writes more keys than the cache holds keeps every write readable and commits them all', async () => {
  await withDb('meguri-store-overflow-', async (db) => {
    const urls = new TaskStore<number>('urls', db, '', 10);
    // Committed state first, so that reads of keys not in memory go to RocksDB.
    for (let i = 0; i < 10; i++) urls.put(`old${i}`, i);
    await commitTo(db, urls);
    // Twenty-five writes in one batch, some twice, into a cache of ten: none may be let go.
    for (let i = 0; i < 25; i++) urls.put(`new${i}`, i);
    urls.put('new3', 300);
    urls.delete('new4');
    for (let i = 0; i < 25; i++) assert.equal(urls.peek(`new${i}`), i === 3 ? 300 : i === 4 ? undefined : i, `new${i} before the commit`);
    assert.equal(urls.pendingCount, 25);
    assert.deepEqual(
      urls.pendingOps().map((op) => op.key).slice(0, 5),
      ['new0', 'new1', 'new2', 'new3', 'new4'].map((k) => `s:urls\u0000${k}`),
      'in the order of their first write',
    );
    const ranged: string[] = [];
    for await (const [k] of urls.range({ prefix: 'new1' })) ranged.push(k);
    assert.deepEqual(ranged, ['new1', 'new10', 'new11', 'new12', 'new13', 'new14', 'new15', 'new16', 'new17', 'new18', 'new19']);
    await commitTo(db, urls);
    assert.equal(urls.pendingCount, 0);
    // Committed, they may make room for others; every one is still read right, from memory or RocksDB.
    for (let i = 0; i < 30; i++) urls.put(`later${i}`, i);
    await commitTo(db, urls);
    for (let i = 0; i < 25; i++) assert.equal(await urls.get(`new${i}`), i === 3 ? 300 : i === 4 ? undefined : i, `new${i} after the commit`);
    for (let i = 0; i < 10; i++) assert.equal(await urls.get(`old${i}`), i);

    // A failed batch: its writes are gone, committed state reads as before.
    urls.put('new0', -1);
    urls.put('brand-new', 1);
    urls.discard();
    assert.equal(urls.pendingCount, 0);
    assert.equal(await urls.get('new0'), 0);
    assert.equal(await urls.get('brand-new'), undefined);
  });
});

test('a write right after a read of the same key lands in the store, also when that key left memory in between', async () => {
  await withDb('meguri-store-recent-', async (db) => {
    const urls = new TaskStore<number>('urls', db, '', 4);
    urls.put('a', 1);
    await commitTo(db, urls);
    // Read, then written: the new value is the one read back and committed.
    assert.equal(await urls.get('a'), 1);
    urls.put('a', 2);
    assert.equal(urls.pendingCount, 1);
    await commitTo(db, urls);
    assert.equal(urls.peek('a'), 2);

    // Read (without moving it in the map, where it is the oldest entry), then let go by the cache
    // at the commit of a batch of four others, then written: the write must not go into the entry
    // the map no longer holds.
    for (let i = 0; i < 4; i++) urls.put(`c${i}`, i);
    assert.equal(urls.peek('a'), 2);
    await commitTo(db, urls);
    assert.equal(urls.peek('a'), NOT_IN_MEMORY);
    urls.put('a', 3);
    assert.equal(urls.peek('a'), 3);
    assert.deepEqual(urls.pendingOps(), [{ type: 'put', key: 's:urls\u0000a', value: '3' }]);
    await commitTo(db, urls);
    assert.equal(await urls.get('a'), 3);

    // Read, deleted and committed (the entry goes with the commit of a known-absent key), written.
    urls.delete('a');
    await commitTo(db, urls);
    assert.equal(await urls.get('a'), undefined);
    urls.put('a', 4);
    assert.equal(urls.pendingCount, 1);
    await commitTo(db, urls);
    assert.equal(await urls.get('a'), 4);

    // Read, then the batch fails (the map is dropped), then written in the next batch.
    assert.equal(urls.peek('a'), 4);
    urls.discard();
    urls.put('a', 5);
    assert.equal(urls.peek('a'), 5);
    assert.equal(urls.pendingCount, 1);
    await commitTo(db, urls);
    assert.equal(await urls.get('a'), 5);
    const stored = await db.get(Buffer.from('s:urls\u0000a', 'utf8'));
    assert.equal(stored?.toString('utf8'), '5');

    // A store known completely drops a deleted key's entry at the commit: read, deleted,
    // committed, then written again.
    const hosts = new TaskStore<number>('hosts', db, '', 4);
    assert.equal(await hosts.noteIfEmpty(), true);
    hosts.put('h', 1);
    await commitTo(db, hosts);
    hosts.delete('h');
    await commitTo(db, hosts);
    assert.equal(hosts.peek('h'), undefined);
    hosts.put('h', 2);
    assert.equal(hosts.peek('h'), 2);
    assert.equal(hosts.pendingCount, 1);
  });
});

test('a store with a codec keeps its encoded form on disk and hands out the decoded one', async () => {
  interface Readable { status: string; count: number }
  const codec = {
    encode: (v: Readable, key: string) => ({ s: v.status, n: v.count, k: key }),
    decode: (stored: unknown) => {
      const o = stored as { s: string; n: number };
      return { status: o.s, count: o.n };
    },
  };
  const dir = tempDir('meguri-store-codec-');
  try {
    let stores = await TaskStores.open(dir, 'g', 0, [{ name: 'urls', codec }]);
    const urls = stores.store<Readable>('urls');
    urls.put('a', { status: 'queued', count: 1 });
    // What the changelog and RocksDB get: the encoded form.
    assert.equal([...urls.pending][0]![1]?.toString('utf8'), '{"s":"queued","n":1,"k":"a"}');
    await commit(stores);
    await stores.close();
    // A fresh open reads from RocksDB: decoded on get, prefetch and range alike.
    stores = await TaskStores.open(dir, 'g', 0, [{ name: 'urls', codec }]);
    const again = stores.store<Readable>('urls');
    assert.deepEqual(await again.get('a'), { status: 'queued', count: 1 });
    const ranged: [string, Readable][] = [];
    for await (const kv of again.range()) ranged.push(kv);
    assert.deepEqual(ranged, [['a', { status: 'queued', count: 1 }]]);
    await stores.close();
    stores = await TaskStores.open(dir, 'g', 0, [{ name: 'urls', codec }]);
    await stores.store<Readable>('urls').prefetch(['a']);
    assert.deepEqual(stores.store<Readable>('urls').peek('a'), { status: 'queued', count: 1 });
    await stores.close();
    // Opened without the codec, the same bytes read as they are on disk.
    stores = await TaskStores.open(dir, 'g', 0, ['urls']);
    assert.deepEqual(await stores.store<unknown>('urls').get('a'), { s: 'queued', n: 1, k: 'a' });
    await stores.close();
  } finally {
    removeDir(dir);
  }
});
