/**
 * Trap bounds on the runtime's TestDriver (no transport, no sleeps; see docs/politeness.md, "Traps
 * and caps"): session parameters stripped, a budget per URL template, a template judged a trap only
 * when its pages are one page and it keeps producing URLs (a template whose URLs were all listed up
 * front is fetched whole, however alike its pages), the per-host count of skipped URLs and a host
 * rule that undoes a verdict, Hoshino et al.'s query restriction, and the per-site cap.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link } from '../support/scheduler-driver.ts';
import type { SchedulerDriver, SchedulerDriverOptions } from '../support/scheduler-driver.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import type { DiscoveredLink, FrontierRecord } from '../../schemas/index.ts';
import { HostRules } from '../../services/scheduler/host-rules.ts';
import { hostRows } from '../../services/cli/stats.ts';
import { tempDir, removeDir } from '../support/transports.ts';

function trapDriver(options: SchedulerOptionsInput, driverOptions: SchedulerDriverOptions = {}): Promise<SchedulerDriver> {
  return openSchedulerDriver({ revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, ...options, politeness: { kFactor: 0, suspendEnabled: false, ...options.politeness } }, driverOptions);
}

const trapLink = (url: string, contribution = 0.5): DiscoveredLink => link(url, 'http://t.test/', { contribution });

/** No request waits, and none comes at the next dispatch either. */
async function quiet(h: SchedulerDriver): Promise<void> {
  h.assertNoRequest();
  await h.advance(10);
  h.assertNoRequest();
}

let tokens = 0;
/** `count` fresh URLs of one template (`/s/{id}/page`), as a trap links them. */
function trapLinks(count: number): DiscoveredLink[] {
  return Array.from({ length: count }, () => trapLink(`http://t.test/s/${(0xabc00000 + tokens * 104_729).toString(16)}z${tokens++}/page`, 1));
}

/** Fetches every page there is; each page of the template answers the same text and links `growth` fresh URLs of it. */
async function fetchGrowing(h: SchedulerDriver, growth: number): Promise<FrontierRecord[]> {
  const fetched: FrontierRecord[] = [];
  for (;;) {
    const pages = h.requests().filter((r) => r.reason !== 'robots');
    if (pages.length === 0) return fetched;
    assert.equal(pages.length, 1, 'one request in flight to the host');
    const req = pages[0]!;
    const trap = req.url.includes('/s/');
    await h.answer(req, { fingerprint: trap ? '00ff00ff00ff00ff' : 'ffffffff00000000' });
    fetched.push(req);
    if (trap) await h.send(trapLinks(growth));
  }
}

