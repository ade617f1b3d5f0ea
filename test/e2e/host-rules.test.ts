/**
 * Per-host rules through `meguri crawl --host-rules F` against a test server on 127.0.0.1: a rule
 * written into the file while the crawl runs applies without a restart (the blocked host gets no
 * request from shortly after the edit on), a host's own User-Agent reaches its server, and a bad
 * file is refused at start with the key named.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, removeDir } from '../support/transports.ts';
import { TestWeb, cliCrawl, runMeguri } from '../support/crawl-check.ts';
import type { TestWebRequest } from '../support/crawl-check.ts';

describe('host rules through meguri crawl', { timeout: 300_000 }, () => {
  let web: TestWeb;
  const dirs: string[] = [];
  const hits = (): readonly TestWebRequest[] => web.accessLog();

  before(async () => {
    // Each host: a home page linking 40 pages, each linking back home.
    web = await TestWeb.start((host, path) => {
      if (path === '/robots.txt') return { status: 404 };
      const links = path === '/' ? Array.from({ length: 40 }, (_, i) => `/p${i}.html`) : ['/'];
      // Distinct text per page, so no URL template looks like a trap.
      const words = Array.from({ length: 30 }, (_, i) => `${path.replace(/\W/g, '')}w${i * 7919 + path.length * 104729}`).join(' ');
      return { status: 200, contentType: 'text/html', body: `<html><head><title>${host}${path}</title></head><body><p>${words}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>` };
    });
  });
  after(async () => {
    await web.close();
    dirs.forEach(removeDir);
  });

  it('a block written while the crawl runs stops the host without a restart; a host\'s userAgent reaches its server', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const rulesFile = join(dir, 'rules.json');
    writeFileSync(rulesFile, JSON.stringify({ 'agent.rules.test': { userAgent: 'rules-test-bot/1.0 (+http://agent.rules.test/)' } }));
    let blockedAt = 0;
    const edit = setInterval(() => {
      // After a few pages of busy.rules.test, an operator blocks it.
      if (blockedAt === 0 && hits().filter((h) => h.host === 'busy.rules.test' && h.path !== '/robots.txt').length >= 3) {
        writeFileSync(rulesFile, JSON.stringify({ 'agent.rules.test': { userAgent: 'rules-test-bot/1.0 (+http://agent.rules.test/)' }, '*.busy.rules.test': { block: true } }));
        blockedAt = Date.now();
      }
    }, 20);
    const summary = await cliCrawl<Record<string, number>>({
      web,
      seeds: [web.url('busy.rules.test'), web.url('agent.rules.test')],
      resolve: ['*.rules.test=127.0.0.1'],
      dir,
      args: ['--no-sitemaps', '--min-interval', '0.2', '--max-depth', '1', '--host-rules', rulesFile],
    }).finally(() => clearInterval(edit));
    assert.ok(blockedAt > 0, 'the rule was written during the crawl');
    const busy = hits().filter((h) => h.host === 'busy.rules.test');
    // The file is polled once a second; one request may already be in flight then.
    const late = busy.filter((h) => h.wallMs > blockedAt + 2500);
    assert.deepEqual(late.map((h) => h.path), [], `requests long after the block (${busy.length} in all)`);
    assert.ok(busy.length < 20, `the block cut the host short: ${busy.length} requests of 42`);
    assert.ok(summary.hostRuleSkipped! > 0, JSON.stringify(summary));
    const agent = hits().filter((h) => h.host === 'agent.rules.test');
    assert.equal(agent.length, 42, `robots.txt and 41 pages: ${agent.map((h) => h.path).join(' ')} ${JSON.stringify(summary)}`);
    assert.ok(agent.every((h) => h.userAgent === 'rules-test-bot/1.0 (+http://agent.rules.test/)'), agent[0]?.userAgent);
    assert.ok(busy.every((h) => h.userAgent.startsWith('meguri/')), busy[0]?.userAgent);
  });

  it('a bad rules file is refused at start, the key named', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const rulesFile = join(dir, 'rules.json');
    writeFileSync(rulesFile, JSON.stringify({ 'ok.test': { block: true }, 'bad.test': { maxPages: 'many' } }));
    const r = await runMeguri(['crawl', 'http://ok.test/', '--dns', 'static', '--no-progress', '--data', join(dir, 'data'), '--host-rules', rulesFile]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /"bad\.test"\.maxPages/);
  });
});
