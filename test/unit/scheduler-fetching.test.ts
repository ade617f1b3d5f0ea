/**
 * What the scheduler fetches and when, on the runtime's TestDriver (no transport, no sleeps; see
 * docs/architecture.md, "Logic tests on the TestDriver"): the closed loop per host (robots.txt first,
 * one request in flight, the interval, disallowed URLs never emitted, the depth limit, lost requests
 * re-issued a bounded number of times, malformed input dead-lettered); redirects as discoveries and
 * the per-IP cap; page retries; and the stored forms those rely on. The scheduler end to end on both
 * transports is test/pipeline/scheduler.test.ts.
 *
 * Three files (this, scheduler-ordering and scheduler-traps) rather than one per concern: each test
 * file is a process that loads the whole module graph first, which costs more than the tests
 * themselves; the split keeps each under 600 lines.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link, T0 } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import { hostKey } from '../../services/scheduler/service.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import type { HostState } from '../../services/scheduler/state.ts';
import type { DiscoveredLink, FrontierRecord, OutcomeLink, RedirectHop } from '../../schemas/index.ts';
import { countRedirectOutcome, ipBelongsToHost, pastHopLimit, queueScore, REDIRECT_QUEUE_BOOST } from '../../services/scheduler/redirects.ts';
import { ReadyHeap } from '../../services/scheduler/ready-heap.ts';
import { IpSlots } from '../../services/scheduler/ip-slots.ts';
import { blcTieBreak, decodeOutLinks, encodeOutLinks, md5Of, packMd5, packRevisit, queueKey, revisitKey, revisitKeyUrl, revisitOf, roundScore } from '../../services/scheduler/state.ts';

describe('scheduler on the test driver: the closed loop per host', () => {
  let h: SchedulerDriver;
  let expectedDeadLetters: string[] = [];
  // k × download time off: these tests check the fixed interval.
  const open = async (options: SchedulerOptionsInput): Promise<void> => {
    h = await openSchedulerDriver({ politeness: { kFactor: 0 }, ...options });
  };
  afterEach(async () => {
    await h.stop(expectedDeadLetters);
    expectedDeadLetters = [];
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
    // The host's state says which request is out (what a restarted scheduler would wait for).
    const hosts = h.driver.store<HostState>('hosts');
    assert.equal((await hosts.get('a.test'))!.inflight?.requestId, home!.requestId);
    const fromHome = (url: string) => link(url, 'http://a.test/', { depth: 1 });
    await h.send([fromHome('http://a.test/private/x'), fromHome('http://a.test/b'), fromHome('http://a.test/c')]);
    await h.advance(5000);
    h.assertNoRequest(); // one request in flight per host, however long it takes
    await h.answer(home!, { serverIp: '127.0.0.9', md5: undefined });
    h.assertNoRequest();
    assert.equal((await hosts.get('a.test'))!.inflight, undefined);
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

  it('dead-letters a links record that breaks its schema and goes on with the rest of the batch', async () => {
    await open({ minIntervalMs: 0 });
    const broken = { ...seed('http://d.test/'), url: 'not a url' };
    await h.driver.pipeInput('links', [{ key: 'd.test', value: broken }, { key: 'd.test', value: seed('http://d.test/') }]);
    assert.equal(h.next().url, 'http://d.test/robots.txt');
    const [dead] = h.driver.deadLetters();
    assert.equal(dead!.code, 'MEGURI_ERR_SCHEMA');
    assert.equal(dead!.origin.topic, 'links');
    assert.match(dead!.value, /not a url/);
    expectedDeadLetters = ['MEGURI_ERR_SCHEMA'];
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

describe('scheduler on the test driver: redirects as discoveries', () => {
  let h: SchedulerDriver;
  const open = async (extra: SchedulerOptionsInput = {}): Promise<void> => {
    h = await openSchedulerDriver({ minIntervalMs: 1000, politeness: { kFactor: 0 }, ...extra });
  };
  afterEach(async () => {
    await h.stop();
  });

  const answer = (req: FrontierRecord, extra: Partial<OutcomeLink> = {}): OutcomeLink => h.outcome(req, { fetch: { totalMs: 5, bytes: 10_000 }, md5: undefined, ...extra });

  function redirectOf(req: FrontierRecord, target: string, status = 301): { outcome: OutcomeLink; link: DiscoveredLink } {
    const chain: RedirectHop[] = [...(req.redirects ?? []), { url: req.url, status }];
    return {
      outcome: answer(req, { status, result: 'redirect', location: target, outDegree: 1, outLinks: [target] }),
      link: link(target, req.url, { depth: req.depth, contribution: req.score + 1, sameSite: hostKey(target) === hostKey(req.url), redirect: chain, foundAt: h.clock.now() }),
    };
  }

  /** robots.txt answered with `body`, then the host's next page request (after the 1 s interval). */
  async function robotsThenPage(robotsReq: FrontierRecord, body: string): Promise<FrontierRecord> {
    assert.equal(robotsReq.reason, 'robots');
    await h.send(answer(robotsReq, { robots: { status: 200, body } }));
    h.assertNoRequest();
    await h.advance(1000);
    const [page] = h.nextRequests(1);
    return page!;
  }

  it('queues a same-host target first, checks it against robots.txt, and sends the chain with it', async () => {
    await open();
    await h.send(seed('http://a.test/'));
    const home = await robotsThenPage(h.next(), 'User-agent: *\nDisallow: /private\n');
    assert.equal(home.url, 'http://a.test/');
    // A link with a much higher score waits in the queue; the redirect target still goes first.
    await h.send(link('http://a.test/popular', 'http://x.test/', { contribution: 50 }));
    const r1 = redirectOf(home, 'http://a.test/moved');
    await h.send([r1.link, r1.outcome]);
    h.assertNoRequest();
    await h.advance(1000);
    const [moved] = h.nextRequests(1);
    assert.equal(moved!.url, 'http://a.test/moved');
    assert.equal(moved!.reason, 'redirect');
    assert.equal(moved!.depth, 0, 'same depth as the source');
    assert.deepEqual(moved!.redirects, [{ url: 'http://a.test/', status: 301 }]);

    // The next hop points into a Disallowed path: never requested.
    const r2 = redirectOf(moved!, 'http://a.test/private/secret', 302);
    await h.send([r2.link, r2.outcome]);
    h.assertNoRequest();
    await h.advance(1000);
    const [next] = h.nextRequests(1);
    assert.equal(next!.url, 'http://a.test/popular');
    assert.equal(next!.reason, 'new');
    assert.equal(h.progress.totals().robotsDisallowedSkipped, 1);
    await h.send(answer(next!));
    h.assertNoRequest();
    await h.advance(1000);
    h.assertNoRequest();
    const urls = h.events('frontier').map((r) => r.url);
    assert.ok(!urls.includes('http://a.test/private/secret'));
  });

  it('sends a cross-host target to its host: robots.txt first; known targets and loops are not fetched again; the hop limit holds', async () => {
    await open();
    await h.send(seed('http://a.test/'));
    const home = await robotsThenPage(h.next(), 'User-agent: *\nAllow: /\n');
    const r1 = redirectOf(home, 'http://b.test/landing');
    await h.send([r1.link, r1.outcome]);
    const [bRobots] = h.nextRequests(1);
    assert.equal(bRobots!.url, 'http://b.test/robots.txt', "the target host's robots.txt is fetched before the target");
    const landing = await robotsThenPage(bRobots!, 'User-agent: *\nAllow: /\n');
    assert.equal(landing.url, 'http://b.test/landing');
    assert.equal(landing.reason, 'redirect');

    // b.test/landing redirects back to a.test/ (a loop): a.test/ is known and not fetched again.
    const back = redirectOf(landing, 'http://a.test/');
    await h.send([back.link, back.outcome]);
    h.assertNoRequest();
    await h.advance(5000);
    h.assertNoRequest();

    // A chain past the hop limit ends in the fetcher (MEGURI_ERR_REDIRECT_LIMIT, no link): counted.
    await h.send(seed('http://c.test/', h.clock.now()));
    const cPage = await robotsThenPage(h.next(), '');
    await h.send(answer(cPage, { status: 302, result: 'error', errorCode: 'MEGURI_ERR_REDIRECT_LIMIT' }));
    assert.equal(h.progress.totals().redirectLimitReached ?? 0, 1);
    assert.equal(h.progress.totals().redirectTargetsQueued, 1);
    assert.equal(h.progress.totals().redirects, 3, 'every 3xx of a page request is a hop');
  });

  it("a robots.txt redirected to another host does not give the origin host the target's IP", async () => {
    await open();
    await h.send(seed('http://a.test/'));
    const robots = h.next();
    await h.send(answer(robots, { finalUrl: 'http://cdn.test/robots.txt', serverIp: '10.0.0.2', robots: { status: 200, body: '' } }));
    h.assertNoRequest();
    await h.advance(1000);
    const [home] = h.nextRequests(1);
    assert.equal(home!.ip, undefined);
    assert.deepEqual(h.driver.allOutput('frontier').map((r) => r.key), ['a.test', 'a.test']);
    await h.send(answer(home!, { serverIp: '10.0.0.1' }));
    await h.send(link('http://a.test/next', 'http://a.test/'));
    h.assertNoRequest();
    await h.advance(1000);
    const [next] = h.nextRequests(1);
    assert.equal(next!.ip, '10.0.0.1');
  });
});

