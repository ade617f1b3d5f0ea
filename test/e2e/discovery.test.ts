/**
 * Seed 002's server-discovery crawl through `meguri crawl --mode discovery` against a small web of
 * servers on 127.0.0.1 (static resolution): Table 4's four cases decide what is fetched, every
 * server reachable within the depth limit is found with --follow-servers and the `servers` topic
 * holds each exactly once; sampling and the query restriction show in the per-depth figures.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedTransport } from '../../services/runtime/index.ts';
import { tempDir, removeDir, readAll } from '../support/transports.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'bin/meguri.js');

function meguri(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, MEGURI_LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('server discovery through meguri crawl --mode discovery', { timeout: 500_000 }, () => {
  let server: Server;
  let port = 0;
  const hits: string[] = [];
  const dirs: string[] = [];

  const pages = (): Record<string, Record<string, string[]>> => {
    const u = (h: string, p = '/'): string => `http://${h}:${port}${p}`;
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
    server = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const path = req.url ?? '/';
      hits.push(`${host}${path}`);
      const links = path === '/robots.txt' ? undefined : pages()[host]?.[path];
      if (!links) {
        res.writeHead(404).end();
        return;
      }
      const words = Array.from({ length: 30 }, (_, i) => `${host.replace(/\W/g, '')}${path.replace(/\W/g, '')}w${i}`).join(' ');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><head><title>${host}${path}</title></head><body><p>${words}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    dirs.forEach(removeDir);
  });

  async function discover(seeds: string[], extra: string[]) {
    const dir = tempDir();
    dirs.push(dir);
    hits.length = 0;
    const r = await meguri([
      'crawl', ...seeds.map((h) => { const [name, ...path] = h.split('/'); return `http://${name}:${port}/${path.join('/')}`; }),
      '--mode', 'discovery',
      '--dns', 'static', '--resolve', '*.jp=127.0.0.1', '--resolve', '*.net=127.0.0.1', '--resolve', 'example.jp=127.0.0.1', '--resolve', 'start.jp=127.0.0.1',
      '--until-idle', '--no-progress', '--min-interval', '0.01', '--partitions', '3',
      '--data', join(dir, 'data'), '--summary-json', join(dir, 'summary.json'), '--out', join(dir, 'out'),
      ...extra,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Record<string, unknown> & { perDepth: { depth: number; pagesCrawled: number; externalServersFound: number }[] };
    const log = await EmbeddedTransport.open({ dir: join(dir, 'data') });
    const servers = (await readAll(log, 'servers')).map((rec) => JSON.parse(rec.value!) as { host: string; startSite: string });
    await log.close();
    const fetched = [...new Set(hits.filter((h) => !h.endsWith('/robots.txt')))].sort();
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
