import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logEvents, recoveryMs } from '../support/fault-recovery.ts';

/** One fetch every `everyMs` over [from, to). */
const steady = (from: number, to: number, everyMs: number): number[] => Array.from({ length: Math.floor((to - from) / everyMs) }, (_, i) => from + i * everyMs);

describe('fault recovery figures', () => {
  it('measures the time until the rate is back to 90 % of the rate before the fault', () => {
    // 10 fetches/s for 60 s, nothing for the fault (60-80 s), 2/s for 20 s, then 10/s again.
    const times = [...steady(0, 60_000, 100), ...steady(80_000, 100_000, 500), ...steady(100_000, 200_000, 100)];
    const ms = recoveryMs(times, { startMs: 60_000, endMs: 80_000 })!;
    // The 10 s window reaches 9/s once at most 1 s of it still lies in the slow stretch.
    assert.ok(ms >= 19_000 && ms <= 20_000, `recovery ${ms} ms`);
  });

  it('counts a crawl that ran out of work as recovered when it did; a crawl that only crawled on slowly, at its end', () => {
    const done = [...steady(0, 60_000, 100), ...steady(70_000, 75_000, 100)];
    assert.equal(recoveryMs(done, { startMs: 60_000, endMs: 70_000 }), 4_900);
    const crawling = [...steady(0, 60_000, 100), ...steady(70_000, 200_000, 1000)];
    assert.equal(recoveryMs(crawling, { startMs: 60_000, endMs: 70_000 }), 129_000);
    assert.equal(recoveryMs(steady(0, 60_000, 100), { startMs: 60_000, endMs: 70_000 }), undefined, 'nothing fetched after the fault');
    assert.equal(recoveryMs([], { startMs: 1, endMs: 2 }), undefined);
  });

  it('counts restores that replayed records, the records, and generations lost', () => {
    const log = [
      '{"msg":"store restored from changelog","records":100000}',
      '{"msg":"store restored from changelog","records":0}',
      '{"msg":"group generation lost: every task is migrated and restored"}',
      '{"time":50,"msg":"The group is rebalancing, re-joining"}',
    ].join('\n');
    assert.deepEqual(logEvents([log, '{"records":5,"msg":"store restored from changelog"}']), { restores: 2, restoredRecords: 100_005, generationsLost: 1, rebalances: 1 });
    const timed = '{"time":10,"msg":"store restored from changelog","records":7}\n{"time":30,"msg":"store restored from changelog","records":3}\n{"time":40,"msg":"The group is rebalancing"}';
    assert.deepEqual(logEvents([timed], 20), { restores: 1, restoredRecords: 3, generationsLost: 0, rebalances: 1 });
  });
});
