/**
 * Crawl scope through the `meguri crawl` command (a child process, static resolution to a test
 * server on 127.0.0.1): `--scope host|domain|web` and `--include`/`--exclude`, judged by the
 * server's access log — no request (robots.txt included) ever reaches a host or URL out of scope.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, removeDir } from '../support/transports.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'bin/meguri.js');

function page(title: string, links: string[]): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><p>${title}: a page of the scope test web.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
}

function meguri(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, MEGURI_LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('crawl scope through meguri crawl', { timeout: 400_000 }, () => {
  let server: Server;
  let port = 0;
  const hits: string[] = [];
  const dirs: string[] = [];

  // www.a.test links to its own pages, a subdomain of a.test, another domain, and (two hops on) a third.
  const site = (host: string, path: string): { status: number; body: string } => {
    const u = (h: string, p: string): string => `http://${h}:${port}${p}`;
    if (path === '/robots.txt') return { status: 404, body: '' };
    const pages: Record<string, Record<string, string[]>> = {
      'www.a.test': {
        '/': ['/docs/1.html', '/docs/manual.pdf', '/shop/', u('docs.a.test', '/'), u('www.b.test', '/')],
        '/docs/1.html': ['/docs/2.html'],
        '/docs/2.html': [],
        '/docs/manual.pdf': [],
        '/shop/': [],
      },
      'docs.a.test': { '/': ['/guide.html'], '/guide.html': [] },
      'www.b.test': { '/': [u('c.test', '/')] },
      'c.test': { '/': [] },
    };
    const links = pages[host]?.[path];
    return links ? { status: 200, body: page(`${host}${path}`, links) } : { status: 404, body: '' };
  };

  before(async () => {
    server = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      hits.push(`${host}${req.url ?? '/'}`);
      const { status, body } = site(host, req.url ?? '/');
      res.writeHead(status, { 'content-type': status === 200 ? 'text/html; charset=utf-8' : 'text/plain' });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    dirs.forEach(removeDir);
  });

  async function crawl(extra: string[]): Promise<{ summary: Record<string, number | string>; requested: string[] }> {
    const dir = tempDir();
    dirs.push(dir);
    hits.length = 0;
    const summaryFile = join(dir, 'summary.json');
    const r = await meguri([
      'crawl', `http://www.a.test:${port}/`,
      '--dns', 'static', '--resolve', '*.test=127.0.0.1', '--resolve', 'c.test=127.0.0.1',
      '--until-idle', '--no-progress', '--no-sitemaps', '--min-interval', '0.01', '--partitions', '2',
      '--data', join(dir, 'data'), '--summary-json', summaryFile,
      ...extra,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as Record<string, number | string>;
    return { summary, requested: [...new Set(hits)].sort() };
  }

  it('default (domain): the seed\'s registrable domain and its subdomains, nothing else requested', async () => {
    const { summary, requested } = await crawl([]);
    assert.deepEqual(requested, [
      'docs.a.test/', 'docs.a.test/guide.html', 'docs.a.test/robots.txt',
      'www.a.test/', 'www.a.test/docs/1.html', 'www.a.test/docs/2.html', 'www.a.test/docs/manual.pdf', 'www.a.test/robots.txt', 'www.a.test/shop/',
    ]);
    assert.equal(summary.outOfScopeSkipped, 1, 'the link to www.b.test');
  });

  it('host: only the seed\'s host; include/exclude on top, exclude winning', async () => {
    const { summary, requested } = await crawl(['--scope', 'host', '--include', '/docs/', '--exclude', '\\.pdf$']);
    assert.deepEqual(requested, ['www.a.test/', 'www.a.test/docs/1.html', 'www.a.test/docs/2.html', 'www.a.test/robots.txt']);
    // manual.pdf (exclude), /shop/ (no include), docs.a.test and www.b.test (host scope)
    assert.equal(summary.outOfScopeSkipped, 4);
  });

  it('web: every link within the depth limit', async () => {
    const { summary, requested } = await crawl(['--scope', 'web', '--max-depth', '1']);
    assert.ok(requested.includes('www.b.test/'), requested.join(' '));
    assert.ok(!requested.includes('c.test/'), 'c.test is two hops away');
    assert.equal(summary.outOfScopeSkipped, 0);
    const all = await crawl(['--scope', 'web']);
    assert.ok(all.requested.includes('c.test/'), all.requested.join(' '));
  });

  it('a bad regular expression is refused before anything starts', async () => {
    const r = await meguri(['crawl', 'http://www.a.test/', '--include', '(unclosed', '--dns', 'static', '--no-progress']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--include "\(unclosed"/);
  });
});
