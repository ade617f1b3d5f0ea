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
