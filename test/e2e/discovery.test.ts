/**
 * Hoshino et al.'s server-discovery crawl through `meguri crawl --mode discovery` against a small web of
 * servers on 127.0.0.1 (static resolution): Table 4's four cases decide what is fetched, every
 * server reachable within the depth limit is found with --follow-servers and the `servers` topic
 * holds each exactly once; sampling and the query restriction show in the per-depth figures.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EmbeddedTransport } from '../../services/runtime/index.ts';
import { tempDir, removeDir, readAll } from '../support/transports.ts';
import { TestWeb, cliCrawl } from '../support/crawl-check.ts';

describe('server discovery through meguri crawl --mode discovery', { timeout: 500_000 }, () => {
  let web: TestWeb;
  let port = 0;
  const dirs: string[] = [];

  const pages = (): Record<string, Record<string, string[]>> => {
    const u = (h: string, p = '/'): string => web.url(h, p);
    const list = [...Array.from({ length: 20 }, (_, i) => `/item?id=${i}`), ...Array.from({ length: 40 }, (_, i) => `/p${i}`)];
    return {
      'example.jp': { '/': ['/a', u('www.example.jp'), u('s1.net')], '/a': [] },
      'www.example.jp': { '/': ['/list'], '/list': list, ...Object.fromEntries(list.map((p) => [p, []])) },
      'www.start.jp': { '/': [u('start.jp'), u('sv1.start.jp', '/x')] },
      'start.jp': { '/': [u('s5.net')] },
      'sv1.start.jp': { '/': [], '/x': [] },
      // A chain inside s1.net: its link to s2.net is on a page at depth 2, the one to s4.net at depth 4.
      's1.net': { '/': ['/1'], '/1': ['/2'], '/2': [u('s2.net'), '/3'], '/3': ['/4'], '/4': [u('s4.net')] },
      's2.net': { '/': [] },
      's4.net': { '/': [] },
      's5.net': { '/': [] },
    };
  };

  before(async () => {
    web = await TestWeb.start((host, path) => {
      const links = path === '/robots.txt' ? undefined : pages()[host]?.[path];
      if (!links) return { status: 404 };
      const words = Array.from({ length: 30 }, (_, i) => `${host.replace(/\W/g, '')}${path.replace(/\W/g, '')}w${i}`).join(' ');
      return { status: 200, contentType: 'text/html', body: `<html><head><title>${host}${path}</title></head><body><p>${words}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>` };
    });
    port = web.port;
  });
  after(async () => {
    await web.close();
    dirs.forEach(removeDir);
  });

  async function discover(seeds: string[], extra: string[]) {
    const dir = tempDir();
    dirs.push(dir);
    const summary = await cliCrawl<Record<string, unknown> & { perDepth: { depth: number; pagesCrawled: number; externalServersFound: number }[] }>({
      web,
      seeds: seeds.map((h) => { const [name, ...path] = h.split('/'); return web.url(name!, `/${path.join('/')}`); }),
      resolve: ['*.jp=127.0.0.1', '*.net=127.0.0.1', 'example.jp=127.0.0.1', 'start.jp=127.0.0.1'],
      dir,
      args: ['--mode', 'discovery', '--min-interval', '0.01', '--partitions', '3', '--out', join(dir, 'out'), ...extra],
      timeoutMs: 150_000,
    });
    const log = await EmbeddedTransport.open({ dir: join(dir, 'data') });
    const servers = (await readAll(log, 'servers')).map((rec) => JSON.parse(rec.value!) as { host: string; startSite: string });
    await log.close();
    const fetched = [...new Set(web.accessLog().map((r) => `${r.host}${r.path}`).filter((h) => !h.endsWith('/robots.txt')))].sort();
    return { summary, servers, fetched, out: join(dir, 'out') };
  }

  it('Table 4 decides: from example.jp, www.example.jp is internal; from www.start.jp, start.jp and sv1.start.jp are servers, never fetched', async () => {
    const { summary, servers, fetched, out } = await discover(['example.jp', 'www.start.jp'], ['--max-depth', '1']);
    assert.deepEqual(fetched, ['example.jp/', 'example.jp/a', 'www.example.jp/', 'www.start.jp/']);
    const p = `:${port}`;
    assert.deepEqual(servers.map((s) => `${s.host} from ${s.startSite}`).sort(), [`s1.net${p} from example.jp`, `start.jp${p} from www.start.jp`, `sv1.start.jp${p} from www.start.jp`]);
    assert.equal(summary.externalServers, 3);
    assert.deepEqual(summary.perDepth.map((r) => [r.depth, r.pagesCrawled, r.externalServersFound]), [[0, 2, 0], [1, 2, 3]]);
    assert.ok(existsSync(join(out, 'discovery.csv')) && readFileSync(join(out, 'discovery.svg'), 'utf8').startsWith('<svg'));
  });

  it('--follow-servers finds every server reachable within the depth limit, each exactly once on `servers`', async () => {
    const { summary, servers, fetched } = await discover(['example.jp', 'www.start.jp'], ['--max-depth', '3', '--follow-servers', '--no-query']);
    const p = `:${port}`;
    const hosts = servers.map((s) => s.host).sort();
    assert.deepEqual(hosts, [`s1.net${p}`, `s2.net${p}`, `s5.net${p}`, `start.jp${p}`, `sv1.start.jp${p}`]);
    assert.equal(new Set(hosts).size, hosts.length, 'each server once');
    assert.equal(summary.externalServers, 5);
    assert.ok(!fetched.includes('s1.net/4'), 's1.net/4 lies beyond the depth limit');
    assert.ok(!fetched.some((h) => h.startsWith('s4.net')), 's4.net is only linked from beyond the depth limit');
    assert.ok(fetched.includes('s2.net/') && fetched.includes('s5.net/') && fetched.includes('start.jp/'));
  });

  it('the query restriction and sampling show in the per-depth figures', async () => {
    const full = await discover(['www.example.jp/list'], []);
    const noQuery = await discover(['www.example.jp/list'], ['--query-restriction']);
    const half = await discover(['www.example.jp/list'], ['--sample-rate', '0.5']);
    const depth1 = (r: { summary: { perDepth: { depth: number; pagesCrawled: number }[] } }): number => r.summary.perDepth.find((d) => d.depth === 1)?.pagesCrawled ?? 0;
    assert.equal(depth1(full), 60);
    assert.equal(depth1(noQuery), 41, 'one /item?id= form, 40 plain pages');
    assert.ok(depth1(half) >= 18 && depth1(half) <= 42, `about half: ${depth1(half)}`);
    assert.ok(Number(half.summary.sampleSkipped) === 60 - depth1(half));
  });
});
