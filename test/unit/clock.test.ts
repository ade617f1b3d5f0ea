import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, ScaledClock } from '../../services/runtime/clock.ts';

test('ScaledClock runs speed times wall time from its start, faster or slower', async () => {
  const fast = new ScaledClock(1_000_000, 1000);
  const slow = new ScaledClock(1_000_000, 0.1);
  const wall0 = Date.now();
  await new Promise((r) => setTimeout(r, 50));
  const wallMs = Date.now() - wall0;
  assert.ok(Math.abs(fast.now() - 1_000_000 - wallMs * 1000) <= 1000 * 15, `fast clock moved ${fast.now() - 1_000_000} ms in ${wallMs} wall ms`);
  assert.ok(slow.now() - 1_000_000 <= (wallMs + 15) * 0.1, `slow clock moved ${slow.now() - 1_000_000} ms in ${wallMs} wall ms`);
  assert.ok(Number.isInteger(slow.now()) && Number.isInteger(new ScaledClock(0.5, 1 / 3).now()), 'whole milliseconds, like Date.now()');
  assert.throws(() => new ScaledClock(0, 0), RangeError);
});

test('ScaledClock: two clocks with the same start and wall start agree (crawler and simulated web in two processes)', () => {
  const origin = Date.now() - 10_000;
  const a = new ScaledClock(origin, 0.25, origin);
  const b = new ScaledClock(origin, 0.25, origin);
  const ta = a.now();
  const tb = b.now();
  assert.ok(Math.abs(ta - tb) <= 1, `${ta} vs ${tb}`);
  // 10 s of wall time at a quarter speed: 2.5 s of clock time since the origin.
  assert.ok(ta - origin >= 2_500 && ta - origin < 2_600, `${ta - origin}`);
});

test('ScaledClock sleeps in its own time', async () => {
  const slow = new ScaledClock(0, 0.5);
  const wall0 = performance.now();
  await slow.sleep(20);
  assert.ok(performance.now() - wall0 >= 39, 'sleeping 20 ms at half speed takes 40 wall ms');
});

test('ManualClock wakes sleepers only when advanced past their time', async () => {
  const clock = new ManualClock(100);
  const woken: number[] = [];
  void clock.sleep(10).then(() => woken.push(10));
  void clock.sleep(30).then(() => woken.push(30));
  clock.advance(20);
  await Promise.resolve();
  assert.deepEqual(woken, [10]);
  clock.advance(10);
  await Promise.resolve();
  assert.deepEqual(woken, [10, 30]);
  assert.equal(clock.now(), 130);
});
