import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { brotliCompressSync } from 'node:zlib';
import { ParsePool } from '../../services/parser/parse-pool.ts';
import { pageToRecords } from '../../services/parser/outcome.ts';
import { keyedRecords, packKeyedRecords, unpackKeyedRecords } from '../../services/parser/keyed-records.ts';
import type { EncodedLinksRecord } from '../../services/parser/keyed-records.ts';
import type { OutcomeOptions } from '../../services/parser/outcome.ts';
import { paramFilter } from '../../services/common/url.ts';
import { SCHEMA_VERSION, pageRecord } from '../../schemas/index.ts';
import type { DiscoveredLink, LinksRecord, PageRecord } from '../../schemas/index.ts';
import { linksRecord } from '../../schemas/index.ts';

/** The records a worker sent, decoded and validated as the scheduler reads them. */
function decoded(records: readonly EncodedLinksRecord[]): { key: string; value: LinksRecord }[] {
  return records.map(({ key, value }) => ({ key, value: linksRecord.parse(JSON.parse(Buffer.from(value).toString('utf8'))) }));
}

const linkUrls = (records: readonly { value: LinksRecord }[]): string[] =>
  records.flatMap(({ value }) => (value.type === 'links' ? value.targets.map((t) => t.url) : value.type === 'link' ? [(value as DiscoveredLink).url] : []));

/** A fetched 200 HTML page of `url` as the fetcher writes it. */
function htmlPage(url: string, body: Buffer, depth: number): PageRecord {
  return pageRecord.parse({
    v: SCHEMA_VERSION,
    request: { v: SCHEMA_VERSION, requestId: 'r1', url, host: new URL(url).host, reason: 'new', score: 1, depth, cgiHops: 0, attempt: 1, issuedAt: 1 },
    finalUrl: url,
    redirects: [],
    status: 200,
    headers: { 'content-type': 'text/html' },
    contentType: 'text/html',
    body,
    bodyTruncated: false,
    bytes: body.length,
    decodedBytes: body.length,
    timing: { startedAt: 1, totalMs: 3 },
    fetchedAt: 2,
  });
}

test('a page\'s records packed into one buffer come back as they were, in order, whatever their size and script', () => {
  const records = [
    { key: 'a.test', value: { v: SCHEMA_VERSION, type: 'seed', url: 'http://a.test/', addedAt: 1 } },
    // anchors in other scripts take 2 to 4 UTF-8 bytes per character
    { key: 'b.test', value: { v: SCHEMA_VERSION, type: 'seed', url: 'http://b.test/é東京𠀋', addedAt: 2 } },
    // larger than the buffer the values are first encoded into: it grows
    { key: 'c.test', value: { v: SCHEMA_VERSION, type: 'seed', url: `http://c.test/${'港'.repeat(200_000)}`, addedAt: 3 } },
    { key: 'd.test', value: { v: SCHEMA_VERSION, type: 'seed', url: 'http://d.test/', addedAt: 4 } },
  ] as const;
  for (let round = 0; round < 2; round++) {
    const packed = packKeyedRecords(records);
    assert.equal(packed.bytes.byteLength, packed.ends.at(-1), 'the buffer holds exactly the values');
    assert.equal(packed.bytes.byteOffset, 0);
    assert.equal(packed.bytes.buffer.byteLength, packed.bytes.byteLength, 'its own ArrayBuffer, to transfer whole');
    const back = unpackKeyedRecords(packed).map(({ key, value }) => ({ key, value: JSON.parse(Buffer.from(value).toString('utf8')) as unknown }));
    assert.deepEqual(back, records);
  }
  assert.deepEqual(unpackKeyedRecords(packKeyedRecords([])), []);
});

test('the parse pool gives the same records as parsing on the event loop', async () => {
  const body = readFileSync(new URL('../fixtures/pages/article.html', import.meta.url));
  const page = htmlPage('http://a.test/x.html', body, 2);
  const pool = new ParsePool(2);
  try {
    const pointer = { topic: 'pages', partition: 0, offset: '7' };
    const results = await Promise.all([pool.run(page, pointer), pool.run(page, pointer), pool.run(page, pointer)]);
    const direct = pageToRecords(page, pointer);
    for (const r of results) assert.deepEqual(decoded(r), keyedRecords(page, direct));
    assert.ok(direct.links.length > 10);
    assert.equal(decoded(results[0]!).at(-1)!.value.type, 'outcome');
  } finally {
    await pool.close();
  }
});

