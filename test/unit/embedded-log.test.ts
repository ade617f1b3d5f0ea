import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { ManualClock } from '../../services/runtime/clock.ts';
import { partitionForKey } from '../../services/runtime/partitioner.ts';
import type { ConsumedBatch, GroupMember, GroupMemberOptions, LogRecord, OutRecord, TopicPartition } from '../../services/runtime/transport.ts';
import { EmbeddedTransport, FencedCommitError, UnknownTopicError } from '../../services/runtime/embedded/index.ts';
import type { EmbeddedGroupMember, EmbeddedTransportOptions } from '../../services/runtime/embedded/index.ts';
import { appendedValueLength } from './embedded-log-fixtures/append-forever-values.ts';

const silent = pino({ level: 'silent' });
const here = path.dirname(fileURLToPath(import.meta.url));

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meguri-elog-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function open(dir: string, extra: Partial<EmbeddedTransportOptions> = {}): Promise<EmbeddedTransport> {
  return EmbeddedTransport.open({ dir, logger: silent, maintenanceIntervalMs: 0, ...extra });
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function readAll(t: EmbeddedTransport, topic: string, partition: number, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for await (const chunk of t.readPartition(topic, partition, from, to)) out.push(...chunk);
  return out;
}

function value(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

type MemberHooks = Partial<Pick<GroupMemberOptions, 'onAssigned' | 'onRevoked' | 'startFrom' | 'maxBatchRecords' | 'memberName'>>;

function memberOptions(groupId: string, topics: string[], eachBatch: (b: ConsumedBatch) => Promise<void>, hooks: MemberHooks = {}): GroupMemberOptions {
  return {
    groupId,
    topics,
    onAssigned: async () => undefined,
    onRevoked: async () => undefined,
    eachBatch,
    ...hooks,
  };
}

const sortTp = (a: TopicPartition, b: TopicPartition): number => a.topic.localeCompare(b.topic) || a.partition - b.partition;

test('keyed records land on partitionForKey; explicit partitions; per-partition order', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'pages', partitions: 6 }]);
      const records: OutRecord[] = [];
      for (let i = 0; i < 300; i++) records.push({ topic: 'pages', key: `host-${i % 37}`, value: value(`v${i}`), headers: { i: String(i) } });
      const meta = await t.send(records);
      assert.equal(meta.length, 300);
      for (let i = 0; i < 300; i++) {
        assert.equal(meta[i]?.partition, partitionForKey(`host-${i % 37}`, 6));
        assert.equal(meta[i]?.partition, await t.partitionFor('pages', `host-${i % 37}`));
      }
      const explicit = await t.send([{ topic: 'pages', key: 'host-0', value: value('x'), partition: 5 }]);
      assert.equal(explicit[0]?.partition, 5);

      // Order per partition is send order, offsets are contiguous from 0.
      for (let p = 0; p < 6; p++) {
        const read = await readAll(t, 'pages', p);
        assert.deepEqual(read.map((r) => r.offset), read.map((_, i) => i));
        const expected = records.filter((r) => partitionForKey(r.key, 6) === p).map((r) => r.value?.toString());
        if (p === 5) expected.push('x');
        assert.deepEqual(read.map((r) => r.value?.toString()), expected);
        for (const r of read) {
          assert.equal(r.topic, 'pages');
          assert.equal(r.partition, p);
        }
      }
      const first = (await readAll(t, 'pages', partitionForKey('host-3', 6))).find((r) => r.key === 'host-3');
      assert.deepEqual(first?.headers, { i: '3' });

      await assert.rejects(t.send([{ topic: 'nope', key: 'a', value: null }]), UnknownTopicError);
      await assert.rejects(t.send([{ topic: 'pages', key: 'a', value: null, partition: 6 }]), RangeError);
      const d = await t.describeTopic('pages');
      assert.equal(d?.partitions.reduce((n, p) => n + p.high, 0), 301);
      assert.equal(await t.describeTopic('nope'), undefined);
      assert.deepEqual(await t.listTopics(), ['pages']);
    } finally {
      await t.close();
    }
  });
});

test('concurrent sends get unique, contiguous offsets; null keys spread; tombstones read back', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'a', partitions: 2 }]);
      const sends = Array.from({ length: 40 }, (_, i) =>
        t.send(Array.from({ length: 25 }, (_, j) => ({ topic: 'a', key: null, value: j % 5 === 0 ? null : value(`${i}/${j}`), partition: (i + j) % 2 }))),
      );
      const metas = (await Promise.all(sends)).flat();
      for (const p of [0, 1]) {
        const offsets = metas.filter((m) => m.partition === p).map((m) => m.offset).sort((x, y) => x - y);
        assert.deepEqual(offsets, offsets.map((_, i) => i));
        const read = await readAll(t, 'a', p);
        assert.equal(read.length, 500);
        assert.equal(read.filter((r) => r.value === null).length, 100);
      }
      const spread = await t.send(Array.from({ length: 10 }, () => ({ topic: 'a', key: null, value: value('n') })));
      assert.deepEqual(new Set(spread.map((m) => m.partition)), new Set([0, 1]));
    } finally {
      await t.close();
    }
  });
});

