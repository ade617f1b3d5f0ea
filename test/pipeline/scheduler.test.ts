/**
 * The scheduler end to end on both real transports (the embedded log and the Kafka broker the test
 * runner starts), driven through its topics with a manual clock: a few representative behaviours
 * that prove the wiring — topics, keys, the exactly-once commit, punctuations, state restored from
 * the changelog. The scheduler's logic in detail is tested on the TestDriver in
 * test/unit/scheduler-*.test.ts, without a transport and without sleeps.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { StreamService, ManualClock } from '../../services/runtime/index.ts';
import type { Transport } from '../../services/runtime/index.ts';
import { schedulerService, CrawlProgress } from '../../services/scheduler/service.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION, frontierRecord } from '../../schemas/index.ts';
import type { FrontierRecord, LinksRecord, OutcomeLink } from '../../schemas/index.ts';
import { linksKey } from '../support/scheduler-driver.ts';
import { transportKinds, openTransport, tempDir, removeDir, readAll, waitFor, uniquePrefix } from '../support/transports.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

for (const kind of transportKinds) {
  describe(`scheduler end to end on ${kind}`, { timeout: 180_000 }, () => {
    let dirs: string[];
    let transport: Transport;
    let clock: ManualClock;
    let prefix: string;
    let service: StreamService<LinksRecord> | undefined;
    let progress: CrawlProgress;
    let seen = 0;

    // Record timestamps follow the manual clock; starting at the wall time keeps them inside the
    // broker's retention.
    beforeEach(async () => {
      dirs = [tempDir()];
      clock = new ManualClock(Date.now());
      transport = await openTransport(kind, dirs[0]!, clock);
      prefix = uniquePrefix();
      seen = 0;
    });
    afterEach(async () => {
      await service?.stop();
      service = undefined;
      await transport.close();
      for (const d of dirs) removeDir(d);
    });

    /** Starts a scheduler; each start gets a fresh state directory, so its stores come from the changelog. */
    async function start(options: SchedulerOptionsInput): Promise<void> {
      progress = new CrawlProgress();
      const dataDir = tempDir();
      dirs.push(dataDir);
      // k × download time off: these tests check the fixed interval with a clock that only moves when told.
      service = new StreamService(schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, politeness: { kFactor: 0 }, ...options }, { progress }), { transport, catalog: crawlCatalog, dataDir, topicPrefix: prefix, partitions: 1, clock });
      await service.start();
      await service.ready();
    }

    async function send(records: LinksRecord[]): Promise<void> {
      await transport.send(records.map((r) => ({ topic: `${prefix}links`, key: linksKey(r), value: Buffer.from(JSON.stringify(r)) })));
    }

    async function frontier(): Promise<{ key: string | null; value: FrontierRecord }[]> {
      return (await readAll(transport, `${prefix}frontier`)).map((r) => ({ key: r.key, value: frontierRecord.parse(JSON.parse(r.value!)) }));
    }

    /** Frontier records emitted since the last call. */
    async function nextRequests(count: number): Promise<FrontierRecord[]> {
      let all: { value: FrontierRecord }[] = [];
      await waitFor(`${count} new frontier records`, async () => (all = await frontier()).length >= seen + count, 30_000, 20);
      const fresh = all.slice(seen).map((r) => r.value);
      seen = all.length;
      assert.equal(fresh.length, count, `exactly ${count} new request(s): ${fresh.map((r) => r.url).join(' ')}`);
      return fresh;
    }

    async function assertNoRequest(ms = 300): Promise<void> {
      await new Promise((r) => setTimeout(r, ms));
      assert.equal((await frontier()).length, seen, 'no further request');
    }

    function outcome(req: FrontierRecord, extra: Partial<OutcomeLink> = {}): OutcomeLink {
      return { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 100_000 }, fetchedAt: clock.now(), ...extra };
    }

    const link = (url: string): LinksRecord => ({ v: 1, type: 'link', url, source: 'http://a.test/', depth: 1, cgiHops: 0, contribution: 0.5, sameSite: true, foundAt: clock.now() });

    it('fetches robots.txt first, keeps one request in flight per host, waits the interval, skips disallowed URLs', async () => {
      await start({ minIntervalMs: 1000 });
      await send([{ v: 1, type: 'seed', url: 'http://a.test/', addedAt: clock.now() }]);
      const [robots] = await nextRequests(1);
      assert.equal(robots!.url, 'http://a.test/robots.txt');
      assert.equal(robots!.reason, 'robots');
      await send([outcome(robots!, { robots: { status: 200, body: 'User-agent: *\nDisallow: /private\n' } })]);
      await assertNoRequest();
      clock.advance(1000);
      const [home] = await nextRequests(1);
      assert.equal(home!.url, 'http://a.test/');
      await send([link('http://a.test/private/x'), link('http://a.test/b'), link('http://a.test/c')]);
      await assertNoRequest();
      await send([outcome(home!, { serverIp: '127.0.0.9' })]);
      await waitFor('the outcome applied', () => progress.totals().pagesFetched === 1, 30_000, 20);
      clock.advance(999);
      await assertNoRequest();
      // Due now; the dispatcher runs every 10 ms of clock time.
      clock.advance(11);
      const [second] = await nextRequests(1);
      assert.ok(['http://a.test/b', 'http://a.test/c'].includes(second!.url), 'the disallowed URL is skipped');
      assert.equal(second!.ip, '127.0.0.9');
      assert.deepEqual((await frontier()).map((r) => r.key), ['a.test', 'a.test', '127.0.0.9'], 'keyed by host until the IP is known, then by IP');
      await waitFor('stats', () => progress.totals().robotsDisallowedSkipped === 1, 30_000, 20);
    });

    it('reports a new page on changes and revisits it with its validators, reporting the result on revisits', async () => {
      await start({ minIntervalMs: 0, revisitSweepMs: 1000, requestTimeoutMs: 365 * 86_400_000, politeness: { kFactor: 0, suspendEnabled: false } });
      await send([{ v: 1, type: 'seed', url: 'http://r.test/a', addedAt: clock.now() }]);
      const [robots] = await nextRequests(1);
      await send([outcome(robots!, { status: 404, result: 'client-error', robots: { status: 404 } })]);
      const [page] = await nextRequests(1);
      assert.equal(page!.reason, 'new');
      await send([outcome(page!, { md5: 'a'.repeat(32), validators: { etag: '"v1"' } })]);
      const events = async (topic: string): Promise<Record<string, unknown>[]> => (await readAll(transport, `${prefix}${topic}`)).map((r) => JSON.parse(r.value!) as Record<string, unknown>);
      await waitFor('a "new" change event', async () => (await events('changes')).length === 1, 30_000, 20);
      assert.equal((await events('changes'))[0]!.kind, 'new');
      // Days later the page is due; robots.txt (due again every 6 h) is answered on the way.
      let revisit: FrontierRecord | undefined;
      for (let i = 0; i < 200 && !revisit; i++) {
        clock.advance(3_600_000);
        await new Promise((r) => setTimeout(r, 20));
        for (const r of (await frontier()).slice(seen).map((x) => x.value)) {
          seen++;
          if (r.reason === 'robots') {
            const before = progress.totals().robotsFetched;
            await send([outcome(r, { status: 404, result: 'client-error', robots: { status: 404 } })]);
            await waitFor('robots.txt answer applied', () => progress.totals().robotsFetched > before, 30_000, 20);
          } else revisit = r;
        }
      }
      assert.ok(revisit, 'the page was revisited');
      assert.equal(revisit.reason, 'revisit');
      assert.deepEqual(revisit.validators, { etag: '"v1"' }, 'conditional GET with the known ETag');
      await send([outcome(revisit, { status: 304, result: 'not-modified' })]);
      await waitFor('a revisit event', async () => (await events('revisits')).length === 1, 30_000, 20);
      assert.equal((await events('revisits'))[0]!.result, 'unchanged');
      assert.equal((await events('changes')).length, 1);
    });

    // Kafka: its stores come back from the changelogs. Embedded: the log keeps them, so a new data
    // directory beside the same log finds them as they were committed.
    it('a scheduler started on an empty state directory finds its stores as committed and continues exactly', async () => {
      await start({ minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000 });
      await send([{ v: 1, type: 'seed', url: 'http://m.test/', addedAt: clock.now() }]);
      const [robots] = await nextRequests(1);
      await send([outcome(robots!, { status: 404, result: 'client-error', robots: { status: 404 } })]);
      const [home] = await nextRequests(1);
      await send([link('http://m.test/next')]);
      await waitFor('the link queued', () => progress.totals().queued === 1, 30_000, 20);
      await service!.stop();
      // A new process elsewhere: nothing local; everything from the changelog (Kafka) or the log (embedded).
      await start({ minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000 });
      clock.advance(1000);
      await assertNoRequest(); // the host is still waiting for home's outcome
      assert.equal(progress.totals().inflight, 1);
      await send([outcome(home!)]);
      const [next] = await nextRequests(1);
      assert.equal(next!.url, 'http://m.test/next');
      await send([outcome(next!), link('http://m.test/'), link('http://m.test/next')]);
      clock.advance(1000);
      await assertNoRequest(); // known URLs are not fetched again
      await waitFor('counts', () => progress.totals().pagesFetched === 2, 30_000, 20);
    });
  });
}

