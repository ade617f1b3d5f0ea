/**
 * WARC from real crawls of the simulated web, read back by Python's warcio (an independent reader
 * that checks every digest): `meguri export warc` of an embedded crawl, and the `warc` sink on the
 * real Kafka broker — including a re-read after its committed offsets are rewound, which must
 * rewrite the same files, not add new ones.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { createTransport } from '../../services/runtime/index.ts';
import type { Transport } from '../../services/runtime/index.ts';
import { safeDecodePageRecord } from '../../schemas/index.ts';
import { WarcSink } from '../../services/warc/sink.ts';
import { tempDir, removeDir, kafkaBrokers, uniquePrefix } from '../support/transports.ts';
import { resolveEntries } from '../support/crawl-check.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const venvPython = join(root, '.cache/warcio-venv/bin/python');
const skip = existsSync(venvPython) ? false : 'Python warcio could not be installed (scripts/ensure-warcio.sh)';

interface Entry {
  file: string;
  type: string;
  uri?: string;
  payloadDigest?: string;
  payloadSha1?: string;
  status?: string;
}

function readWarc(files: string[]): Entry[] {
  const r = spawnSync(venvPython, [join(root, 'test/support/warc_read.py'), ...files], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  assert.equal(r.status, 0, `warcio could not read the files: ${r.stderr}`);
  return r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
}

/** pages records with an HTTP response, and their URLs, read from the log. */
async function pagesWithResponse(t: Transport, topic: string): Promise<{ count: number; sjis: string[] }> {
  const d = await t.describeTopic(topic);
  assert.ok(d);
  let count = 0;
  const sjis: string[] = [];
  for (const p of d.partitions) {
    for await (const batch of t.readPartition(topic, p.partition, p.low, p.high)) {
      for (const r of batch) {
        const page = safeDecodePageRecord(r.value!);
        assert.ok(page.ok);
        if (page.page.status > 0) count++;
        if (/shift_jis/i.test(page.page.headers['content-type'] ?? '') && page.page.status === 200) sjis.push(page.page.finalUrl);
      }
    }
  }
  return { count, sjis };
}

const sha1b32 = (b: Buffer): string => {
  const bytes = createHash('sha1').update(b).digest();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const x of bytes) {
    value = (value << 8) | x;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return 'sha1:' + out;
};

