import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { ZodError } from 'zod';
import { PAGE_MAGIC, PageRecordError, SCHEMA_VERSION, decodePageRecord, encodePageRecord, encodedPageSize, pageHeader, safeDecodePageRecord, topicCodecs } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { pageText } from '../../services/parser/charset.ts';

const url = 'http://a.sim.test/x';
const base: PageRecord = {
  v: SCHEMA_VERSION,
  request: { v: SCHEMA_VERSION, requestId: 'r1', url, host: 'a.sim.test', reason: 'new', score: 0.5, depth: 1, cgiHops: 0, attempt: 1, issuedAt: 1 },
  finalUrl: url,
  redirects: [],
  status: 200,
  headers: { 'content-type': 'text/html; charset=shift_jis', etag: '"e"' },
  contentType: 'text/html',
  bodyTruncated: false,
  bytes: 9,
  decodedBytes: 9,
  timing: { startedAt: 1, totalMs: 2 },
  fetchedAt: 3,
};

describe('pages record framing', () => {
  it('round-trips header and body bytes exactly, bytes that are not UTF-8 included', () => {
    const body = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x00, 0xff, 0x0a]);
    const page = { ...base, body };
    const encoded = encodePageRecord(page);
    assert.ok(encoded.subarray(0, 3).equals(PAGE_MAGIC));
    assert.equal(encoded[3], 1, 'framing version');
    assert.equal(encoded.length, encodedPageSize(page));
    const headerBytes = encoded.readUInt32BE(4);
    const header = pageHeader.parse(JSON.parse(encoded.toString('utf8', 8, 8 + headerBytes)));
    assert.equal(header.bodyBytes, body.length);
    assert.ok(encoded.subarray(8 + headerBytes).equals(body), 'the body follows the header unchanged');
    const back = decodePageRecord(encoded);
    assert.deepEqual(back, page);
    assert.ok(Buffer.isBuffer(back.body));
  });

  it('a page without a body has no bodyBytes and nothing after the header', () => {
    const encoded = encodePageRecord(base);
    const header = JSON.parse(encoded.toString('utf8', 8)) as Record<string, unknown>;
    assert.equal(header.bodyBytes, undefined);
    assert.deepEqual(decodePageRecord(encoded), base);
    const empty = { ...base, body: Buffer.alloc(0) };
    assert.deepEqual(decodePageRecord(encodePageRecord(empty)), empty, 'an empty body is not the same as none');
  });

  it('rejects bad framing with MEGURI_ERR_DECODE and a bad header with the schema issue', () => {
    const good = encodePageRecord({ ...base, body: Buffer.from('<p>x</p>') });
    const cases: [Buffer, RegExp][] = [
      [Buffer.from('MGP'), /no "MGP" prefix/],
      [Buffer.from('XYZ\x01\x00\x00\x00\x02{}'), /no "MGP" prefix/],
      [Buffer.concat([Buffer.from('MGP\x07'), good.subarray(4)]), /framing version 7/],
      [good.subarray(0, good.length - 1), /declares 8 body bytes, 7 follow/],
      [Buffer.concat([good, Buffer.from('!')]), /declares 8 body bytes, 9 follow/],
      [Buffer.from('MGP\x01\x00\x00\x10\x00{}'), /runs past/],
      [Buffer.from('MGP\x01\x00\x00\x00\x02[]'), /not a JSON object/],
      [Buffer.from('{"v":1, broken'), /old JSON form but is not JSON/],
    ];
    for (const [value, reason] of cases) {
      assert.throws(() => decodePageRecord(value), (err: unknown) => err instanceof PageRecordError && err.code === 'MEGURI_ERR_DECODE' && reason.test(err.message), reason.source);
      const safe = safeDecodePageRecord(value);
      assert.ok(!safe.ok && reason.test(safe.reason), reason.source);
    }
    const badStatus = encodePageRecord({ ...base, status: 1234 });
    assert.throws(() => decodePageRecord(badStatus), ZodError);
    assert.doesNotThrow(() => decodePageRecord(badStatus, { validate: false }), 'the runtime validates separately');
  });

  it('reads the older all-JSON form: the text body becomes UTF-8 bytes, marked so the parser does not re-sniff it', () => {
    const { body: _none, ...fields } = { ...base, body: undefined };
    const legacy = Buffer.from(JSON.stringify({ ...fields, charset: 'Shift_JIS', body: '日本語のページ' }));
    const page = decodePageRecord(legacy);
    assert.equal(page.bodyEncoding, 'UTF-8');
    assert.ok(page.body?.equals(Buffer.from('日本語のページ')));
    assert.equal((page as Record<string, unknown>).charset, undefined);
    assert.equal(pageText(page)?.text, '日本語のページ');
  });

  it('frames a body still content-encoded as version 2, which names its encoding', () => {
    const body = gzipSync(Buffer.from('<p>hello</p>'));
    const { decodedBytes: _d, ...rest } = base;
    const page: PageRecord = { ...rest, bytes: body.length, contentEncoding: 'gzip', decodeLimit: 1024, body };
    const encoded = encodePageRecord(page);
    assert.equal(encoded[3], 2, 'framing version');
    assert.deepEqual(decodePageRecord(encoded), page);
    assert.equal(encodedPageSize(page), encoded.length);
    // A version byte that disagrees with the header is refused, never read as the other form.
    const wrongVersion = Buffer.from(encoded);
    wrongVersion[3] = 1;
    assert.throws(() => decodePageRecord(wrongVersion), (e: unknown) => e instanceof PageRecordError && /cannot have a contentEncoding/.test(e.message));
    const plain = Buffer.from(encodePageRecord({ ...base, body: Buffer.from('<p>hello</p>') }));
    plain[3] = 2;
    assert.throws(() => decodePageRecord(plain), (e: unknown) => e instanceof PageRecordError && /needs a contentEncoding/.test(e.message));
    const future = Buffer.from(encoded);
    future[3] = 3;
    assert.throws(() => decodePageRecord(future), /framing version 3 is not supported/);
  });

  it('is the codec the runtime uses for the pages topic, and only for it', () => {
    const codec = topicCodecs.pages!;
    const page = { ...base, body: Buffer.from('<p>x</p>') };
    assert.ok(codec.encode(page).equals(encodePageRecord(page)));
    assert.deepEqual(codec.decode(codec.encode(page)), page);
    assert.deepEqual(Object.keys(topicCodecs), ['pages']);
  });
});

