import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HostRules } from '../../services/scheduler/host-rules.ts';
import type { HostRulesSource } from '../../services/scheduler/host-rules.ts';
import { TestDriver } from '../../services/runtime/index.ts';
import { schedulerService, CrawlProgress } from '../../services/scheduler/service.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { FrontierRecord, LinksRecord, TopicRecords } from '../../schemas/index.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { seed, link, linksKey, T0 } from '../support/scheduler-driver.ts';

describe('host rules file', () => {
  it('exact host first, then the longest *.domain pattern (the domain itself included); ports ignored', () => {
    const rules = HostRules.parse(JSON.stringify({
      'www.example.org': { minIntervalS: 5 },
      '*.example.org': { block: true },
      '*.shop.example.org': { maxPages: 10 },
      'Other.TEST.': { userAgent: 'special/1.0' },
    }));
    assert.deepEqual(rules.ruleFor('www.example.org:8080'), { minIntervalS: 5 });
    assert.deepEqual(rules.ruleFor('example.org'), { block: true });
    assert.deepEqual(rules.ruleFor('a.b.example.org'), { block: true });
    assert.deepEqual(rules.ruleFor('x.shop.example.org'), { maxPages: 10 });
    assert.deepEqual(rules.ruleFor('shop.example.org'), { maxPages: 10 });
    assert.deepEqual(rules.ruleFor('other.test'), { userAgent: 'special/1.0' });
    assert.equal(rules.ruleFor('badexample.org'), undefined);
    assert.equal(rules.ruleFor('sub.other.test'), undefined, 'a plain key is that host only');
    assert.equal(HostRules.empty().ruleFor('example.org'), undefined);
  });

  it('a bad file is refused with the key (and field) named', () => {
    assert.throws(() => HostRules.parse('{"a.test": {"block": true}', 'host rules f.json'), /host rules f\.json: not JSON/);
    assert.throws(() => HostRules.parse('[]'), /expected an object keyed by host/);
    assert.throws(() => HostRules.parse('{"a.test": {"blok": true}}'), /"a\.test": .*blok/);
    assert.throws(() => HostRules.parse('{"a.test": {"maxPages": -1}}'), /"a\.test"\.maxPages: /);
    assert.throws(() => HostRules.parse('{"a.test": {"minIntervalS": "10"}}'), /"a\.test"\.minIntervalS: /);
    assert.throws(() => HostRules.parse('{"a.test": {"userAgent": "two\\nlines"}}'), /"a\.test"\.userAgent: /);
    assert.throws(() => HostRules.parse('{"http://a.test/": {"block": true}}'), /key "http:\/\/a\.test\/" is not a host name/);
    assert.throws(() => HostRules.parse('{"a.*.test": {"block": true}}'), /not a host name or a "\*\.domain" pattern/);
  });
});

