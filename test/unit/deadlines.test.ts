/**
 * The in-flight deadlines of a scheduler partition (services/scheduler/deadlines.ts): a sweep takes
 * out exactly the due ones, skips the scan while none can be due, sees deadlines set while it runs,
 * and after a sweep cut short by an error scans everything again.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Deadlines } from '../../services/scheduler/deadlines.ts';

async function due(d: Deadlines, now: number, onDue?: (id: string, host: string) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  await d.sweep(now, async (id, host) => {
    seen.push(`${id}@${host}`);
    await onDue?.(id, host);
  });
  return seen;
}

describe('in-flight deadlines', () => {
  it('takes out the due ones, in the order they were set, and leaves the rest', async () => {
    const d = new Deadlines();
    d.set('r1', 'a', 100);
    d.set('r2', 'b', 300);
    d.set('r3', 'a', 50);
    assert.deepEqual(await due(d, 100), ['r1@a', 'r3@a']);
    assert.equal(d.size, 1);
    assert.deepEqual(await due(d, 299), []);
    assert.deepEqual(await due(d, 300), ['r2@b']);
    assert.equal(d.size, 0);
  });

  it('skips the scan until the earliest deadline, and a deleted one is never due', async () => {
    const d = new Deadlines();
    d.set('r1', 'a', 100);
    d.set('r2', 'a', 200);
    d.delete('r1');
    let calls = 0;
    await d.sweep(99, async () => void calls++);
    assert.equal(calls, 0);
    // The floor was 100 (r1's, deleted since): this sweep scans, finds nothing due, raises it to 200.
    assert.deepEqual(await due(d, 150), []);
    assert.deepEqual(await due(d, 200), ['r2@a']);
  });

  it('sees a deadline set while it runs (a re-issued request) and lowers the floor for it', async () => {
    const d = new Deadlines();
    d.set('r1', 'a', 10);
    const seen = await due(d, 20, async (id) => {
      if (id === 'r1') d.set('r1b', 'a', 15);
    });
    assert.deepEqual(seen, ['r1@a', 'r1b@a']);
    d.set('r2', 'a', 30);
    assert.deepEqual(await due(d, 30), ['r2@a']);
  });

  it('after a sweep cut short by an error, the next one scans every deadline', async () => {
    const d = new Deadlines();
    d.set('r1', 'a', 10);
    d.set('r0', 'b', 5);
    await assert.rejects(
      d.sweep(10, async () => {
        throw new Error('store failed');
      }),
    );
    // r1 was taken out before the error and r0 was never reached: it is still due and found at
    // once, though no deadline was set since (a floor from the cut sweep would hide it).
    assert.deepEqual(await due(d, 10), ['r0@b']);
    assert.equal(d.size, 0);
  });
});