describe('charset decoding in the parser', () => {
  const withBody = (body: Buffer, contentType: string | undefined, reason: PageRecord['request']['reason'] = 'new'): PageRecord => ({
    ...base,
    request: { ...base.request, reason },
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body,
  });

  it('follows BOM, then the header charset, then <meta>, then windows-1252 for HTML', () => {
    assert.deepEqual(pageText(withBody(Buffer.from('caf\xe9', 'latin1'), 'text/html; charset=ISO-8859-1')), { text: 'café', charset: 'windows-1252' });
    assert.equal(pageText(withBody(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('ü')]), 'text/html; charset=iso-8859-1'))?.text, 'ü');
    const sjis = Buffer.concat([Buffer.from('<meta charset="shift_jis"><p>'), Buffer.from([0x83, 0x65, 0x83, 0x58, 0x83, 0x67])]);
    assert.deepEqual(pageText(withBody(sjis, 'text/html')), { text: '<meta charset="shift_jis"><p>テスト', charset: 'Shift_JIS' });
    assert.equal(pageText(withBody(Buffer.from('d\xe9j\xe0 \x80', 'latin1'), 'text/html'))?.text, 'déjà €');
  });

  it('reads robots.txt as UTF-8 and XML by its declaration when the type does not say', () => {
    assert.deepEqual(pageText(withBody(Buffer.from('Disallow: /ñ'), undefined, 'robots')), { text: 'Disallow: /ñ', charset: 'UTF-8' });
    const xml = Buffer.from('<?xml version="1.0" encoding="windows-1252"?><t>caf\xe9</t>', 'latin1');
    assert.equal(pageText(withBody(xml, undefined, 'feed'))?.text.endsWith('café</t>'), true);
    assert.equal(pageText({ ...base }), undefined, 'no body, no text');
  });
});
