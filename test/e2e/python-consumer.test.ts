/**
 * A consumer outside JavaScript (issue 46, item 4): `meguri crawl` on the real local Kafka broker
 * (with a topic prefix) crawls a small simulated web with Shift_JIS and ISO-8859-1 pages, then the
 * example consumer in examples/python/ — Python, confluent-kafka (librdkafka), read_committed,
 * written from docs/topics.md — reads every `changes` record, follows each `page` pointer into
 * `pages`, decodes the framing, content encoding and charset, and checks what the reference says:
 * `md5` is the MD5 of the decoded text re-encoded as UTF-8 (not of the Shift_JIS bytes), the title
 * is the <title>'s text, fingerprints are 16 hex digits, the pointer names the prefixed topic and
 * a decimal offset, `pages` records are keyed by host:port.
 *
 * confluent-kafka is installed into .cache/kafka-python-venv by scripts/ensure-confluent-kafka.sh
 * (the test runner calls it before it leaves the network). Without it the test is skipped, and
 * under CI it fails: a missing client is a broken machine there, not a reason to pass.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { SimWeb } from '../../services/simweb/index.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { cliCrawl, pageRequests, resolveEntries } from '../support/crawl-check.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = join(root, '.cache/kafka-python-venv/bin/python');

interface ConsumerLine {
  kind: string;
  url: string;
  title?: string | null;
  problems: string[];
  pageKey?: string;
  charset?: string;
  md5OfText?: string;
  md5OfBytes?: string;
}

function runPython(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the Python example consumer on a Kafka crawl', { timeout: 400_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('reads every change read_committed, follows its page pointer and finds the documented hashes, titles, keys and pointers', async (t) => {
    if (!existsSync(python)) {
      const why = 'confluent-kafka could not be installed (scripts/ensure-confluent-kafka.sh)';
      throw new Error(`${why}: a test that cannot run its subject fails`);
    }
    const brokers = process.env.KAFKA_BROKERS;
    assert.ok(brokers, 'KAFKA_BROKERS: run through scripts/run-tests.mjs, which starts the local broker');
    const web = await SimWeb.start({ seed: 461, hosts: 3, pagesPerHost: 14, robots: { noRobotsShare: 1 }, hostile: { pages: { shiftJis: 0.35, latin1: 0.25 } } });
    try {
      const dir = tempDir();
      dirs.push(dir);
      const prefix = `pyex${randomBytes(3).toString('hex')}.`;
      const summary = await cliCrawl<Record<string, number | string>>({
        seeds: web.homeUrls(),
        resolve: resolveEntries(web),
        dir,
        args: ['--kafka', brokers, '--topic-prefix', prefix, '--partitions', '2', '--no-sitemaps', '--min-interval', '0.02'],
        timeoutMs: 240_000,
      });
      assert.equal(summary.stoppedBecause, 'idle');
      const fetched = pageRequests(web).length;
      t.diagnostic(`crawl: ${fetched} page requests, pagesFetched ${summary.pagesFetched}`);

      const r = await runPython([join(root, 'examples/python/consumer.py'), '--brokers', brokers, '--topic-prefix', prefix, '--group', `${prefix}python`, '--idle-seconds', '60'], 180_000);
      const lines = r.stdout.trim().split('\n').filter((l) => l !== '');
      const last = JSON.parse(lines.at(-1) ?? '{}') as { summary?: { changes: number; kinds: Record<string, number>; failed: number; readToEnd: boolean } };
      const changes = lines.slice(0, -1).map((l) => JSON.parse(l) as ConsumerLine);
      t.diagnostic(`python consumer: ${JSON.stringify(last.summary)}`);
      assert.deepEqual(changes.filter((c) => c.problems.length > 0).slice(0, 5), [], 'no change broke what docs/topics.md says');
      assert.equal(r.code, 0, r.stderr);
      assert.ok(last.summary?.readToEnd, 'read every partition of changes to its end');
      // One `new` change per distinct page the crawl fetched and parsed as HTML.
      const html = changes.filter((c) => c.kind === 'new');
      assert.ok(html.length >= 10, `${html.length} new changes`);
      assert.equal(new Set(html.map((c) => c.url)).size, html.length, 'each page announced once');
      // The pages topic is keyed by host:port (the simulated web's port is not the default one).
      assert.ok(html.every((c) => c.pageKey === new URL(c.url).host), html.map((c) => `${c.pageKey} ${c.url}`).slice(0, 3).join('; '));
      // Shift_JIS pages: md5 is of the text as UTF-8, so it is not the MD5 of the bytes sent.
      const sjis = html.filter((c) => c.charset === 'cp932');
      const latin1 = html.filter((c) => c.charset === 'cp1252');
      t.diagnostic(`charsets: ${sjis.length} Shift_JIS (read as windows-31j), ${latin1.length} windows-1252, ${html.length - sjis.length - latin1.length} UTF-8`);
      assert.ok(sjis.length > 0 && latin1.length > 0, 'the web served both kinds of legacy charset');
      assert.ok(sjis.every((c) => c.md5OfBytes !== c.md5OfText), 'a Shift_JIS page with hiragana: the MD5 of its bytes differs from its md5');
      assert.ok(html.every((c) => typeof c.title === 'string' && c.title.length > 0), 'every simulated page has a title');
    } finally {
      await web.close();
    }
  });
});
