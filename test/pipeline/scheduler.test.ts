/**
 * The scheduler on its own, driven through its topics with a manual clock: robots.txt first, the
 * closed loop per host, the interval, disallowed URLs never emitted, depth limit, and lost requests
 * re-issued a bounded number of times.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { StreamService, ManualClock, EmbeddedTransport } from '../../services/runtime/index.ts';
import type { Transport } from '../../services/runtime/index.ts';
import { schedulerService, hostKey, CrawlProgress } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION, frontierRecord } from '../../schemas/index.ts';
import type { FrontierRecord, LinksRecord, OutcomeLink } from '../../schemas/index.ts';
import { ReadyHeap } from '../../services/scheduler/ready-heap.ts';
import { blcTieBreak, decodeOutLinks, encodeOutLinks, md5Of, packMd5, packRevisit, queueKey, revisitKey, revisitKeyUrl, revisitOf, roundScore } from '../../services/scheduler/state.ts';
import { hostRows } from '../../services/cli/stats.ts';
import { tempDir, removeDir, readAll, waitFor } from '../support/transports.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('scheduler', { timeout: 60_000 }, () => {
  let dir: string;
  let transport: Transport;
  let clock: ManualClock;
  let service: StreamService<LinksRecord>;
  let progress: CrawlProgress;
  let seen = 0;

  async function start(options: Parameters<typeof schedulerService>[0]): Promise<void> {
    progress = new CrawlProgress();
    // k × download time off: these tests check the fixed interval with a clock that only moves when told.
    service = new StreamService(schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, politeness: { kFactor: 0 }, ...options }, { progress }), { transport, catalog: crawlCatalog, dataDir: dir, partitions: 1, clock });
    await transport.ensureTopics(service.topicDefinitions(1));
    await service.start();
    await service.ready();
  }

  async function send(records: LinksRecord[]): Promise<void> {
    await transport.send(records.map((r) => ({ topic: 'links', key: hostKey(r.url), value: Buffer.from(JSON.stringify(r)) })));
  }

  /** Frontier records emitted since the last call. */
  async function nextRequests(count: number): Promise<FrontierRecord[]> {
    let all: FrontierRecord[] = [];
    await waitFor(`${count} new frontier records`, async () => {
      all = (await readAll(transport, 'frontier')).map((r) => frontierRecord.parse(JSON.parse(r.value!)));
      return all.length >= seen + count;
    }, 10_000, 10);
    const fresh = all.slice(seen);
    seen = all.length;
    return fresh;
  }

  async function assertNoRequest(ms = 150): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    const all = await readAll(transport, 'frontier');
    assert.equal(all.length, seen, 'no further request');
  }

  function outcome(req: FrontierRecord, extra: Partial<OutcomeLink> = {}): OutcomeLink {
    return {
      v: SCHEMA_VERSION,
      type: 'outcome',
      requestId: req.requestId,
      url: req.url,
      reason: req.reason,
      status: 200,
      result: 'ok',
      outDegree: 0,
      fetch: { totalMs: 5, bytes: 100_000 },
      fetchedAt: clock.now(),
      ...extra,
    };
  }

  beforeEach(async () => {
    dir = tempDir();
    clock = new ManualClock(T0);
    // The log on the same clock: records stamped in simulated time never meet wall-clock retention.
    transport = await EmbeddedTransport.open({ dir, clock });
    seen = 0;
  });
  afterEach(async () => {
    await service.stop();
    await transport.close();
    removeDir(dir);
  });

  it('fetches robots.txt first, keeps one request in flight per host, waits the interval, skips disallowed URLs', async () => {
    await start({ minIntervalMs: 1000 });
    await send([{ v: 1, type: 'seed', url: 'http://a.test/', addedAt: T0 }]);
    const [robots] = await nextRequests(1);
    assert.equal(robots!.url, 'http://a.test/robots.txt');
    assert.equal(robots!.reason, 'robots');
    await send([outcome(robots!, { robots: { status: 200, body: 'User-agent: *\nDisallow: /private\n' } })]);
    await assertNoRequest();
    clock.advance(1000);
    const [home] = await nextRequests(1);
    assert.equal(home!.url, 'http://a.test/');
    const link = (url: string) => ({ v: 1, type: 'link', url, source: 'http://a.test/', depth: 1, cgiHops: 0, contribution: 0.5, sameSite: true, foundAt: T0 }) as const;
    await send([link('http://a.test/private/x'), link('http://a.test/b'), link('http://a.test/c')]);
    await assertNoRequest();
    await send([outcome(home!, { serverIp: '127.0.0.9' })]);
    await assertNoRequest();
    clock.advance(999);
    await assertNoRequest();
    // Due now; the dispatcher runs every 10 ms of clock time.
    clock.advance(11);
    const [second] = await nextRequests(1);
    assert.ok(['http://a.test/b', 'http://a.test/c'].includes(second!.url), 'the disallowed URL is skipped');
    assert.equal(second!.ip, '127.0.0.9');
    const keys = (await readAll(transport, 'frontier')).map((r) => r.key);
    assert.deepEqual(keys, ['a.test', 'a.test', '127.0.0.9'], 'keyed by host until the IP is known, then by IP');
    assert.equal(second!.depth, 1);
    await waitFor('stats', () => progress.totals().robotsDisallowedSkipped === 1, 5000, 10);
  });

  it('re-issues a request whose outcome never comes, then gives the URL up', async () => {
    await start({ minIntervalMs: 0, requestTimeoutMs: 5000, maxAttempts: 2 });
    await send([{ v: 1, type: 'seed', url: 'http://b.test/x', addedAt: T0 }]);
    const [robots] = await nextRequests(1);
    await send([outcome(robots!, { status: 404, result: 'client-error', robots: { status: 404 } })]);
    const [first] = await nextRequests(1);
    assert.equal(first!.attempt, 1);
    clock.advance(5001);
    const [retry] = await nextRequests(1);
    assert.equal(retry!.url, 'http://b.test/x');
    assert.equal(retry!.attempt, 2);
    assert.notEqual(retry!.requestId, first!.requestId);
    // The late answer to the first attempt is ignored: the host stays busy with the retry.
    await send([outcome(first!)]);
    clock.advance(5001);
    await waitFor('URL given up', () => progress.totals().lost === 1, 5000, 10);
    await assertNoRequest();
    assert.equal(progress.totals().inflight, 0);
  });

  it('does not follow links beyond the depth limit', async () => {
    await start({ minIntervalMs: 0, maxDepth: 1 });
    await send([{ v: 1, type: 'seed', url: 'http://c.test/', addedAt: T0 }]);
    const [robots] = await nextRequests(1);
    await send([outcome(robots!, { status: 404, result: 'client-error', robots: { status: 404 } })]);
    await nextRequests(1);
    await send([{ v: 1, type: 'link', url: 'http://c.test/deep', source: 'http://c.test/x', depth: 2, cgiHops: 0, contribution: 1, sameSite: true, foundAt: T0 }]);
    await waitFor('depth skip counted', () => progress.totals().depthSkipped === 1, 5000, 10);
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
    assert.equal(md5Of({ m: packMd5(md5) }), md5);
    assert.equal(md5Of({ m: md5 }), md5, 'hex from older stores still reads');
    const r = { a: 5_184_000, s: 4_320_000, m: 3, c: 86_400, l: 1_764_000_000, i: 172_800 };
    assert.equal(packRevisit(r).length, 32);
    assert.deepEqual(revisitOf({ r: packRevisit(r) }), r);
    assert.deepEqual(revisitOf({ r }), r, 'the object form from older stores still reads');
    assert.deepEqual(revisitOf({ r: packRevisit({ ...r, a: r.a + 0.4, l: r.l + 0.6 }) }), { ...r, l: r.l + 1 }, 'whole seconds');
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

describe('scheduler revisits', { timeout: 60_000 }, () => {
  it('revisits known pages, uses validators, and reports new, changed (not boilerplate-only) and gone pages', async () => {
    const h = await harness({});
    const revisit = (): Promise<FrontierRecord> => h.advanceToPage(86_400_000);
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://r.test/a', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      const first = await h.nextPage();
      assert.equal(first.reason, 'new');
      const page = { topic: 'pages', partition: 0, offset: '1' };
      await h.answer(first, { md5: 'a'.repeat(32), fingerprint: '0000000000000000', title: 'A', validators: { etag: '"v1"' }, page });
      await waitFor('a "new" change event', async () => (await h.events('changes')).length === 1, 5000, 10);
      assert.equal((await h.events('changes'))[0]!.kind, 'new');
      assert.deepEqual((await h.events('changes'))[0]!.page, page);

      const second = await revisit();
      assert.equal(second.reason, 'revisit');
      assert.deepEqual(second.validators, { etag: '"v1"' }, 'conditional GET with the known ETag');
      await h.answer(second, { status: 304, result: 'not-modified', md5: undefined });
      await waitFor('a revisit event', async () => (await h.events('revisits')).length === 1, 5000, 10);
      assert.equal((await h.events('revisits'))[0]!.result, 'unchanged');

      const third = await revisit();
      // Only boilerplate changed: a new MD5, a fingerprint 2 bits away.
      await h.answer(third, { md5: 'b'.repeat(32), fingerprint: '0000000000000003', title: 'A' });
      await waitFor('second revisit event', async () => (await h.events('revisits')).length === 2, 5000, 10);
      assert.equal((await h.events('revisits'))[1]!.result, 'unchanged');
      assert.equal((await h.events('changes')).length, 1, 'no change event for a boilerplate-only change');

      const fourth = await revisit();
      await h.answer(fourth, { md5: 'c'.repeat(32), fingerprint: 'ffff0000ffff0000', title: 'A2', page: { topic: 'pages', partition: 0, offset: '9' } });
      await waitFor('a "changed" event', async () => (await h.events('changes')).length === 2, 5000, 10);
      const changed = (await h.events('changes'))[1]!;
      assert.equal(changed.kind, 'changed');
      assert.equal(changed.md5, 'c'.repeat(32));
      const rev = (await h.events('revisits'))[2]!;
      assert.equal(rev.result, 'changed');
      assert.equal(rev.previousHash, 'b'.repeat(32));
      assert.ok((rev.nextVisitAt as number) > h.clock.now());

      const fifth = await revisit();
      await h.answer(fifth, { status: 404, result: 'gone', md5: undefined });
      await waitFor('a "gone" event', async () => (await h.events('changes')).length === 3, 5000, 10);
      assert.equal((await h.events('changes'))[2]!.kind, 'gone');
      assert.equal(h.progress.totals().revisits, 4);
    } finally {
      await h.stop();
    }
    try {
      // The gone page left the host's load index; before that it counted 1/T for its interval.
      const rows = await hostRows(h.dir, '', h.clock.now());
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.host, 'r.test');
      assert.equal(rows[0]!.L, 0);
      assert.equal(rows[0]!.fetched, 5);
    } finally {
      removeDir(h.dir);
    }
  });
});

