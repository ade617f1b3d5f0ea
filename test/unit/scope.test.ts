import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CrawlScope, compileUrlFilter, hostName, passesFilter, scopeEntry, withinDomain } from '../../services/scheduler/scope.ts';
import { registrableDomain } from '../../services/common/url.ts';
import { openSchedulerDriver, seed, link, T0 } from '../support/scheduler-driver.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { LinksRecord } from '../../schemas/index.ts';

describe('crawl scope rules', () => {
  it('registrable domains follow the Public Suffix List, its default rule for unlisted suffixes', () => {
    assert.equal(registrableDomain('www.example.org'), 'example.org');
    assert.equal(registrableDomain('a.b.example.co.uk'), 'example.co.uk');
    assert.equal(registrableDomain('alice.github.io'), 'alice.github.io');
    assert.equal(registrableDomain('h1.sim.test:8080'), 'sim.test');
    assert.equal(registrableDomain('127.0.0.1:3000'), '127.0.0.1');
    assert.equal(registrableDomain('localhost'), 'localhost');
    assert.equal(registrableDomain('[::1]:80'), '[::1]');
  });

  it('host names drop the port; subdomains end at a label boundary', () => {
    assert.equal(hostName('Example.ORG:8080'), 'example.org');
    assert.equal(hostName('[::1]:8080'), '[::1]');
    assert.ok(withinDomain('docs.example.org', 'example.org'));
    assert.ok(withinDomain('example.org', 'example.org'));
    assert.ok(!withinDomain('badexample.org', 'example.org'));
    assert.equal(scopeEntry('web', 'a.example.org'), undefined);
    assert.equal(scopeEntry('host', 'www.example.org:81'), 'www.example.org');
    assert.equal(scopeEntry('domain', 'www.example.org:81'), 'example.org');
  });

  it('host: only the seeds\' host names, any port', () => {
    const scope = new CrawlScope('host');
    assert.ok(scope.add('www.example.org'));
    assert.ok(!scope.add('www.example.org:8080'), 'the same entry');
    assert.ok(scope.includes('www.example.org:8080'));
    assert.ok(!scope.includes('example.org'));
    assert.ok(!scope.includes('docs.example.org'));
    assert.ok(!scope.includes('other.test'));
  });

  it('domain: the seeds\' registrable domains and every subdomain, nothing that merely ends alike', () => {
    const scope = new CrawlScope('domain');
    scope.add('www.example.org');
    scope.add('shop.example.co.uk');
    for (const h of ['example.org', 'www.example.org', 'a.b.docs.example.org:8443', 'example.co.uk', 'x.example.co.uk']) assert.ok(scope.includes(h), h);
    for (const h of ['badexample.org', 'example.com', 'co.uk', 'other.co.uk', 'org']) assert.ok(!scope.includes(h), h);
    // Seeds added later extend it.
    assert.ok(!scope.includes('news.other.net'));
    scope.add('other.net');
    assert.ok(scope.includes('news.other.net'));
    // So do entries read back from the partition's store, for a host just asked about.
    assert.ok(!scope.includes('a.restored.test'));
    scope.restore('restored.test');
    assert.ok(scope.includes('a.restored.test'));
  });

  it('web: everything', () => {
    const scope = new CrawlScope('web');
    assert.ok(!scope.add('www.example.org'));
    assert.ok(scope.includes('anything.invalid'));
  });

  it('include/exclude on the URL: any include must match, exclude wins', () => {
    const f = compileUrlFilter(['/docs/', '/blog/'], ['\\.pdf$', '/docs/private/']);
    assert.ok(passesFilter('http://a.test/docs/x.html', f));
    assert.ok(passesFilter('http://a.test/blog/1', f));
    assert.ok(!passesFilter('http://a.test/shop/', f), 'no include matches');
    assert.ok(!passesFilter('http://a.test/docs/x.pdf', f), 'exclude wins over include');
    assert.ok(!passesFilter('http://a.test/docs/private/a', f));
    assert.ok(passesFilter('http://a.test/anything', compileUrlFilter([], [])));
    assert.throws(() => compileUrlFilter(['(unclosed'], []), /--include "\(unclosed" is not a valid regular expression/);
  });
});