test('a group of two members splits partitions, rebalances when one leaves, and consumes every record once', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'in', partitions: 4 }]);
      const seen = new Map<string, string>();
      const duplicates: string[] = [];
      const events: string[] = [];
      const makeMember = async (name: string): Promise<GroupMember> => {
        const member: GroupMember = await t.join(
          memberOptions(
            'g',
            ['in'],
            async (batch) => {
              for (const r of batch.records) {
                const id = `${r.partition}:${r.offset}`;
                if (seen.has(id)) duplicates.push(id);
                seen.set(id, name);
              }
              await new Promise((r) => setTimeout(r, 1));
              const last = batch.records[batch.records.length - 1] as LogRecord;
              await member.commit({ transactional: false, outputs: [], offsets: [{ topic: batch.topic, partition: batch.partition, offset: last.offset + 1 }] });
            },
            {
              memberName: name,
              maxBatchRecords: 20,
              onAssigned: async (tps) => void events.push(`${name}+${tps.map((x) => x.partition).join(',')}`),
              onRevoked: async (tps) => void events.push(`${name}-${tps.map((x) => x.partition).join(',')}`),
            },
          ),
        );
        return member;
      };
      let produced = 0;
      const produce = async (n: number): Promise<void> => {
        const recs = Array.from({ length: n }, (_, i) => ({ topic: 'in', key: `k${produced + i}`, value: value(String(produced + i)) }));
        produced += n;
        await t.send(recs);
      };

      const a = await makeMember('a');
      await a.ready();
      assert.deepEqual([...a.assignment()].sort(sortTp).map((x) => x.partition), [0, 1, 2, 3]);
      await produce(400);
      await waitFor(() => seen.size >= 100, 'a to consume some');
      const b = await makeMember('b');
      const producing = (async () => {
        for (let i = 0; i < 10; i++) {
          await produce(50);
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      await b.ready();
      assert.deepEqual([...a.assignment()].map((x) => x.partition).sort(), [0, 2]);
      assert.deepEqual([...b.assignment()].map((x) => x.partition).sort(), [1, 3]);
      await producing;
      await waitFor(() => seen.size === produced, 'all records consumed by a and b');
      assert.ok([...seen.values()].includes('b'), 'b consumed something');

      await a.stop();
      assert.deepEqual([...b.assignment()].map((x) => x.partition).sort(), [0, 1, 2, 3]);
      assert.deepEqual(a.assignment(), []);
      await produce(200);
      await waitFor(() => seen.size === produced, 'all records consumed after a left');
      assert.deepEqual(duplicates, []);
      assert.deepEqual(events.slice(0, 3), ['a+0,1,2,3', 'a-1,3', 'b+1,3']);
      assert.deepEqual(events.slice(3), ['a-0,2', 'b+0,2']);
      // stop() waits for the batch in progress, including its commit.
      await b.stop();
      const committed = await t.committedOffsets('g', 'in');
      const desc = await t.describeTopic('in');
      assert.deepEqual(
        committed.map((c) => c.offset),
        desc?.partitions.map((p) => p.high),
      );
    } finally {
      await t.close();
    }
  });
});

test('replay: a new group reads from offset 0; startFrom latest only sees new records', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'log', partitions: 1 }]);
      await t.send(Array.from({ length: 50 }, (_, i) => ({ topic: 'log', key: `k${i}`, value: value(String(i)) })));
      const consume = async (groupId: string, startFrom: 'earliest' | 'latest'): Promise<{ member: GroupMember; got: number[] }> => {
        const got: number[] = [];
        const member = await t.join(memberOptions(groupId, ['log'], async (b) => void got.push(...b.records.map((r) => r.offset)), { startFrom }));
        await member.ready();
        return { member, got };
      };
      const first = await consume('g1', 'earliest');
      await waitFor(() => first.got.length === 50, 'g1');
      await first.member.stop();
      const replay = await consume('g2', 'earliest');
      const latest = await consume('g3', 'latest');
      await waitFor(() => replay.got.length === 50, 'g2 replay');
      assert.deepEqual(replay.got, Array.from({ length: 50 }, (_, i) => i));
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(latest.got, []);
      await t.send([{ topic: 'log', key: 'new', value: value('new') }]);
      await waitFor(() => latest.got.length === 1 && replay.got.length === 51, 'new record');
      assert.deepEqual(latest.got, [50]);
      // g1 never committed: nothing is stored for it.
      assert.deepEqual(await t.committedOffsets('g1', 'log'), []);
    } finally {
      await t.close();
    }
  });
});

test('offsetForTimestamp returns the first offset with timestamp >= target; setCommittedOffsets replays from it', async () => {
  await withDir(async (dir) => {
    const clock = new ManualClock(1_000);
    const t = await open(dir, { clock });
    try {
      await t.ensureTopics([{ name: 'ev', partitions: 1 }]);
      // Out-of-order timestamps, duplicates and default (clock) timestamps.
      const stamps = [100, 90, 100, 150, 120, 150, 300, 200, 400, 400, 399];
      await t.send(stamps.map((ts, i) => ({ topic: 'ev', key: `k${i}`, value: value(String(i)), timestamp: ts })));
      clock.advance(10);
      await t.send([{ topic: 'ev', key: 'clock', value: value('c') }]);
      const all = await readAll(t, 'ev', 0);
      assert.equal(all[11]?.timestamp, 1_010);
      const brute = (target: number): number => {
        const hit = all.find((r) => r.timestamp >= target);
        return hit ? hit.offset : all.length;
      };
      for (const target of [-5, 0, 90, 95, 100, 101, 121, 150, 151, 200, 250, 300, 350, 399, 400, 401, 1_010, 1_011, 5_000]) {
        assert.equal(await t.offsetForTimestamp('ev', 0, target), brute(target), `target ${target}`);
      }

      const from = await t.offsetForTimestamp('ev', 0, 250);
      assert.equal(from, 6);
      await t.setCommittedOffsets('replay', [{ topic: 'ev', partition: 0, offset: from }]);
      assert.deepEqual(await t.committedOffsets('replay', 'ev'), [{ topic: 'ev', partition: 0, offset: 6 }]);
      const got: number[] = [];
      const m = await t.join(memberOptions('replay', ['ev'], async (b) => void got.push(...b.records.map((r) => r.offset))));
      await waitFor(() => got.length === 6, 'replay from timestamp');
      assert.deepEqual(got, [6, 7, 8, 9, 10, 11]);
      await assert.rejects(t.setCommittedOffsets('replay', [{ topic: 'ev', partition: 0, offset: 0 }]), /active member/);
      await m.stop();
      await t.setCommittedOffsets('replay', [{ topic: 'ev', partition: 0, offset: 0 }]);
    } finally {
      await t.close();
    }
  });
});

