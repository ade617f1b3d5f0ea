/**
 * `meguri export warc` over hand-made `pages` records in a real embedded log, read back with
 * Python's warcio (set up by scripts/ensure-warcio.sh): record counts and types, revisit profiles,
 * digests (checked by warcio and recomputed), original bytes of a Shift_JIS page, rewritten headers
 * of a gzip-encoded answer, file rotation.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { createTransport } from '../../services/runtime/index.ts';
import { exportWarc } from '../../services/warc/export.ts';
import { archivedResponseHeaders, payloadDigest } from '../../services/warc/records.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { encodeTestPage } from '../support/pages.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const venvPython = join(root, '.cache/warcio-venv/bin/python');

export interface WarcEntry {
  file: string;
  type: string;
  uri?: string;
  version: string;
  ip?: string;
  profile?: string;
  refersTo?: string;
  payloadDigest?: string;
  blockDigest?: string;
  status?: string;
  contentEncoding?: string;
  payloadLength?: number;
  payloadSha1?: string;
}

function readWarc(files: string[]): WarcEntry[] {
  const r = spawnSync(venvPython, [join(root, 'test/support/warc_read.py'), ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `warcio could not read the files: ${r.stderr}`);
  return r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as WarcEntry);
}

const sha1 = (b: Uint8Array): string => createHash('sha1').update(b).digest('hex');

/** A pages record whose body is `text` encoded as the server would send it in `charset`. */
function page(url: string, fetchedAt: number, status: number, body?: { text: string; charset?: string; contentType?: string }, headers: Record<string, string> = {}): PageRecord {
  const bytes = body === undefined ? undefined : iconv.encode(body.text, body.charset ?? 'utf-8');
  return {
    v: SCHEMA_VERSION,
    request: { v: SCHEMA_VERSION, requestId: `r${fetchedAt}`, url, host: new URL(url).hostname, reason: 'new', score: 1, depth: 0, cgiHops: 0, attempt: 1, issuedAt: fetchedAt - 5 },
    finalUrl: url,
    redirects: [],
    status,
    headers: { ...(body?.contentType ? { 'content-type': body.contentType } : {}), ...headers },
    ...(body?.contentType ? { contentType: body.contentType.split(';')[0]!.trim().toLowerCase() } : {}),
    ...(bytes !== undefined ? { body: bytes } : {}),
    bodyTruncated: false,
    bytes: 100,
    decodedBytes: 100,
    timing: { startedAt: fetchedAt - 5, totalMs: 5 },
    ...(status > 0 ? { serverIp: '127.0.0.1' } : {}),
    ...(status === 0 ? { error: { code: 'MEGURI_ERR_CONNECT', message: 'refused' } } : {}),
    fetchedAt,
  };
}

const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
const JA = 'こんにちは、せかい。ひらがなのぶんしょうです。';