describe('scheduler on the test driver: one per-IP cap', () => {
  it('learns each host address first, then keeps at most maxPerIp requests in flight per IP across its hosts', async () => {
    const h = await openSchedulerDriver({ minIntervalMs: 0, learnAddressFirst: true, politeness: { kFactor: 0, maxPerIp: 2, ipBusyRetryMs: 60_000 } });
    const answer = (req: FrontierRecord, extra: Partial<OutcomeLink> = {}): OutcomeLink => h.outcome(req, { fetch: { totalMs: 5, bytes: 10_000 }, md5: undefined, ...extra });
    const hosts = ['a', 'b', 'c', 'd'].map((x) => `http://${x}.test/`);
    await h.send(hosts.map((url) => seed(url)));
    const asks = h.nextRequests(4);
    assert.deepEqual(asks.map((r) => r.reason), ['address', 'address', 'address', 'address'], 'nothing is asked of a server before its address is known');
    // All four hosts live on one address.
    await h.send(asks.map((r) => answer(r, { status: 0, result: 'address', serverIp: '10.0.0.7', fetch: { totalMs: 0, bytes: 0 } })));
    const first = h.nextRequests(2);
    assert.ok(first.every((r) => r.reason === 'robots' && r.ip === '10.0.0.7'));
    await h.advance(1000);
    h.assertNoRequest(); // the other two hosts wait for a slot of 10.0.0.7
    // One answer frees one slot: exactly one more request, at once (no ipBusyRetryMs wait).
    await h.send(answer(first[0]!, { robots: { status: 404 }, status: 404, result: 'client-error', serverIp: '10.0.0.7' }));
    const [third] = h.nextRequests(1);
    assert.equal(third!.ip, '10.0.0.7');
    await h.advance(1000);
    h.assertNoRequest(); // still two in flight
    const keys = h.driver.allOutput('frontier').map((r) => r.key);
    assert.ok(keys.slice(4).every((k) => k === '10.0.0.7'), 'every request to the server is keyed by its IP');
    await h.stop();
  });

  it('hands each freed slot of a shared address to one waiting host in turn, so every host is served without the retry wait', async () => {
    const h = await openSchedulerDriver({ minIntervalMs: 0, learnAddressFirst: true, politeness: { kFactor: 0, maxPerIp: 2, ipBusyRetryMs: 600_000 } });
    const hosts = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((x) => `http://${x}.test/`);
    await h.send(hosts.map((url) => seed(url)));
    const ip = { serverIp: '10.0.0.7' };
    for (const r of h.nextRequests(hosts.length)) await h.answer(r, { status: 0, result: 'address', fetch: { totalMs: 0, bytes: 0 }, ...ip });
    const inFlight: FrontierRecord[] = [];
    const served: string[] = [];
    for (let step = 0; step < 100; step++) {
      inFlight.push(...h.requests());
      assert.ok(inFlight.length <= 2, `at most 2 requests in flight to the address, got ${inFlight.map((r) => r.url).join(' ')}`);
      const done = inFlight.shift();
      if (done === undefined) break;
      if (done.reason !== 'robots') served.push(done.url);
      await h.answer(done, ip);
      await h.advance(10);
    }
    assert.deepEqual([...served].sort(), hosts, 'every host had its page fetched');
    assert.ok(h.clock.now() - T0 < 60_000, 'within seconds, not after the retry wait of the hosts that waited');
    h.assertNoRequest();
    await h.stop();
  });

  it('keeps the cap across the partitions of one process, whose dispatches interleave while they read their queues', async () => {
    // Two partitions share the address's count, as in one scheduler process; their dispatch loops
    // run at once, so one may take the last slot while the other is between its check and its request.
    const ipSlots = new IpSlots();
    const options: SchedulerOptionsInput = { minIntervalMs: 0, learnAddressFirst: true, politeness: { kFactor: 0, maxPerIp: 2, maxPerHost: 4, ipBusyRetryMs: 50 } };
    const parts = [await openSchedulerDriver(options, { partition: 0, ipSlots }), await openSchedulerDriver(options, { partition: 1, ipSlots })];
    const ip = { serverIp: '10.0.0.9' };
    const hostsOf = (part: number) => Array.from({ length: 6 }, (_, i) => `http://p${part}h${i}.test/`);
    for (const [part, h] of parts.entries()) {
      await h.send(hostsOf(part).flatMap((url) => [seed(url), ...Array.from({ length: 3 }, (_, k) => link(`${url}page${k}`, url))]));
      for (const r of h.nextRequests(6)) await h.answer(r, { status: 0, result: 'address', fetch: { totalMs: 0, bytes: 0 }, ...ip });
    }
    const inFlight: { h: SchedulerDriver; r: FrontierRecord }[] = [];
    let most = 0;
    let pages = 0;
    for (let step = 0; step < 400; step++) {
      for (const h of parts) for (const r of h.requests()) inFlight.push({ h, r });
      most = Math.max(most, inFlight.length);
      const done = inFlight.shift();
      if (done === undefined && pages >= 48) break;
      if (done !== undefined) {
        if (done.r.reason !== 'robots') pages++;
        await done.h.answer(done.r, ip);
      }
      // Both partitions dispatch at the same time.
      await Promise.all(parts.map((h) => h.advance(10)));
    }
    assert.equal(most, 2, 'never more than 2 requests in flight to the address, over both partitions');
    assert.equal(pages, 48, 'every page of both partitions was fetched (6 hosts each, a seed and 3 links per host)');
    for (const h of parts) await h.stop();
  });
});