test('commit writes outputs and offsets atomically; a fenced commit writes nothing', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([
        { name: 'src', partitions: 2 },
        { name: 'dst', partitions: 3 },
      ]);
      await t.send([
        { topic: 'src', key: null, value: value('a'), partition: 0 },
        { topic: 'src', key: null, value: value('b'), partition: 1 },
      ]);
      const observations: string[] = [];
      const done = new Set<number>();
      const member: GroupMember = await t.join(
        memberOptions('proc', ['src'], async (batch) => {
          const r = batch.records[0] as LogRecord;
          const commit = member.commit({
            transactional: true,
            scope: `proc-${batch.partition}`,
            outputs: [{ topic: 'dst', key: `out-${r.value?.toString()}`, value: value(`processed ${r.value?.toString()}`) }],
            offsets: [{ topic: 'src', partition: batch.partition, offset: r.offset + 1 }],
          });
          // Nothing is visible before the write batch is durable ...
          const highBefore = (await t.describeTopic('dst'))?.partitions.reduce((n, p) => n + p.high, 0);
          const committedBefore = (await t.committedOffsets('proc', 'src')).find((o) => o.partition === batch.partition);
          observations.push(`before:${highBefore}:${committedBefore?.offset ?? '-'}`);
          const meta = await commit;
          // ... and both are visible together after.
          const dst = await t.describeTopic('dst');
          const committed = (await t.committedOffsets('proc', 'src')).find((o) => o.partition === batch.partition);
          assert.equal(meta?.length, 1);
          const m0 = meta?.[0];
          assert.ok(m0 && m0.offset < (dst?.partitions[m0.partition]?.high ?? 0));
          assert.equal(committed?.offset, r.offset + 1);
          done.add(batch.partition);
        }),
      );
      await waitFor(() => done.size === 2, 'both partitions processed');
      assert.equal(observations.filter((o) => o.startsWith('before:')).length, 2);
      assert.ok(observations.includes('before:0:-'));
      const outputs = (await Promise.all([0, 1, 2].map((p) => readAll(t, 'dst', p)))).flat();
      assert.deepEqual(outputs.map((r) => r.value?.toString()).sort(), ['processed a', 'processed b']);

      // A partition this member does not own: rejected, and the outputs are not written either.
      await t.ensureTopics([{ name: 'other', partitions: 1 }]);
      await assert.rejects(
        member.commit({ transactional: true, scope: 'x', outputs: [{ topic: 'dst', key: 'leak', value: value('leak') }], offsets: [{ topic: 'other', partition: 0, offset: 1 }] }),
        FencedCommitError,
      );
      await assert.rejects(member.commit({ transactional: true, outputs: [], offsets: [] }), /scope/);
      const after = (await Promise.all([0, 1, 2].map((p) => readAll(t, 'dst', p)))).flat();
      assert.equal(after.length, 2);
      await member.stop();
    } finally {
      await t.close();
    }
  });
});

test('a commit from a member that lost the partition is rejected', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'in', partitions: 2 }]);
      const a = await t.join(memberOptions('g', ['in'], async () => undefined, { memberName: 'a' }));
      await a.ready();
      await a.commit({ transactional: false, outputs: [], offsets: [{ topic: 'in', partition: 1, offset: 0 }] });
      const b = await t.join(memberOptions('g', ['in'], async () => undefined, { memberName: 'b' }));
      await b.ready();
      assert.deepEqual(a.assignment(), [{ topic: 'in', partition: 0 }]);
      assert.deepEqual(b.assignment(), [{ topic: 'in', partition: 1 }]);
      await assert.rejects(
        a.commit({ transactional: true, scope: 'g-1', outputs: [], offsets: [{ topic: 'in', partition: 1, offset: 5 }] }),
        (err: unknown) => err instanceof FencedCommitError && /does not own in-1/.test(err.message),
      );
      await b.commit({ transactional: true, scope: 'g-1', outputs: [], offsets: [{ topic: 'in', partition: 1, offset: 0 }] });
      await b.stop();
      await assert.rejects(b.commit({ transactional: false, outputs: [], offsets: [{ topic: 'in', partition: 0, offset: 0 }] }), FencedCommitError);
      await a.stop();
      assert.deepEqual(await t.committedOffsets('g', 'in'), [{ topic: 'in', partition: 1, offset: 0 }]);
    } finally {
      await t.close();
    }
  });
});

