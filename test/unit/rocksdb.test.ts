/**
 * The RocksDB wrapper's write batches (a chained batch under the hood): every operation of a batch
 * is applied, in order, at once; a batch with a bad operation writes nothing and rejects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RocksDb } from '../../services/runtime/rocksdb.ts';
import type { BatchOp } from '../../services/runtime/rocksdb.ts';
import { tempDir, removeDir } from '../support/transports.ts';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

test('a batch applies its puts and deletes in order; a bad operation fails the whole batch', async () => {
  const dir = tempDir('meguri-rocksdb-');
  const db = await RocksDb.open(dir);
  try {
    await db.batch([
      { type: 'put', key: b('a'), value: b('1') },
      { type: 'put', key: b('b'), value: b('2') },
      { type: 'put', key: b('c'), value: b('3') },
    ]);
    // Later operations on the same key win: put then delete, delete then put.
    await db.batch([
      { type: 'put', key: b('a'), value: b('10') },
      { type: 'del', key: b('a') },
      { type: 'del', key: b('b') },
      { type: 'put', key: b('b'), value: b('20') },
    ]);
    assert.equal(await db.get(b('a')), undefined);
    assert.equal((await db.get(b('b')))?.toString(), '20');
    assert.equal((await db.get(b('c')))?.toString(), '3');
    await db.batch([]);
    const bad = [{ type: 'put', key: b('d'), value: b('4') }, { type: 'put', key: null, value: b('5') }] as unknown as BatchOp[];
    await assert.rejects(db.batch(bad));
    assert.equal(await db.get(b('d')), undefined, 'nothing of a failed batch is written');
  } finally {
    await db.close();
    removeDir(dir);
  }
});

test('string keys and values are written as their UTF-8 bytes, the same as Buffers of them', async () => {
  const dir = tempDir('meguri-rocksdb-');
  const db = await RocksDb.open(dir);
  try {
    // State keys hold a NUL separator; values are JSON, possibly with any Unicode text.
    const key = 's:urls\u0000http://例え.test/ä?q=1';
    const value = JSON.stringify({ t: 'Grüße 日本語 😀', n: 1 });
    await db.batch([
      { type: 'put', key, value },
      { type: 'put', key: 'gone', value: 'x' },
    ]);
    assert.deepEqual(await db.get(b(key)), b(value));
    const [raw] = await db.getMany([b(key)]);
    assert.equal(raw?.toString('utf8'), value);
    // A string delete removes the key a Buffer names, and the other way round.
    await db.batch([{ type: 'del', key: 'gone' }, { type: 'put', key: b('other'), value: b('1') }]);
    await db.batch([{ type: 'del', key: 'other' }]);
    assert.equal(await db.get(b('gone')), undefined);
    assert.equal(await db.get(b('other')), undefined);
  } finally {
    await db.close();
    removeDir(dir);
  }
});
