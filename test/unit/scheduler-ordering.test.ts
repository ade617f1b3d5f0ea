/**
 * In what order the scheduler fetches, on the runtime's TestDriver (no transport, no sleeps; see
 * docs/architecture.md, "Logic tests on the TestDriver"): the ordering strategies (bf, blc, the
 * in-partition PageRank variants, whose passed-on score travels through the links topic back into
 * the scheduler), and revisits: validators on conditional requests, new / changed / gone changes (a
 * boilerplate-only change is none), the γ order of due pages sharing a host with new ones, the
 * short-term queue's capacity, unreachable hosts reported gone after three failed revisits, and
 * overloaded hosts whose revisit intervals are stretched.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link, T0 } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { FrontierRecord, LinksRecord } from '../../schemas/index.ts';
import { hostRows } from '../../services/cli/stats.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { linksOf } from '../../services/common/link-bundles.ts';

const scoreLink = (url: string, source: string, contribution: number): LinksRecord => link(url, source, { contribution });

function orderingDriver(ordering: SchedulerOptionsInput['ordering']): Promise<SchedulerDriver> {
  return openSchedulerDriver({ ordering, revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, politeness: { kFactor: 0, suspendEnabled: false } });
}

/** Score records the scheduler passed on through the links topic. */
function passedOn(h: SchedulerDriver): { url: string; source: string; contribution: number }[] {
  return h.events('links').filter((r) => r.propagated === true) as unknown as { url: string; source: string; contribution: number }[];
}

/** Fetches the next `count` pages one by one (each answered) and returns their paths in fetch order. */
async function fetchOrder(h: SchedulerDriver, count: number): Promise<string[]> {
  const order: string[] = [];
  for (let i = 0; i < count; i++) {
    const req = await h.nextPage();
    order.push(new URL(req.url).pathname);
    await h.answer(req);
  }
  return order;
}