test('workers parse with the options the parser was given: the parameter strip list and aliases', async () => {
  const html = Buffer.from('<html><body><a href="/p?sid=1&x=2">p</a> <a href="http://www.b.test/q?utm_source=z">q</a></body></html>');
  const page = htmlPage('http://a.test/', html, 0);
  const cases: { options: OutcomeOptions; urls: string[] }[] = [
    { options: {}, urls: ['http://a.test/p?x=2', 'http://www.b.test/q'] },
    { options: { stripParams: paramFilter([]), aliases: new Map([['www.b.test', 'b.test']]) }, urls: ['http://a.test/p?sid=1&x=2', 'http://b.test/q?utm_source=z'] },
  ];
  for (const { options, urls } of cases) {
    const pool = new ParsePool(1, options);
    try {
      assert.deepEqual(linkUrls(decoded(await pool.run(page))), urls);
      assert.deepEqual(pageToRecords(page, undefined, options).links.map((l) => l.url), urls);
    } finally {
      await pool.close();
    }
  }
});

test('a body that is a view into a larger buffer (a Kafka fetch response) reaches the worker on its own and stays usable', async () => {
  const html = readFileSync(new URL('../fixtures/pages/article.html', import.meta.url));
  const response = Buffer.alloc(html.length + 2 * 1024 * 1024, 0x20);
  html.copy(response, 1024 * 1024);
  const body = response.subarray(1024 * 1024, 1024 * 1024 + html.length);
  const page = htmlPage('http://a.test/x.html', body, 1);
  const pool = new ParsePool(1);
  try {
    const records = await pool.run(page);
    assert.deepEqual(decoded(records), keyedRecords(page, pageToRecords(page)));
    // Only a copy crossed over: the response the view points into is neither detached nor changed.
    assert.equal(response.buffer.byteLength >= response.length, true);
    assert.equal(response.length, html.length + 2 * 1024 * 1024);
    assert.ok(page.body!.equals(html));
  } finally {
    await pool.close();
  }
});

test('a worker that stops fails the pages it held and is replaced: later pages are parsed', async () => {
  const page = htmlPage('http://a.test/', Buffer.from('<html><body><a href="/next">next</a></body></html>'), 0);
  const pool = new ParsePool(1);
  try {
    const held = pool.run(page);
    // What an out-of-memory page or a crash does to the thread: it ends with the page unanswered.
    await (pool as unknown as { workers: { terminate(): Promise<number> }[] }).workers[0]!.terminate();
    await assert.rejects(held, /parse worker stopped/);
    const after = decoded(await pool.run(page));
    assert.deepEqual(linkUrls(after), ['http://a.test/next']);
    assert.equal(pool.restarts, 1);
  } finally {
    await pool.close();
  }
  // Closing is not a crash: nothing is started again.
  assert.equal(pool.restarts, 1);
});

test('a body stored as the server compressed it is decoded in the worker: the same records as the decoded page', async () => {
  const html = readFileSync(new URL('../fixtures/pages/article.html', import.meta.url));
  const plain = htmlPage('http://a.test/x.html', html, 1);
  const br = brotliCompressSync(html);
  const { decodedBytes: _d, ...fields } = plain;
  const compressed = pageRecord.parse({ ...fields, headers: { ...plain.headers, 'content-encoding': 'br' }, bytes: br.length, contentEncoding: 'br', decodeLimit: 8 * 1024 * 1024, body: br });
  const pool = new ParsePool(1);
  try {
    const pointer = { topic: 'pages', partition: 0, offset: '9' };
    const fromWorker = decoded(await pool.run(compressed, pointer));
    const expected = keyedRecords(plain, pageToRecords(plain, pointer));
    assert.ok(linkUrls(fromWorker).length > 10);
    // The outcome's header view differs (content-encoding), the links and fingerprints do not.
    assert.deepEqual(linkUrls(fromWorker), linkUrls(expected));
    const outcome = (records: readonly { value: LinksRecord }[]) => records.find((r) => r.value.type === 'outcome')!.value as { md5?: string; fingerprint?: string };
    assert.equal(outcome(fromWorker).md5, outcome(expected).md5);
    assert.equal(outcome(fromWorker).fingerprint, outcome(expected).fingerprint);
  } finally {
    await pool.close();
  }
});
