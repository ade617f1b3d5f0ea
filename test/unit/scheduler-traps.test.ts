/**
 * The scheduler's trap bounds and per-site cap on the TestDriver (no transport, no sleeps): session
 * parameters removed from incoming URLs, a per-template budget of new URLs that survives a restart,
 * queue rounds that let a host's other pages go before a big template, seed 002's query
 * restriction, a cap on distinct pages per site that stops discovery but not revisits, and retries
 * of pages the server could not answer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link as discovered } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import type { DiscoveredLink } from '../../schemas/index.ts';

function trapDriver(options: SchedulerOptionsInput): Promise<SchedulerDriver> {
  return openSchedulerDriver({ revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, ...options, politeness: { kFactor: 0, suspendEnabled: false, ...options.politeness } });
}

const link = (url: string, contribution = 0.5): DiscoveredLink => discovered(url, 'http://t.test/', { contribution });

/** No request waits, and none comes at the next dispatch either. */
async function quiet(h: SchedulerDriver): Promise<void> {
  h.assertNoRequest();
  await h.advance(10);
  h.assertNoRequest();
}

describe('scheduler on the test driver: trap bounds', () => {
  it('removes session parameters from incoming links, so fresh session ids are one URL', async () => {
    const h = await trapDriver({});
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    await h.send(Array.from({ length: 20 }, (_, i) => link(`http://t.test/page?sid=${i}&utm_source=mail`)));
    await h.send([link('http://t.test/cart;jsessionid=ABC'), link('http://t.test/cart;jsessionid=DEF')]);
    const pages = await h.fetchPages(2);
    assert.deepEqual(pages.map((p) => p.url).sort(), ['http://t.test/cart', 'http://t.test/page']);
    await quiet(h);
    assert.equal(h.progress.totals().urlsKnown, 3);
    await h.stop();
  });

  it('a custom stripParams list decides identity in the scheduler', async () => {
    const h = await trapDriver({ stripParams: ['ref'] });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    await h.send([link('http://t.test/a?ref=1'), link('http://t.test/a?ref=2'), link('http://t.test/b?sid=1')]);
    const pages = await h.fetchPages(2);
    assert.deepEqual(pages.map((p) => p.url).sort(), ['http://t.test/a', 'http://t.test/b?sid=1']);
    await quiet(h);
    await h.stop();
  });

  it('gives each URL template a budget of new URLs, kept across a restart, and fetches the other pages of the host first', async () => {
    const h = await trapDriver({ maxUrlsPerTemplate: 10, templateRoundSize: 2 });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    // 30 trap links with a random path token, scored far above the one normal page.
    const trap = Array.from({ length: 30 }, (_, i) => link(`http://t.test/s/${(0x1f3a5c00 + i * 7919).toString(16)}x${i}/page`, 5));
    await h.send([...trap, link('http://t.test/about', 0.01)]);
    assert.equal(h.progress.totals().templateSkipped, 20);
    assert.equal(h.progress.totals().queued + h.progress.totals().inflight, 11);
    const pages = await h.fetchPages(11);
    const urls = pages.map((p) => p.url);
    // Round 0 holds two trap URLs and the normal page; by score the trap URLs go first.
    assert.equal(urls.indexOf('http://t.test/about'), 2, `the normal page is the third request: ${urls.join(' ')}`);
    assert.equal(urls.filter((u) => u.includes('/s/')).length, 10);
    await quiet(h);
    await h.driver.restart();
    await h.send([link('http://t.test/s/99aa88bb77cc/page'), link('http://t.test/contact')]);
    const [after] = await h.fetchPages(1);
    assert.equal(after!.url, 'http://t.test/contact', 'the budget survived the restart');
    await quiet(h);
    assert.equal(h.progress.totals().templateSkipped, 21);
    await h.stop();
  });

  it('a template that serves the same text under every URL keeps its representative and stops there', async () => {
    const h = await trapDriver({ trapProbePages: 4, templateRoundSize: 100 });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    const token = (i: number): string => `${(0xabc00000 + i * 104_729).toString(16)}z${i}`;
    await h.send(Array.from({ length: 30 }, (_, i) => link(`http://t.test/s/${token(i)}/page`, 1)));
    await h.send([link('http://t.test/about', 0.01)]);
    // Every page of the template answers with the same text; the normal page has its own.
    await h.fetchPages(5, (req) => ({ fingerprint: req.url.includes('/s/') ? '00ff00ff00ff00ff' : 'ffffffff00000000' }));
    await quiet(h);
    const urls = h.events('frontier').filter((r) => r.reason !== 'robots').map((r) => String(r.url));
    assert.ok(urls.includes('http://t.test/about'), 'the normal page was fetched');
    assert.equal(urls.filter((u) => u.includes('/s/')).length, 4, `four pages of the trap template: ${urls.join(' ')}`);
    assert.equal(h.progress.totals().templateSkipped, 26);
    await h.send([link(`http://t.test/s/${token(99)}/page`)]);
    assert.equal(h.progress.totals().templateSkipped, 27);
    await h.stop();
  });

  it("query restriction 'form' (seed 002): URLs that differ only in their query are followed once", async () => {
    const h = await trapDriver({ queryRestriction: 'form' });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    await h.send([link('http://t.test/search?q=1'), link('http://t.test/search?q=2'), link('http://t.test/list'), link('http://t.test/list?page=2')]);
    const pages = await h.fetchPages(2);
    assert.deepEqual(pages.map((p) => p.url).sort(), ['http://t.test/list', 'http://t.test/search?q=1']);
    await quiet(h);
    assert.equal(h.progress.totals().querySkipped, 2);
    await h.stop();
  });

  it("query restriction 'all': no URL with a query is followed", async () => {
    const h = await trapDriver({ queryRestriction: 'all' });
    await h.send(seed('http://t.test/?start=1'));
    const [first] = await h.fetchPages(1);
    assert.equal(first!.url, 'http://t.test/?start=1', 'a seed is always taken');
    await h.send([link('http://t.test/search?q=1'), link('http://t.test/list')]);
    const pages = await h.fetchPages(1);
    assert.equal(pages[0]!.url, 'http://t.test/list');
    await quiet(h);
    assert.equal(h.progress.totals().querySkipped, 1);
    await h.stop();
  });
});