test('reopening after close keeps topics, records, offsets and the time index', async () => {
  await withDir(async (dir) => {
    const t1 = await open(dir, { sync: true });
    await t1.ensureTopics([{ name: 'keep', partitions: 3, config: { 'cleanup.policy': 'delete', 'retention.ms': '-1' } }]);
    await t1.send(Array.from({ length: 90 }, (_, i) => ({ topic: 'keep', key: `k${i}`, value: value(String(i)), timestamp: 1_000 + i })));
    await t1.setCommittedOffsets('g', [{ topic: 'keep', partition: 2, offset: 7 }]);
    const before = await t1.describeTopic('keep');
    const tsBefore = await t1.offsetForTimestamp('keep', 1, 1_050);
    await t1.close();
    await assert.rejects(t1.send([{ topic: 'keep', key: 'x', value: null }]), /closed/);

    const t2 = await open(dir);
    try {
      assert.deepEqual(await t2.listTopics(), ['keep']);
      assert.deepEqual(await t2.describeTopic('keep'), before);
      assert.deepEqual(await t2.committedOffsets('g', 'keep'), [{ topic: 'keep', partition: 2, offset: 7 }]);
      assert.equal(await t2.offsetForTimestamp('keep', 1, 1_050), tsBefore);
      const total = (await Promise.all([0, 1, 2].map((p) => readAll(t2, 'keep', p)))).flat();
      assert.deepEqual(total.map((r) => Number(r.value?.toString())).sort((a, b) => a - b), Array.from({ length: 90 }, (_, i) => i));
      // Appends continue after the old high watermark; the time index keeps working.
      const meta = await t2.send([{ topic: 'keep', key: 'x', value: value('x'), partition: 0, timestamp: 5_000 }]);
      assert.equal(meta[0]?.offset, before?.partitions[0]?.high);
      assert.equal(await t2.offsetForTimestamp('keep', 0, 2_000), before?.partitions[0]?.high);
      // ensureTopics leaves an existing topic alone.
      await t2.ensureTopics([{ name: 'keep', partitions: 5 }]);
      assert.equal((await t2.describeTopic('keep'))?.partitions.length, 3);
    } finally {
      await t2.close();
    }
  });
});

test('two handles on one directory share topics and groups; closing one hands its partitions over', async () => {
  await withDir(async (dir) => {
    const t1 = await open(dir);
    const t2 = await open(path.join(dir, '.'));
    try {
      await t1.ensureTopics([{ name: 'shared', partitions: 2 }]);
      assert.deepEqual(await t2.listTopics(), ['shared']);
      const got = new Map<string, number[]>();
      const make = async (t: EmbeddedTransport, name: string): Promise<GroupMember> => {
        const m: GroupMember = await t.join(
          memberOptions('g', ['shared'], async (b) => {
            const list = got.get(name) ?? [];
            list.push(...b.records.map((r) => r.partition * 1000 + r.offset));
            got.set(name, list);
            const last = b.records[b.records.length - 1] as LogRecord;
            await m.commit({ transactional: false, outputs: [], offsets: [{ topic: b.topic, partition: b.partition, offset: last.offset + 1 }] });
          }),
        );
        return m;
      };
      const m1 = await make(t1, 'one');
      const m2 = await make(t2, 'two');
      await Promise.all([m1.ready(), m2.ready()]);
      assert.equal(m1.assignment().length, 1);
      assert.equal(m2.assignment().length, 1);
      await t2.send([0, 1].map((p) => ({ topic: 'shared', key: null, value: value('x'), partition: p })));
      await waitFor(() => (got.get('one')?.length ?? 0) + (got.get('two')?.length ?? 0) === 2, 'both consumed');
      await t1.close();
      await waitFor(() => m2.assignment().length === 2, 'm2 takes over');
      await t2.send([0, 1].map((p) => ({ topic: 'shared', key: null, value: value('y'), partition: p })));
      await waitFor(() => got.get('two')?.length === 3, 'm2 consumes both partitions');
      assert.deepEqual([...(got.get('one') ?? []), ...(got.get('two') ?? [])].sort((a, b) => a - b), [0, 1, 1000, 1001]);
    } finally {
      await t1.close();
      await t2.close();
    }
  });
});

