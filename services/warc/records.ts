/**
 * WARC/1.1 records for one fetch, built with the `warcio` library (it writes the format, the
 * Content-Length and both digests): a `request` record, then a `response` — or a `revisit` when the
 * server answered 304 Not Modified (profile server-not-modified) or the payload is identical to the
 * URL's previous response (profile identical-payload-digest).
 *
 * The payload is the body as the server sent it after transfer and content decoding: the HTTP header
 * block is rewritten to say so (Content-Encoding and Transfer-Encoding removed, Content-Length set to
 * the stored length, the originals kept as X-Archive-Orig-* headers). The crawler keeps a selection
 * of response headers, not all; the request record is rebuilt from what the request carried (method,
 * target, Host, User-Agent when known, conditional headers).
 */
import { createHash } from 'node:crypto';
import { WARCRecord, WARCSerializer } from 'warcio';

export const WARC_VERSION = 'WARC/1.1';
export const PROFILE_NOT_MODIFIED = 'http://netpreserve.org/warc/1.1/revisit/server-not-modified';
export const PROFILE_IDENTICAL = 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest';

/** SHA-1 in base 32, the digest most WARC tools expect. */
export const DIGEST = { algo: 'sha-1', prefix: 'sha1:', base32: true } as const;

/** One fetch as the archive needs it (from a `pages` record). */
export interface ArchivedFetch {
  /** The URL of the response recorded. */
  url: string;
  fetchedAt: number;
  status: number;
  /** Response headers kept by the fetcher, lower-case names. */
  headers: Record<string, string>;
  /** Body bytes after transfer and content decoding; undefined when the record carries none. */
  body?: Uint8Array;
  bodyTruncated?: boolean;
  serverIp?: string;
  userAgent?: string;
  /** Validators sent with a conditional request. */
  validators?: { etag?: string; lastModified?: string };
}

/** What the archive remembers of the previous response of a URL (for revisit records). */
export interface PreviousCapture {
  payloadDigest: string;
  date: string;
  recordId: string;
  /** Where the capture's pages record was (the sink tells re-read records from earlier ones). */
  partition?: number;
  offset?: number;
}

const REASONS: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 206: 'Partial Content', 301: 'Moved Permanently', 302: 'Found', 303: 'See Other',
  304: 'Not Modified', 307: 'Temporary Redirect', 308: 'Permanent Redirect', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 410: 'Gone', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** WARC-Date: UTC, second precision is the WARC/1.0 form; WARC/1.1 allows milliseconds. */
export function warcDate(ms: number): string {
  return new Date(ms).toISOString();
}

/** The SHA-1/base32 payload digest of a body, as written in WARC-Payload-Digest. */
export function payloadDigest(body: Uint8Array): string {
  return DIGEST.prefix + base32(createHash('sha1').update(body).digest());
}

function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/**
 * The HTTP header block of the archived response: the kept headers, with the encodings the payload
 * no longer has removed and its real length set; what was removed is kept as X-Archive-Orig-*.
 */
export function archivedResponseHeaders(headers: Record<string, string>, bodyLength: number | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (n === 'content-encoding' || n === 'transfer-encoding' || n === 'content-length') {
      out.push([`X-Archive-Orig-${canonicalName(n)}`, value]);
      continue;
    }
    out.push([canonicalName(n), value]);
  }
  if (bodyLength !== undefined) out.push(['Content-Length', String(bodyLength)]);
  return out;
}

function canonicalName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

function requestBlock(f: ArchivedFetch): [string, [string, string][]] {
  const u = new URL(f.url);
  const headers: [string, string][] = [['Host', u.host]];
  if (f.userAgent) headers.push(['User-Agent', f.userAgent]);
  if (f.validators?.etag) headers.push(['If-None-Match', f.validators.etag]);
  if (f.validators?.lastModified) headers.push(['If-Modified-Since', f.validators.lastModified]);
  return [`GET ${u.pathname}${u.search} HTTP/1.1`, headers];
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  if (bytes.length > 0) yield bytes;
}

