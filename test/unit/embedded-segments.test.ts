/**
 * Large records of the embedded log in segment files (services/runtime/embedded/segments.ts):
 * RocksDB keeps 21-byte pointers, reads give back the records as sent, from memory, from RocksDB
 * and after a reopen; files nobody points at are removed at open; retention deletes whole segments;
 * records stored whole by the previous format stay readable beside pointers; a record whose bytes a
 * machine crash lost reads as an empty record that says so.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { ManualClock } from '../../services/runtime/clock.ts';
import { EmbeddedTransport } from '../../services/runtime/embedded/index.ts';
import type { EmbeddedTransportOptions } from '../../services/runtime/embedded/index.ts';
import type { LogRecord, OutRecord } from '../../services/runtime/transport.ts';
import { RocksStore } from '../../services/runtime/embedded/rocks.ts';
import { encodeRecord } from '../../services/runtime/embedded/codec.ts';
import { boundsKey, encodeBounds, formatKey, metaKey, recordKey } from '../../services/runtime/embedded/keys.ts';
import { EXTERNAL_MIN_BYTES, MAX_SEGMENT_BYTES, SEGMENT_BYTES, SegmentFiles, segmentBytesOf } from '../../services/runtime/embedded/segments.ts';
import { LOST_RECORD_HEADER } from '../../services/runtime/embedded/log.ts';
import { dirsRemovedAfterEach } from '../support/transports.ts';

const silent = pino({ level: 'silent' });
const testDir = dirsRemovedAfterEach();

function open(dir: string, extra: Partial<EmbeddedTransportOptions> = {}): Promise<EmbeddedTransport> {
  return EmbeddedTransport.open({ dir, logger: silent, maintenanceIntervalMs: 0, ...extra });
}

/** Opens the log in `dir`, runs `fn` with it, closes it. */
async function withLog<T>(dir: string, fn: (t: EmbeddedTransport) => Promise<T>, extra: Partial<EmbeddedTransportOptions> = {}): Promise<T> {
  const t = await open(dir, extra);
  try {
    return await fn(t);
  } finally {
    await t.close();
  }
}

/** The id the log gave a topic (from its metadata key). */
async function topicId(raw: RocksStore, topic: string): Promise<number> {
  const [meta] = await raw.getMany([metaKey(topic)]);
  return (JSON.parse(String(meta)) as { id: number }).id;
}

/** Writes records 0 … count−1 to a new `pages` topic in `dir`, closes the log, returns its one segment file. */
async function writtenSegment(dir: string, count: number): Promise<string> {
  await withLog(dir, async (t) => {
    await t.ensureTopics([{ name: 'pages', partitions: 1 }]);
    await t.send(records('pages', 0, count));
  });
  const files = segmentFiles(dir);
  assert.equal(files.length, 1);
  return files[0]!;
}

async function readAll(t: EmbeddedTransport, topic: string, partition: number): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for await (const chunk of t.readPartition(topic, partition, 0, Number.MAX_SAFE_INTEGER)) out.push(...chunk);
  return out;
}

/** The n-th test value: small for most n, a 20 KB body for every third. */
function body(n: number): Buffer {
  return n % 3 === 0 ? Buffer.alloc(20_000 + n, 97 + (n % 26)) : Buffer.from(`small ${n}`);
}

function records(topic: string, from: number, count: number, extra: Partial<OutRecord> = {}): OutRecord[] {
  return Array.from({ length: count }, (_, i) => ({ topic, key: `k${from + i}`, value: body(from + i), headers: { n: String(from + i) }, partition: 0, ...extra }));
}

function assertRecords(got: readonly LogRecord[], from: number, count: number): void {
  assert.equal(got.length, count);
  got.forEach((r, i) => {
    const n = from + i;
    assert.equal(r.key, `k${n}`);
    assert.equal(r.headers.n, String(n));
    assert.ok(r.value?.equals(body(n)), `record ${r.offset} (n=${n}) has its own value`);
  });
}

/** Segment files of a topic's partition 0, by name. */
function segmentFiles(dir: string): string[] {
  const root = join(dir, 'segments');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((p) => readdirSync(join(root, p)).map((f) => join(root, p, f))).sort();
}

/** Raw values RocksDB holds for a partition's records, and the topic's id. */
async function storedValues(dir: string, topic: string, count: number): Promise<{ id: number; values: (Buffer | undefined)[] }> {
  const raw = await RocksStore.open(join(dir, 'log'));
  try {
    const id = await topicId(raw, topic);
    const values = await raw.getMany(Array.from({ length: count }, (_, i) => recordKey(id, 0, i)));
    return { id, values };
  } finally {
    await raw.close();
  }
}

