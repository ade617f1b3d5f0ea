import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classify, depthRows, sampled, serverRoot } from '../../services/scheduler/discovery-mode.ts';
import { openSchedulerDriver, seed, link } from '../support/scheduler-driver.ts';
import type { FrontierRecord } from '../../schemas/index.ts';

describe('discovery mode rules (seed 002)', () => {
  it('Table 4: internal is the start host or a subdomain of it; the four cases', () => {
    assert.equal(classify('example.jp', 'example.jp'), 'internal');
    assert.equal(classify('example.jp', 'www.example.jp'), 'internal');
    assert.equal(classify('www.example.jp', 'example.jp'), 'external');
    assert.equal(classify('www.example.jp', 'sv1.example.jp'), 'external');
    assert.equal(classify('example.jp:8080', 'a.example.jp:9090'), 'internal', 'ports do not matter');
    assert.equal(classify('example.jp', 'badexample.jp'), 'external');
  });

  it('sampling: seeded, stable, close to the rate', () => {
    const urls = Array.from({ length: 20_000 }, (_, i) => `http://a.test/p/${i}`);
    for (const rate of [0.3, 0.55]) {
      const kept = urls.filter((u) => sampled(u, 'a.test', rate, 1)).length / urls.length;
      assert.ok(Math.abs(kept - rate) < 0.015, `${rate}: kept ${kept}`);
    }
    assert.equal(sampled('http://a.test/x', 'a.test', 0.5, 7), sampled('http://a.test/x', 'a.test', 0.5, 7));
    const differs = urls.slice(0, 200).filter((u) => sampled(u, 'a.test', 0.5, 1) !== sampled(u, 'a.test', 0.5, 2)).length;
    assert.ok(differs > 50, 'another seed draws another sample');
    assert.ok(urls.every((u) => sampled(u, 'a.test', 1, 1)));
  });

  it('server roots and per-depth rows with cumulative load and yield ratios', () => {
    assert.equal(serverRoot('https://x.test:8443/a/b?c'), 'https://x.test:8443/');
    assert.deepEqual(depthRows([1, 4, 5], [0, 3, 1]), [
      { depth: 0, pagesCrawled: 1, externalServersFound: 0, loadRatio: 0.1, yieldRatio: 0 },
      { depth: 1, pagesCrawled: 4, externalServersFound: 3, loadRatio: 0.5, yieldRatio: 0.75 },
      { depth: 2, pagesCrawled: 5, externalServersFound: 1, loadRatio: 1, yieldRatio: 1 },
    ]);
  });
});

describe('discovery mode in the scheduler', () => {
  it('Table 4 in the crawl: internal URLs fetched with their start site, external hosts reported once on servers and never fetched', async () => {
    const s = await openSchedulerDriver({ mode: 'discovery', minIntervalMs: 0, politeness: { kFactor: 0 } });
    await s.send([seed('http://example.jp/'), seed('http://www.other.jp/')]);
    const pages: FrontierRecord[] = [];
    const drain = async (): Promise<void> => {
      for (let i = 0; i < 30; i++) {
        for (const r of s.requests()) {
          if (r.reason !== 'robots') pages.push(r);
          await s.answer(r);
        }
        await s.advance(20);
      }
    };
    await drain();
    const from = (start: string, url: string, source: string, depth = 1) => link(url, source, { startSite: start, depth });
    await s.send([
      from('example.jp', 'http://example.jp/a', 'http://example.jp/'),
      from('example.jp', 'http://www.example.jp/b', 'http://example.jp/'),
      from('www.other.jp', 'http://other.jp/c', 'http://www.other.jp/'),
      from('www.other.jp', 'http://sv1.other.jp/d', 'http://www.other.jp/'),
      from('www.other.jp', 'http://sv1.other.jp/e', 'http://www.other.jp/', 2),
      from('example.jp', 'http://sv1.other.jp/f', 'http://www.example.jp/b', 2),
    ]);
    await drain();
    const fetched = pages.map((r) => r.url).sort();
    assert.deepEqual(fetched, ['http://example.jp/', 'http://example.jp/a', 'http://www.example.jp/b', 'http://www.other.jp/']);
    assert.equal(pages.find((r) => r.url === 'http://www.example.jp/b')?.startSite, 'example.jp');
    const servers = s.driver.allOutput('servers').map(({ value: r }) => [r.host, r.firstUrl, r.startSite, r.depth]);
    assert.deepEqual(servers, [
      ['other.jp', 'http://other.jp/c', 'www.other.jp', 1],
      ['sv1.other.jp', 'http://sv1.other.jp/d', 'www.other.jp', 1],
    ]);
    const t = s.progress.totals();
    assert.equal(t.externalServers, 2);
    assert.deepEqual(t.pagesByDepth, [2, 2]);
    assert.deepEqual(t.serversByDepth, [0, 2]);
    await s.stop();
  });

  it('sampling keeps about R of the internal URLs at each depth; --follow-servers makes a new server a start site', async () => {
    const s = await openSchedulerDriver({ mode: 'discovery', sampleRate: 0.5, followServers: true, minIntervalMs: 0, politeness: { kFactor: 0 } });
    await s.send(seed('http://a.test/'));
    await s.send(Array.from({ length: 200 }, (_, i) => link(`http://a.test/p${i}`, 'http://a.test/', { startSite: 'a.test' })));
    await s.send(link('http://b.test/x', 'http://a.test/', { startSite: 'a.test' }));
    const t = s.progress.totals();
    assert.ok(t.sampleSkipped! > 70 && t.sampleSkipped! < 130, `left out ${t.sampleSkipped} of 200`);
    assert.equal(t.externalServers, 1);
    // b.test now is a start site: its root is queued with itself as start site.
    const reqs: FrontierRecord[] = [];
    for (let i = 0; i < 20; i++) {
      for (const r of s.requests()) {
        reqs.push(r);
        await s.answer(r);
      }
      await s.advance(20);
    }
    const b = reqs.find((r) => r.url === 'http://b.test/');
    assert.ok(b, 'the new server\'s root was fetched');
    assert.equal(b.startSite, 'b.test');
    assert.equal(b.depth, 0);
    await s.stop();
  });
});