describe('scheduler on the test driver: several requests per host (politeness.maxPerHost)', () => {
  const fast = (extra: Partial<OutcomeLink> = {}): Partial<OutcomeLink> => ({ fetch: { totalMs: 5, bytes: 50_000 }, serverIp: '10.0.0.1', ...extra });
  const home = 'http://a.test/';
  const pages = (n: number) => Array.from({ length: n }, (_, i) => link(`http://a.test/p${i}`, home));
  /** A scheduler with `options` whose host a.test has answered its robots.txt. */
  const pastRobots = async (options: SchedulerOptionsInput): Promise<SchedulerDriver> => {
    const h = await openSchedulerDriver(options);
    await h.send(seed(home));
    await h.answer(h.nextRequests(1)[0]!, fast());
    return h;
  };

  it('keeps up to maxPerHost pages in flight while the host asks for no wait; robots.txt goes alone', async () => {
    const h = await openSchedulerDriver({ minIntervalMs: 0, robotsRecheckMs: 60_000, politeness: { kFactor: 0, maxPerHost: 3, maxPerIp: 8 } });
    const hosts = h.driver.store<HostState>('hosts');
    await h.send(seed(home));
    const [robots] = h.nextRequests(1);
    assert.equal(robots!.reason, 'robots');
    await h.answer(robots!, fast());
    const [first] = h.nextRequests(1);
    await h.send(pages(6));
    // The first page is out: two more go alongside it, and no fourth.
    const more = h.nextRequests(2);
    assert.equal(new Set([first!.url, ...more.map((r) => r.url)]).size, 3);
    await h.advance(500);
    h.assertNoRequest();
    const state = (await hosts.get('a.test'))!;
    assert.deepEqual([state.inflight?.requestId, ...(state.more ?? []).map((r) => r.requestId)], [first!.requestId, ...more.map((r) => r.requestId)]);
    assert.equal(h.progress.totals().inflight, 3);
    // An answer to the middle one frees its place: exactly one more request.
    await h.answer(more[0]!, fast());
    const [fourth] = h.nextRequests(1);
    await h.advance(100);
    h.assertNoRequest();
    // A duplicate answer changes nothing.
    await h.answer(more[0]!, fast());
    assert.equal(h.progress.totals().duplicateFetches, 1);
    h.assertNoRequest();
    // robots.txt falls due: it waits until every page in flight has answered, then goes alone.
    await h.advance(60_000);
    h.assertNoRequest();
    await h.answer(first!, fast());
    await h.answer(more[1]!, fast());
    await h.advance(20);
    h.assertNoRequest();
    await h.answer(fourth!, fast());
    await h.advance(20);
    const [again] = h.nextRequests(1);
    assert.equal(again!.reason, 'robots');
    await h.advance(100);
    h.assertNoRequest();
    await h.answer(again!, fast());
    await h.advance(20);
    assert.equal(h.nextRequests(3).length, 3, 'the three pages left, side by side');
    assert.equal(h.progress.totals().pagesFetched, 4);
    await h.stop();
  });

  it('asks a host one request at a time while it asks for a wait: an interval, k × e, a failure; the per-IP cap still holds', async () => {
    // A minimum interval: one at a time, whatever maxPerHost says.
    let h = await pastRobots({ minIntervalMs: 200, politeness: { kFactor: 0, maxPerHost: 4, maxPerIp: 8 } });
    await h.advance(200);
    const [a] = h.nextRequests(1);
    await h.send(pages(4));
    await h.advance(1000);
    h.assertNoRequest();
    await h.answer(a!, fast());
    await h.advance(210);
    h.nextRequests(1);
    await h.stop();

    // No interval, k × e on: the last download time sets a wait, so one at a time.
    h = await pastRobots({ minIntervalMs: 0, politeness: { kFactor: 10, maxPerHost: 4, maxPerIp: 8 } });
    await h.advance(100);
    h.nextRequests(1);
    await h.send(pages(4));
    await h.advance(40);
    h.assertNoRequest();
    await h.stop();

    // No wait at all, then a server error: the back-off stops the overlap until a success.
    h = await pastRobots({ minIntervalMs: 0, politeness: { kFactor: 0, maxPerHost: 4, maxPerIp: 8, backoffBaseMs: 1000 } });
    const [c] = h.nextRequests(1);
    await h.send(pages(8));
    const overlapping = h.nextRequests(3);
    await h.answer(c!, fast({ status: 503, result: 'server-error', md5: undefined }));
    await h.advance(999);
    h.assertNoRequest();
    await h.answer(overlapping[0]!, fast({ status: 503, result: 'server-error', md5: undefined }));
    await h.answer(overlapping[1]!, fast());
    await h.answer(overlapping[2]!, fast());
    await h.advance(3000);
    // The last answers were successes: the failure streak is over and the host overlaps again.
    assert.equal(h.requests().length, 4);
    await h.stop();

    // Four allowed per host, two per IP: the IP's cap wins.
    h = await pastRobots({ minIntervalMs: 0, politeness: { kFactor: 0, maxPerHost: 4, maxPerIp: 2, ipBusyRetryMs: 60_000 } });
    const [d] = h.nextRequests(1);
    await h.send(pages(4));
    const [e] = h.nextRequests(1);
    await h.advance(1000);
    h.assertNoRequest();
    await h.answer(d!, fast());
    h.nextRequests(1);
    await h.answer(e!, fast());
    h.nextRequests(1);
    await h.stop();
  });

  it('a request in flight across a restart is re-issued at its deadline, as are the requests after it', async () => {
    const h = await pastRobots({ minIntervalMs: 0, requestTimeoutMs: 5000, maxAttempts: 3, politeness: { kFactor: 0, maxPerHost: 2, maxPerIp: 8 } });
    const [first] = h.nextRequests(1);
    await h.advance(1000);
    // The restarted partition knows its requests in flight from the host's state only.
    await h.driver.restart();
    // Nothing until `quietMs` have passed, then the lost request again with this attempt number.
    const reissuedAfter = async (quietMs: number, attempt: number): Promise<void> => {
      await h.advance(quietMs - 10);
      h.assertNoRequest();
      await h.advance(11);
      const [request] = h.nextRequests(1);
      assert.equal(request!.url, first!.url);
      assert.equal(request!.attempt, attempt);
    };
    await reissuedAfter(4000, 2);
    // The retry's own deadline, set after the restart, is kept too.
    await reissuedAfter(5000, 3);
    await h.stop();
  });

  it('a lost request among several is re-issued on its own', async () => {
    const h = await pastRobots({ minIntervalMs: 0, requestTimeoutMs: 5000, maxAttempts: 2, politeness: { kFactor: 0, maxPerHost: 2, maxPerIp: 8 } });
    const [first] = h.nextRequests(1);
    await h.send(pages(4));
    const [second] = h.nextRequests(1);
    await h.advance(2000);
    await h.answer(second!, fast());
    const [third] = h.nextRequests(1);
    // The first request times out: re-issued with attempt 2; the third is still in flight.
    await h.advance(3001);
    const [retry] = h.nextRequests(1);
    assert.equal(retry!.url, first!.url);
    assert.equal(retry!.attempt, 2);
    assert.equal(h.progress.totals().inflight, 2);
    await h.answer(third!, fast());
    await h.answer(retry!, fast());
    await h.advance(20);
    h.nextRequests(2);
    await h.stop();
  });
});