describe('meguri export warc, read back by Python warcio', { timeout: 120_000 }, () => {
  let data: string;
  let out: string;
  const available = existsSync(venvPython);

  before(async () => {
    data = tempDir('meguri-warc-data-');
    out = tempDir('meguri-warc-out-');
    const t = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: data });
    try {
      await t.ensureTopics([{ name: 'pages', partitions: 2 }]);
      const records = [
        page('http://a.sim.test/', T0, 200, { text: '<html><p>one</p></html>', charset: 'utf-8', contentType: 'text/html; charset=utf-8' }, { etag: '"v1"' }),
        page('http://a.sim.test/', T0 + 1000, 304, undefined, { etag: '"v1"' }),
        page('http://a.sim.test/', T0 + 2000, 200, { text: '<html><p>one</p></html>', charset: 'utf-8', contentType: 'text/html; charset=utf-8' }),
        page('http://a.sim.test/', T0 + 3000, 200, { text: '<html><p>two</p></html>', charset: 'utf-8', contentType: 'text/html; charset=utf-8' }),
        page('http://a.sim.test/ja.html', T0 + 4000, 200, { text: `<html lang="ja"><p>${JA}</p></html>`, charset: 'Shift_JIS', contentType: 'text/html; charset=Shift_JIS' }),
        page('http://a.sim.test/gz.html', T0 + 5000, 200, { text: '<p>compressed on the wire</p>', charset: 'utf-8', contentType: 'text/html' }, { 'content-encoding': 'gzip', 'content-length': '40' }),
        page('http://b.sim.test/', T0 + 6000, 0),
        page('http://b.sim.test/robots.txt', T0 + 7000, 404, { text: 'not here', charset: 'utf-8', contentType: 'text/plain' }),
      ];
      // One partition per host, as the crawl keys pages by host.
      for (const r of records) await t.send([{ topic: 'pages', key: new URL(r.finalUrl).hostname, value: encodeTestPage(r) }]);
    } finally {
      await t.close();
    }
  });

  after(() => {
    if (data) removeDir(data);
    if (out) removeDir(out);
  });

  it('writes request + response/revisit per fetch with valid digests and the original bytes', { skip: available ? false : 'Python warcio could not be installed (scripts/ensure-warcio.sh)' }, async () => {
    const t = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: data });
    let report;
    try {
      report = await exportWarc(t, { topicPrefix: '', out, prefix: 'test', userAgent: 'meguri/0.1' });
    } finally {
      await t.close();
    }
    assert.deepEqual({ ...report, files: report.files.length }, { records: 8, responses: 5, revisits: 2, noResponse: 1, invalid: 0, files: 1 });
    const recs = readWarc(report.files);
    assert.equal(recs[0]!.type, 'warcinfo');
    assert.ok(recs.every((r) => r.version === 'WARC/1.1'));
    const main = recs.filter((r) => r.type === 'response' || r.type === 'revisit');
    assert.equal(main.length, 7, 'one response or revisit per pages record with a response');
    assert.equal(recs.filter((r) => r.type === 'request').length, 7);
    const a = main.filter((r) => r.uri === 'http://a.sim.test/');
    assert.deepEqual(
      a.map((r) => [r.type, r.profile ?? null]),
      [
        ['response', null],
        ['revisit', 'http://netpreserve.org/warc/1.1/revisit/server-not-modified'],
        ['revisit', 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest'],
        ['response', null],
      ],
    );
    assert.equal(a[1]!.refersTo !== undefined && a[1]!.refersTo !== null, true, 'the 304 refers to the earlier response');
    assert.equal(a[2]!.payloadDigest, a[0]!.payloadDigest, 'identical payload, same digest');
    assert.notEqual(a[3]!.payloadDigest, a[0]!.payloadDigest);
    for (const r of main) {
      assert.equal(r.ip, '127.0.0.1');
      assert.match(r.blockDigest ?? '', /^sha1:[A-Z2-7]{32}$/);
    }
    for (const r of recs.filter((x) => x.type === 'response')) assert.equal(r.payloadSha1, r.payloadDigest, `${r.uri}: payload digest recomputed by the reader`);
    const ja = main.find((r) => r.uri === 'http://a.sim.test/ja.html')!;
    const original = iconv.encode(`<html lang="ja"><p>${JA}</p></html>`, 'Shift_JIS');
    assert.equal(ja.payloadLength, original.length);
    assert.equal(ja.payloadDigest, payloadDigest(original), 'the payload is the Shift_JIS bytes');
    assert.equal(ja.payloadSha1, ja.payloadDigest, 'recomputed by the reader');
    assert.notEqual(sha1(original), sha1(Buffer.from(`<html lang="ja"><p>${JA}</p></html>`, 'utf8')));
    const gz = main.find((r) => r.uri === 'http://a.sim.test/gz.html')!;
    assert.equal(gz.contentEncoding, null, 'the payload is stored decoded, Content-Encoding removed');
    assert.ok(!main.some((r) => r.uri === 'http://b.sim.test/'), 'a fetch without a response is not archived');
    assert.equal(main.find((r) => r.uri === 'http://b.sim.test/robots.txt')!.status, '404');
  });

  it('rolls over to a new file at the size limit, each starting with warcinfo', { skip: available ? false : 'Python warcio could not be installed (scripts/ensure-warcio.sh)' }, async () => {
    const dir = join(out, 'small');
    const t = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: data });
    let report;
    try {
      report = await exportWarc(t, { topicPrefix: '', out: dir, prefix: 'small', maxFileBytes: 1500 });
    } finally {
      await t.close();
    }
    assert.ok(report.files.length >= 3, `${report.files.length} files`);
    assert.deepEqual(readdirSync(dir).sort(), report.files.map((f) => f.slice(dir.length + 1)).sort(), 'no .open file left');
    const recs = readWarc(report.files);
    for (const f of report.files) assert.equal(recs.find((r) => r.file === f)!.type, 'warcinfo');
    assert.equal(recs.filter((r) => r.type === 'response' || r.type === 'revisit').length, 7);
  });

  it('rewrites the header block to say the payload is decoded', () => {
    assert.deepEqual(archivedResponseHeaders({ 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': '40', etag: '"x"' }, 120), [
      ['Content-Type', 'text/html'],
      ['X-Archive-Orig-Content-Encoding', 'gzip'],
      ['X-Archive-Orig-Content-Length', '40'],
      ['Etag', '"x"'],
      ['Content-Length', '120'],
    ]);
  });
});