describe('scheduler on the test driver: trap bounds', () => {
  it('removes session parameters from incoming links, so fresh session ids are one URL', async () => {
    const h = await trapDriver({});
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    await h.send(Array.from({ length: 20 }, (_, i) => trapLink(`http://t.test/page?sid=${i}&utm_source=mail`)));
    await h.send([trapLink('http://t.test/cart;jsessionid=ABC'), trapLink('http://t.test/cart;jsessionid=DEF')]);
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
    await h.send([trapLink('http://t.test/a?ref=1'), trapLink('http://t.test/a?ref=2'), trapLink('http://t.test/b?sid=1')]);
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
    const trap = Array.from({ length: 30 }, (_, i) => trapLink(`http://t.test/s/${(0x1f3a5c00 + i * 7919).toString(16)}x${i}/page`, 5));
    await h.send([...trap, trapLink('http://t.test/about', 0.01)]);
    assert.equal(h.progress.totals().templateSkipped, 20);
    assert.equal(h.progress.totals().queued + h.progress.totals().inflight, 11);
    const pages = await h.fetchPages(11);
    const urls = pages.map((p) => p.url);
    // Round 0 holds two trap URLs and the normal page; by score the trap URLs go first.
    assert.equal(urls.indexOf('http://t.test/about'), 2, `the normal page is the third request: ${urls.join(' ')}`);
    assert.equal(urls.filter((u) => u.includes('/s/')).length, 10);
    await quiet(h);
    await h.driver.restart();
    await h.send([trapLink('http://t.test/s/99aa88bb77cc/page'), trapLink('http://t.test/contact')]);
    const [after] = await h.fetchPages(1);
    assert.equal(after!.url, 'http://t.test/contact', 'the budget survived the restart');
    await quiet(h);
    assert.equal(h.progress.totals().templateSkipped, 21);
    await h.stop();
  });

  it('a template that serves the same text under every URL and keeps producing URLs keeps its representative and stops there', async () => {
    const dir = tempDir('meguri-traps-');
    try {
      const h = await trapDriver({ trapProbePages: 4, trapNewUrls: 20, templateRoundSize: 100 }, { dataDir: dir });
      await h.send(seed('http://t.test/'));
      await h.fetchPages(1);
      await h.send([...trapLinks(10), trapLink('http://t.test/about', 0.01)]);
      // Every page of the template answers with the same text and 10 fresh URLs of it.
      const fetched = await fetchGrowing(h, 10);
      const urls = fetched.map((r) => r.url);
      assert.ok(urls.includes('http://t.test/about'), 'the normal page was fetched');
      // 1st page: 10 URLs known; by the 4th, 30 more were found (≥ 20): judged there.
      assert.equal(urls.filter((u) => u.includes('/s/')).length, 4, `four pages of the trap template: ${urls.join(' ')}`);
      // 40 admitted, 4 fetched, 36 given up in the queue; the 10 links of the 4th page refused.
      assert.equal(h.progress.totals().templateSkipped, 46);
      await h.send(trapLinks(1));
      assert.equal(h.progress.totals().templateSkipped, 47);
      const now = h.clock.now();
      await h.stop();
      const rows = await hostRows(dir, '', now);
      assert.deepEqual(rows.map((r) => [r.host, r.templateSkipped]), [['t.test', 47]], 'counted per host for `meguri stats hosts`');
    } finally {
      removeDir(dir);
    }
  });

  it('a template of alike pages all listed before the first is fetched is no trap: every page is fetched', async () => {
    const h = await trapDriver({ trapProbePages: 4, trapNewUrls: 20, templateRoundSize: 100 });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    // 30 articles of one template sharing their text (the small site of issue 46), linked from home.
    await h.send(trapLinks(30));
    const pages = await h.fetchPages(30, () => ({ fingerprint: '00ff00ff00ff00ff' }));
    assert.equal(new Set(pages.map((p) => p.url)).size, 30);
    await quiet(h);
    assert.equal(h.progress.totals().templateSkipped, 0);
    await h.stop();
  });

  it("a host rule's judgeTraps: false undoes a verdict: the template's URLs are admitted and fetched again", async () => {
    let rules = HostRules.empty();
    const h = await trapDriver({ trapProbePages: 4, trapNewUrls: 20, templateRoundSize: 100 }, { hostRules: { current: () => rules } });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    await h.send(trapLinks(10));
    const judged = await fetchGrowing(h, 10);
    assert.equal(judged.length, 4, 'judged at the fourth page');
    await h.send(trapLinks(3));
    await quiet(h);
    // The operator sees the skips and trusts the host.
    rules = HostRules.parse(JSON.stringify({ 't.test': { judgeTraps: false } }));
    await h.send(trapLinks(3));
    const again = await h.fetchPages(3);
    assert.ok(again.every((r) => r.url.includes('/s/')), again.map((r) => r.url).join(' '));
    await quiet(h);
    await h.stop();
  });

  it("query restriction 'form' (Hoshino et al.): URLs that differ only in their query are followed once", async () => {
    const h = await trapDriver({ queryRestriction: 'form' });
    await h.send(seed('http://t.test/'));
    await h.fetchPages(1);
    await h.send([trapLink('http://t.test/search?q=1'), trapLink('http://t.test/search?q=2'), trapLink('http://t.test/list'), trapLink('http://t.test/list?page=2')]);
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
    await h.send([trapLink('http://t.test/search?q=1'), trapLink('http://t.test/list')]);
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
    const c = (path: string): DiscoveredLink => link(`http://c.test/${path}`, 'http://t.test/');
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
    await h.send([link('http://b.example.co.uk/', 'http://t.test/')]);
    await h.fetchPages(1);
    await h.send([link('http://c.example.co.uk/', 'http://t.test/'), link('http://a.example.co.uk/x', 'http://t.test/'), link('http://other.test/', 'http://t.test/')]);
    const [other] = await h.fetchPages(1);
    assert.equal(other!.url, 'http://other.test/');
    await quiet(h);
    assert.equal(h.progress.totals().siteCapSkipped, 2);
    await h.stop();
  });
});
