/**
 * Separate processes on Kafka, as pods run them: `meguri run scheduler`, `fetcher` and `parser` as
 * three child processes crawl the simulated web to the same result as the in-process crawl; the
 * fetcher is killed with SIGKILL mid-crawl and restarted, and no URL is lost.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SimWeb } from '../../services/simweb/index.ts';
import { kafkaBrokers, tempDir, removeDir, uniquePrefix, waitFor } from '../support/transports.ts';
import { pageRequests, resolveEntries, urlKey, pageKey } from '../support/crawl-check.ts';

const running = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;
const bin = fileURLToPath(new URL('../../bin/meguri.js', import.meta.url));

describe('services as separate processes on Kafka', { timeout: 300_000 }, () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  after(() => {
    for (const c of children) if (running(c)) c.kill('SIGKILL');
    dirs.forEach(removeDir);
  });

  it('crawls the same web with run scheduler|fetcher|parser and survives a fetcher kill -9', async () => {
    let ticker: NodeJS.Timeout | undefined;
    const web = await SimWeb.start({ seed: 5, hosts: 20, pagesPerHost: 30, robots: { crawlDelays: [0.1] } });
    try {
      const prefix = uniquePrefix();
      const brokers = kafkaBrokers().join(',');
      const env = { ...process.env, MEGURI_KAFKA_BROKERS: brokers, MEGURI_TOPIC_PREFIX: prefix, MEGURI_PARTITIONS: '4', MEGURI_LOG_LEVEL: process.env.TEST_CHILD_LOG ?? 'warn', MEGURI_HTTP_PORT: '0', MEGURI_DNS: 'static', MEGURI_RESOLVE: resolveEntries(web).join(',') };
      const created = spawnSync(process.execPath, [bin, 'topics', 'create', '--kafka', brokers, '--topic-prefix', prefix, '--partitions', '4'], { env, encoding: 'utf8' });
      assert.equal(created.status, 0, created.stderr);
      assert.match(created.stdout, /created\s+\S+links/);
      const start = (service: string, extra: string[] = []): ChildProcess => {
        const dataDir = tempDir();
        dirs.push(dataDir);
        const child = spawn(process.execPath, [bin, 'run', service, '--data', dataDir, ...extra], { env, stdio: ['ignore', 'ignore', 'inherit'] });
        children.push(child);
        return child;
      };
      start('scheduler', ['--min-interval', '0.05', '--no-sitemaps', '--user-agent', 'meguri/0.1 (+http://meguri.invalid/bot)']);
      let fetcher = start('fetcher', ['--user-agent', 'meguri/0.1 (+http://meguri.invalid/bot)']);
      start('parser');
      const seeded = spawnSync(process.execPath, [bin, 'seed', '--kafka', brokers, '--topic-prefix', prefix, ...web.homeUrls()], { env, encoding: 'utf8' });
      assert.equal(seeded.status, 0, seeded.stderr);

      const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 15, userAgent: 'meguri' });
      const expected = new Set([...plan.urls].map(urlKey));
      const fetchedCount = (): number => new Set(pageRequests(web).map((e) => pageKey(e.host, e.path)).filter((k) => expected.has(k))).size;

      ticker = setInterval(() => process.env.TEST_CHILD_LOG && console.error('fetched', fetchedCount(), 'of', expected.size), 2000);
      await waitFor('a third of the crawl', () => fetchedCount() >= expected.size / 3, 120_000, 100);
      fetcher.kill('SIGKILL');
      await new Promise((r) => fetcher.once('exit', r));
      const before = fetchedCount();
      fetcher = start('fetcher', ['--user-agent', 'meguri/0.1 (+http://meguri.invalid/bot)']);
      await waitFor('every expected page', () => fetchedCount() === expected.size, 240_000, 200);
      assert.ok(before < expected.size, 'the kill happened mid-crawl');

      const counts = new Map<string, number>();
      for (const e of pageRequests(web)) counts.set(pageKey(e.host, e.path), (counts.get(pageKey(e.host, e.path)) ?? 0) + 1);
      const extra = [...counts.keys()].filter((k) => !expected.has(k));
      assert.deepEqual(extra, [], 'nothing outside the expected set');
      const forbidden = [...plan.disallowed].map(urlKey).filter((k) => counts.has(k));
      assert.deepEqual(forbidden, []);
      const duplicates = [...counts.values()].reduce((s, n) => s + n - 1, 0);
      // At-least-once fetcher: only requests in flight at the kill may be fetched twice (≤ one per host).
      assert.ok(duplicates <= 20, `duplicates after the kill bounded by the hosts in flight (${duplicates})`);
    } finally {
      clearInterval(ticker);
      const exits = children.filter(running).map((c) => new Promise((r) => c.once('exit', r)));
      for (const c of children) if (running(c)) c.kill('SIGTERM');
      await Promise.all(exits);
      await web.close();
    }
  });
});
