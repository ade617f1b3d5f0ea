/**
 * The long-term queue sweep on real RocksDB stores: it reads from its floor (everything below was
 * swept), not from the start of the index, so the deletions of earlier sweeps are not scanned again;
 * entries filed below the floor still come due.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, silentLogger } from '../../services/runtime/index.ts';
import type { KeyValueStore, ProcessorContext, RangeQuery } from '../../services/runtime/index.ts';
import { TaskStores } from '../../services/runtime/task-stores.ts';
import { SchedulerProcessor, schedulerOptionsSchema } from '../../services/scheduler/service.ts';
import { REVISIT_PREFIX, revisitKey, revisitKeyBound } from '../../services/scheduler/state.ts';
import { withStateCodecs } from '../../services/scheduler/state-codec.ts';
import type { UrlState } from '../../services/scheduler/state.ts';
import { INITIAL_REVISIT_FLOOR, fileRevisit } from '../../services/scheduler/partition.ts';
import { SWEEP_LIMIT, floorAfterSweep } from '../../services/scheduler/revisits.ts';
import { tempDir, removeDir } from '../support/transports.ts';

const T0 = Date.UTC(2026, 0, 1);
const STORES = ['urls', 'hosts', 'queues'] as const;

describe('revisit sweep floor', () => {
  it('moves past the last entry read when the limit cut the read short, else to the bound; never down', () => {
    const bound = revisitKeyBound(T0);
    const k1 = revisitKey(T0 - 20, 'http://a.test/1');
    const k2 = revisitKey(T0 - 10, 'http://a.test/2');
    assert.equal(floorAfterSweep(REVISIT_PREFIX, bound, [[k1, ''], [k2, '']], 2), k2, 'limit reached: more may wait at the last key');
    assert.equal(floorAfterSweep(REVISIT_PREFIX, bound, [[k1, '']], 2), bound, 'below the limit: nothing below the bound is left');
    assert.equal(floorAfterSweep(REVISIT_PREFIX, bound, [], 2), bound);
    const later = revisitKeyBound(T0 + 1000);
    assert.equal(floorAfterSweep(later, bound, [], 2), later, 'a clock that stepped back does not lower the floor');
  });

  it('an entry filed below the floor lowers it', () => {
    const puts: string[] = [];
    const queueStore = { put: (key: string) => void puts.push(key) } as unknown as KeyValueStore<string>;
    const p = { queueStore, revisitFloor: revisitKeyBound(T0) };
    fileRevisit(p, T0 + 5000, 'http://a.test/later');
    assert.equal(p.revisitFloor, revisitKeyBound(T0), 'above the floor: unchanged');
    fileRevisit(p, T0 - 5000, 'http://a.test/earlier');
    assert.equal(p.revisitFloor, revisitKey(T0 - 5000, 'http://a.test/earlier'));
    assert.deepEqual(puts, [revisitKey(T0 + 5000, 'http://a.test/later'), revisitKey(T0 - 5000, 'http://a.test/earlier')]);
    assert.equal(INITIAL_REVISIT_FLOOR, REVISIT_PREFIX);
  });
});

describe('revisit sweep on RocksDB', () => {
  let dir: string | undefined;
  let stores: TaskStores | undefined;
  afterEach(async () => {
    await stores?.close();
    if (dir) removeDir(dir);
    stores = undefined;
    dir = undefined;
  });

  it('starts each sweep at its floor, sweeps every due entry once; a restarted partition starts at the beginning', async () => {
    dir = tempDir('meguri-sweep-');
    const opened = await TaskStores.open(dir, 'scheduler', 0, withStateCodecs(STORES.map((name) => ({ name }))));
    stores = opened;
    const clock = new ManualClock(T0);
    /** The lower bound of every range read of the long-term queue. */
    const sweepStarts: string[] = [];
    const queues = opened.store<string>('queues');
    const watchedQueues: KeyValueStore<string> = {
      name: queues.name,
      get: (key) => queues.get(key),
      peek: (key) => queues.peek(key),
      put: (key, value) => queues.put(key, value),
      delete: (key) => queues.delete(key),
      prefetch: (keys) => queues.prefetch(keys),
      get knownCompletely() {
        return queues.knownCompletely;
      },
      range: (query?: RangeQuery) => {
        if (query?.gte !== undefined && query.gte.startsWith(REVISIT_PREFIX)) sweepStarts.push(query.gte);
        return queues.range(query);
      },
    };
    const timers: ((ctx: ProcessorContext) => Promise<void> | void)[] = [];
    const ctx: ProcessorContext = {
      service: 'scheduler',
      partition: 0,
      logger: silentLogger,
      now: () => clock.now(),
      emit: () => undefined,
      store: <V>(name: string) => (name === 'queues' ? watchedQueues : opened.store(name)) as unknown as KeyValueStore<V>,
      schedule: (_intervalMs, fn) => {
        timers.push(fn);
        return { cancel: () => undefined };
      },
    };
    const commit = async (): Promise<void> => {
      await opened.db.batch(STORES.flatMap((n) => opened.store<unknown>(n).pendingOps()));
      opened.committed();
    };

    // 2,500 known URLs on 5 hosts, due one millisecond apart.
    const urls = opened.store<UrlState>('urls');
    const known = (i: number): string => `http://h${i % 5}.test/p${i}`;
    const total = 2 * SWEEP_LIMIT + 500;
    for (let i = 0; i < total; i++) {
      const n = T0 + i;
      urls.put(known(i), { status: 'done', depth: 1, cgiHops: 0, score: 1, lastFetchAt: T0 - 86_400_000, httpStatus: 200, nextRevisitAt: n, revisitIntervalMs: 86_400_000 });
      queues.put(revisitKey(n, known(i)), '');
    }
    await commit();

    const options = schedulerOptionsSchema.parse({ minIntervalMs: 0, politeness: { kFactor: 0, suspendEnabled: false } });
    const processor = new SchedulerProcessor(0, options, {});
    await processor.init(ctx);
    await commit();
    // Timers in init() order: the dispatch tick, then the long-term queue sweep.
    const sweep = timers[1];
    assert.ok(sweep, 'the sweep timer is registered');
    const queued = async (): Promise<number> => {
      let n = 0;
      for (let i = 0; i < total; i++) if ((await urls.get(known(i)))?.status === 'queued') n++;
      return n;
    };

    clock.advance(total + 10);
    const bound = revisitKeyBound(clock.now());
    for (let call = 0; call < 4; call++) {
      await sweep(ctx);
      await commit();
    }
    assert.equal(await queued(), total, 'every due URL was moved to its host queue');
    assert.deepEqual(
      sweepStarts,
      [REVISIT_PREFIX, revisitKey(T0 + SWEEP_LIMIT - 1, known(SWEEP_LIMIT - 1)), revisitKey(T0 + 2 * SWEEP_LIMIT - 1, known(2 * SWEEP_LIMIT - 1)), bound],
      'each sweep starts where the one before stopped, not at the start of the index',
    );

    // A partition rebuilt from the stores (a restart, a moved partition, a failed batch) starts
    // again at the start of the index, so an entry below the old floor is found.
    const late = 'http://h0.test/restored-late';
    urls.put(late, { status: 'done', depth: 1, cgiHops: 0, score: 1, lastFetchAt: T0 - 86_400_000, httpStatus: 200, nextRevisitAt: T0, revisitIntervalMs: 86_400_000 });
    queues.put(revisitKey(T0, late), '');
    await commit();
    timers.length = 0;
    const restarted = new SchedulerProcessor(0, options, {});
    await restarted.init(ctx);
    sweepStarts.length = 0;
    await timers[1]!(ctx);
    await commit();
    assert.deepEqual(sweepStarts, [REVISIT_PREFIX]);
    assert.equal((await urls.get(late))?.status, 'queued', 'found from the start of the index');
  });
});