describe('scheduler on the test driver: ordering strategies', () => {
  /** Fetches the home page of o.test, then finds three links on it (plus `extra` links elsewhere) and returns the fetch order of the three. */
  async function orderOf(ordering: 'bf' | 'blc' | 'ipr-dl1', extra: LinksRecord[]): Promise<string[]> {
    const h = await orderingDriver(ordering);
    await h.send(seed('http://o.test/'));
    await h.answer(h.next()); // robots.txt
    const home = await h.nextPage();
    // Held in flight while the links arrive, so the queue is complete before the next dispatch.
    for (const l of [scoreLink('http://o.test/a/b/c.html', 'http://o.test/', 0.1), scoreLink('http://o.test/x.html', 'http://o.test/', 0.2), scoreLink('http://o.test/yy.html', 'http://o.test/', 0.3), ...extra]) await h.send(l);
    assert.equal(h.progress.totals().queued, 3);
    await h.answer(home);
    const order = await fetchOrder(h, 3);
    h.assertNoRequest();
    await h.stop();
    return order;
  }

  it("new URLs with a sitemap's or a feed's hints, in one batch with a plain link, keep their hints: the feed item goes first, both are counted", async () => {
    const h = await orderingDriver('ipr-dl1');
    await h.send(seed('http://o.test/'));
    await h.answer(h.next()); // robots.txt
    const home = await h.nextPage();
    // One batch: the batch's prefetch holds the host, the site count and the template entries, so
    // each new URL is queued without a read whatever its hints.
    await h.send([
      scoreLink('http://o.test/plain.html', 'http://o.test/', 0.5),
      link('http://o.test/listed.html', 'http://o.test/sitemap.xml', { contribution: 0.9, via: 'sitemap', lastmod: T0 - 86_400_000, priority: 0.8, changefreq: 'daily' }),
      link('http://o.test/item.html', 'http://o.test/feed.rss', { contribution: 0.1, via: 'feed' }),
    ]);
    const totals = h.progress.totals();
    assert.equal(totals.queued, 3);
    assert.equal(totals.sitemapUrls, 1);
    assert.equal(totals.feedItemsNew, 1);
    await h.answer(home);
    const order = await fetchOrder(h, 3);
    // The feed item is urgent despite its score; then by score.
    assert.deepEqual(order, ['/item.html', '/listed.html', '/plain.html']);
    h.assertNoRequest();
    await h.stop();
  });

  it('bf takes discovery order, blc back-link counts with fewer slashes then shorter URLs first, ipr-dl1 the summed contributions', async () => {
    assert.deepEqual(await orderOf('bf', []), ['/a/b/c.html', '/x.html', '/yy.html']);
    assert.deepEqual(await orderOf('blc', []), ['/x.html', '/yy.html', '/a/b/c.html']);
    // A second fetched page linking to /a/b/c.html outweighs any tie-break.
    assert.deepEqual(await orderOf('blc', [scoreLink('http://o.test/a/b/c.html', 'http://o.test/other.html', 0.01)]), ['/a/b/c.html', '/x.html', '/yy.html']);
    assert.deepEqual(await orderOf('ipr-dl1', []), ['/yy.html', '/x.html', '/a/b/c.html']);
    assert.deepEqual(await orderOf('ipr-dl1', [scoreLink('http://o.test/a/b/c.html', 'http://o.test/other.html', 0.25)]), ['/a/b/c.html', '/yy.html', '/x.html']);
  });

  it('ipr-vr passes score on from fetched pages along their stored out-links, through the links topic, while the ratio holds', async () => {
    const h = await orderingDriver('ipr-vr');
    await h.send(seed('http://v.test/a'));
    await h.answer(h.next()); // robots.txt
    const a = await h.nextPage();
    // a links to b and c; b (fetched next) links to d.
    await h.send(scoreLink('http://v.test/b', 'http://v.test/a', 1));
    await h.send(scoreLink('http://v.test/c', 'http://v.test/a', 1));
    await h.answer(a, { outDegree: 2, outLinks: ['http://v.test/b', 'http://v.test/c'] });
    const b = await h.nextPage();
    assert.equal(b.url, 'http://v.test/b');
    await h.send(scoreLink('http://v.test/d', 'http://v.test/b', 1));
    await h.answer(b, { outDegree: 1, outLinks: ['http://v.test/d'] });
    const c = await h.nextPage();
    assert.equal(c.url, 'http://v.test/c'); // held in flight from here on
    assert.equal(passedOn(h).length, 0);
    // a (score 1 + 1 = 2) now receives 10 from a page found later: 10 ≥ 1.5 × 2, so it passes 10 on.
    await h.send(scoreLink('http://v.test/a', 'http://w.test/hub', 10));
    const records = passedOn(h);
    assert.equal(records.length, 3, 'passed on from a, then from b');
    assert.deepEqual(records.slice(0, 2).map((r) => [r.source, r.url, r.contribution]), [
      ['http://v.test/a', 'http://v.test/b', 5],
      ['http://v.test/a', 'http://v.test/c', 5],
    ]);
    // b (score 2) received 5 ≥ 1.5 × 2 and passes it to d; c is in flight and keeps nothing going.
    assert.deepEqual([records[2]!.source, records[2]!.url, records[2]!.contribution], ['http://v.test/b', 'http://v.test/d', 5]);
    // Keyed by the receiving host, like every link (a's two in one bundle).
    assert.deepEqual(h.driver.allOutput('links').map((r) => [r.key, linksOf(r.value).length]), [['v.test', 2], ['v.test', 1]]);
    // A small amount does not travel: 1 < 1.5 × (2 + 10).
    await h.send(scoreLink('http://v.test/a', 'http://w.test/other', 1));
    await h.advance(1000);
    assert.equal(passedOn(h).length, 3);
    assert.equal(h.progress.totals().scorePassedOn, 2);
    await h.stop();
  });

  it('ipr-ar accumulates what a fetched page receives and passes it on once it reaches 29/30 of the score', async () => {
    const h = await orderingDriver('ipr-ar');
    await h.send(seed('http://r.test/a'));
    await h.answer(h.next()); // robots.txt
    const a = await h.nextPage();
    await h.send(scoreLink('http://r.test/b', 'http://r.test/a', 1));
    await h.answer(a, { outDegree: 1, outLinks: ['http://r.test/b'] });
    const b = await h.nextPage(); // held in flight
    assert.equal(b.url, 'http://r.test/b');
    // a's score 2 → 3 with 1 pending: 1 < 29/30 × 3, kept.
    await h.send(scoreLink('http://r.test/a', 'http://w.test/x', 1));
    await h.advance(1000);
    assert.equal(passedOn(h).length, 0);
    // 100 more: 101 pending ≥ 29/30 × 103, so all 101 go on to b.
    await h.send(scoreLink('http://r.test/a', 'http://w.test/y', 100));
    assert.deepEqual(passedOn(h).map((r) => [r.url, r.contribution]), [['http://r.test/b', 101]]);
    await h.stop();
  });
});