test('compaction keeps the latest record per key; old tombstones go; offsets stay stable', async () => {
  await withDir(async (dir) => {
    const clock = new ManualClock(1_000_000);
    const t = await open(dir, { clock });
    try {
      await t.ensureTopics([{ name: 'state', partitions: 1, config: { 'cleanup.policy': 'compact', 'delete.retention.ms': '1000' } }]);
      await assert.rejects(t.send([{ topic: 'state', key: null, value: value('x') }]), /without a key/);
      const recs: OutRecord[] = [];
      for (let round = 0; round < 5; round++) for (let k = 0; k < 10; k++) recs.push({ topic: 'state', key: `k${k}`, value: value(`${k}@${round}`) });
      recs.push({ topic: 'state', key: 'k3', value: null });
      await t.send(recs);
      const report = await t.maintain();
      assert.equal(report.compacted, 41);
      const after = await readAll(t, 'state', 0);
      assert.deepEqual(
        after.map((r) => [r.offset, r.key, r.value?.toString() ?? null]),
        [...[0, 1, 2, 4, 5, 6, 7, 8, 9].map((k): (string | number | null)[] => [40 + k, `k${k}`, `${k}@4`]), [50, 'k3', null]],
      );
      // The tombstone survives until delete.retention.ms has passed.
      clock.advance(2_000);
      await t.send([{ topic: 'state', key: 'k0', value: value('0@5') }]);
      assert.equal((await t.maintain()).compacted, 2);
      const final = await readAll(t, 'state', 0);
      assert.deepEqual(final.map((r) => r.offset), [41, 42, 44, 45, 46, 47, 48, 49, 51]);
      assert.deepEqual(await t.describeTopic('state').then((d) => d?.partitions[0]), { partition: 0, low: 0, high: 52 });
      // A group reading the compacted topic skips the gaps.
      const got: number[] = [];
      const m = await t.join(memberOptions('restore', ['state'], async (b) => void got.push(...b.records.map((r) => r.offset)), { maxBatchRecords: 4 }));
      await waitFor(() => got.length === 9, 'compacted read');
      assert.deepEqual(got, [41, 42, 44, 45, 46, 47, 48, 49, 51]);
      await m.stop();
    } finally {
      await t.close();
    }
    // The high watermark survives even when compaction removed the last record.
    const t2 = await open(dir, { clock });
    try {
      await t2.send([{ topic: 'state', key: 'k1', value: null, timestamp: 0 }]);
      clock.advance(1);
      await t2.maintain();
      const high = (await t2.describeTopic('state'))?.partitions[0]?.high;
      assert.equal(high, 53);
      assert.equal((await readAll(t2, 'state', 0)).some((r) => r.key === 'k1'), false);
      await t2.close();
      const t3 = await open(dir, { clock });
      assert.equal((await t3.describeTopic('state'))?.partitions[0]?.high, 53);
      await t3.close();
    } finally {
      await t2.close();
    }
  });
});

test('retention.ms drops old records from the head and advances low', async () => {
  await withDir(async (dir) => {
    const clock = new ManualClock(10_000);
    const t = await open(dir, { clock });
    try {
      await t.ensureTopics([{ name: 'fetches', partitions: 1, config: { 'retention.ms': '1000' } }, { name: 'forever', partitions: 1 }]);
      // Timestamps 8000.. 8099 (old) then 9500..9599 (fresh); one late old record after fresh ones.
      const recs: OutRecord[] = [];
      for (let i = 0; i < 100; i++) recs.push({ topic: 'fetches', key: `a${i}`, value: value(`old${i}`), timestamp: 8_000 + i });
      for (let i = 0; i < 100; i++) recs.push({ topic: 'fetches', key: `b${i}`, value: value(`new${i}`), timestamp: 9_500 + i });
      recs.push({ topic: 'fetches', key: 'late', value: value('late'), timestamp: 1 });
      await t.send(recs);
      await t.send([{ topic: 'forever', key: 'x', value: value('x'), timestamp: 0 }]);
      const report = await t.maintain();
      assert.equal(report.expired, 100);
      const d = await t.describeTopic('fetches');
      assert.deepEqual(d?.partitions[0], { partition: 0, low: 100, high: 201 });
      const left = await readAll(t, 'fetches', 0);
      assert.equal(left[0]?.offset, 100);
      assert.equal(left.length, 101);
      // Head-only, like segment deletion: the late old record behind fresh ones stays for now.
      assert.equal(left[100]?.value?.toString(), 'late');
      assert.equal(await t.offsetForTimestamp('fetches', 0, 0), 100);
      assert.equal(await t.offsetForTimestamp('fetches', 0, 9_550), 150);
      assert.equal((await t.describeTopic('forever'))?.partitions[0]?.low, 0);

      clock.advance(1_000);
      assert.equal((await t.maintain()).expired, 101);
      assert.deepEqual((await t.describeTopic('fetches'))?.partitions[0], { partition: 0, low: 201, high: 201 });
      assert.deepEqual(await readAll(t, 'fetches', 0), []);
      // A group whose committed offset fell below low starts at low.
      await t.send([{ topic: 'fetches', key: 'c', value: value('c') }]);
      await t.setCommittedOffsets('g', [{ topic: 'fetches', partition: 0, offset: 3 }]);
      const got: number[] = [];
      const m = await t.join(memberOptions('g', ['fetches'], async (b) => void got.push(...b.records.map((r) => r.offset))));
      await waitFor(() => got.length === 1, 'consume after retention');
      assert.deepEqual(got, [201]);
      await m.stop();
    } finally {
      await t.close();
    }
    const t2 = await open(dir, { clock });
    try {
      assert.deepEqual((await t2.describeTopic('fetches'))?.partitions[0], { partition: 0, low: 201, high: 202 });
    } finally {
      await t2.close();
    }
  });
});

test('readPartition yields [from, to) in order, in chunks', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'cl', partitions: 1 }]);
      await t.send(Array.from({ length: 2_500 }, (_, i) => ({ topic: 'cl', key: `k${i}`, value: value(String(i)), partition: 0 })));
      let chunks = 0;
      const offsets: number[] = [];
      for await (const chunk of t.readPartition('cl', 0, 10, 2_200)) {
        chunks++;
        offsets.push(...chunk.map((r) => r.offset));
      }
      assert.ok(chunks >= 3);
      assert.deepEqual(offsets, Array.from({ length: 2_190 }, (_, i) => i + 10));
      assert.equal((await readAll(t, 'cl', 0, 2_400, 10_000)).length, 100);
      assert.throws(() => t.readPartition('cl', 1, 0, 1), RangeError);
    } finally {
      await t.close();
    }
  });
});