describe('host rules in the scheduler', () => {
  class Swappable implements HostRulesSource {
    rules = HostRules.empty();
    current(): HostRules {
      return this.rules;
    }
    set(json: object): void {
      this.rules = HostRules.parse(JSON.stringify(json));
    }
  }

  async function open(source: HostRulesSource, options: SchedulerOptionsInput = {}) {
    const progress = new CrawlProgress();
    const driver = await TestDriver.open<LinksRecord, TopicRecords>(
      schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, minIntervalMs: 0, politeness: { kFactor: 0 }, ...options }, { progress, hostRules: source }),
      { catalog: crawlCatalog, partitions: 1, startMs: T0 },
    );
    const send = (records: LinksRecord[]): Promise<void> => driver.pipeInput('links', records.map((value) => ({ key: linksKey(value), value })));
    const answer = (req: FrontierRecord, extra: object = {}): Promise<void> =>
      send([
        req.reason === 'robots'
          ? { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: 'robots', status: 404, result: 'client-error', outDegree: 0, fetch: { totalMs: 5, bytes: 0 }, fetchedAt: driver.clock.now(), robots: { status: 404 } }
          : { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 1000 }, fetchedAt: driver.clock.now(), md5: 'a'.repeat(32), ...extra },
      ]);
    /** Answers every request for `ms` of clock time in 10 ms steps; returns them. */
    const run = async (ms: number): Promise<FrontierRecord[]> => {
      const seen: FrontierRecord[] = [];
      for (let t = 0; t < ms; t += 10) {
        for (const r of driver.readOutput('frontier')) {
          seen.push(r.value);
          await answer(r.value);
        }
        await driver.advanceTime(10);
      }
      return seen;
    };
    return { driver, progress, send, answer, run };
  }

  it('block: nothing at all is asked of the host, robots.txt included; lifting it lets links in again', async () => {
    const rules = new Swappable();
    rules.set({ '*.blocked.test': { block: true } });
    const s = await open(rules);
    await s.send([seed('http://www.blocked.test/'), seed('http://ok.test/')]);
    let reqs = await s.run(200);
    assert.deepEqual(reqs.map((r) => r.url), ['http://ok.test/robots.txt', 'http://ok.test/']);
    assert.equal(s.progress.totals().hostRuleSkipped, 1);
    rules.set({});
    await s.send([link('http://www.blocked.test/a', 'http://ok.test/')]);
    reqs = await s.run(200);
    assert.deepEqual(reqs.map((r) => r.url), ['http://www.blocked.test/robots.txt', 'http://www.blocked.test/a']);
    await s.driver.close();
  });

  it('a block set while URLs are queued stops the host at its next request, without a restart', async () => {
    const rules = new Swappable();
    const s = await open(rules, { minIntervalMs: 100 });
    await s.send([seed('http://a.test/'), ...[1, 2, 3, 4, 5].map((i) => link(`http://a.test/${i}`, 'http://a.test/'))]);
    const before = await s.run(250);
    assert.ok(before.length >= 2 && before.length < 7, before.map((r) => r.url).join(' '));
    rules.set({ 'a.test': { block: true } });
    const after = await s.run(1000);
    assert.deepEqual(after, []);
    assert.equal(s.progress.totals().queued, 0, 'its queue was given up');
    await s.driver.close();
  });

  it('maxPerHost: a host rule lets one host have several requests in flight, the others keep one', async () => {
    const rules = new Swappable();
    rules.set({ 'wide.test': { maxPerHost: 3 } });
    const s = await open(rules);
    await s.send([seed('http://wide.test/'), seed('http://narrow.test/')]);
    await s.send(['wide', 'narrow'].flatMap((h) => [1, 2, 3, 4].map((i) => link(`http://${h}.test/${i}`, `http://${h}.test/`))));
    // robots.txt of both hosts answered; the pages left unanswered.
    const pages: FrontierRecord[] = [];
    for (let t = 0; t < 100; t += 10) {
      for (const { value } of s.driver.readOutput('frontier')) {
        if (value.reason === 'robots') await s.answer(value);
        else pages.push(value);
      }
      await s.driver.advanceTime(10);
    }
    const out = pages.map((r) => new URL(r.url).hostname);
    assert.equal(out.filter((h) => h === 'wide.test').length, 3);
    assert.equal(out.filter((h) => h === 'narrow.test').length, 1);
    await s.driver.close();
  });

  it('maxPages counts distinct pages of the host; maxDepth bounds links to it; minIntervalS spaces its requests; userAgent goes on every request', async () => {
    const rules = new Swappable();
    rules.set({ 'few.test': { maxPages: 2 }, 'shallow.test': { maxDepth: 1 }, 'slow.test': { minIntervalS: 0.5, userAgent: 'special-bot/2.0' } });
    const s = await open(rules);
    await s.send([seed('http://few.test/'), seed('http://shallow.test/'), seed('http://slow.test/')]);
    await s.send([
      ...[1, 2, 3, 4].map((i) => link(`http://few.test/${i}`, 'http://few.test/')),
      link('http://shallow.test/1', 'http://shallow.test/', { depth: 1 }),
      link('http://shallow.test/2', 'http://shallow.test/1', { depth: 2 }),
      link('http://slow.test/1', 'http://slow.test/'),
      link('http://slow.test/2', 'http://slow.test/'),
    ]);
    const reqs = await s.run(2000);
    const pages = (host: string): FrontierRecord[] => reqs.filter((r) => r.host === host && r.reason !== 'robots');
    assert.equal(pages('few.test').length, 2, pages('few.test').map((r) => r.url).join(' '));
    assert.deepEqual(pages('shallow.test').map((r) => r.url), ['http://shallow.test/', 'http://shallow.test/1']);
    const slow = reqs.filter((r) => r.host === 'slow.test');
    assert.equal(slow.length, 4, 'robots.txt and three pages');
    for (let i = 1; i < slow.length; i++) assert.ok(slow[i]!.issuedAt - slow[i - 1]!.issuedAt >= 500, `gap ${slow[i]!.issuedAt - slow[i - 1]!.issuedAt} ms`);
    assert.ok(slow.every((r) => r.userAgent === 'special-bot/2.0'));
    assert.ok(reqs.filter((r) => r.host !== 'slow.test').every((r) => r.userAgent === undefined));
    assert.ok(s.progress.totals().hostRuleSkipped >= 3);
    await s.driver.close();
  });
});
