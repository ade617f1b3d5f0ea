/**
 * Redirects reach the scheduler as discovered links (services/scheduler/redirects.ts), on the
 * TestDriver: a target is queued first on its own host, fetched only once robots.txt allows it and
 * with the chain so far, never twice, and not past the hop limit; a redirected robots.txt does not
 * give its host the target's IP. And the IP state those rely on: learnt first, one cap per IP.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import { hostKey } from '../../services/scheduler/service.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import type { DiscoveredLink, FrontierRecord, OutcomeLink, RedirectHop } from '../../schemas/index.ts';
import { countRedirectOutcome, ipBelongsToHost, pastHopLimit, queueScore, REDIRECT_QUEUE_BOOST } from '../../services/scheduler/redirects.ts';
import { queueKey } from '../../services/scheduler/state.ts';

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
