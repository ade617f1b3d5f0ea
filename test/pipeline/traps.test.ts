/**
 * The scheduler's trap bounds and per-site cap, driven through its topics with a manual clock:
 * session parameters removed from incoming URLs, a per-template budget of new URLs that survives a
 * restart, queue rounds that let a host's other pages go before a big template, seed 002's query
 * restriction, and a cap on distinct pages per site that stops discovery but not revisits.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StreamService, ManualClock, EmbeddedTransport } from '../../services/runtime/index.ts';
import { schedulerService, hostKey, CrawlProgress } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION, frontierRecord } from '../../schemas/index.ts';
import type { FrontierRecord, LinksRecord, OutcomeLink, DiscoveredLink } from '../../schemas/index.ts';
import { tempDir, removeDir, readAll, waitFor } from '../support/transports.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

const T0 = Date.UTC(2026, 0, 1);

type Options = NonNullable<Parameters<typeof schedulerService>[0]>;

/** A scheduler on one partition over a directory that outlives restarts. */
async function harness(options: Options) {
  const dir = tempDir();
  const clock = new ManualClock(T0);
  let transport: EmbeddedTransport;
  let service: StreamService<LinksRecord>;
  let progress: CrawlProgress;
  let seen = 0;
  const open = async (): Promise<void> => {
    transport = await EmbeddedTransport.open({ dir, clock });
    progress = new CrawlProgress();
    service = new StreamService(
      schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, ...options, politeness: { kFactor: 0, suspendEnabled: false, ...options.politeness } }, { progress }),
      { transport, catalog: crawlCatalog, dataDir: dir, partitions: 1, clock },
    );
    await transport.ensureTopics(service.topicDefinitions(1));
    await service.start();
    await service.ready();
  };
  await open();
  const frontier = async (): Promise<FrontierRecord[]> => (await readAll(transport!, 'frontier')).map((r) => frontierRecord.parse(JSON.parse(r.value!)));
  const next = async (): Promise<FrontierRecord> => {
    let all: FrontierRecord[] = [];
    await waitFor('a frontier record', async () => {
      all = await frontier();
      return all.length > seen;
    }, 10_000, 10);
    return all[seen++]!;
  };
  const send = (records: LinksRecord[]): Promise<unknown> => transport.send(records.map((v) => ({ topic: 'links', key: hostKey(v.url), value: Buffer.from(JSON.stringify(v)) })));
  const answer = (req: FrontierRecord, extra: Partial<OutcomeLink> = {}): Promise<unknown> =>
    send([
      req.reason === 'robots'
        ? { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 404, result: 'client-error', outDegree: 0, fetch: { totalMs: 5, bytes: 0 }, fetchedAt: clock.now(), robots: { status: 404 } }
        : { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 50_000 }, fetchedAt: clock.now(), md5: 'a'.repeat(32), ...extra },
    ]);
  /** The next page request, answering robots.txt on the way. */
  const nextPage = async (): Promise<FrontierRecord> => {
    for (;;) {
      const req = await next();
      if (req.reason !== 'robots') return req;
      await answer(req);
    }
  };
  /** Fetches pages one after another (each answered), until `count` page requests were made. */
  const fetchPages = async (count: number, extraFor: (req: FrontierRecord) => Partial<OutcomeLink> = () => ({})): Promise<FrontierRecord[]> => {
    const pages: FrontierRecord[] = [];
    for (let i = 0; i < count; i++) {
      const req = await nextPage();
      pages.push(req);
      await answer(req, extraFor(req));
    }
    return pages;
  };
  /** Moves the clock in steps until the next page request, answering robots.txt on the way. */
  const advanceToPage = async (stepMs: number): Promise<FrontierRecord> => {
    for (let i = 0; i < 1000; i++) {
      if ((await frontier()).length > seen) {
        const req = await next();
        if (req.reason !== 'robots') return req;
        const before = progress.totals().robotsFetched;
        await answer(req);
        await waitFor('robots.txt answer applied', () => progress.totals().robotsFetched > before, 5000, 5);
        continue;
      }
      clock.advance(stepMs);
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('no request');
  };
  const restart = async (): Promise<void> => {
    await service.stop();
    await transport.close();
    await open();
  };
  const quiet = async (ms = 200): Promise<void> => {
    await new Promise((r) => setTimeout(r, ms));
    assert.equal((await frontier()).length, seen, 'no further request');
  };
  const stop = async (): Promise<void> => {
    await service.stop();
    await transport.close();
    removeDir(dir);
  };
  return { clock, progress: () => progress, next, nextPage, advanceToPage, fetchPages, send, answer, restart, quiet, stop, frontier };
}

const seed = (url: string): LinksRecord => ({ v: SCHEMA_VERSION, type: 'seed', url, addedAt: T0 });
const link = (url: string, contribution = 0.5): DiscoveredLink => ({ v: SCHEMA_VERSION, type: 'link', url, source: 'http://t.test/', depth: 1, cgiHops: 0, contribution, sameSite: true, foundAt: T0 });