describe('redirect rules', () => {
  it('queue redirect targets ahead of any linked URL of their host', () => {
    assert.ok(queueKey('h', queueScore(0, [{ url: 'http://h/', status: 301 }]), 9) < queueKey('h', 1e6, 1));
    assert.equal(queueScore(3, undefined), 3);
    assert.equal(queueScore(3, []), REDIRECT_QUEUE_BOOST + 3);
  });

  it('limit a chain to five hops', () => {
    const hops = (n: number): RedirectHop[] => Array.from({ length: n }, (_, i) => ({ url: `http://h/${i}`, status: 301 }));
    assert.equal(pastHopLimit(hops(5)), false);
    assert.equal(pastHopLimit(hops(6)), true);
    const counters = {};
    countRedirectOutcome(counters, { status: 301, result: 'redirect' });
    countRedirectOutcome(counters, { status: 304, result: 'not-modified' });
    countRedirectOutcome(counters, { status: 302, result: 'error', errorCode: 'MEGURI_ERR_REDIRECT_LIMIT' });
    assert.deepEqual(counters, { redirects: 2, redirectLimitReached: 1 });
  });

  it('take a server IP only from an answer for the host itself', () => {
    assert.equal(ipBelongsToHost('a.test', { url: 'http://a.test/robots.txt', serverIp: '10.0.0.1' }), true);
    assert.equal(ipBelongsToHost('a.test', { url: 'http://a.test/robots.txt', finalUrl: 'http://b.test/robots.txt', serverIp: '10.0.0.2' }), false);
    assert.equal(ipBelongsToHost('a.test:8080', { url: 'http://a.test:8080/', finalUrl: 'http://a.test:8080/', serverIp: '10.0.0.1' }), true);
    assert.equal(ipBelongsToHost('a.test', { url: 'http://a.test/' }), false);
  });
});

