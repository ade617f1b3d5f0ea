/**
 * Redirects reach the scheduler as discovered links (services/scheduler/redirects.ts): a target is
 * queued first on its own host, fetched only once robots.txt allows it and with the chain so far,
 * never twice, and not past the hop limit; a redirected robots.txt does not give its host the
 * target's IP. And the IP state those rely on: learnt first, one cap per IP (ip-slots.ts).
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { StreamService, ManualClock, EmbeddedTransport } from '../../services/runtime/index.ts';
import type { Transport } from '../../services/runtime/index.ts';
import { schedulerService, hostKey, CrawlProgress } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION, frontierRecord } from '../../schemas/index.ts';
import type { DiscoveredLink, FrontierRecord, LinksRecord, OutcomeLink, RedirectHop } from '../../schemas/index.ts';
import { countRedirectOutcome, ipBelongsToHost, pastHopLimit, queueScore, REDIRECT_QUEUE_BOOST } from '../../services/scheduler/redirects.ts';
import { queueKey } from '../../services/scheduler/state.ts';
import { tempDir, removeDir, readAll, waitFor } from '../support/transports.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('scheduler: redirects as discoveries', { timeout: 60_000 }, () => {
  let dir: string;
  let transport: Transport;
  let clock: ManualClock;
  let service: StreamService<LinksRecord>;
  let progress: CrawlProgress;
  let seen = 0;

  async function start(extra: Parameters<typeof schedulerService>[0] = {}): Promise<void> {
    progress = new CrawlProgress();
    service = new StreamService(schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, minIntervalMs: 1000, politeness: { kFactor: 0 }, ...extra }, { progress }), { transport, catalog: crawlCatalog, dataDir: dir, partitions: 1, clock });
    await transport.ensureTopics(service.topicDefinitions(1));
    await service.start();
    await service.ready();
  }

  async function send(records: LinksRecord[]): Promise<void> {
    await transport.send(records.map((r) => ({ topic: 'links', key: hostKey(r.url), value: Buffer.from(JSON.stringify(r)) })));
  }

  async function nextRequests(count: number): Promise<FrontierRecord[]> {
    let all: FrontierRecord[] = [];
    await waitFor(`${count} new frontier records`, async () => {
      all = (await readAll(transport, 'frontier')).map((r) => frontierRecord.parse(JSON.parse(r.value!)));
      return all.length >= seen + count;
    }, 10_000, 10);
    const fresh = all.slice(seen, seen + count);
    seen += count;
    return fresh;
  }

  async function assertNoRequest(ms = 150): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    const all = await readAll(transport, 'frontier');
    assert.equal(all.length, seen, 'no further request');
  }

  function outcome(req: FrontierRecord, extra: Partial<OutcomeLink> = {}): OutcomeLink {
    return { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 10_000 }, fetchedAt: clock.now(), ...extra };
  }

  function link(url: string, source: string, extra: Partial<DiscoveredLink> = {}): DiscoveredLink {
    return { v: 1, type: 'link', url, source, depth: 1, cgiHops: 0, contribution: 0.5, sameSite: true, foundAt: clock.now(), ...extra };
  }

  function redirectOf(req: FrontierRecord, target: string, status = 301): { outcome: OutcomeLink; link: DiscoveredLink } {
    const chain: RedirectHop[] = [...(req.redirects ?? []), { url: req.url, status }];
    return {
      outcome: outcome(req, { status, result: 'redirect', location: target, outDegree: 1, outLinks: [target] }),
      link: link(target, req.url, { depth: req.depth, contribution: req.score + 1, sameSite: hostKey(target) === hostKey(req.url), redirect: chain }),
    };
  }

  /** robots.txt of `host` answered with `body`, then the host's next page request. */
  async function robotsThenPage(robotsReq: FrontierRecord, body: string): Promise<FrontierRecord> {
    assert.equal(robotsReq.reason, 'robots');
    await send([outcome(robotsReq, { robots: { status: 200, body } })]);
    await assertNoRequest();
    clock.advance(1000);
    const [page] = await nextRequests(1);
    return page!;
  }

  beforeEach(async () => {
    dir = tempDir();
    clock = new ManualClock(T0);
    transport = await EmbeddedTransport.open({ dir, clock });
    seen = 0;
  });
  afterEach(async () => {
    await service.stop();
    await transport.close();
    removeDir(dir);
  });

  it('queues a same-host target first, checks it against robots.txt, and sends the chain with it', async () => {
    await start();
    await send([{ v: 1, type: 'seed', url: 'http://a.test/', addedAt: T0 }]);
    const home = await robotsThenPage((await nextRequests(1))[0]!, 'User-agent: *\nDisallow: /private\n');
    assert.equal(home.url, 'http://a.test/');
    // A link with a much higher score waits in the queue; the redirect target still goes first.
    await send([link('http://a.test/popular', 'http://x.test/', { contribution: 50 })]);
    const r1 = redirectOf(home, 'http://a.test/moved');
    await send([r1.link, r1.outcome]);
    await assertNoRequest();
    clock.advance(1000);
    const [moved] = await nextRequests(1);
    assert.equal(moved!.url, 'http://a.test/moved');
    assert.equal(moved!.reason, 'redirect');
    assert.equal(moved!.depth, 0, 'same depth as the source');
    assert.deepEqual(moved!.redirects, [{ url: 'http://a.test/', status: 301 }]);

    // The next hop points into a Disallowed path: never requested.
    const r2 = redirectOf(moved!, 'http://a.test/private/secret', 302);
    await send([r2.link, r2.outcome]);
    await assertNoRequest();
    clock.advance(1000);
    const [next] = await nextRequests(1);
    assert.equal(next!.url, 'http://a.test/popular');
    assert.equal(next!.reason, 'new');
    await waitFor('disallowed target skipped', () => progress.totals().robotsDisallowedSkipped === 1, 5000, 10);
    await send([outcome(next!)]);
    await assertNoRequest();
    clock.advance(1000);
    await assertNoRequest();
    const urls = (await readAll(transport, 'frontier')).map((r) => frontierRecord.parse(JSON.parse(r.value!)).url);
    assert.ok(!urls.includes('http://a.test/private/secret'));
  });

  it('sends a cross-host target to its host: robots.txt first; known targets and loops are not fetched again; the hop limit holds', async () => {
    await start();
    await send([{ v: 1, type: 'seed', url: 'http://a.test/', addedAt: T0 }]);
    const home = await robotsThenPage((await nextRequests(1))[0]!, 'User-agent: *\nAllow: /\n');
    const r1 = redirectOf(home, 'http://b.test/landing');
    await send([r1.link, r1.outcome]);
    const [bRobots] = await nextRequests(1);
    assert.equal(bRobots!.url, 'http://b.test/robots.txt', "the target host's robots.txt is fetched before the target");
    const landing = await robotsThenPage(bRobots!, 'User-agent: *\nAllow: /\n');
    assert.equal(landing.url, 'http://b.test/landing');
    assert.equal(landing.reason, 'redirect');

    // b.test/landing redirects back to a.test/ (a loop): a.test/ is known and not fetched again.
    const back = redirectOf(landing, 'http://a.test/');
    await send([back.link, back.outcome]);
    await assertNoRequest();
    clock.advance(5000);
    await assertNoRequest();

    // A chain past the hop limit ends in the fetcher (MEGURI_ERR_REDIRECT_LIMIT, no link): counted.
    await send([{ v: 1, type: 'seed', url: 'http://c.test/', addedAt: clock.now() }]);
    const cPage = await robotsThenPage((await nextRequests(1))[0]!, '');
    await send([outcome(cPage, { status: 302, result: 'error', errorCode: 'MEGURI_ERR_REDIRECT_LIMIT' })]);
    await waitFor('hop limit counted', () => (progress.totals().redirectLimitReached ?? 0) === 1, 5000, 10);
    assert.equal(progress.totals().redirectTargetsQueued, 1);
    assert.equal(progress.totals().redirects, 3, 'every 3xx of a page request is a hop');
  });

  it("a robots.txt redirected to another host does not give the origin host the target's IP", async () => {
    await start();
    await send([{ v: 1, type: 'seed', url: 'http://a.test/', addedAt: T0 }]);
    const [robots] = await nextRequests(1);
    await send([outcome(robots!, { finalUrl: 'http://cdn.test/robots.txt', serverIp: '10.0.0.2', robots: { status: 200, body: '' } })]);
    await assertNoRequest();
    clock.advance(1000);
    const [home] = await nextRequests(1);
    assert.equal(home!.ip, undefined);
    const keys = (await readAll(transport, 'frontier')).map((r) => r.key);
    assert.deepEqual(keys, ['a.test', 'a.test']);
    await send([outcome(home!, { serverIp: '10.0.0.1' })]);
    await send([link('http://a.test/next', 'http://a.test/')]);
    await assertNoRequest();
    clock.advance(1000);
    const [next] = await nextRequests(1);
    assert.equal(next!.ip, '10.0.0.1');
  });
});