describe('trap bounds in the scheduler', { timeout: 120_000 }, () => {
  it('removes session parameters from incoming links, so fresh session ids are one URL', async () => {
    const h = await harness({});
    try {
      await h.send([seed('http://t.test/')]);
      await h.fetchPages(1);
      await h.send(Array.from({ length: 20 }, (_, i) => link(`http://t.test/page?sid=${i}&utm_source=mail`)));
      await h.send([link('http://t.test/cart;jsessionid=ABC'), link('http://t.test/cart;jsessionid=DEF')]);
      const pages = await h.fetchPages(2);
      assert.deepEqual(pages.map((p) => p.url).sort(), ['http://t.test/cart', 'http://t.test/page']);
      await h.quiet();
      assert.equal(h.progress().totals().urlsKnown, 3);
    } finally {
      await h.stop();
    }
  });

  it('a custom stripParams list decides identity in the scheduler', async () => {
    const h = await harness({ stripParams: ['ref'] });
    try {
      await h.send([seed('http://t.test/')]);
      await h.fetchPages(1);
      await h.send([link('http://t.test/a?ref=1'), link('http://t.test/a?ref=2'), link('http://t.test/b?sid=1')]);
      const pages = await h.fetchPages(2);
      assert.deepEqual(pages.map((p) => p.url).sort(), ['http://t.test/a', 'http://t.test/b?sid=1']);
    } finally {
      await h.stop();
    }
  });

  it('gives each URL template a budget of new URLs, kept across a restart, and fetches the other pages of the host first', async () => {
    const h = await harness({ maxUrlsPerTemplate: 10, templateRoundSize: 2 });
    try {
      await h.send([seed('http://t.test/')]);
      await h.fetchPages(1);
      // 30 trap links with a random path token, scored far above the one normal page.
      const trap = Array.from({ length: 30 }, (_, i) => link(`http://t.test/s/${(0x1f3a5c00 + i * 7919).toString(16)}x${i}/page`, 5));
      await h.send([...trap, link('http://t.test/about', 0.01)]);
      await waitFor('budget used', () => h.progress().totals().templateSkipped === 20, 5000, 10);
      assert.equal(h.progress().totals().queued + h.progress().totals().inflight, 11);
      const pages = await h.fetchPages(11);
      const urls = pages.map((p) => p.url);
      // Round 0 holds two trap URLs and the normal page; by score the trap URLs go first.
      assert.equal(urls.indexOf('http://t.test/about'), 2, `the normal page is the third request: ${urls.join(' ')}`);
      assert.equal(urls.filter((u) => u.includes('/s/')).length, 10);
      await h.quiet();
      await h.restart();
      await h.send([link('http://t.test/s/99aa88bb77cc/page'), link('http://t.test/contact')]);
      const [after] = await h.fetchPages(1);
      assert.equal(after!.url, 'http://t.test/contact', 'the budget survived the restart');
      await h.quiet();
      assert.equal(h.progress().totals().templateSkipped, 21);
    } finally {
      await h.stop();
    }
  });

  it('a template that serves the same text under every URL keeps its representative and stops there', async () => {
    const h = await harness({ trapProbePages: 4, templateRoundSize: 100 });
    try {
      await h.send([seed('http://t.test/')]);
      await h.fetchPages(1);
      const token = (i: number): string => `${(0xabc00000 + i * 104_729).toString(16)}z${i}`;
      await h.send(Array.from({ length: 30 }, (_, i) => link(`http://t.test/s/${token(i)}/page`, 1)));
      await h.send([link('http://t.test/about', 0.01)]);
      // Every page of the template answers with the same text; the normal page has its own.
      await h.fetchPages(5, (req) => ({ fingerprint: req.url.includes('/s/') ? '00ff00ff00ff00ff' : 'ffffffff00000000' }));
      await h.quiet();
      const urls = (await h.frontier()).filter((r) => r.reason !== 'robots').map((r) => r.url);
      assert.ok(urls.includes('http://t.test/about'), 'the normal page was fetched');
      assert.equal(urls.filter((u) => u.includes('/s/')).length, 4, `four pages of the trap template: ${urls.join(' ')}`);
      assert.equal(h.progress().totals().templateSkipped, 26);
      await h.send([link(`http://t.test/s/${token(99)}/page`)]);
      await waitFor('skipped', () => h.progress().totals().templateSkipped === 27, 5000, 10);
    } finally {
      await h.stop();
    }
  });

  it("query restriction 'form' (seed 002): URLs that differ only in their query are followed once", async () => {
    const h = await harness({ queryRestriction: 'form' });
    try {
      await h.send([seed('http://t.test/')]);
      await h.fetchPages(1);
      await h.send([link('http://t.test/search?q=1'), link('http://t.test/search?q=2'), link('http://t.test/list'), link('http://t.test/list?page=2')]);
      const pages = await h.fetchPages(2);
      assert.deepEqual(pages.map((p) => p.url).sort(), ['http://t.test/list', 'http://t.test/search?q=1']);
      await h.quiet();
      assert.equal(h.progress().totals().querySkipped, 2);
    } finally {
      await h.stop();
    }
  });

  it("query restriction 'all': no URL with a query is followed", async () => {
    const h = await harness({ queryRestriction: 'all' });
    try {
      await h.send([seed('http://t.test/?start=1')]);
      const [first] = await h.fetchPages(1);
      assert.equal(first!.url, 'http://t.test/?start=1', 'a seed is always taken');
      await h.send([link('http://t.test/search?q=1'), link('http://t.test/list')]);
      const pages = await h.fetchPages(1);
      assert.equal(pages[0]!.url, 'http://t.test/list');
      await h.quiet();
      assert.equal(h.progress().totals().querySkipped, 1);
    } finally {
      await h.stop();
    }
  });
});