/**
 * The fetcher here answers every request, but the clock jumps by hours or days: a request emitted
 * just before a jump would count as lost and be re-issued. Requests are not lost unless a test says so.
 */
function revisitDriver(options: SchedulerOptionsInput, dataDir?: string): Promise<SchedulerDriver> {
  return openSchedulerDriver(
    { revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, ...options, politeness: { kFactor: 0, suspendEnabled: false } },
    dataDir !== undefined ? { dataDir } : {},
  );
}

describe('scheduler on the test driver: revisits', () => {
  it('revisits known pages, uses validators, and reports new, changed (not boilerplate-only) and gone pages', async () => {
    const dir = tempDir();
    try {
      const h = await revisitDriver({}, dir);
      const revisit = (): Promise<FrontierRecord> => h.advanceToPage(86_400_000);
      await h.send(seed('http://r.test/a'));
      await h.answer(h.next()); // robots.txt
      const first = await h.nextPage();
      assert.equal(first.reason, 'new');
      const page = { topic: 'pages', partition: 0, offset: '1' };
      await h.answer(first, { md5: 'a'.repeat(32), fingerprint: '0000000000000000', title: 'A', validators: { etag: '"v1"' }, page });
      assert.deepEqual(h.events('changes').map((c) => [c.kind, c.url]), [['new', 'http://r.test/a']]);
      assert.deepEqual(h.events('changes')[0]!.page, page);
      assert.equal(h.driver.allOutput('changes')[0]!.key, 'http://r.test/a');

      const second = await revisit();
      assert.equal(second.reason, 'revisit');
      assert.deepEqual(second.validators, { etag: '"v1"' }, 'conditional GET with the known ETag');
      await h.answer(second, { status: 304, result: 'not-modified', md5: undefined });
      assert.deepEqual(h.events('revisits').map((r) => r.result), ['unchanged']);

      const third = await revisit();
      // Only boilerplate changed: a new MD5, a fingerprint 2 bits away.
      await h.answer(third, { md5: 'b'.repeat(32), fingerprint: '0000000000000003', title: 'A' });
      assert.deepEqual(h.events('revisits').map((r) => r.result), ['unchanged', 'unchanged']);
      assert.equal(h.events('changes').length, 1, 'no change event for a boilerplate-only change');

      const fourth = await revisit();
      await h.answer(fourth, { md5: 'c'.repeat(32), fingerprint: 'ffff0000ffff0000', title: 'A2', page: { topic: 'pages', partition: 0, offset: '9' } });
      assert.equal(h.events('changes').length, 2);
      const changed = h.events('changes')[1]!;
      assert.equal(changed.kind, 'changed');
      assert.equal(changed.md5, 'c'.repeat(32));
      const rev = h.events('revisits')[2]!;
      assert.equal(rev.result, 'changed');
      assert.equal(rev.previousHash, 'b'.repeat(32));
      assert.ok((rev.nextVisitAt as number) > h.clock.now());

      const fifth = await revisit();
      await h.answer(fifth, { status: 404, result: 'gone', md5: undefined });
      assert.deepEqual(h.events('changes').map((c) => c.kind), ['new', 'changed', 'gone']);
      assert.equal(h.progress.totals().revisits, 4);
      // Gone: never asked for again.
      await h.advance(30 * 86_400_000);
      await h.advance(30 * 86_400_000);
      assert.deepEqual(h.requests().filter((r) => r.reason !== 'robots'), []);
      const now = h.clock.now();
      await h.stop();
      // The gone page left the host's load index; before that it counted 1/T for its interval.
      const rows = await hostRows(dir, '', now);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.host, 'r.test');
      assert.equal(rows[0]!.L, 0);
      assert.equal(rows[0]!.fetched, 5);
    } finally {
      removeDir(dir);
    }
  });

  it('due known URLs share the host with new URLs half and half, in γ order', async () => {
    const h = await revisitDriver({});
    // Four known pages whose Last-Modified ages (1, 4, 9, 16 days) give different revisit intervals.
    const ages = [16, 1, 9, 4];
    for (let i = 0; i < ages.length; i++) await h.send(seed(`http://s.test/k${i}`));
    await h.answer(h.next()); // robots.txt
    for (let i = 0; i < ages.length; i++) {
      const req = await h.nextPage();
      const age = ages[Number(req.url.slice(-1))]!;
      await h.answer(req, { validators: { lastModified: new Date(T0 - age * 86_400_000).toUTCString() } });
    }
    // Eight new URLs; the first goes out at once and is held in flight while the clock jumps 31 days.
    for (let i = 0; i < 8; i++) await h.send(link(`http://s.test/n${i}`, 'http://s.test/k0', { contribution: 0.1 }));
    const held = await h.nextPage();
    assert.equal(held.reason, 'new');
    // One jump: the sweep sees every page due at once (a sweep per day would queue them on different days).
    await h.advance(31 * 86_400_000 + 1000);
    // Seven new URLs and the four known pages, now due, wait in the host's queue; nothing was revisited yet.
    assert.equal(h.progress.totals().queued, 11);
    assert.equal(h.events('revisits').length, 0);
    await h.answer(held);
    const order: FrontierRecord[] = [];
    for (let i = 0; i < 8; i++) {
      const req = await h.advanceToPage(10);
      order.push(req);
      await h.answer(req);
    }
    assert.deepEqual(order.map((r) => r.reason), ['new', 'revisit', 'new', 'revisit', 'new', 'revisit', 'new', 'revisit'], 'known and new URLs alternate');
    // γ: with equal importance, the page most likely to have changed (shortest interval) first.
    assert.deepEqual(order.filter((r) => r.reason === 'revisit').map((r) => r.url), ['http://s.test/k1', 'http://s.test/k3', 'http://s.test/k2', 'http://s.test/k0']);
    await h.stop();
  });

  it('due revisits beyond the short-term queue capacity go back to the long-term queue for 3 days', async () => {
    // Interval 60 s and a 2-minute window with half for known URLs: room for 1 due revisit.
    const h = await revisitDriver({ minIntervalMs: 60_000, shortTermWindowMs: 120_000, requestTimeoutMs: 86_400_000, revisitPolicy: { minIntervalS: 60, secondVisitMinS: 600, secondVisitMaxS: 600 } });
    for (const p of ['a', 'b', 'c', 'd']) await h.send(seed(`http://q.test/${p}`));
    await h.answer(h.next()); // robots.txt
    for (let i = 0; i < 4; i++) await h.answer(await h.advanceToPage(5000));
    assert.equal(h.events('changes').length, 4);
    // Each page is due 10 minutes after its fetch. The first due one goes out at once (and is not
    // answered here), the next fills the queue's one known slot, the last two are deferred.
    for (let i = 0; i < 100 && h.progress.totals().revisitsDeferred < 2; i++) await h.advance(10_000);
    const totals = h.progress.totals();
    assert.equal(totals.revisitsDeferred, 2);
    assert.equal(totals.queued, 1);
    assert.equal(totals.inflight, 1);
    const revisits = h.events('frontier').filter((r) => r.reason === 'revisit');
    assert.deepEqual(revisits.map((r) => r.url), ['http://q.test/a']);
    // Deferred for 3 days: within them no more revisits are planned for the two.
    await h.advance(10_000);
    assert.equal(h.progress.totals().revisitsDeferred, 2);
    await h.stop();
  });

  it('a known page whose host stays unreachable is retried daily and reported gone after 3 failed revisits', async () => {
    const h = await revisitDriver({ revisitPolicy: { secondVisitMinS: 3600, secondVisitMaxS: 3600 } });
    await h.send(seed('http://dead.test/a'));
    await h.answer(h.next()); // robots.txt
    await h.answer(await h.nextPage());
    assert.equal(h.events('changes').length, 1);
    const results: string[] = [];
    for (let i = 0; i < 3; i++) {
      const revisit = await h.advanceToPage(600_000);
      assert.equal(revisit.reason, 'revisit');
      await h.answer(revisit, { status: 0, result: 'error', errorCode: 'MEGURI_ERR_CONNECT', md5: undefined });
      assert.equal(h.events('revisits').length, i + 1);
      results.push(String(h.events('revisits')[i]!.result));
    }
    assert.deepEqual(results, ['error', 'error', 'gone']);
    assert.deepEqual(h.events('changes').map((c) => c.kind), ['new', 'gone']);
    // Gone: no further revisit is planned.
    const revisits = h.events('revisits');
    assert.equal(revisits[2]!.nextVisitAt, revisits[2]!.time);
    assert.ok((revisits[1]!.nextVisitAt as number) - (revisits[1]!.time as number) === 86_400_000, 'a failed revisit is retried in a day');
    for (let i = 0; i < 20; i++) await h.advance(86_400_000);
    assert.deepEqual(h.requests().filter((r) => r.reason === 'revisit'), []);
    await h.stop();
  });

  it('a known page whose host name stops resolving is reported gone after 3 failed revisits', async () => {
    const h = await revisitDriver({ revisitPolicy: { secondVisitMinS: 3600, secondVisitMaxS: 3600 } });
    await h.send(seed('http://gone.test/a'));
    await h.answer(h.next()); // robots.txt
    await h.answer(await h.nextPage());
    assert.equal(h.events('changes').length, 1);
    // From now on the name does not resolve, for robots.txt (re-checked every 6 h) and pages alike:
    // a failed robots.txt drops the queue, and a known page waiting in it counts a failed revisit.
    let robotsFailures = 0;
    for (let i = 0; i < 600 && h.events('revisits').length < 3; i++) {
      await h.advance(600_000);
      for (const req of h.requests()) {
        if (req.reason === 'robots') robotsFailures++;
        await h.send({ v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 0, result: 'error', outDegree: 0, fetch: { totalMs: 1, bytes: 0 }, fetchedAt: h.clock.now(), errorCode: 'MEGURI_ERR_DNS' });
      }
    }
    assert.ok(robotsFailures >= 1, 'robots.txt failed too');
    assert.deepEqual(h.events('revisits').map((r) => r.result), ['error', 'error', 'gone']);
    assert.deepEqual(h.events('changes').map((c) => c.kind), ['new', 'gone']);
    await h.stop();
  });

  it('an overloaded host is flagged and its revisit intervals stretched until 1/L fits the politeness interval', async () => {
    const dir = tempDir();
    try {
      // Politeness allows one request per 60 s; every page asks for a revisit every 60 s.
      const h = await revisitDriver({ minIntervalMs: 60_000, revisitPolicy: { minIntervalS: 60, secondVisitMinS: 60, secondVisitMaxS: 60 } }, dir);
      await h.send(seed('http://o.test/a'));
      await h.send(seed('http://o.test/b'));
      await h.answer(h.next()); // robots.txt
      await h.answer(await h.advanceToPage(5000));
      assert.equal(h.events('changes').length, 1);
      await h.answer(await h.advanceToPage(5000));
      assert.equal(h.events('changes').length, 2);
      assert.equal(h.progress.totals().overloadedRevisits, 1);
      // The same figures on /metrics.
      const text = await h.driver.metrics.registry.metrics();
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
      await h.stop();
      const rows = await hostRows(dir, '', T0 + 120_000);
      const row = rows.find((r) => r.host === 'o.test')!;
      assert.ok(Math.abs(row.L - 2 / 60) < 1e-9, 'L counts the intervals the estimator asked for');
      assert.equal(row.overloaded, true);
      assert.equal(row.remedy, 'stretch');
      assert.ok(Math.abs(row.stretch - 2) < 1e-9, 'intervals × 2: 1/L becomes 60 s');
    } finally {
      removeDir(dir);
    }
  });
});