function trapDriver(options: SchedulerOptionsInput): Promise<SchedulerDriver> {
  return openSchedulerDriver({ revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, ...options, politeness: { kFactor: 0, suspendEnabled: false, ...options.politeness } });
}

describe('scheduler on the test driver: page retries', () => {
  it('asks again for a new page the server could not answer, after its Retry-After, then gives up', async () => {
    const h = await trapDriver({ pageRetries: 2 });
    await h.send(seed('http://r.test/'));
    const first = await h.nextPage();
    await h.answer(first, { status: 429, result: 'client-error', retryAfterMs: 30_000, md5: undefined });
    // Not before the Retry-After: the host waits, then the same URL is asked for again.
    const second = await h.advanceToPage(1000);
    assert.equal(second.url, first.url);
    assert.ok(h.clock.now() - first.issuedAt >= 30_000, `asked again after ${h.clock.now() - first.issuedAt} ms`);
    await h.answer(second, { status: 503, result: 'server-error', md5: undefined });
    const third = await h.advanceToPage(1000);
    assert.equal(third.url, first.url);
    await h.answer(third, { status: 503, result: 'server-error', md5: undefined });
    // Two retries spent: the page is an error now, and it was counted once, not three times.
    assert.equal(h.progress.totals().queued, 0);
    assert.equal(h.progress.totals().errors, 1);
    assert.equal(h.progress.totals().pageRetries, 2);
    assert.equal(h.progress.totals().pagesFetched, 1);
    assert.equal(h.progress.totals().duplicateFetches, 0);
    await h.stop();
  });
});