describe('per-site cap', { timeout: 120_000 }, () => {
  it('counts distinct pages; at the cap new URLs are skipped and revisits of known pages go on', async () => {
    // pageRetries 0: the reset below stays an error here (retries have a test of their own).
    const h = await harness({ pageRetries: 0, politeness: { maxPagesPerSite: 3 } });
    try {
      await h.send([seed('http://c.test/')]);
      await h.fetchPages(1);
      await h.send([link('http://c.test/a'), link('http://c.test/b'), link('http://c.test/c'), link('http://c.test/d')]);
      // A transport error is not a page: it does not count towards the cap.
      await h.fetchPages(1);
      const next = await h.nextPage();
      await h.answer(next, { status: 0, result: 'error', errorCode: 'MEGURI_ERR_RESET' });
      // (the failure backs the host off for a while)
      await h.answer(await h.advanceToPage(1000));
      // Three distinct pages fetched: the one still queued is given up, later links are skipped.
      // (the error keeps the host's interval up for a while: its queue is looked at when it is due)
      h.clock.advance(120_000);
      await waitFor('capped', () => h.progress().totals().siteCapSkipped === 1, 5000, 10);
      await h.send([link('http://c.test/e')]);
      await waitFor('skipped', () => h.progress().totals().siteCapSkipped === 2, 5000, 10);
      assert.equal(h.progress().totals().queued, 0);
      // The known pages are still revisited, again and again (revisits do not count).
      const revisited: string[] = [];
      for (let i = 0; i < 8; i++) {
        const req = await h.advanceToPage(3_600_000);
        assert.equal(req.reason, 'revisit', `${req.url} is a revisit`);
        revisited.push(req.url);
        await h.answer(req);
      }
      assert.ok(new Set(revisited).size >= 3, `the known pages are revisited: ${revisited.join(' ')}`);
      const totals = h.progress().totals();
      assert.equal(totals.uniqueUrlsFetched, 4, 'three pages and one failed URL');
      assert.equal(totals.siteCapSkipped, 2);
    } finally {
      await h.stop();
    }
  });

  it('with the domain scope, hosts of one registrable domain share the cap', async () => {
    const h = await harness({ politeness: { maxPagesPerSite: 2, siteCapScope: 'domain' } });
    try {
      await h.send([seed('http://a.example.co.uk/')]);
      await h.fetchPages(1);
      await h.send([link('http://b.example.co.uk/')]);
      await h.fetchPages(1);
      await h.send([link('http://c.example.co.uk/'), link('http://a.example.co.uk/x'), link('http://other.test/')]);
      const [other] = await h.fetchPages(1);
      assert.equal(other!.url, 'http://other.test/');
      await h.quiet();
      assert.equal(h.progress().totals().siteCapSkipped, 2);
    } finally {
      await h.stop();
    }
  });
});

describe('page retries', { timeout: 120_000 }, () => {
  it('asks again for a new page the server could not answer, after its Retry-After, then gives up', async () => {
    const h = await harness({ pageRetries: 2 });
    try {
      await h.send([seed('http://r.test/')]);
      const first = await h.nextPage();
      await h.answer(first, { status: 429, result: 'client-error', retryAfterMs: 30_000 });
      // Not before the Retry-After: the host waits, then the same URL is asked for again.
      const second = await h.advanceToPage(1000);
      assert.equal(second.url, first.url);
      assert.ok(h.clock.now() - first.issuedAt >= 30_000, `asked again after ${h.clock.now() - first.issuedAt} ms`);
      await h.answer(second, { status: 503, result: 'server-error' });
      const third = await h.advanceToPage(1000);
      assert.equal(third.url, first.url);
      await h.answer(third, { status: 503, result: 'server-error' });
      // Two retries spent: the page is an error now, and it was counted once, not three times.
      await waitFor('given up', () => h.progress().totals().queued === 0 && h.progress().totals().errors === 1, 5000, 10);
      assert.equal(h.progress().totals().pageRetries, 2);
      assert.equal(h.progress().totals().pagesFetched, 1);
      assert.equal(h.progress().totals().duplicateFetches, 0);
    } finally {
      await h.stop();
    }
  });
});