export interface BuiltFetch {
  kind: 'response' | 'revisit';
  profile?: string;
  /** Serialized records (request first), each a gzip member when gzip is on. */
  chunks: Uint8Array[];
  /** What to remember for later revisits of this URL (responses only). */
  capture?: PreviousCapture;
}

/** The records of one fetch, serialized. `previous` is the URL's last response, if any. */
export async function buildFetchRecords(f: ArchivedFetch, previous: PreviousCapture | undefined, opts: { gzip: boolean }): Promise<BuiltFetch> {
  const date = warcDate(f.fetchedAt);
  const body = f.body ?? new Uint8Array(0);
  const digest = payloadDigest(body);
  const statusline = `HTTP/1.1 ${f.status} ${REASONS[f.status] ?? 'Status'}`;
  const ipHeader: Record<string, string> = f.serverIp ? { 'WARC-IP-Address': f.serverIp } : {};
  const truncated: Record<string, string> = f.bodyTruncated ? { 'WARC-Truncated': 'length' } : {};

  let kind: BuiltFetch['kind'] = 'response';
  let profile: string | undefined;
  if (f.status === 304) {
    kind = 'revisit';
    profile = PROFILE_NOT_MODIFIED;
  } else if (previous !== undefined && previous.payloadDigest === digest && f.status === 200 && body.length > 0) {
    kind = 'revisit';
    profile = PROFILE_IDENTICAL;
  }

  const headers = archivedResponseHeaders(f.headers, kind === 'revisit' ? undefined : body.length);
  const main = WARCRecord.create(
    {
      url: f.url,
      date,
      type: kind,
      warcVersion: WARC_VERSION,
      httpHeaders: headers,
      statusline,
      warcHeaders: { ...ipHeader, ...truncated },
      ...(kind === 'revisit' && previous !== undefined ? { refersToUrl: f.url, refersToDate: previous.date } : {}),
    },
    once(kind === 'revisit' ? new Uint8Array(0) : body),
  );
  if (kind === 'revisit') {
    main.warcHeaders.headers.set('WARC-Profile', profile!);
    if (previous !== undefined) main.warcHeaders.headers.set('WARC-Refers-To', previous.recordId);
  }
  const mainId = main.warcHeaders.headers.get('WARC-Record-ID')!;
  const [reqLine, reqHeaders] = requestBlock(f);
  const request = WARCRecord.create(
    { url: f.url, date, type: 'request', warcVersion: WARC_VERSION, httpHeaders: reqHeaders, statusline: reqLine, warcHeaders: { ...ipHeader, 'WARC-Concurrent-To': mainId } },
    once(new Uint8Array(0)),
  );
  // A revisit carries the digest of the payload it stands for: this one when identical, for a 304
  // the previous capture's when the archive knows it.
  const revisitDigest = kind === 'revisit' ? (profile === PROFILE_IDENTICAL ? digest : previous?.payloadDigest) : undefined;
  if (revisitDigest !== undefined) main.warcHeaders.headers.set('WARC-Payload-Digest', revisitDigest);
  const serialize = (r: WARCRecord): Promise<Uint8Array> => WARCSerializer.serialize(r, { gzip: opts.gzip, digest: DIGEST });
  const chunks = [await serialize(request), await serialize(main)];
  return {
    kind,
    ...(profile !== undefined ? { profile } : {}),
    chunks,
    ...(kind === 'response' ? { capture: { payloadDigest: digest, date, recordId: mainId } } : {}),
  };
}

/** The warcinfo record that opens every file. */
export async function warcinfoRecord(filename: string, info: Record<string, string>, opts: { gzip: boolean }): Promise<Uint8Array> {
  const record = WARCRecord.createWARCInfo({ filename, warcVersion: WARC_VERSION, date: warcDate(Date.now()) }, info);
  return WARCSerializer.serialize(record, { gzip: opts.gzip, digest: DIGEST });
}
