/**
 * Crawl scope through the `meguri crawl` command (a child process, static resolution to a test
 * server on 127.0.0.1): `--scope host|domain|web` and `--include`/`--exclude`, judged by the
 * server's access log — no request (robots.txt included) ever reaches a host or URL out of scope.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, removeDir } from '../support/transports.ts';
import { TestWeb, cliCrawl, runMeguri } from '../support/crawl-check.ts';

function page(title: string, links: string[]): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><p>${title}: a page of the scope test web.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
}

describe('crawl scope through meguri crawl', { timeout: 400_000 }, () => {
  let web: TestWeb;
  const dirs: string[] = [];

  // www.a.test links to its own pages, a subdomain of a.test, another domain, and (two hops on) a third.
  const site = (host: string, path: string): { status: number; body: string } => {
    const u = (h: string, p: string): string => web.url(h, p);
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
    web = await TestWeb.start((host, path) => {
      const { status, body } = site(host, path);
      return { status, body, contentType: status === 200 ? 'text/html; charset=utf-8' : 'text/plain' };
    });
  });
  after(async () => {
    await web.close();
    dirs.forEach(removeDir);
  });

  async function crawl(extra: string[]): Promise<{ summary: Record<string, number | string>; requested: string[] }> {
    const dir = tempDir();
    dirs.push(dir);
    const summary = await cliCrawl<Record<string, number | string>>({
      web,
      seeds: [web.url('www.a.test')],
      resolve: ['*.test=127.0.0.1', 'c.test=127.0.0.1'],
      dir,
      args: ['--no-sitemaps', '--min-interval', '0.01', '--partitions', '2', ...extra],
    });
    return { summary, requested: [...new Set(web.accessLog().map((r) => `${r.host}${r.path}`))].sort() };
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
    const r = await runMeguri(['crawl', 'http://www.a.test/', '--include', '(unclosed', '--dns', 'static', '--no-progress']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--include "\(unclosed"/);
  });
});