describe('crawl scope in the scheduler', () => {
  const scopeOnly = (url: string): LinksRecord => ({ v: SCHEMA_VERSION, type: 'seed', url, addedAt: T0, scopeOnly: true });

  it('domain scope: links outside the seeds\' domains are counted, never requested; a scope-only seed extends the scope and queues nothing', async () => {
    const s = await openSchedulerDriver({ scope: 'domain', minIntervalMs: 0, politeness: { kFactor: 0 } });
    await s.send(seed('http://www.a.test/'));
    const home = await s.nextPage();
    assert.equal(home.url, 'http://www.a.test/');
    await s.answer(home);
    await s.send([
      link('http://docs.a.test/in', home.url),
      link('http://www.b.test/out', home.url),
      link('http://www.c.test/later', home.url),
    ]);
    assert.equal(s.progress.totals().outOfScopeSkipped, 2);
    // A seed of c.test sent to this partition only to extend its scope: nothing is requested for it.
    await s.send(scopeOnly('http://www.c.test/'));
    await s.send(link('http://www.c.test/later', home.url));
    const urls: string[] = [];
    for (let i = 0; i < 20; i++) {
      for (const r of s.requests()) {
        if (r.reason !== 'robots') urls.push(r.url);
        await s.answer(r);
      }
      await s.advance(50);
    }
    assert.deepEqual(urls.sort(), ['http://docs.a.test/in', 'http://www.c.test/later']);
    assert.equal(s.progress.totals().outOfScopeSkipped, 2);
    await s.stop();
  });

  it('host scope with include/exclude: exclude wins, a redirect off the host is not followed', async () => {
    const s = await openSchedulerDriver({ scope: 'host', include: ['/docs/'], exclude: ['\\.pdf$'], minIntervalMs: 0, politeness: { kFactor: 0 } });
    await s.send(seed('http://www.a.test/'));
    const home = await s.nextPage();
    await s.answer(home);
    await s.send([
      link('http://www.a.test/docs/1.html', home.url),
      link('http://www.a.test/docs/2.pdf', home.url),
      link('http://www.a.test/shop/', home.url),
      link('http://docs.a.test/docs/3.html', home.url),
      link('http://www.b.test/docs/4.html', home.url, { redirect: [{ url: home.url, status: 301 }] }),
    ]);
    const urls: string[] = [];
    for (let i = 0; i < 20; i++) {
      for (const r of s.requests()) {
        if (r.reason !== 'robots') urls.push(r.url);
        await s.answer(r);
      }
      await s.advance(50);
    }
    assert.deepEqual(urls, ['http://www.a.test/docs/1.html']);
    assert.equal(s.progress.totals().outOfScopeSkipped, 4);
    await s.stop();
  });

  it('the scope survives a restart (kept in the partition\'s store)', async () => {
    const { tempDir, removeDir } = await import('../support/transports.ts');
    const dir = tempDir();
    try {
      let s = await openSchedulerDriver({ scope: 'domain', minIntervalMs: 0 }, { dataDir: dir });
      await s.send(scopeOnly('http://www.a.test/'));
      await s.stop();
      s = await openSchedulerDriver({ scope: 'domain', minIntervalMs: 0 }, { dataDir: dir });
      await s.send([link('http://x.a.test/p', 'http://www.a.test/'), link('http://x.b.test/p', 'http://www.a.test/')]);
      assert.equal(s.progress.totals().outOfScopeSkipped, 1);
      await s.stop();
    } finally {
      removeDir(dir);
    }
  });
});

describe('seeds sent to a crawl', () => {
  it('each seed goes to its host\'s partition, and a scope-only copy to every partition', async () => {
    const { seedOutRecords, seedRecords } = await import('../../services/cli/crawl.ts');
    const { records, rejected } = seedRecords(['http://Example.COM/a', 'ftp://x/', 'http://example.com/b'], T0, new Map([['example.com', 'www.example.com']]));
    assert.equal(rejected.length, 1);
    assert.deepEqual(records.map((r) => [r.key, r.value.url]), [['www.example.com', 'http://www.example.com/a'], ['www.example.com', 'http://www.example.com/b']]);
    const out = seedOutRecords('links', records.slice(0, 1), 3);
    assert.equal(out.length, 4);
    assert.equal(out[0]!.partition, undefined, 'the seed itself is keyed by its host');
    assert.deepEqual(out.slice(1).map((r) => r.partition), [0, 1, 2]);
    assert.ok(out.slice(1).every((r) => (JSON.parse(r.value!.toString()) as { scopeOnly?: boolean }).scopeOnly === true));
  });
});
