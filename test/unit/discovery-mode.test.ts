import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classify, depthRows, sampled, serverRoot } from '../../services/common/discovery.ts';
import { openSchedulerDriver, seed, link } from '../support/scheduler-driver.ts';
import type { FrontierRecord } from '../../schemas/index.ts';

describe('discovery mode rules (Hoshino et al.)', () => {
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

describe('discovery simulator (Hoshino et al. over a link graph)', () => {
  it('counts internal pages by depth, external URLs and servers once; query restriction and sampling cut the load', async () => {
    const { buildCsr, attachUrls } = await import('../../services/ordering/graph.ts');
    const { simulateDiscovery, relativeRows, defaultStarts } = await import('../../services/ordering/discovery-sim.ts');
    // 0 http://a.test/ links 1..40 (/p?id=i on a.test), 41 (www.a.test, internal), 42 (b.test, external);
    // every /p?id=i links 43 (c.test, external); 41 links 44 (c.test/x, external, same server as 43).
    const urls = ['http://a.test/', ...Array.from({ length: 40 }, (_, i) => `http://a.test/p?id=${i}`), 'http://www.a.test/', 'http://b.test/', 'http://c.test/', 'http://c.test/x'];
    const src: number[] = [];
    const dst: number[] = [];
    const edge = (a: number, b: number): void => {
      src.push(a);
      dst.push(b);
    };
    for (let i = 1; i <= 42; i++) edge(0, i);
    for (let i = 1; i <= 40; i++) edge(i, 43);
    edge(41, 44);
    const g = attachUrls(buildCsr(urls.length, Uint32Array.from(src), Uint32Array.from(dst)), urls);
    const full = simulateDiscovery(g, { sampleRate: 1, queryRestriction: false, maxDepth: 5, sampleSeed: 1, starts: [0] });
    assert.deepEqual(full.pagesByDepth, [1, 41]);
    assert.deepEqual(full.externalUrlsByDepth, [0, 1, 2]);
    assert.deepEqual(full.serversByDepth, [0, 1, 1]);
    assert.equal(full.servers, 2);
    const query = simulateDiscovery(g, { sampleRate: 1, queryRestriction: true, maxDepth: 5, sampleSeed: 1, starts: [0] });
    assert.deepEqual(query.pagesByDepth, [1, 2], 'one /p form and www.a.test');
    assert.equal(query.externalUrls, 3, 'every external URL still found');
    const rows = relativeRows(query, full, 2);
    assert.equal(rows[2]!.loadRatio, Math.round((3 / 42) * 1e4) / 1e4);
    assert.equal(rows[2]!.yieldRatio, 1);
    const half = simulateDiscovery(g, { sampleRate: 0.5, queryRestriction: false, maxDepth: 5, sampleSeed: 1, starts: [0] });
    assert.ok(half.pagesByDepth[1]! > 10 && half.pagesByDepth[1]! < 32, String(half.pagesByDepth[1]));
    assert.deepEqual(defaultStarts(g, 3), [0], 'a.test has 41 pages, c.test 2, the others 1');
    assert.deepEqual(defaultStarts(g, 2), [0, 43]);
  });
});
