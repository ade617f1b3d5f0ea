import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parkedForIdle, retryWaitUntil } from '../../services/scheduler/parking.ts';
import { emptyPoliteness } from '../../services/scheduler/politeness/index.ts';

const NOW = 1_000_000;

test('parking: robots.txt unreachable, parked, or backing off counts as waiting on a retry', () => {
  assert.equal(retryWaitUntil({ robotsParked: true, robotsDueAt: NOW + 60_000, nextAt: 0 }), NOW + 60_000);
  assert.equal(retryWaitUntil({ robotsParked: true, nextAt: 0 }), Infinity);
  assert.equal(retryWaitUntil({ nextAt: NOW + 5000, politeness: { ...emptyPoliteness(), p: NOW + 3_600_000 } }), NOW + 3_600_000);
  // A 503 with Retry-After: one failure, nextAt an hour away.
  const retryAfter = { nextAt: NOW + 3_600_000, politeness: { ...emptyPoliteness(), f: 1 } };
  assert.equal(retryWaitUntil(retryAfter), NOW + 3_600_000);
  assert.equal(parkedForIdle(retryAfter, NOW, 30_000), true);
  // The same wait after a success is ordinary politeness (a long Crawl-delay): not parked.
  const crawlDelay = { nextAt: NOW + 3_600_000, politeness: emptyPoliteness() };
  assert.equal(retryWaitUntil(crawlDelay), 0);
  assert.equal(parkedForIdle(crawlDelay, NOW, 30_000), false);
  // A short back-off is waited for.
  assert.equal(parkedForIdle({ nextAt: NOW + 20_000, politeness: { ...emptyPoliteness(), f: 1 } }, NOW, 30_000), false);
  assert.equal(parkedForIdle({ nextAt: NOW + 40_000, politeness: { ...emptyPoliteness(), f: 1 } }, NOW, 30_000), true);
});
