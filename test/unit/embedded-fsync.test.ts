// --fsync / MEGURI_FSYNC: every write batch of the embedded log (records, offsets, commits) is
// written with RocksDB's sync option, so a commit survives a power loss; without it, none is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTransport } from '../../services/runtime/index.ts';
import { RocksStore } from '../../services/runtime/embedded/rocks.ts';
import { removeDir, tempDir } from '../support/transports.ts';

/** Runs `work` with RocksDB write batches recorded (the real write still happens). */
async function recordingSyncs(work: () => Promise<void>): Promise<boolean[]> {
  const syncs: boolean[] = [];
  const original = RocksStore.prototype.batch;
  RocksStore.prototype.batch = function (this: RocksStore, ops, sync) {
    syncs.push(sync);
    return original.call(this, ops, sync);
  };
  try {
    await work();
  } finally {
    RocksStore.prototype.batch = original;
  }
  return syncs;
}

async function commitSome(fsync: boolean): Promise<boolean[]> {
  const dir = tempDir();
  try {
    const t = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: dir, fsync });
    try {
      await t.ensureTopics([{ name: 'in', partitions: 1 }, { name: 'out', partitions: 1 }]);
      const member = await t.join({ groupId: 'g', topics: ['in'], onAssigned: async () => {}, onRevoked: async () => {}, eachBatch: async () => {} });
      await member.ready();
      // Sends and commits only (creating the log writes its format marker synced, once).
      const syncs = await recordingSyncs(async () => {
        await t.send([{ topic: 'in', key: 'k', value: Buffer.from('v') }]);
        await member.commit({ transactional: true, scope: 'g-0', outputs: [{ topic: 'out', key: 'k', value: Buffer.from('w') }], offsets: [{ topic: 'in', partition: 0, offset: 1 }] });
      });
      await member.stop();
      return syncs;
    } finally {
      await t.close();
    }
  } finally {
    removeDir(dir);
  }
}

describe('embedded log fsync', () => {
  it('syncs every write batch with fsync on', async () => {
    const syncs = await commitSome(true);
    assert.ok(syncs.length >= 2, `the send and the commit were written (${syncs.length} batches)`);
    assert.ok(syncs.every((s) => s), 'every batch synced');
  });

  it('syncs none by default', async () => {
    const syncs = await commitSome(false);
    assert.ok(syncs.length >= 2);
    assert.ok(syncs.every((s) => !s));
  });
});
