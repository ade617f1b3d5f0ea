/**
 * Per-host rules through `meguri crawl --host-rules F` against a test server on 127.0.0.1: a rule
 * written into the file while the crawl runs applies without a restart (the blocked host gets no
 * request from shortly after the edit on), a host's own User-Agent reaches its server, and a bad
 * file is refused at start with the key named.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, removeDir } from '../support/transports.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'bin/meguri.js');

interface Hit {
  host: string;
  path: string;
  at: number;
  agent: string;
}

function run(args: string[], onSpawn?: () => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, MEGURI_LOG_LEVEL: 'warn' } });
    onSpawn?.();
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

describe('host rules through meguri crawl', { timeout: 300_000 }, () => {
  let server: Server;
  let port = 0;
  const hits: Hit[] = [];
  const dirs: string[] = [];

  before(async () => {
    // Each host: a home page linking 40 pages, each linking back home.
    server = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const path = req.url ?? '/';
      hits.push({ host, path, at: Date.now(), agent: String(req.headers['user-agent'] ?? '') });
      if (path === '/robots.txt') {
        res.writeHead(404).end();
        return;
      }
      const links = path === '/' ? Array.from({ length: 40 }, (_, i) => `/p${i}.html`) : ['/'];
      res.writeHead(200, { 'content-type': 'text/html' });
      // Distinct text per page, so no URL template looks like a trap.
      const words = Array.from({ length: 30 }, (_, i) => `${path.replace(/\W/g, '')}w${i * 7919 + path.length * 104729}`).join(' ');
      res.end(`<html><head><title>${host}${path}</title></head><body><p>${words}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    dirs.forEach(removeDir);
  });

  it('a block written while the crawl runs stops the host without a restart; a host\'s userAgent reaches its server', async () => {
    const dir = tempDir();
    dirs.push(dir);
    hits.length = 0;
    const rulesFile = join(dir, 'rules.json');
    writeFileSync(rulesFile, JSON.stringify({ 'agent.rules.test': { userAgent: 'rules-test-bot/1.0 (+http://agent.rules.test/)' } }));
    let blockedAt = 0;
    const edit = setInterval(() => {
      // After a few pages of busy.rules.test, an operator blocks it.
      if (blockedAt === 0 && hits.filter((h) => h.host === 'busy.rules.test' && h.path !== '/robots.txt').length >= 3) {
        writeFileSync(rulesFile, JSON.stringify({ 'agent.rules.test': { userAgent: 'rules-test-bot/1.0 (+http://agent.rules.test/)' }, '*.busy.rules.test': { block: true } }));
        blockedAt = Date.now();
      }
    }, 20);
    const summaryFile = join(dir, 'summary.json');
    const r = await run([
      'crawl', `http://busy.rules.test:${port}/`, `http://agent.rules.test:${port}/`,
      '--dns', 'static', '--resolve', '*.rules.test=127.0.0.1',
      '--until-idle', '--no-progress', '--no-sitemaps', '--min-interval', '0.2', '--max-depth', '1',
      '--data', join(dir, 'data'), '--summary-json', summaryFile, '--host-rules', rulesFile,
    ]);
    clearInterval(edit);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(blockedAt > 0, 'the rule was written during the crawl');
    const busy = hits.filter((h) => h.host === 'busy.rules.test');
    // The file is polled once a second; one request may already be in flight then.
    const late = busy.filter((h) => h.at > blockedAt + 2500);
    assert.deepEqual(late.map((h) => h.path), [], `requests long after the block (${busy.length} in all)`);
    assert.ok(busy.length < 20, `the block cut the host short: ${busy.length} requests of 42`);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as Record<string, number>;
    assert.ok(summary.hostRuleSkipped! > 0, JSON.stringify(summary));
    const agent = hits.filter((h) => h.host === 'agent.rules.test');
    assert.equal(agent.length, 42, `robots.txt and 41 pages: ${agent.map((h) => h.path).join(' ')} ${JSON.stringify(summary)}`);
    assert.ok(agent.every((h) => h.agent === 'rules-test-bot/1.0 (+http://agent.rules.test/)'), agent[0]?.agent);
    assert.ok(busy.every((h) => h.agent.startsWith('meguri/')), busy[0]?.agent);
  });

  it('a bad rules file is refused at start, the key named', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const rulesFile = join(dir, 'rules.json');
    writeFileSync(rulesFile, JSON.stringify({ 'ok.test': { block: true }, 'bad.test': { maxPages: 'many' } }));
    const r = await run(['crawl', 'http://ok.test/', '--dns', 'static', '--no-progress', '--data', join(dir, 'data'), '--host-rules', rulesFile]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /"bad\.test"\.maxPages/);
  });
});
