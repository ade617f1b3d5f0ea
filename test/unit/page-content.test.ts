// Decoding of page bodies stored as the server compressed them (services/common/page-content.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { SCHEMA_VERSION, pageRecord } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { decodePageContent } from '../../services/common/page-content.ts';
import type { ContentEncoding } from '../../services/common/page-content.ts';

const HTML = Buffer.from(`<!doctype html><title>t</title>${Array.from({ length: 400 }, (_, i) => `<p>paragraph ${i} <a href="/p${i}">link</a></p>`).join('')}`);

function stored(body: Buffer, contentEncoding: ContentEncoding, decodeLimit = 8 * 1024 * 1024, extra: Partial<PageRecord> = {}): PageRecord {
  return {
    v: SCHEMA_VERSION,
    request: { v: SCHEMA_VERSION, requestId: 'r1', url: 'http://a.test/', host: 'a.test', reason: 'new', score: 0.5, depth: 0, cgiHops: 0, attempt: 1, issuedAt: 1 },
    finalUrl: 'http://a.test/',
    redirects: [],
    status: 200,
    headers: { 'content-type': 'text/html', 'content-encoding': contentEncoding },
    contentType: 'text/html',
    bodyTruncated: false,
    bytes: body.length,
    contentEncoding,
    decodeLimit,
    timing: { startedAt: 1, totalMs: 1 },
    fetchedAt: 2,
    body,
    ...extra,
  };
}

const encoders: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => gzipSync(b),
  br: (b) => brotliCompressSync(b),
  deflate: (b) => deflateSync(b),
  'deflate (raw)': (b) => deflateRawSync(b),
};

describe('page content decoding', () => {
  for (const [name, encode] of Object.entries(encoders)) {
    it(`decodes ${name} into the page the fetcher would have recorded`, () => {
      const encoding = name.split(' ')[0] as ContentEncoding;
      const page = decodePageContent(stored(encode(HTML), encoding));
      assert.deepEqual(page.body, HTML);
      assert.equal(page.decodedBytes, HTML.length);
      assert.equal(page.bodyTruncated, false);
      assert.equal(page.contentEncoding, undefined);
      assert.equal(page.decodeLimit, undefined);
      assert.equal(page.error, undefined);
      assert.ok(pageRecord.safeParse(page).success);
    });
  }

  it('leaves a page without contentEncoding as it is', () => {
    const { contentEncoding: _e, decodeLimit: _l, ...plain } = stored(HTML, 'gzip');
    const page: PageRecord = { ...plain, decodedBytes: HTML.length };
    assert.equal(decodePageContent(page), page);
  });

  it('cuts a body that decodes past its limit there, as truncated', () => {
    // 4 MiB of text gzips to about 4 KB: kept compressed by the fetcher, a bomb to its reader.
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024, 'a'), { level: 9 });
    assert.ok(bomb.length < 64 * 1024);
    const limit = 100_000;
    const page = decodePageContent(stored(bomb, 'gzip', limit));
    assert.equal(page.error, undefined);
    assert.equal(page.bodyTruncated, true);
    assert.ok(page.body!.length <= limit && page.body!.length > limit * 0.9, `${page.body!.length} bytes kept`);
    assert.equal(page.decodedBytes, page.body!.length);
    assert.ok(page.body!.every((b) => b === 0x61));
    // A cap smaller than a gzip header's worth of output: the search through short prefixes holds.
    for (const [encoding, body] of [
      ['gzip', bomb],
      ['br', brotliCompressSync(Buffer.alloc(1024 * 1024, 'a'))],
    ] as const) {
      const tiny = decodePageContent(stored(body, encoding, 50));
      assert.equal(tiny.error, undefined, encoding);
      assert.equal(tiny.bodyTruncated, true);
      assert.ok(tiny.body!.length <= 50);
    }
  });

  it('decodes a stream cut short (the wire cap) as far as it goes, and keeps it truncated', () => {
    const br = brotliCompressSync(HTML);
    const page = decodePageContent(stored(br.subarray(0, br.length >> 1), 'br', undefined, { bodyTruncated: true }));
    assert.equal(page.error, undefined);
    assert.equal(page.bodyTruncated, true);
    assert.ok(page.body!.length > 0 && HTML.subarray(0, page.body!.length).equals(page.body!));
  });

  it('turns a corrupt stream into the MEGURI_ERR_DECOMPRESS failure, without a body', () => {
    const gz = gzipSync(HTML);
    const corrupt = Buffer.concat([gz.subarray(0, 20), Buffer.alloc(200, 0xff), gz.subarray(220)]);
    const page = decodePageContent(stored(corrupt, 'gzip'));
    assert.equal(page.error?.code, 'MEGURI_ERR_DECOMPRESS');
    assert.match(page.error!.message, /^gzip: /);
    assert.equal(page.body, undefined);
    assert.equal(page.bodyTruncated, false);
    assert.equal(page.contentEncoding, undefined);
    assert.ok(pageRecord.safeParse(page).success);
  });

  it('turns bytes that cannot be text into the MEGURI_ERR_BINARY failure, as the fetcher would', () => {
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    const page = decodePageContent(stored(gzipSync(binary), 'gzip'));
    assert.equal(page.error?.code, 'MEGURI_ERR_BINARY');
    assert.equal(page.body, undefined);
    assert.ok(pageRecord.safeParse(page).success);
    // UTF-16 text has NULs: a declared UTF-16 charset exempts it, as in the fetcher.
    const utf16 = Buffer.from('<p>UTF-16 text</p>'.repeat(50), 'utf16le');
    const text = decodePageContent(stored(brotliCompressSync(utf16), 'br', undefined, { headers: { 'content-type': 'text/html; charset=UTF-16LE', 'content-encoding': 'br' } }));
    assert.equal(text.error, undefined);
    assert.deepEqual(text.body, utf16);
  });
});