describe('WARC of a crawl of the simulated web', { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('meguri export warc: one response or revisit per pages record, digests valid, Shift_JIS bytes as served', { skip }, async () => {
    const web = await SimWeb.start({ seed: 9, hosts: 5, pagesPerHost: 20, hostile: { pages: { shiftJis: 0.3, duplicate: 0.1 } } });
    try {
      const data = tempDir('meguri-warc-crawl-');
      const out = tempDir('meguri-warc-files-');
      dirs.push(data, out);
      await runCrawl({
        seeds: web.homeUrls(),
        dataDir: data,
        partitions: 2,
        untilIdle: true,
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      const t = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: data });
      let expected;
      try {
        expected = await pagesWithResponse(t, 'pages');
      } finally {
        await t.close();
      }
      const r = spawnSync(process.execPath, [join(root, 'bin/meguri.js'), 'export', 'warc', '--data', data, '--out', out, '--json'], { cwd: root, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { records: number; responses: number; revisits: number; files: string[] };
      assert.equal(report.responses + report.revisits, expected.count);
      const recs = readWarc(report.files);
      const main = recs.filter((x) => x.type === 'response' || x.type === 'revisit');
      assert.equal(main.length, expected.count, 'one response or revisit per pages record with a response');
      assert.equal(recs.filter((x) => x.type === 'request').length, expected.count);
      for (const x of recs.filter((y) => y.type === 'response')) assert.equal(x.payloadSha1, x.payloadDigest, `${x.uri}`);
      // The payload of a Shift_JIS page is the bytes the server sends, not re-encoded text.
      assert.ok(expected.sjis.length > 0, 'the crawl fetched Shift_JIS pages');
      const url = expected.sjis[0]!;
      const u = new URL(url);
      const res = await request(`http://127.0.0.1:${web.port}${u.pathname}${u.search}`, { headers: { host: u.host, 'accept-encoding': 'identity' } });
      const served = Buffer.from(await res.body.arrayBuffer());
      assert.equal(main.find((x) => x.uri === url && x.type === 'response')!.payloadDigest, sha1b32(served));
    } finally {
      await web.close();
    }
  });

  it('the warc sink on Kafka archives every page, and a re-read rewrites the same files', { skip }, async () => {
    const web = await SimWeb.start({ seed: 11, hosts: 4, pagesPerHost: 15 });
    const prefix = uniquePrefix();
    const brokers = kafkaBrokers();
    try {
      const data = tempDir('meguri-warc-kafka-');
      const out = tempDir('meguri-warc-sink-');
      const state = tempDir('meguri-warc-state-');
      dirs.push(data, out, state);
      await runCrawl({
        seeds: web.homeUrls(),
        dataDir: data,
        kafkaBrokers: brokers,
        topicPrefix: prefix,
        partitions: 2,
        untilIdle: true,
        scheduler: { minIntervalMs: 0, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      const t = await createTransport({ transport: 'kafka', kafkaBrokers: brokers, dataDir: state });
      try {
        const expected = await pagesWithResponse(t, `${prefix}pages`);
        const d = (await t.describeTopic(`${prefix}pages`))!;
        const runSink = async (): Promise<void> => {
          const sink = new WarcSink({ transport: t, topicPrefix: prefix, outDir: out, stateDir: state, rollAfterMs: 1000 });
          await sink.start();
          try {
            const deadline = Date.now() + 60_000;
            while (Date.now() < deadline) {
              const committed = await t.committedOffsets('meguri-warc', `${prefix}pages`);
              const done = d.partitions.every((p) => p.high === p.low || committed.find((c) => c.partition === p.partition)?.offset === p.high);
              if (done) break;
              await new Promise((r) => setTimeout(r, 300));
            }
          } finally {
            await sink.stop();
          }
        };
        await runSink();
        const files = readdirSync(out).sort();
        assert.ok(files.length >= 1 && files.every((f) => f.endsWith('.warc.gz')), `files: ${files.join(', ')}`);
        const recs = readWarc(files.map((f) => join(out, f)));
        assert.equal(recs.filter((x) => x.type === 'response' || x.type === 'revisit').length, expected.count);

        // Rewind the group: the re-read files start at the same offsets, so they replace the old ones.
        await t.setCommittedOffsets('meguri-warc', d.partitions.map((p) => ({ topic: `${prefix}pages`, partition: p.partition, offset: p.low })));
        await runSink();
        const again = readdirSync(out).sort();
        const firstFiles = files.filter((f) => /-o0{12}\.warc\.gz$/.test(f));
        for (const f of firstFiles) assert.ok(again.includes(f), `${f} rewritten under the same name`);
        const recs2 = readWarc(firstFiles.map((f) => join(out, f)));
        assert.ok(recs2.filter((x) => x.type === 'response' || x.type === 'revisit').length > 0, 'the rewritten files are complete WARC files');
        assert.ok(!again.some((f) => f.endsWith('.open')), 'no unpublished file left');

        // meguri analyze reads the same crawl's topics on Kafka.
        const analyzed = spawnSync(process.execPath, [join(root, 'bin/meguri.js'), 'analyze', 'distributions', '--kafka', brokers.join(','), '--topic-prefix', prefix, '--json', '--no-progress'], { cwd: root, encoding: 'utf8' });
        assert.equal(analyzed.status, 0, analyzed.stderr);
        const dist = JSON.parse(analyzed.stdout) as { records: number; pages: number; servers: number };
        assert.equal(dist.records, d.partitions.reduce((a, p) => a + p.high - p.low, 0));
        assert.equal(dist.servers, 4);
        const served = new Set(web.accessLog().filter((e) => e.path !== '/robots.txt' && e.status === 200).map((e) => `${e.host}${e.path}`));
        assert.equal(dist.pages, served.size);
      } finally {
        await t.close();
      }
    } finally {
      await web.close();
    }
  });
});
