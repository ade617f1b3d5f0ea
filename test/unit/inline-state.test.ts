/**
 * State stores on the embedded log (one write path): a task's stores live in the log's own
 * database and their writes go into the commit's atomic write, with no changelog. A directory of the
 * older layout (stores in state/<group>/p<n>, kept through changelogs) is taken over once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EmbeddedTransport, ServiceMetrics, silentLogger } from '../../services/runtime/index.ts';
import { StateManager } from '../../services/runtime/state-manager.ts';
import { TaskStores } from '../../services/runtime/task-stores.ts';
import { RocksStore } from '../../services/runtime/embedded/rocks.ts';
import { formatKey } from '../../services/runtime/embedded/keys.ts';
import { dirsRemovedAfterEach } from '../support/transports.ts';

const CHANGELOG = 'g.counts.changelog';
/** A temporary directory removed after the test. */
const testDir = dirsRemovedAfterEach();

function manager(transport: EmbeddedTransport, dataDir: string, metrics = new ServiceMetrics('inline-test')): StateManager {
  return new StateManager({
    dataDir,
    groupId: 'g',
    partition: 0,
    stores: [{ name: 'counts', changelog: true }],
    transport,
    changelogTopic: () => CHANGELOG,
    logger: silentLogger,
    metrics,
  });
}

async function restoredCount(metrics: ServiceMetrics): Promise<number> {
  return (await metrics.restoredRecords.get()).values.reduce((sum, v) => sum + v.value, 0);
}

/** Sets the format marker of the log database under `logDir`, as another build would have left it. */
async function writeFormat(logDir: string, format: string): Promise<void> {
  mkdirSync(join(logDir, 'log'), { recursive: true });
  const raw = await RocksStore.open(join(logDir, 'log'));
  try {
    await raw.batch([{ type: 'put', key: formatKey, value: Buffer.from(format) }], true);
  } finally {
    await raw.close();
  }
}

async function openLog(dir: string): Promise<EmbeddedTransport> {
  const t = await EmbeddedTransport.open({ dir, maintenanceIntervalMs: 0 });
  await t.ensureTopics([{ name: CHANGELOG, partitions: 1, config: { 'cleanup.policy': 'compact' } }]);
  return t;
}

