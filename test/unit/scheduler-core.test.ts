/**
 * The scheduler's closed loop per host on the TestDriver (no transport, no sleeps): robots.txt
 * first, one request in flight per host, the interval, disallowed URLs never emitted, the depth
 * limit, and lost requests re-issued a bounded number of times.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link, T0 } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';

describe('scheduler on the test driver: the closed loop per host', () => {
  let h: SchedulerDriver;
  // k × download time off: these tests check the fixed interval.
  const open = async (options: SchedulerOptionsInput): Promise<void> => {
    h = await openSchedulerDriver({ politeness: { kFactor: 0 }, ...options });
  };
  afterEach(async () => {
    await h.stop();
  });

  it('fetches robots.txt first, keeps one request in flight per host, waits the interval, skips disallowed URLs', async () => {
    await open({ minIntervalMs: 1000 });
    await h.send(seed('http://a.test/'));
    const [robots] = h.nextRequests(1);
    assert.equal(robots!.url, 'http://a.test/robots.txt');
    assert.equal(robots!.reason, 'robots');
    await h.send(h.outcome(robots!, { status: 200, result: 'ok', robots: { status: 200, body: 'User-agent: *\nDisallow: /private\n' } }));
    h.assertNoRequest();
    await h.advance(990);
    h.assertNoRequest();
    await h.advance(10);
    const [home] = h.nextRequests(1);
    assert.equal(home!.url, 'http://a.test/');
    assert.equal(home!.depth, 0);
    const fromHome = (url: string) => link(url, 'http://a.test/', { depth: 1 });
    await h.send([fromHome('http://a.test/private/x'), fromHome('http://a.test/b'), fromHome('http://a.test/c')]);
    await h.advance(5000);
    h.assertNoRequest(); // one request in flight per host, however long it takes
    await h.answer(home!, { serverIp: '127.0.0.9', md5: undefined });
    h.assertNoRequest();
    await h.advance(999);
    h.assertNoRequest();
    // Due now; the dispatcher runs every 10 ms of clock time.
    await h.advance(11);
    const [second] = h.nextRequests(1);
    assert.ok(['http://a.test/b', 'http://a.test/c'].includes(second!.url), 'the disallowed URL is skipped');
    assert.equal(second!.ip, '127.0.0.9');
    assert.equal(second!.depth, 1);
    const keys = h.driver.allOutput('frontier').map((r) => r.key);
    assert.deepEqual(keys, ['a.test', 'a.test', '127.0.0.9'], 'keyed by host until the IP is known, then by IP');
    assert.equal(h.progress.totals().robotsDisallowedSkipped, 1);
    // The third URL after the next answer and interval; the disallowed one never.
    await h.answer(second!, { serverIp: '127.0.0.9' });
    await h.advance(1010);
    const [third] = h.nextRequests(1);
    assert.deepEqual([second!.url, third!.url].sort(), ['http://a.test/b', 'http://a.test/c']);
    await h.answer(third!, { serverIp: '127.0.0.9' });
    await h.advance(86_400_000);
    h.assertNoRequest();
    assert.ok(!h.driver.allOutput('frontier').some((r) => r.value.url.includes('/private')));
  });

  it('re-issues a request whose outcome never comes, then gives the URL up', async () => {
    await open({ minIntervalMs: 0, requestTimeoutMs: 5000, maxAttempts: 2 });
    await h.send(seed('http://b.test/x'));
    const [robots] = h.nextRequests(1);
    await h.answer(robots!);
    const [first] = h.nextRequests(1);
    assert.equal(first!.attempt, 1);
    await h.advance(4990);
    h.assertNoRequest();
    await h.advance(11);
    const [retry] = h.nextRequests(1);
    assert.equal(retry!.url, 'http://b.test/x');
    assert.equal(retry!.attempt, 2);
    assert.notEqual(retry!.requestId, first!.requestId);
    // The late answer to the first attempt is ignored: the host stays busy with the retry.
    await h.answer(first!);
    assert.equal(h.progress.totals().pagesFetched, 0);
    assert.equal(h.progress.totals().inflight, 1);
    await h.advance(5001);
    assert.equal(h.progress.totals().lost, 1);
    h.assertNoRequest();
    assert.equal(h.progress.totals().inflight, 0);
    await h.advance(86_400_000);
    h.assertNoRequest();
  });

  it('does not follow links beyond the depth limit', async () => {
    await open({ minIntervalMs: 0, maxDepth: 1 });
    await h.send(seed('http://c.test/'));
    await h.answer(h.next()); // robots.txt
    const home = h.next();
    await h.send(link('http://c.test/deep', 'http://c.test/x', { depth: 2 }));
    await h.send(link('http://c.test/shallow', 'http://c.test/', { depth: 1 }));
    assert.equal(h.progress.totals().depthSkipped, 1);
    await h.answer(home);
    await h.advance(10);
    assert.deepEqual(h.requests().map((r) => r.url), ['http://c.test/shallow']);
    assert.equal(T0 <= h.clock.now(), true);
  });
});