describe('embedded log segment files', () => {
  it('keeps large records in segment files and pointers in RocksDB, compacted topics excepted', async () => {
    const dir = testDir();
    const t = await open(dir);
    await t.ensureTopics([{ name: 'pages', partitions: 1 }, { name: 'compacted', partitions: 1, config: { 'cleanup.policy': 'compact' } }]);
    await t.send(records('pages', 0, 30));
    await t.send(records('compacted', 0, 3));
    // From the in-memory tail, right after the write.
    assertRecords(await readAll(t, 'pages', 0), 0, 30);
    await t.close();

    const { values } = await storedValues(dir, 'pages', 30);
    values.forEach((v, n) => {
      if (body(n).length >= EXTERNAL_MIN_BYTES) assert.equal(v?.length, 21, `record ${n} is a pointer`);
      else assert.ok((v?.length ?? 0) > 21 && (v?.length ?? 0) < 100, `record ${n} is stored whole`);
    });
    const compacted = await storedValues(dir, 'compacted', 1);
    assert.ok((compacted.values[0]?.length ?? 0) > 20_000, 'a compacted topic keeps its records in RocksDB');
    assert.equal(segmentFiles(dir).length, 1);

    // Reopened: nothing in memory, every read goes through RocksDB and the segment file.
    await withLog(dir, async (t2) => {
      assertRecords(await readAll(t2, 'pages', 0), 0, 30);
      const d = await t2.describeTopic('pages');
      assert.deepEqual(d?.partitions[0], { partition: 0, low: 0, high: 30 });
    });
  });

  it('removes files no batch points at when it opens, and appends to a segment of its own', async () => {
    const dir = testDir();
    const segment = await writtenSegment(dir, 12);
    // What a process killed after writing segment bytes but before the batch could leave: bytes
    // past the last pointer, and a new segment no committed batch names.
    appendFileSync(segment, Buffer.alloc(30_000, 1));
    const stray = join(segment, '..', '0000000007.seg');
    writeFileSync(stray, Buffer.alloc(25_000, 2));

    await withLog(
      dir,
      async (t2) => {
        assert.equal(existsSync(stray), false, 'the unreferenced segment is removed');
        assertRecords(await readAll(t2, 'pages', 0), 0, 12);
        await t2.send(records('pages', 12, 9));
        const files = segmentFiles(dir);
        assert.equal(files.length, 2, 'appends go to a new segment');
        assert.ok(!files.includes(stray) && files.every((f) => !f.endsWith('0000000007.seg')), 'a stray file number is not reused');
        assertRecords(await readAll(t2, 'pages', 0), 0, 21);
      },
      { sync: true },
    );
    await withLog(dir, async (t3) => assertRecords(await readAll(t3, 'pages', 0), 0, 21));
  });

  it('rolls segments at segment.bytes and deletes whole segments once retention has passed them', async () => {
    const dir = testDir();
    const clock = new ManualClock(100_000);
    const t = await open(dir, { clock });
    try {
      await t.ensureTopics([{ name: 'pages', partitions: 1, config: { 'retention.ms': '1000', 'segment.bytes': '50000' } }]);
      // 10 old bodies of 20 KB (three per segment), then 4 fresh ones.
      for (let n = 0; n < 30; n += 3) await t.send(records('pages', n, 3));
      const old = segmentFiles(dir);
      assert.ok(old.length >= 4, `${old.length} segments for 200 KB at 50 KB each`);
      clock.advance(2_000);
      await t.send(records('pages', 30, 10));
      const report = await t.maintain();
      assert.equal(report.expired, 30);
      const left = segmentFiles(dir);
      assert.ok(left.length < old.length, 'expired segments are deleted');
      // What is left holds no expired body but the one appended to (never deleted while in use).
      assertRecords(await readAll(t, 'pages', 0), 30, 10);
      await t.close();

      const t2 = await open(dir, { clock });
      try {
        assertRecords(await readAll(t2, 'pages', 0), 30, 10);
        clock.advance(2_000);
        await t2.send(records('pages', 40, 3));
        assert.equal((await t2.maintain()).expired, 10);
        // The previous process's last segment is not in use any more: it goes too.
        assert.equal(segmentFiles(dir).length, 1);
        assertRecords(await readAll(t2, 'pages', 0), 40, 3);
      } finally {
        await t2.close();
      }
    } finally {
      await t.close();
    }
  });

  it('writes a batch\'s records to their segments together, when the batch takes its segment keys', async () => {
    const dir = testDir();
    const files = new SegmentFiles(join(dir, 'segments'));
    files.load([], () => 0);
    // Records of a links bundle's size (1–4 KB) go to segments as page bodies do.
    assert.ok(EXTERNAL_MIN_BYTES <= 1024);
    const sizes = [1_500, 3_000, 20_000, 1_024];
    const bytes = sizes.map((n, i) => Buffer.alloc(n, 65 + i));
    const pointers = bytes.map((b, i) => files.append(7, 0, i, b));
    const [file] = segmentFiles(dir);
    assert.ok(file !== undefined);
    assert.equal(statSync(file).size, 0, 'nothing written before the batch takes its segments');
    const touched = files.takeTouched();
    assert.equal(touched.ops.length, 1);
    assert.equal(touched.segments[0]?.lastOffset, 3);
    assert.equal(statSync(file).size, sizes.reduce((a, b) => a + b, 0));
    const back = await files.read(7, 0, pointers);
    back.forEach((b, i) => assert.ok(b?.equals(bytes[i]!), `record ${i} reads back as appended`));
    // The next batch continues where this one ended.
    const next = files.append(7, 0, 4, Buffer.alloc(2_000, 90));
    assert.equal(next.position, statSync(file).size);
    files.takeTouched();
    assert.ok((await files.read(7, 0, [next]))[0]?.equals(Buffer.alloc(2_000, 90)));
    // A batch whose bytes cannot be written throws, and keeps none of them waiting.
    files.append(7, 0, 5, Buffer.alloc(1_500, 1));
    files.close();
    assert.throws(() => files.takeTouched());
    assert.equal(files.takeTouched().ops.length, 0);
  });

  it('takes segment.bytes from the topic, within what 32-bit positions allow', () => {
    assert.equal(segmentBytesOf({}), SEGMENT_BYTES);
    assert.equal(segmentBytesOf({ 'segment.bytes': '50000' }), 50_000);
    assert.equal(segmentBytesOf({ 'segment.bytes': String(2 ** 31 - 1) }), MAX_SEGMENT_BYTES);
    assert.equal(segmentBytesOf({ 'segment.bytes': 'lots' }), SEGMENT_BYTES);
    assert.equal(segmentBytesOf({ 'segment.bytes': '0' }), SEGMENT_BYTES);
  });

  it('reads a record whose bytes never reached the disk as an empty record that says so', async () => {
    const dir = testDir();
    const segment = await writtenSegment(dir, 12);
    // A machine crash without fsync: the batch reached the disk, the last body (n = 9) did not.
    truncateSync(segment, statSync(segment).size - 5_000);
    await withLog(dir, async (t2) => {
      const got = await readAll(t2, 'pages', 0);
      assert.equal(got.length, 12);
      assertRecords(got.slice(0, 9), 0, 9);
      const lost = got[9]!;
      assert.equal(lost.value, null);
      assert.match(lost.headers[LOST_RECORD_HEADER] ?? '', /record lost: segment 1 of pages-0/);
      // Records after it that are stored whole are read as usual, and the log goes on.
      assertRecords(got.slice(10), 10, 2);
      await t2.send(records('pages', 12, 3));
      assertRecords((await readAll(t2, 'pages', 0)).slice(12), 12, 3);
    });
  });

  it('names the segment file when one that still holds records was removed', async () => {
    const dir = testDir();
    rmSync(await writtenSegment(dir, 6));
    await withLog(dir, async (t) => {
      await assert.rejects(readAll(t, 'pages', 0), /segment file .*0000000001\.seg is missing/);
      // Appends still work, into a segment of their own.
      await t.send(records('pages', 6, 3));
      const fresh: LogRecord[] = [];
      for await (const chunk of t.readPartition('pages', 0, 6, 9)) fresh.push(...chunk);
      assertRecords(fresh, 6, 3);
    });
  });

  it('reads records stored whole by format 2 beside the pointers format 3 writes', async () => {
    const dir = testDir();
    const t = await open(dir);
    await t.ensureTopics([{ name: 'pages', partitions: 1 }]);
    await t.close();
    // Format 2 kept every record in RocksDB, bodies included.
    const raw = await RocksStore.open(join(dir, 'log'));
    try {
      const id = await topicId(raw, 'pages');
      const ops = Array.from({ length: 6 }, (_, n) => ({ type: 'put' as const, key: recordKey(id, 0, n), value: encodeRecord(1_000 + n, `k${n}`, body(n), { n: String(n) }) }));
      await raw.batch([...ops, { type: 'put', key: boundsKey(id, 0), value: encodeBounds(0, 6) }, { type: 'put', key: formatKey, value: Buffer.from('2') }], true);
    } finally {
      await raw.close();
    }
    await withLog(dir, async (t2) => {
      assertRecords(await readAll(t2, 'pages', 0), 0, 6);
      await t2.send(records('pages', 6, 6));
      assertRecords(await readAll(t2, 'pages', 0), 0, 12);
    });
    const check = await RocksStore.open(join(dir, 'log'));
    try {
      assert.equal((await check.getMany([formatKey]))[0]?.toString(), '3');
    } finally {
      await check.close();
    }
    await withLog(dir, async (t3) => assertRecords(await readAll(t3, 'pages', 0), 0, 12));
  });
});