describe('scheduler building blocks', () => {
  it('the ready heap returns hosts by time', () => {
    const heap = new ReadyHeap();
    [5, 1, 9, 3, 7].forEach((t) => heap.push(t, `h${t}`));
    const out: number[] = [];
    for (let e = heap.pop(); e; e = heap.pop()) out.push(e.time);
    assert.deepEqual(out, [1, 3, 5, 7, 9]);
  });

  it('per-URL state is stored compactly and read back exactly', () => {
    const md5 = '0123456789abcdef0123456789abcdef';
    assert.equal(packMd5(md5).length, 22);
    assert.equal(md5Of({ md5: packMd5(md5) }), md5);
    assert.equal(md5Of({ md5: md5 }), md5, 'hex from older stores still reads');
    const r = { a: 5_184_000, s: 4_320_000, m: 3, c: 86_400, l: 1_764_000_000, i: 172_800 };
    assert.equal(packRevisit(r).length, 32);
    assert.deepEqual(revisitOf({ estimator: packRevisit(r) }), r);
    assert.deepEqual(revisitOf({ estimator: r }), r, 'the object form from older stores still reads');
    assert.deepEqual(revisitOf({ estimator: packRevisit({ ...r, a: r.a + 0.4, l: r.l + 0.6 }) }), { ...r, l: r.l + 1 }, 'whole seconds');
    assert.equal(revisitOf({}), undefined);
    assert.equal(roundScore(2.659976811846718), 2.659977);
  });

  it('out-links are stored relative to the page origin and read back whole; BLC tie-breaks stay below one link', () => {
    const links = ['http://a.test/x', 'http://a.test/y?q=1', 'https://a.test/z', 'http://b.test/', 'http://a.test:8080/p'];
    const stored = encodeOutLinks(links, 'http://a.test/page');
    assert.equal(stored, '/x\n/y?q=1\nhttps://a.test/z\nhttp://b.test/\nhttp://a.test:8080/p');
    assert.deepEqual(decodeOutLinks(stored, 'http://a.test/page'), links);
    const shallow = blcTieBreak('http://a.test/x.html');
    const deep = blcTieBreak('http://a.test/a/b/x.html');
    const longer = blcTieBreak('http://a.test/xxxxxxx.html');
    assert.ok(shallow > deep && shallow > longer && longer > deep);
    assert.ok(shallow < 1 && deep >= 0);
  });

  it('revisit index keys sort by due time and carry their URL', () => {
    const url = 'http://a.test/x?y=1';
    assert.equal(revisitKeyUrl(revisitKey(1_764_000_000_000, url)), url);
    assert.ok(revisitKey(99, 'http://z.test/') < revisitKey(100, 'http://a.test/'));
  });

  it('queue keys sort by host, then higher score, then discovery order', () => {
    const keys = [queueKey('a', 1, 2), queueKey('a', 5, 3), queueKey('a', 1, 1), queueKey('b', 100, 0)];
    assert.deepEqual([...keys].sort(), [queueKey('a', 5, 3), queueKey('a', 1, 1), queueKey('a', 1, 2), queueKey('b', 100, 0)]);
  });
});