describe('scheduler: one per-IP cap', { timeout: 60_000 }, () => {
  let dir: string;
  let transport: Transport;
  let clock: ManualClock;
  let service: StreamService<LinksRecord>;
  let seen = 0;

  beforeEach(async () => {
    dir = tempDir();
    clock = new ManualClock(T0);
    transport = await EmbeddedTransport.open({ dir, clock });
    seen = 0;
  });
  afterEach(async () => {
    await service.stop();
    await transport.close();
    removeDir(dir);
  });

  async function frontier(): Promise<FrontierRecord[]> {
    return (await readAll(transport, 'frontier')).map((r) => frontierRecord.parse(JSON.parse(r.value!)));
  }

  async function next(count: number): Promise<FrontierRecord[]> {
    let all: FrontierRecord[] = [];
    await waitFor(`${count} new frontier records`, async () => (all = await frontier()).length >= seen + count, 10_000, 10);
    const fresh = all.slice(seen, seen + count);
    seen += count;
    return fresh;
  }

  async function settle(): Promise<void> {
    await new Promise((r) => setTimeout(r, 200));
  }

  function answer(req: FrontierRecord, extra: Partial<OutcomeLink> = {}): LinksRecord {
    return { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 10_000 }, fetchedAt: clock.now(), ...extra };
  }

  async function send(records: LinksRecord[]): Promise<void> {
    await transport.send(records.map((r) => ({ topic: 'links', key: hostKey(r.url), value: Buffer.from(JSON.stringify(r)) })));
  }

  it('learns each host address first, then keeps at most maxPerIp requests in flight per IP across its hosts', async () => {
    service = new StreamService(
      schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, minIntervalMs: 0, learnAddressFirst: true, politeness: { kFactor: 0, maxPerIp: 2, ipBusyRetryMs: 60_000 } }),
      { transport, catalog: crawlCatalog, dataDir: dir, partitions: 1, clock },
    );
    await transport.ensureTopics(service.topicDefinitions(1));
    await service.start();
    await service.ready();
    const hosts = ['a', 'b', 'c', 'd'].map((h) => `http://${h}.test/`);
    await send(hosts.map((url) => ({ v: 1, type: 'seed', url, addedAt: T0 })));
    const asks = await next(4);
    assert.deepEqual(asks.map((r) => r.reason), ['address', 'address', 'address', 'address'], 'nothing is asked of a server before its address is known');
    // All four hosts live on one address.
    await send(asks.map((r) => answer(r, { status: 0, result: 'address', serverIp: '10.0.0.7', fetch: { totalMs: 0, bytes: 0 } })));
    const first = await next(2);
    assert.ok(first.every((r) => r.reason === 'robots' && r.ip === '10.0.0.7'));
    await settle();
    assert.equal((await frontier()).length, seen, 'the other two hosts wait for a slot of 10.0.0.7');
    // One answer frees one slot: exactly one more request, at once (no ipBusyRetryMs wait).
    await send([answer(first[0]!, { robots: { status: 404 }, status: 404, result: 'client-error', serverIp: '10.0.0.7' })]);
    const [third] = await next(1);
    assert.equal(third!.ip, '10.0.0.7');
    await settle();
    assert.equal((await frontier()).length, seen, 'still two in flight');
    const keys = (await readAll(transport, 'frontier')).map((r) => r.key);
    assert.ok(keys.slice(4).every((k) => k === '10.0.0.7'), 'every request to the server is keyed by its IP');
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