/** A scheduler on the embedded log with a manual clock, and helpers to play the fetcher. */
async function harness(options: Parameters<typeof schedulerService>[0]) {
  const dir = tempDir();
  const clock = new ManualClock(T0);
  const transport = await EmbeddedTransport.open({ dir, clock });
  const progress = new CrawlProgress();
  const service = new StreamService(
    // The harness answers every request, but its clock jumps by hours or days: a request the scheduler
    // emits just as the clock jumps would count as lost and be re-issued, and its answer then ignored
    // as stale. Requests are not lost here unless a test says so.
    schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, ...options, politeness: { kFactor: 0, suspendEnabled: false } }, { progress }),
    { transport, catalog: crawlCatalog, dataDir: dir, partitions: 1, clock },
  );
  await transport.ensureTopics(service.topicDefinitions(1));
  await service.start();
  await service.ready();
  let seen = 0;
  const next = async (): Promise<FrontierRecord> => {
    let all: FrontierRecord[] = [];
    await waitFor('a frontier record', async () => {
      all = (await readAll(transport, 'frontier')).map((r) => frontierRecord.parse(JSON.parse(r.value!)));
      return all.length > seen;
    }, 10_000, 10);
    return all[seen++]!;
  };
  const send = (v: LinksRecord): Promise<unknown> => transport.send([{ topic: 'links', key: hostKey(v.url), value: Buffer.from(JSON.stringify(v)) }]);
  const answer = (req: FrontierRecord, extra: Partial<OutcomeLink> = {}): Promise<unknown> =>
    send(
      req.reason === 'robots'
        ? { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 404, result: 'client-error', outDegree: 0, fetch: { totalMs: 5, bytes: 0 }, fetchedAt: clock.now(), robots: { status: 404 } }
        : { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 50_000 }, fetchedAt: clock.now(), md5: 'a'.repeat(32), ...extra },
    );
  /** The next request that is not robots.txt (robots.txt, due every 6 h, is answered 404 on the way). */
  const nextPage = async (): Promise<FrontierRecord> => {
    for (;;) {
      const req = await next();
      if (req.reason !== 'robots') return req;
      await answer(req);
    }
  };
  const events = async (topic: string): Promise<Record<string, unknown>[]> => (await readAll(transport, topic)).map((r) => JSON.parse(r.value!) as Record<string, unknown>);
  /** Moves the clock in steps until the next page request (the scheduler applies outcomes asynchronously). */
  const advanceToPage = async (stepMs: number): Promise<FrontierRecord> => {
    for (let i = 0; i < 400; i++) {
      if ((await readAll(transport, 'frontier')).length > seen) {
        const req = await next();
        if (req.reason !== 'robots') return req;
        // robots.txt (due again every 6 h) is answered on the way, and the clock stays put until the
        // scheduler has taken the answer (and dispatched what is due), so no request goes stale.
        const before = progress.totals().robotsFetched;
        await answer(req);
        await waitFor('robots.txt answer applied', () => progress.totals().robotsFetched > before, 5000, 5);
        continue;
      }
      clock.advance(stepMs);
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('no request');
  };
  const stop = async (): Promise<void> => {
    await service.stop();
    await transport.close();
  };
  const metrics = (): Promise<string> => service.metrics.registry.metrics();
  return { dir, clock, progress, next, nextPage, advanceToPage, send, answer, events, stop, metrics };
}

