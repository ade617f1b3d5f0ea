/**
 * Spider traps through the `meguri crawl` command (a child process, static resolution to a test
 * server on 127.0.0.1): a host whose every link carries a fresh `?sid=`, and one whose every link
 * carries a fresh random path token (`/s/<token>/page`), each with one normal page. With default
 * settings each ends with at most 100 requests and its normal page fetched; without parameter
 * stripping the template defence alone holds; a template of distinct pages stops at its budget.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { tempDir, removeDir } from '../support/transports.ts';
import { join } from 'node:path';
import { TestWeb, cliCrawl, runMeguri } from '../support/crawl-check.ts';

const fresh = (): string => randomBytes(6).toString('hex');

function page(title: string, body: string, links: string[]): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><p>${body}</p>${links.map((l) => `<a href="${l}">next</a>`).join(' ')}</body></html>`;
}

const TRAP_TEXT = 'Welcome back. Your session is active. Choose where to go next.';

/** The pages of the three hostile hosts (by host name without port). */
function serve(host: string, path: string): { status: number; body: string } {
  const url = new URL(path, 'http://x');
  if (url.pathname === '/robots.txt') return { status: 404, body: '' };
  if (url.pathname === '/normal.html') return { status: 200, body: page('Normal', 'The one real page of this host, about opening hours and the address.', []) };
  if (host === 'sid.sim.test') {
    // Every link carries a fresh session id, the normal page's link included.
    const links = Array.from({ length: 10 }, (_, i) => `/trap?n=${i}&sid=${fresh()}`);
    if (url.pathname === '/') links.unshift(`/normal.html?sid=${fresh()}`);
    return { status: 200, body: page('Shop', TRAP_TEXT, [...links, `/?sid=${fresh()}`]) };
  }
  if (host === 'ids.sim.test') {
    const links = Array.from({ length: 10 }, () => `/s/${fresh()}/page`);
    if (url.pathname === '/') links.unshift('/normal.html');
    return { status: 200, body: page('Portal', TRAP_TEXT, [...links, '/']) };
  }
  if (host === 'distinct.sim.test') {
    // Endless distinct pages behind random tokens: nothing repeats, only the budget bounds it.
    const links = Array.from({ length: 10 }, () => `/s/${fresh()}/page`);
    if (url.pathname === '/') links.unshift('/normal.html');
    const words = Array.from({ length: 40 }, () => fresh()).join(' ');
    return { status: 200, body: page('Archive', words, links) };
  }
  return { status: 404, body: '' };
}