describe('scheduler on the test driver: per-site cap', () => {
  it('counts distinct pages; at the cap new URLs are skipped and revisits of known pages go on', async () => {
    // pageRetries 0: the reset below stays an error here (retries have a test of their own).
    const h = await trapDriver({ pageRetries: 0, politeness: { maxPagesPerSite: 3 } });
    const c = (path: string): DiscoveredLink => discovered(`http://c.test/${path}`, 'http://t.test/');
    await h.send(seed('http://c.test/'));
    await h.fetchPages(1);
    await h.send([c('a'), c('b'), c('c'), c('d')]);
    // A transport error is not a page: it does not count towards the cap.
    await h.fetchPages(1);
    const next = await h.nextPage();
    await h.answer(next, { status: 0, result: 'error', errorCode: 'MEGURI_ERR_RESET', md5: undefined });
    // (the failure backs the host off for a while)
    await h.answer(await h.advanceToPage(1000));
    // Three distinct pages fetched: the one still queued is given up, later links are skipped.
    // (the error keeps the host's interval up for a while: its queue is looked at when it is due)
    await h.advance(120_000);
    assert.equal(h.progress.totals().siteCapSkipped, 1);
    await h.send([c('e')]);
    assert.equal(h.progress.totals().siteCapSkipped, 2);
    assert.equal(h.progress.totals().queued, 0);
    // The known pages are still revisited, again and again (revisits do not count).
    const revisited: string[] = [];
    for (let i = 0; i < 8; i++) {
      const req = await h.advanceToPage(3_600_000);
      assert.equal(req.reason, 'revisit', `${req.url} is a revisit`);
      revisited.push(req.url);
      await h.answer(req);
    }
    assert.ok(new Set(revisited).size >= 3, `the known pages are revisited: ${revisited.join(' ')}`);
    const totals = h.progress.totals();
    assert.equal(totals.uniqueUrlsFetched, 4, 'three pages and one failed URL');
    assert.equal(totals.siteCapSkipped, 2);
    await h.stop();
  });

  it('with the domain scope, hosts of one registrable domain share the cap', async () => {
    const h = await trapDriver({ politeness: { maxPagesPerSite: 2, siteCapScope: 'domain' } });
    await h.send(seed('http://a.example.co.uk/'));
    await h.fetchPages(1);
    await h.send([discovered('http://b.example.co.uk/', 'http://t.test/')]);
    await h.fetchPages(1);
    await h.send([discovered('http://c.example.co.uk/', 'http://t.test/'), discovered('http://a.example.co.uk/x', 'http://t.test/'), discovered('http://other.test/', 'http://t.test/')]);
    const [other] = await h.fetchPages(1);
    assert.equal(other!.url, 'http://other.test/');
    await quiet(h);
    assert.equal(h.progress.totals().siteCapSkipped, 2);
    await h.stop();
  });
});

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
