import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, changeFreqMs, newItemCount, nextFeedInterval, nextSitemapInterval, scheduleFor } from '../../services/scheduler/source-schedule.ts';

const S = scheduleFor(DAY_MS);

test('schedule bounds: base / 24 to base × 7', () => {
  assert.deepEqual(S, { baseMs: DAY_MS, minMs: HOUR_MS, maxMs: 7 * DAY_MS });
  assert.deepEqual(scheduleFor(60_000), { baseMs: 60_000, minMs: 2500, maxMs: 420_000 });
});

test('first feed fetch: item dates give the rate; without dates the base interval', () => {
  // ten items over 24 h → one new item every 2.67 h
  const plan = nextFeedInterval({ newItems: 10, items: 10, newest: 10 * DAY_MS, oldest: 9 * DAY_MS }, S);
  assert.equal(plan.intervalMs, Math.round(DAY_MS / 9));
  assert.ok(Math.abs(plan.rate! - 9 / DAY_MS) < 1e-15);
  assert.deepEqual(nextFeedInterval({ newItems: 3, items: 3 }, S), { intervalMs: DAY_MS });
  // a feed with years between its posts: the cap
  assert.equal(nextFeedInterval({ newItems: 2, items: 2, newest: 400 * DAY_MS, oldest: 0 }, S).intervalMs, 7 * DAY_MS);
});

test('later fetches: shorter when new items come faster, backed off when none, halved when all were new', () => {
  const rate = 1 / DAY_MS;
  const faster = nextFeedInterval({ previousIntervalMs: DAY_MS, elapsedMs: DAY_MS, newItems: 3, items: 20, rate }, S);
  assert.equal(faster.intervalMs, Math.round(1 / ((rate + 3 / DAY_MS) / 2)), 'EMA of 1/day and 3/day → every 12 h');
  const quiet = nextFeedInterval({ previousIntervalMs: DAY_MS, elapsedMs: DAY_MS, newItems: 0, items: 20 }, S);
  assert.equal(quiet.intervalMs, 2 * DAY_MS, 'no rate known and nothing new: doubled');
  const slowing = nextFeedInterval({ previousIntervalMs: DAY_MS, elapsedMs: DAY_MS, newItems: 0, items: 20, rate }, S);
  assert.equal(slowing.intervalMs, 2 * DAY_MS, 'the rate halves with a fetch without new items');
  const overflow = nextFeedInterval({ previousIntervalMs: DAY_MS, elapsedMs: DAY_MS, newItems: 10, items: 10, rate: 0.1 / DAY_MS }, S);
  assert.ok(overflow.intervalMs <= DAY_MS / 2);
  const busy = nextFeedInterval({ previousIntervalMs: HOUR_MS, elapsedMs: HOUR_MS, newItems: 50, items: 100, rate: 50 / HOUR_MS }, S);
  assert.equal(busy.intervalMs, HOUR_MS, 'never below base / 24');
  const ttl = nextFeedInterval({ previousIntervalMs: HOUR_MS, elapsedMs: HOUR_MS, newItems: 50, items: 100, rate: 50 / HOUR_MS, ttlMs: 6 * HOUR_MS }, S);
  assert.equal(ttl.intervalMs, 6 * HOUR_MS, "the feed's ttl is a floor");
});

test('a feed observed over many fetches converges to one new item per read', () => {
  // a feed that gains 4 items a day, read on its own schedule
  let plan = nextFeedInterval({ newItems: 5, items: 5 }, S);
  for (let i = 0; i < 12; i++) {
    const newItems = Math.round((plan.intervalMs / DAY_MS) * 4);
    plan = nextFeedInterval({ previousIntervalMs: plan.intervalMs, elapsedMs: plan.intervalMs, newItems, items: 30, ...(plan.rate !== undefined ? { rate: plan.rate } : {}) }, S);
  }
  assert.ok(Math.abs(plan.intervalMs - DAY_MS / 4) < HOUR_MS, `${plan.intervalMs / HOUR_MS} h`);
});

test('sitemaps: base first, halved on change, × 1.5 when unchanged, within bounds', () => {
  assert.equal(nextSitemapInterval(undefined, undefined, S), DAY_MS);
  assert.equal(nextSitemapInterval(DAY_MS, true, S), DAY_MS / 2);
  assert.equal(nextSitemapInterval(DAY_MS, false, S), 1.5 * DAY_MS);
  assert.equal(nextSitemapInterval(HOUR_MS, true, S), HOUR_MS);
  assert.equal(nextSitemapInterval(6 * DAY_MS, false, S), 7 * DAY_MS);
});

test('new item counting and changefreq hints', () => {
  assert.equal(newItemCount(undefined, ['a', 'b']), 2);
  assert.equal(newItemCount(['a', 'b'], ['c', 'a', 'b']), 1);
  assert.equal(newItemCount(['a'], []), 0);
  assert.equal(changeFreqMs('daily'), DAY_MS);
  assert.equal(changeFreqMs('never'), 400 * DAY_MS);
  assert.equal(changeFreqMs(undefined), undefined);
});