test('an eachBatch error is logged, counted and retried from the committed offset', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'e', partitions: 1 }]);
      await t.send(Array.from({ length: 10 }, (_, i) => ({ topic: 'e', key: `k${i}`, value: value(String(i)) })));
      const deliveries: number[][] = [];
      let failures = 0;
      const member: GroupMember = await t.join(
        memberOptions(
          'g',
          ['e'],
          async (b) => {
            deliveries.push(b.records.map((r) => r.offset));
            const first = b.records[0] as LogRecord;
            // Commit the first record of the batch, then fail (twice) on batches holding offset 6.
            await member.commit({ transactional: false, outputs: [], offsets: [{ topic: 'e', partition: 0, offset: first.offset + 1 }] });
            if (b.records.some((r) => r.offset === 6) && failures < 2) {
              failures++;
              throw new Error('boom');
            }
            const last = b.records[b.records.length - 1] as LogRecord;
            await member.commit({ transactional: false, outputs: [], offsets: [{ topic: 'e', partition: 0, offset: last.offset + 1 }] });
          },
          { maxBatchRecords: 5 },
        ),
      );
      await waitFor(() => deliveries.length >= 4, 'redelivered after errors', 15_000);
      assert.deepEqual(deliveries, [
        [0, 1, 2, 3, 4],
        [5, 6, 7, 8, 9],
        [6, 7, 8, 9],
        [7, 8, 9],
      ]);
      assert.equal((member as EmbeddedGroupMember).errorCount, 2);
      await member.stop();
      assert.equal((member as EmbeddedGroupMember).stats().batches, 2);
      assert.deepEqual(await t.committedOffsets('g', 'e'), [{ topic: 'e', partition: 0, offset: 10 }]);
    } finally {
      await t.close();
    }
  });
});

test('a failing onAssigned is retried before any batch is delivered', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'r', partitions: 1 }]);
      await t.send([{ topic: 'r', key: 'a', value: value('a') }]);
      const log: string[] = [];
      let calls = 0;
      const m = await t.join(
        memberOptions('g', ['r'], async (b) => void log.push(`batch ${b.records.length}`), {
          onAssigned: async () => {
            calls++;
            log.push(`assigned ${calls}`);
            if (calls === 1) throw new Error('store not ready');
          },
        }),
      );
      await waitFor(() => log.includes('batch 1'), 'batch after retry');
      assert.deepEqual(log, ['assigned 1', 'assigned 2', 'batch 1']);
      assert.equal((m as EmbeddedGroupMember).errorCount, 1);
      assert.equal(t.memberStats()[0]?.errors, 1);
      await m.stop();
    } finally {
      await t.close();
    }
  });
});

test('stop() from inside eachBatch does not deadlock; close() stops members', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    await t.ensureTopics([{ name: 's', partitions: 1 }]);
    await t.send([{ topic: 's', key: 'a', value: value('a') }]);
    let revoked: readonly TopicPartition[] = [];
    const member: GroupMember = await t.join(
      memberOptions(
        'g',
        ['s'],
        async () => {
          await member.stop();
        },
        { onRevoked: async (tps) => void (revoked = tps) },
      ),
    );
    await waitFor(() => revoked.length === 1, 'revoked after stop from eachBatch');
    assert.deepEqual(member.assignment(), []);
    const other = await t.join(memberOptions('g2', ['s'], async () => undefined));
    await other.ready();
    await t.close();
    assert.deepEqual(other.assignment(), []);
  });
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('stop() awaited inside eachBatch after other awaits returns at once; the member leaves when the batch has returned', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 's', partitions: 1 }]);
      await t.send([{ topic: 's', key: 'a', value: value('a') }]);
      const events: string[] = [];
      const member: GroupMember = await t.join(
        memberOptions(
          'g',
          ['s'],
          async (b) => {
            await member.commit({ transactional: false, outputs: [], offsets: [{ topic: 's', partition: 0, offset: b.records.at(-1)!.offset + 1 }] });
            await pause(5);
            await member.stop();
            events.push('stop returned');
            await pause(20);
            events.push('batch returned');
          },
          { onRevoked: async () => void events.push('revoked') },
        ),
      );
      await (member as EmbeddedGroupMember).left();
      assert.deepEqual(events, ['stop returned', 'batch returned', 'revoked']);
      assert.deepEqual(member.assignment(), []);
      assert.deepEqual(await t.committedOffsets('g', 's'), [{ topic: 's', partition: 0, offset: 1 }]);
      await member.stop(); // from outside, once it has left: resolves at once
    } finally {
      await t.close();
    }
  });
});

test('stop() awaited inside onAssigned, before or after an await, does not deadlock; no batch is delivered', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 's', partitions: 2 }]);
      await t.send([{ topic: 's', key: 'a', value: value('a'), partition: 0 }]);
      for (const afterAwait of [false, true]) {
        const batches: number[] = [];
        const revoked: number[] = [];
        const member: GroupMember = await t.join(
          memberOptions('g', ['s'], async (b) => void batches.push(b.partition), {
            onAssigned: async () => {
              if (afterAwait) await pause(5);
              await member.stop();
            },
            onRevoked: async (tps) => void revoked.push(...tps.map((tp) => tp.partition)),
          }),
        );
        await (member as EmbeddedGroupMember).left();
        assert.deepEqual(batches, [], `afterAwait=${afterAwait}`);
        assert.deepEqual(revoked.sort(), [0, 1], `afterAwait=${afterAwait}`);
        assert.deepEqual(member.assignment(), []);
      }
    } finally {
      await t.close();
    }
  });
});