describe('state stores kept in the embedded log', () => {
  it('writes go into the commit and are read back by the next owner, with nothing written to the changelog', async () => {
    const dir = testDir();
    const log = await openLog(join(dir, 'log'));
    try {
      const a = manager(log, join(dir, 'a'));
      await a.openAndRestore();
      const counts = a.store<number>('counts');
      counts.put('http://x.test/', 3);
      counts.put('http://y.test/', 1);
      counts.delete('http://y.test/');
      const outputs: never[] = [];
      assert.deepEqual(a.appendChangelog(outputs).ends, [], 'no changelog records');
      const writes = a.inlineWrites();
      assert.equal(writes?.length, 2);
      await log.log.commit([], [], undefined, writes);
      await a.applyCommitted({ ends: [] }, []);
      assert.equal(await counts.get('http://x.test/'), 3);
      // Uncommitted writes never reach the log.
      counts.put('http://x.test/', 99);
      await a.close();

      const metrics = new ServiceMetrics('inline-test');
      const b = manager(log, join(dir, 'b'), metrics);
      await b.openAndRestore();
      assert.equal(await b.store<number>('counts').get('http://x.test/'), 3);
      assert.equal(await b.store<number>('counts').get('http://y.test/'), undefined);
      assert.equal(await restoredCount(metrics), 0, 'nothing replayed');
      const ranged: [string, number][] = [];
      for await (const entry of b.store<number>('counts').range()) ranged.push(entry);
      assert.deepEqual(ranged, [['http://x.test/', 3]]);
      await b.close();
      assert.equal((await log.describeTopic(CHANGELOG))?.partitions[0]?.high, 0, 'the changelog stays empty');
    } finally {
      await log.close();
    }
  });

  it('takes over a directory of the older layout once: changelog into the log, old store directory removed', async () => {
    const dir = testDir();
    const logDir = join(dir, 'log');
    const dataDir = join(dir, 'data');
    // The older layout: the counts in the changelog, a store directory beside the log, format 1.
    const old = await openLog(logDir);
    await old.send([
      { topic: CHANGELOG, partition: 0, key: 'http://x.test/', value: Buffer.from('7') },
      { topic: CHANGELOG, partition: 0, key: 'http://y.test/', value: Buffer.from('2') },
      { topic: CHANGELOG, partition: 0, key: 'http://y.test/', value: null },
      { topic: CHANGELOG, partition: 0, key: 'http://z.test/', value: Buffer.from('5') },
    ]);
    await old.close();
    await writeFormat(logDir, '1');
    const oldStores = TaskStores.directory(dataDir, 'g', 0);
    mkdirSync(oldStores, { recursive: true });
    writeFileSync(join(oldStores, 'CURRENT'), 'left by the older layout\n');

    const log = await openLog(logDir);
    try {
      const metrics = new ServiceMetrics('inline-test');
      const m = manager(log, dataDir, metrics);
      await m.openAndRestore();
      assert.equal(await m.store<number>('counts').get('http://x.test/'), 7);
      assert.equal(await m.store<number>('counts').get('http://y.test/'), undefined);
      assert.equal(await m.store<number>('counts').get('http://z.test/'), 5);
      // Compaction at open may already have dropped the superseded value of y.
      assert.ok((await restoredCount(metrics)) >= 3, 'the changelog was replayed');
      assert.equal(existsSync(oldStores), false, 'the older store directory is gone');
      await m.close();

      // Once taken over, the changelog is not read again.
      const again = new ServiceMetrics('inline-test');
      const n = manager(log, dataDir, again);
      await n.openAndRestore();
      assert.equal(await n.store<number>('counts').get('http://x.test/'), 7);
      assert.equal(await restoredCount(again), 0);
      await n.close();
    } finally {
      await log.close();
    }
    const check = await RocksStore.open(join(logDir, 'log'));
    try {
      assert.equal((await check.getMany([formatKey]))[0]?.toString(), '3', 'the directory is marked with the current format');
    } finally {
      await check.close();
    }
  });

  it('a takeover cut short marks nothing: the next open starts it again and ends with every value', async () => {
    const dir = testDir();
    const logDir = join(dir, 'log');
    const old = await openLog(logDir);
    // More than one read chunk (1,000 records) of changelog.
    await old.send(Array.from({ length: 2500 }, (_, i) => ({ topic: CHANGELOG, partition: 0, key: `k${i}`, value: Buffer.from(String(i)) })));
    await old.close();
    await writeFormat(logDir, '1');

    const log = await openLog(logDir);
    try {
      // The first takeover fails after its first chunk, as a broken read or a crash would stop it.
      const failing = new Proxy(log, {
        get(target, prop) {
          if (prop === 'readPartition') {
            return (topic: string, partition: number, from: number, to: number) => ({
              async *[Symbol.asyncIterator]() {
                for await (const chunk of target.readPartition(topic, partition, from, to)) {
                  yield chunk;
                  throw new Error('read failed after the first chunk');
                }
              },
            });
          }
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const cut = manager(failing, join(dir, 'data'));
      await assert.rejects(cut.openAndRestore(), /after the first chunk/);
      const inline = log.inlineState('g', 0);
      const probe = TaskStores.inline(inline.db, inline.keyPrefix, ['counts']).store<number>('counts');
      assert.equal(await probe.checkpoint(), undefined, 'no mark after a partial takeover');
      assert.equal(await probe.get('k0'), 0, 'the first chunk did land');

      const metrics = new ServiceMetrics('inline-test');
      const m = manager(log, join(dir, 'data'), metrics);
      await m.openAndRestore();
      assert.equal(await restoredCount(metrics), 2500);
      const counts = m.store<number>('counts');
      for (const i of [0, 999, 1000, 1999, 2000, 2499]) assert.equal(await counts.get(`k${i}`), i);
      let n = 0;
      for await (const _ of counts.range()) n++;
      assert.equal(n, 2500);
      await m.close();
    } finally {
      await log.close();
    }
  });

  it('refuses a directory written by a newer layout, naming the format', async () => {
    const dir = testDir();
    const logDir = join(dir, 'log');
    await writeFormat(logDir, '4');
    await assert.rejects(EmbeddedTransport.open({ dir: logDir, maintenanceIntervalMs: 0 }), /has format 4, expected 3/);
  });

  it('keeps the stores of different groups and partitions apart', async () => {
    const dir = testDir();
    const log = await openLog(join(dir, 'log'));
    try {
      const p0 = log.inlineState('g', 0);
      const p1 = log.inlineState('g', 1);
      const other = log.inlineState('g2', 0);
      assert.notEqual(p0.keyPrefix, p1.keyPrefix);
      const a = TaskStores.inline(p0.db, p0.keyPrefix, ['counts']);
      const b = TaskStores.inline(p1.db, p1.keyPrefix, ['counts']);
      const c = TaskStores.inline(other.db, other.keyPrefix, ['counts']);
      a.store<number>('counts').put('k', 1);
      b.store<number>('counts').put('k', 2);
      c.store<number>('counts').put('k', 3);
      await log.log.commit([], [], undefined, [a, b, c].flatMap((s) => s.store<number>('counts').pendingOps()));
      for (const s of [a, b, c]) s.committed();
      const fresh = [p0, p1, other].map((p) => TaskStores.inline(p.db, p.keyPrefix, ['counts']).store<number>('counts'));
      assert.deepEqual(await Promise.all(fresh.map((s) => s.get('k'))), [1, 2, 3]);
      for (const s of fresh) {
        const keys: string[] = [];
        for await (const [k] of s.range()) keys.push(k);
        assert.deepEqual(keys, ['k']);
      }
    } finally {
      await log.close();
    }
  });
});