describe('spider traps through meguri crawl', { timeout: 400_000 }, () => {
  let web: TestWeb;
  const dirs: string[] = [];

  before(async () => {
    web = await TestWeb.start((host, path) => {
      const { status, body } = serve(host, path);
      return { status, body, contentType: status === 200 ? 'text/html; charset=utf-8' : 'text/plain' };
    });
  });
  after(async () => {
    await web.close();
    dirs.forEach(removeDir);
  });

  async function crawl(hosts: string[], extra: string[]): Promise<{ summary: Record<string, number | string>; byHost: Map<string, string[]>; dir: string }> {
    const dir = tempDir();
    dirs.push(dir);
    const summary = await cliCrawl<Record<string, number | string>>({
      web,
      seeds: hosts.map((h) => web.url(h)),
      resolve: ['*.sim.test=127.0.0.1'],
      dir,
      args: ['--no-sitemaps', '--min-interval', '0.02', ...extra],
      timeoutMs: 150_000,
    });
    const byHost = new Map<string, string[]>();
    for (const h of web.accessLog()) {
      if (h.path === '/robots.txt') continue;
      const list = byHost.get(h.host) ?? [];
      list.push(h.path);
      byHost.set(h.host, list);
    }
    return { summary, byHost, dir };
  }

  it('with default settings, a fresh ?sid= in every link and a fresh path token in every link each cost at most 100 requests, and the normal page is fetched', async (t) => {
    const { summary, byHost, dir } = await crawl(['sid.sim.test', 'ids.sim.test'], []);
    for (const [host, paths] of byHost) t.diagnostic(`${host}: ${paths.length} page requests, normal page at request ${paths.findIndex((p) => p.startsWith('/normal.html')) + 1}`);
    t.diagnostic(`templateSkipped ${summary.templateSkipped}`);
    assert.equal(summary.stoppedBecause, 'idle');
    for (const host of ['sid.sim.test', 'ids.sim.test']) {
      const paths = byHost.get(host) ?? [];
      assert.ok(paths.length <= 100, `${host}: ${paths.length} requests`);
      assert.ok(paths.some((p) => p.startsWith('/normal.html')), `${host}: the normal page was fetched (${paths.slice(0, 20).join(' ')})`);
    }
    // Session ids are not part of a page's identity: three pages, each fetched once.
    assert.deepEqual([...(byHost.get('sid.sim.test') ?? [])].sort(), ['/', '/normal.html', '/trap?n=0', '/trap?n=1', '/trap?n=2', '/trap?n=3', '/trap?n=4', '/trap?n=5', '/trap?n=6', '/trap?n=7', '/trap?n=8', '/trap?n=9'].sort());
    assert.ok((byHost.get('ids.sim.test') ?? []).length <= 20, `the token trap is judged after its probe: ${(byHost.get('ids.sim.test') ?? []).length} requests`);
    assert.ok(Number(summary.templateSkipped) > 0);
    // The skips are visible per host, where an operator can undo them with a host rule.
    const stats = await runMeguri(['stats', 'hosts', '--data', join(dir, 'data'), '--json']);
    assert.equal(stats.code, 0, stats.stderr);
    const rows = JSON.parse(stats.stdout) as { host: string; templateSkipped: number }[];
    const skipped = new Map(rows.map((r) => [r.host.replace(/:\d+$/, ''), r.templateSkipped]));
    t.diagnostic(`templateSkipped per host: ${JSON.stringify([...skipped])}`);
    assert.ok((skipped.get('ids.sim.test') ?? 0) > 0, 'the token trap host shows its skipped URLs');
    assert.equal(skipped.get('sid.sim.test'), 0, 'stripped session ids leave nothing to skip');
    assert.equal([...skipped.values()].reduce((a, b) => a + b, 0), Number(summary.templateSkipped));
  });

  it('without parameter stripping the template defence alone bounds the session-id host; a template of distinct pages stops at its budget', async (t) => {
    const { summary, byHost } = await crawl(['sid.sim.test', 'distinct.sim.test'], ['--strip-params', '', '--max-urls-per-template', '40']);
    for (const [host, paths] of byHost) t.diagnostic(`${host}: ${paths.length} page requests, normal page at request ${paths.findIndex((p) => p.startsWith('/normal.html')) + 1}`);
    assert.equal(summary.stoppedBecause, 'idle');
    const sid = byHost.get('sid.sim.test') ?? [];
    const byPath = new Map<string, number>();
    for (const p of sid) byPath.set(p.replace(/\?.*/, ''), (byPath.get(p.replace(/\?.*/, '')) ?? 0) + 1);
    t.diagnostic(`sid.sim.test by path: ${JSON.stringify([...byPath])}`);
    assert.ok(sid.length <= 100, `sid.sim.test: ${sid.length} requests`);
    assert.ok(sid.some((p) => p.startsWith('/normal.html')), 'the normal page was fetched');
    assert.ok(sid.some((p) => p.includes('sid=')), 'session ids were kept as asked');
    const distinct = byHost.get('distinct.sim.test') ?? [];
    const tokens = distinct.filter((p) => p.startsWith('/s/'));
    const dups = tokens.filter((p, i) => tokens.indexOf(p) !== i);
    assert.equal(tokens.length, 40, `one template, its budget of 40 URLs: ${tokens.length} requests, repeated: ${dups.join(' ')}; summary ${JSON.stringify(summary)}`);
    assert.ok(distinct.includes('/normal.html'), 'the normal page was fetched');
    assert.ok(distinct.indexOf('/normal.html') < 10, `early: request ${distinct.indexOf('/normal.html') + 1}`);
  });

  it('Hoshino et al. query restriction (--no-query) and the per-site cap (--max-pages-per-site) from the command line', async () => {
    const { summary, byHost } = await crawl(['sid.sim.test', 'distinct.sim.test'], ['--strip-params', '', '--no-query', '--max-pages-per-site', '15']);
    assert.equal(summary.stoppedBecause, 'idle');
    const sid = byHost.get('sid.sim.test') ?? [];
    // `/`, then one URL per query-less form: /normal.html?sid=…, /trap?… (/?sid=… is the known `/`).
    assert.equal(sid.length, 3, sid.join(' '));
    assert.ok(Number(summary.querySkipped) > 0);
    const distinct = byHost.get('distinct.sim.test') ?? [];
    assert.ok(distinct.length <= 15 + 1, `distinct pages at most the cap: ${distinct.length}`);
    assert.ok(Number(summary.siteCapSkipped) > 0);
  });
});