test('stop() from outside resolves only after the batch in progress has committed, onRevoked has run and the member has left', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 's', partitions: 1 }]);
      await t.send([{ topic: 's', key: 'a', value: value('a') }]);
      const events: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let left = false;
      const member: GroupMember = await t.join(
        memberOptions(
          'g',
          ['s'],
          async (b) => {
            events.push('batch started');
            await gate;
            await member.commit({ transactional: false, outputs: [], offsets: [{ topic: 's', partition: 0, offset: b.records.at(-1)!.offset + 1 }] });
            events.push('committed');
          },
          { onRevoked: async () => void events.push('revoked') },
        ),
      );
      void (member as EmbeddedGroupMember).left().then(() => (left = true));
      await waitFor(() => events.includes('batch started'), 'the batch to start');
      let stopped = false;
      const stopping = member.stop().then(() => void (stopped = true));
      await pause(50);
      assert.equal(stopped, false, 'stop() waits for the batch in progress');
      assert.deepEqual(events, ['batch started']);
      release();
      await stopping;
      assert.equal(left, true);
      assert.deepEqual(events, ['batch started', 'committed', 'revoked']);
      assert.deepEqual(await t.committedOffsets('g', 's'), [{ topic: 's', partition: 0, offset: 1 }]);
    } finally {
      await t.close();
    }
  });
});

test('stop() waits when called from a callback of another group, or from code a callback started without waiting for it', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([
        { name: 's', partitions: 1 },
        { name: 'u', partitions: 1 },
      ]);
      await t.send([{ topic: 's', key: 'a', value: value('a') }]);
      let leftA = false;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const a: GroupMember = await t.join(memberOptions('a', ['s'], async () => gate));
      void (a as EmbeddedGroupMember).left().then(() => (leftA = true));
      await a.ready();
      // Group b's batch stops a member of group a: it waits for a's batch in progress.
      const seenByB: boolean[] = [];
      const b: GroupMember = await t.join(
        memberOptions('b', ['u'], async () => {
          setTimeout(release, 30);
          await a.stop();
          seenByB.push(leftA);
        }),
      );
      await t.send([{ topic: 'u', key: 'x', value: value('x') }]);
      await waitFor(() => seenByB.length === 1, 'b stopped a');
      assert.deepEqual(seenByB, [true]);
      // A timer set by b's batch stops b after the batch returned: it waits until b has left.
      let leftB = false;
      void (b as EmbeddedGroupMember).left().then(() => (leftB = true));
      const seenByTimer: boolean[] = [];
      const c: GroupMember = await t.join(
        memberOptions('c', ['u'], async () => {
          setTimeout(() => void b.stop().then(() => seenByTimer.push(leftB)), 1);
          setTimeout(() => void c.stop().then(() => seenByTimer.push((c as EmbeddedGroupMember).stats().assignment.length === 0)), 1);
        }),
      );
      await waitFor(() => seenByTimer.length === 2, 'the timers stopped b and c');
      assert.deepEqual(seenByTimer, [true, true]);
    } finally {
      await t.close();
    }
  });
});

test('a topic created after the join is assigned and consumed; members with different subscriptions', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'x', partitions: 2 }]);
      const got: string[] = [];
      const record = async (b: ConsumedBatch): Promise<void> => void got.push(...b.records.map((r) => `${r.topic}/${r.partition}/${r.offset}`));
      const a = await t.join(memberOptions('g', ['x', 'late'], record, { memberName: 'a' }));
      const b = await t.join(memberOptions('g', ['x'], record, { memberName: 'b' }));
      await Promise.all([a.ready(), b.ready()]);
      assert.deepEqual([...a.assignment(), ...b.assignment()].sort(sortTp), [
        { topic: 'x', partition: 0 },
        { topic: 'x', partition: 1 },
      ]);
      await t.ensureTopics([{ name: 'late', partitions: 3 }]);
      await waitFor(() => a.assignment().length === 4, 'late topic assigned to its only subscriber');
      assert.equal(b.assignment().length, 1);
      await t.send([0, 1, 2].map((p) => ({ topic: 'late', key: null, value: value('l'), partition: p })));
      await waitFor(() => got.length === 3, 'late topic consumed');
      assert.deepEqual(got.sort(), ['late/0/0', 'late/1/0', 'late/2/0']);
    } finally {
      await t.close();
    }
  });
});

test('a member that stops while a rebalance is running gives up everything before it has left', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'in', partitions: 4 }]);
      const revokedA: number[][] = [];
      const a: GroupMember = await t.join(
        memberOptions('g', ['in'], async () => undefined, {
          memberName: 'a',
          onRevoked: async (tps) => {
            revokedA.push(tps.map((x) => x.partition).sort());
            // Leave while the rebalance caused by b's join is still in its revoke phase.
            if (revokedA.length === 1) void a.stop();
          },
        }),
      );
      await a.ready();
      const b = await t.join(memberOptions('g', ['in'], async () => undefined, { memberName: 'b' }));
      await (a as EmbeddedGroupMember).left();
      assert.deepEqual(revokedA, [
        [1, 3],
        [0, 2],
      ]);
      assert.deepEqual(a.assignment(), []);
      await waitFor(() => b.assignment().length === 4, 'b owns everything');
      await b.stop();
    } finally {
      await t.close();
    }
  });
});

