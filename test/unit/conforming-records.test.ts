// Records a service emitted and the embedded log hands to another service of the same process from
// memory are not validated again; everything else is: records other code sends, records read back
// from disk, and (never marked) everything on Kafka.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SharedLog } from '../../services/runtime/embedded/log.ts';
import { encodeRecord } from '../../services/runtime/embedded/codec.ts';
import { validateInput } from '../../services/runtime/input.ts';
import { StreamService } from '../../services/runtime/index.ts';
import type { LogRecord, ServiceDefinition } from '../../services/runtime/index.ts';
import { SCHEMA_VERSION, changeRecord, deadletterRecord, linksRecord } from '../../schemas/index.ts';
import type { ChangeRecord } from '../../schemas/index.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { counterService } from '../pipeline/fixtures/counter-service.ts';
import { openTransport, readAll, removeDir, tempDir, uniquePrefix, waitFor } from '../support/transports.ts';

const record = (value: unknown, conforms?: boolean): LogRecord => ({
  topic: 'changes',
  partition: 0,
  offset: 0,
  key: 'k',
  value: Buffer.from(JSON.stringify(value)),
  timestamp: 1,
  headers: {},
  ...(conforms !== undefined ? { conforms } : {}),
});

test('validateInput checks every record but the ones marked as emitted by a service of this process', () => {
  const bad = { v: SCHEMA_VERSION, url: 'ftp://x', time: 1, kind: 'new' };
  for (const r of [record(bad), record(bad, false)]) {
    const v = validateInput(changeRecord, r);
    assert.equal(v.ok, false);
    assert.equal(!v.ok && v.code, 'MEGURI_ERR_SCHEMA');
  }
  const marked = validateInput<ChangeRecord>(changeRecord, record({ v: SCHEMA_VERSION, url: 'http://a.test/', time: 1, kind: 'new' }, true));
  assert.ok(marked.ok);
  assert.equal(marked.ok && marked.input.value.url, 'http://a.test/');
  // Marked or not, the bytes must still decode.
  const garbage = validateInput(changeRecord, { ...record(null, true), value: Buffer.from('not json') });
  assert.equal(!garbage.ok && garbage.code, 'MEGURI_ERR_DECODE');
});

test('the embedded log keeps the mark in its in-memory tail only; records read from disk are unmarked', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meguri-conforms-'));
  const log = await SharedLog.open(dir, { sync: false, logger: pino({ level: 'silent' }) });
  try {
    await log.ensureTopics([{ name: 't', partitions: 1, config: {} }]);
    const ps = log.requireTopic('t').partitions[0]!;
    await log.read(ps, 0, 1); // a partition being read keeps a tail
    await log.append([true, false, true].map((conforms, i) => ({ ps, timestamp: 1_000 + i, encoded: encodeRecord(1_000 + i, `k${i}`, Buffer.from(`v${i}`), undefined), conforms })));
    assert.deepEqual((await log.read(ps, 0, 10)).records.map((r) => r.conforms), [true, false, true]);
    // Tail dropped (no reads for a while): the same records now come from RocksDB, unmarked.
    ps.readAt -= 60_000;
    await log.append([{ ps, timestamp: 2_000, encoded: encodeRecord(2_000, 'k3', Buffer.from('v3'), undefined), conforms: true }]);
    const fromDisk = (await log.read(ps, 0, 10)).records;
    assert.equal(fromDisk.length, 4);
    assert.ok(fromDisk.every((r) => r.conforms !== true));
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a service reads what another service emitted unvalidated, and still dead-letters what other code sent', { timeout: 60_000 }, async () => {
  const dataDir = tempDir();
  const transport = await openTransport('embedded', dataDir);
  const prefix = uniquePrefix();
  const seen: { url: unknown; conforms: boolean | undefined }[] = [];
  const watcher: ServiceDefinition<ChangeRecord> = {
    name: 'watcher',
    inputs: ['changes'],
    outputs: [],
    guarantee: 'at-least-once',
    createProcessor: () => ({
      process(records) {
        for (const r of records) seen.push({ url: r.value.url, conforms: (r as { conforms?: boolean }).conforms });
        return Promise.resolve();
      },
    }),
  };
  const services = [counterService(), watcher].map((d) => new StreamService(d as ServiceDefinition<unknown>, { transport, catalog: crawlCatalog, dataDir: tempDir(), topicPrefix: prefix, partitions: 1 }));
  try {
    for (const s of services) await s.start();
    for (const s of services) await s.ready();
    const seed = (url: string): Buffer => Buffer.from(JSON.stringify(linksRecord.parse({ v: SCHEMA_VERSION, type: 'seed', url, addedAt: 1 })));
    await transport.send([
      { topic: `${prefix}links`, key: 'a.test', value: seed('http://a.test/1') },
      { topic: `${prefix}links`, key: 'a.test', value: seed('http://a.test/2') },
    ]);
    await waitFor('the watcher saw both changes the counter emitted', () => seen.length === 2);
    assert.deepEqual(seen, [
      { url: 'http://a.test/1', conforms: true },
      { url: 'http://a.test/2', conforms: true },
    ]);
    // The same topic, written by code that is not a service's emit: validated as ever.
    await transport.send([
      { topic: `${prefix}changes`, key: 'x', value: Buffer.from(JSON.stringify({ v: SCHEMA_VERSION, url: 'ftp://x', time: 1, kind: 'new' })) },
      { topic: `${prefix}changes`, key: 'y', value: Buffer.from(JSON.stringify(changeRecord.parse({ v: SCHEMA_VERSION, url: 'http://b.test/', time: 1, kind: 'new' }))) },
    ]);
    await waitFor('the valid record reached the watcher', () => seen.length === 3);
    assert.deepEqual(seen[2], { url: 'http://b.test/', conforms: false });
    const dead = (await readAll(transport, `${prefix}deadletter`)).map((r) => deadletterRecord.parse(JSON.parse(r.value!)));
    assert.deepEqual(dead.map((d) => d.code), ['MEGURI_ERR_SCHEMA']);
    assert.match(dead[0]!.reason, /url/);
  } finally {
    for (const s of services) await s.stop();
    await transport.close();
    await removeDir(dataDir);
  }
});