describe('scheduler revisit scheduling', { timeout: 60_000 }, () => {

  it('due known URLs share the host with new URLs half and half, in γ order', async () => {
    const h = await harness({});
    try {
      // Four known pages whose Last-Modified ages (1, 4, 9, 16 days) give different revisit intervals.
      const ages = [16, 1, 9, 4];
      for (let i = 0; i < ages.length; i++) await h.send({ v: 1, type: 'seed', url: `http://s.test/k${i}`, addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      for (let i = 0; i < ages.length; i++) {
        const req = await h.nextPage();
        const age = ages[Number(req.url.slice(-1))]!;
        await h.answer(req, { validators: { lastModified: new Date(T0 - age * 86_400_000).toUTCString() } });
      }
      // Eight new URLs; the first goes out at once and is held in flight while the clock jumps 31 days.
      for (let i = 0; i < 8; i++) await h.send({ v: 1, type: 'link', url: `http://s.test/n${i}`, source: 'http://s.test/k0', depth: 1, cgiHops: 0, contribution: 0.1, sameSite: true, foundAt: T0 });
      const held = await h.nextPage();
      assert.equal(held.reason, 'new');
      for (let d = 0; d < 31; d++) h.clock.advance(86_400_000);
      h.clock.advance(1000);
      await waitFor('the sweep queues the due pages', async () => {
        h.clock.advance(1000);
        await new Promise((r) => setTimeout(r, 20));
        return (await h.events('revisits')).length === 0 && h.progress.totals().queued >= 11;
      }, 10_000, 5);
      await h.answer(held);
      const order: FrontierRecord[] = [];
      for (let i = 0; i < 8; i++) {
        const req = await h.nextPage();
        order.push(req);
        await h.answer(req);
      }
      assert.deepEqual(order.map((r) => r.reason), ['new', 'revisit', 'new', 'revisit', 'new', 'revisit', 'new', 'revisit'], 'known and new URLs alternate');
      // γ: with equal importance, the page most likely to have changed (shortest interval) first.
      assert.deepEqual(order.filter((r) => r.reason === 'revisit').map((r) => r.url), ['http://s.test/k1', 'http://s.test/k3', 'http://s.test/k2', 'http://s.test/k0']);
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  });

  it('due revisits beyond the short-term queue capacity go back to the long-term queue for 3 days', async () => {
    // Interval 60 s and a 2-minute window with half for known URLs: room for 1 due revisit.
    const h = await harness({ minIntervalMs: 60_000, shortTermWindowMs: 120_000, requestTimeoutMs: 86_400_000, revisitPolicy: { minIntervalS: 60, secondVisitMinS: 600, secondVisitMaxS: 600 } });
    try {
      for (const p of ['a', 'b', 'c', 'd']) await h.send({ v: 1, type: 'seed', url: `http://q.test/${p}`, addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      for (let i = 0; i < 4; i++) await h.answer(await h.advanceToPage(5000));
      await waitFor('four pages fetched', async () => (await h.events('changes')).length === 4, 5000, 10);
      // Each page is due 10 minutes after its fetch. The first due one goes out at once (and is not
      // answered here), the next fills the queue's one known slot, the last two are deferred.
      await waitFor('one revisit queued, two deferred', async () => {
        h.clock.advance(10_000);
        await new Promise((r) => setTimeout(r, 10));
        return h.progress.totals().revisitsDeferred === 2;
      }, 10_000, 5);
      const totals = h.progress.totals();
      assert.equal(totals.queued, 1);
      assert.equal(totals.inflight, 1);
      const revisits = (await h.events('frontier')).filter((r) => r.reason === 'revisit');
      assert.deepEqual(revisits.map((r) => r.url), ['http://q.test/a']);
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  });

  it('a known page whose host stays unreachable is retried daily and reported gone after 3 failed revisits', async () => {
    const h = await harness({ revisitPolicy: { secondVisitMinS: 3600, secondVisitMaxS: 3600 } });
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://dead.test/a', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      await h.answer(await h.nextPage());
      await waitFor('the first fetch applied', async () => (await h.events('changes')).length === 1, 5000, 10);
      const results: string[] = [];
      for (let i = 0; i < 3; i++) {
        const revisit = await h.advanceToPage(600_000);
        assert.equal(revisit.reason, 'revisit');
        await h.answer(revisit, { status: 0, result: 'error', errorCode: 'MEGURI_ERR_CONNECT', md5: undefined });
        await waitFor('revisit event', async () => (await h.events('revisits')).length === i + 1, 5000, 10);
        results.push(String((await h.events('revisits'))[i]!.result));
      }
      assert.deepEqual(results, ['error', 'error', 'gone']);
      assert.deepEqual((await h.events('changes')).map((c) => c.kind), ['new', 'gone']);
      // Gone: no further revisit is planned.
      const revisits = await h.events('revisits');
      assert.equal(revisits[2]!.nextVisitAt, revisits[2]!.time);
      assert.ok((revisits[1]!.nextVisitAt as number) - (revisits[1]!.time as number) === 86_400_000, 'a failed revisit is retried in a day');
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  });

  it('a known page whose host name stops resolving is reported gone after 3 failed revisits', async () => {
    const h = await harness({ revisitPolicy: { secondVisitMinS: 3600, secondVisitMaxS: 3600 } });
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://gone.test/a', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      await h.answer(await h.nextPage());
      // The outcome must be applied before the clock jumps, or the scheduler would still be waiting for it.
      await waitFor('the first fetch applied', async () => (await h.events('changes')).length === 1, 5000, 10);
      // From now on the name does not resolve, for robots.txt (re-checked every 6 h) and pages alike:
      // a failed robots.txt drops the queue, and a known page waiting in it counts a failed revisit.
      const answered = new Set<string>();
      let robotsFailures = 0;
      for (let i = 0; i < 600 && (await h.events('revisits')).length < 3; i++) {
        h.clock.advance(600_000);
        await new Promise((r) => setTimeout(r, 10));
        for (const req of (await h.events('frontier')).slice(2) as unknown as FrontierRecord[]) {
          if (answered.has(req.requestId)) continue;
          answered.add(req.requestId);
          if (req.reason === 'robots') robotsFailures++;
          await h.send({ v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 0, result: 'error', outDegree: 0, fetch: { totalMs: 1, bytes: 0 }, fetchedAt: h.clock.now(), errorCode: 'MEGURI_ERR_DNS' });
          await new Promise((r) => setTimeout(r, 30));
        }
      }
      assert.ok(robotsFailures >= 1, 'robots.txt failed too');
      assert.deepEqual((await h.events('revisits')).map((r) => r.result), ['error', 'error', 'gone']);
      assert.deepEqual((await h.events('changes')).map((c) => c.kind), ['new', 'gone']);
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  });

  it('an overloaded host is flagged and its revisit intervals stretched until 1/L fits the politeness interval', async () => {
    // Politeness allows one request per 60 s; every page asks for a revisit every 60 s.
    const h = await harness({ minIntervalMs: 60_000, revisitPolicy: { minIntervalS: 60, secondVisitMinS: 60, secondVisitMaxS: 60 } });
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://o.test/a', addedAt: T0 });
      await h.send({ v: 1, type: 'seed', url: 'http://o.test/b', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      const a = await h.advanceToPage(5000);
      await h.answer(a);
      await waitFor('first outcome applied', async () => (await h.events('changes')).length === 1, 5000, 10);
      const b = await h.advanceToPage(5000);
      await h.answer(b);
      await waitFor('second outcome applied', async () => (await h.events('changes')).length === 2, 5000, 10);
      await waitFor('overload counted', () => h.progress.totals().overloadedRevisits === 1, 5000, 10);
      // The same figures on /metrics.
      const text = await h.metrics();
      const gauge = (name: string): number => {
        const m = new RegExp(`^${name}\\{[^}]*host="o\\.test"[^}]*\\} (\\S+)$`, 'm').exec(text);
        assert.ok(m, `${name} for o.test in:\n${text.split('\n').filter((l) => l.includes('meguri_scheduler')).join('\n')}`);
        return Number(m[1]);
      };
      assert.equal(gauge('meguri_scheduler_host_overloaded'), 1);
      assert.ok(Math.abs(gauge('meguri_scheduler_host_load_index') - 2 / 60) < 1e-9);
      assert.ok(Math.abs(gauge('meguri_scheduler_host_access_interval_seconds') - 30) < 0.01);
      assert.ok(Math.abs(gauge('meguri_scheduler_host_interval_stretch') - 2) < 1e-9);
      assert.match(text, /^meguri_scheduler_overloaded_hosts\{[^}]*partition="0"[^}]*\} 1$/m);
      assert.match(text, /^meguri_scheduler_revisit_load\{[^}]*partition="0"[^}]*\} 0\.0333/m);
      // The crawl's counters, per owned partition.
      const crawl = (name: string): number => {
        const m = new RegExp(`^${name}\\{[^}]*partition="0"[^}]*\\} (\\S+)$`, 'm').exec(text);
        assert.ok(m, `${name} for partition 0`);
        return Number(m[1]);
      };
      const totals = h.progress.totals();
      assert.equal(crawl('meguri_scheduler_pages_fetched'), totals.pagesFetched);
      assert.equal(crawl('meguri_scheduler_revisits'), totals.revisits);
      assert.equal(crawl('meguri_scheduler_pages_fetched'), 2);
      assert.equal(crawl('meguri_scheduler_urls_known'), totals.urlsKnown);
      assert.equal(crawl('meguri_scheduler_hosts'), 1);
      assert.equal(crawl('meguri_scheduler_robots_fetched'), totals.robotsFetched);
    } finally {
      await h.stop();
    }
    try {
      const rows = await hostRows(h.dir, '', T0 + 120_000);
      const row = rows.find((r) => r.host === 'o.test')!;
      assert.ok(Math.abs(row.L - 2 / 60) < 1e-9, 'L counts the intervals the estimator asked for');
      assert.equal(row.overloaded, true);
      assert.equal(row.remedy, 'stretch');
      assert.ok(Math.abs(row.stretch - 2) < 1e-9, 'intervals × 2: 1/L becomes 60 s');
    } finally {
      removeDir(h.dir);
    }
  });
});

describe('scheduler ordering strategies', { timeout: 60_000 }, () => {
  const link = (url: string, source: string, contribution: number): LinksRecord => ({ v: 1, type: 'link', url, source, depth: 1, cgiHops: 0, contribution, sameSite: true, foundAt: T0 });

  /** Fetches the home page of o.test, then finds three links on it (plus `extra` links elsewhere) and returns the fetch order of the three. */
  async function orderOf(ordering: 'bf' | 'blc' | 'ipr-dl1', extra: LinksRecord[]): Promise<string[]> {
    const h = await harness({ ordering });
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://o.test/', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      const home = await h.nextPage();
      // Held in flight while the links arrive, so the queue is complete before the next dispatch.
      for (const l of [link('http://o.test/a/b/c.html', 'http://o.test/', 0.1), link('http://o.test/x.html', 'http://o.test/', 0.2), link('http://o.test/yy.html', 'http://o.test/', 0.3), ...extra]) await h.send(l);
      await waitFor('links queued', () => h.progress.totals().queued === 3, 5000, 10);
      await h.answer(home);
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        const req = await h.nextPage();
        order.push(new URL(req.url).pathname);
        await h.answer(req);
      }
      return order;
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  }

  it('bf takes discovery order, blc back-link counts with fewer slashes then shorter URLs first, ipr-dl1 the summed contributions', async () => {
    assert.deepEqual(await orderOf('bf', []), ['/a/b/c.html', '/x.html', '/yy.html']);
    assert.deepEqual(await orderOf('blc', []), ['/x.html', '/yy.html', '/a/b/c.html']);
    // A second fetched page linking to /a/b/c.html outweighs any tie-break.
    assert.deepEqual(await orderOf('blc', [link('http://o.test/a/b/c.html', 'http://o.test/other.html', 0.01)]), ['/a/b/c.html', '/x.html', '/yy.html']);
    assert.deepEqual(await orderOf('ipr-dl1', []), ['/yy.html', '/x.html', '/a/b/c.html']);
    assert.deepEqual(await orderOf('ipr-dl1', [link('http://o.test/a/b/c.html', 'http://o.test/other.html', 0.25)]), ['/a/b/c.html', '/yy.html', '/x.html']);
  });

  it('ipr-vr passes score on from fetched pages along their stored out-links, through the links topic, while the ratio holds', async () => {
    const h = await harness({ ordering: 'ipr-vr' });
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://v.test/a', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      const a = await h.nextPage();
      // a links to b and c; b (fetched next) links to d.
      await h.send(link('http://v.test/b', 'http://v.test/a', 1));
      await h.send(link('http://v.test/c', 'http://v.test/a', 1));
      await h.answer(a, { outDegree: 2, outLinks: ['http://v.test/b', 'http://v.test/c'] });
      const b = await h.nextPage();
      assert.equal(b.url, 'http://v.test/b');
      await h.send(link('http://v.test/d', 'http://v.test/b', 1));
      await h.answer(b, { outDegree: 1, outLinks: ['http://v.test/d'] });
      const c = await h.nextPage();
      assert.equal(c.url, 'http://v.test/c'); // held in flight from here on
      const passed = async (): Promise<{ url: string; source: string; contribution: number }[]> =>
        (await h.events('links')).filter((r) => r.propagated === true) as unknown as { url: string; source: string; contribution: number }[];
      // a (score 1 + 1 = 2) now receives 10 from a page found later: 10 ≥ 1.5 × 2, so it passes 10 on.
      await h.send(link('http://v.test/a', 'http://w.test/hub', 10));
      await waitFor('score passed on from a, then from b', async () => (await passed()).length === 3, 5000, 10);
      const records = await passed();
      assert.deepEqual(records.slice(0, 2).map((r) => [r.source, r.url, r.contribution]), [
        ['http://v.test/a', 'http://v.test/b', 5],
        ['http://v.test/a', 'http://v.test/c', 5],
      ]);
      // b (score 2) received 5 ≥ 1.5 × 2 and passes it to d; c is in flight and keeps nothing going.
      assert.deepEqual([records[2]!.source, records[2]!.url, records[2]!.contribution], ['http://v.test/b', 'http://v.test/d', 5]);
      // A small amount does not travel: 1 < 1.5 × (2 + 10).
      await h.send(link('http://v.test/a', 'http://w.test/other', 1));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await passed()).length, 3);
      assert.equal(h.progress.totals().scorePassedOn, 2);
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  });

  it('ipr-ar accumulates what a fetched page receives and passes it on once it reaches 29/30 of the score', async () => {
    const h = await harness({ ordering: 'ipr-ar' });
    try {
      await h.send({ v: 1, type: 'seed', url: 'http://r.test/a', addedAt: T0 });
      await h.answer(await h.next()); // robots.txt
      const a = await h.nextPage();
      await h.send(link('http://r.test/b', 'http://r.test/a', 1));
      await h.answer(a, { outDegree: 1, outLinks: ['http://r.test/b'] });
      const b = await h.nextPage(); // held in flight
      assert.equal(b.url, 'http://r.test/b');
      const passed = async (): Promise<{ url: string; contribution: number }[]> =>
        (await h.events('links')).filter((r) => r.propagated === true) as unknown as { url: string; contribution: number }[];
      // a's score 2 → 3 with 1 pending: 1 < 29/30 × 3, kept.
      await h.send(link('http://r.test/a', 'http://w.test/x', 1));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await passed()).length, 0);
      // 100 more: 101 pending ≥ 29/30 × 103, so all 101 go on to b.
      await h.send(link('http://r.test/a', 'http://w.test/y', 100));
      await waitFor('score passed on', async () => (await passed()).length === 1, 5000, 10);
      assert.deepEqual((await passed()).map((r) => [r.url, r.contribution]), [['http://r.test/b', 101]]);
    } finally {
      await h.stop();
      removeDir(h.dir);
    }
  });
});