test('membership churn: no partition is processed by two members at once, every record exactly once', { timeout: 60_000 }, async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'churn', partitions: 5 }]);
      const inFlight = new Set<number>();
      const violations: string[] = [];
      const seen = new Map<string, number>();
      let produced = 0;
      let random = 42;
      const rnd = (n: number): number => {
        random = (random * 1103515245 + 12345) % 2147483648;
        return random % n;
      };
      const members: GroupMember[] = [];
      const join = async (): Promise<void> => {
        const m: GroupMember = await t.join(
          memberOptions(
            'churn',
            ['churn'],
            async (b) => {
              if (inFlight.has(b.partition)) violations.push(`partition ${b.partition} processed concurrently`);
              inFlight.add(b.partition);
              try {
                await new Promise((r) => setTimeout(r, rnd(3)));
                for (const r of b.records) {
                  const id = `${r.partition}:${r.offset}`;
                  seen.set(id, (seen.get(id) ?? 0) + 1);
                }
                const last = b.records[b.records.length - 1] as LogRecord;
                await m.commit({ transactional: true, scope: `churn-${b.partition}`, outputs: [], offsets: [{ topic: 'churn', partition: b.partition, offset: last.offset + 1 }] });
              } finally {
                inFlight.delete(b.partition);
              }
            },
            { maxBatchRecords: 7 },
          ),
        );
        members.push(m);
      };
      await join();
      const producing = (async () => {
        for (let i = 0; i < 150; i++) {
          const n = 1 + rnd(20);
          await t.send(Array.from({ length: n }, (_, j) => ({ topic: 'churn', key: `k${produced + j}`, value: value('v') })));
          produced += n;
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      for (let step = 0; step < 40; step++) {
        if (members.length < 2 || (members.length < 4 && rnd(2) === 0)) {
          await join();
        } else {
          const [victim] = members.splice(rnd(members.length), 1);
          // Not awaited half of the time, so leaves overlap joins and other rebalances.
          const stopping = victim?.stop();
          if (rnd(2) === 0) await stopping;
        }
        await new Promise((r) => setTimeout(r, rnd(15)));
      }
      await producing;
      await waitFor(() => seen.size === produced, `all ${produced} records consumed`, 30_000);
      await Promise.all(members.map((m) => m.stop()));
      assert.deepEqual(violations, []);
      assert.deepEqual([...seen.entries()].filter(([, n]) => n !== 1), []);
    } finally {
      await t.close();
    }
  });
});

test('a killed appender leaves a contiguous, readable log', { timeout: 60_000 }, async () => {
  await withDir(async (dir) => {
    const fixture = path.join(here, 'embedded-log-fixtures', 'append-forever.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let acked: number[] = [0, 0, 0];
    let lines = 0;
    let stderr = '';
    let buffered = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        if (!line.startsWith('acked ')) continue;
        const a = JSON.parse(line.slice(6)) as number[];
        acked = acked.map((v, i) => Math.max(v, a[i] ?? 0));
        lines++;
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => (stderr += c));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await waitFor(() => lines >= 60 || child.exitCode !== null, 'appender to make progress', 30_000);
      assert.equal(child.exitCode, null, `appender died: ${stderr}`);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 20)));
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const t = await open(dir);
    try {
      const d = await t.describeTopic('crash');
      assert.ok(d);
      for (const p of d.partitions) {
        assert.ok(p.high >= (acked[p.partition] ?? 0), `partition ${p.partition}: high ${p.high} < acknowledged ${acked[p.partition]}`);
        const records = await readAll(t, 'crash', p.partition);
        assert.equal(records.length, p.high - p.low);
        records.forEach((r, i) => assert.equal(r.offset, p.low + i));
        for (const r of records) {
          const n = Number(r.headers.n);
          assert.equal(r.value?.length, appendedValueLength(n), `record ${r.offset}`);
          assert.ok(r.value[0] === n % 251 && r.value.at(-1) === n % 251, `record ${r.offset}: its own bytes`);
        }
      }
      // The reopened log accepts appends right after the recovered end.
      const meta = await t.send([{ topic: 'crash', key: null, value: null, partition: 0 }]);
      assert.equal(meta[0]?.offset, d.partitions[0]?.high);
    } finally {
      await t.close();
    }
  });
});

test('reads answered from the in-memory tail and from RocksDB agree, across the point where the tail ends', async () => {
  await withDir(async (dir) => {
    const t = await open(dir);
    try {
      await t.ensureTopics([{ name: 'big', partitions: 1 }]);
      // 300 records of 20 KB: far more than the tail keeps, so older ones come from RocksDB.
      const body = (i: number): Buffer => Buffer.alloc(20_000, String.fromCharCode(97 + (i % 26)));
      for (let i = 0; i < 300; i += 50) await t.send(Array.from({ length: 50 }, (_, j) => ({ topic: 'big', key: `k${i + j}`, value: body(i + j), partition: 0 })));
      const got: LogRecord[] = [];
      const m = await t.join(memberOptions('tail', ['big'], async (b) => void got.push(...b.records), { maxBatchRecords: 64 }));
      await waitFor(() => got.length === 300, 'all records');
      await m.stop();
      assert.deepEqual(got.map((r) => r.offset), Array.from({ length: 300 }, (_, i) => i));
      for (const r of got) assert.ok(r.value?.equals(body(r.offset)) && r.key === `k${r.offset}`, `record ${r.offset}`);
      // Reopened, nothing is in memory: the same records from RocksDB.
      await t.close();
      const t2 = await open(dir);
      try {
        const again = await readAll(t2, 'big', 0);
        assert.deepEqual(again.map((r) => [r.offset, r.key, r.value?.length]), got.map((r) => [r.offset, r.key, r.value?.length]));
      } finally {
        await t2.close();
      }
    } finally {
      await t.close().catch(() => undefined);
    }
  });
});
