import { z } from 'zod';
import { version, httpUrl, epochMs, errorCode } from './common.ts';
import { frontierRecord } from './frontier.ts';

/** Most response headers a page keeps, and the longest value (longer ones are cut). */
export const MAX_PAGE_HEADERS = 64;
export const MAX_PAGE_HEADER_VALUE = 2048;

/**
 * pages: what the fetcher got for one request, success or failure. Long retention: replayable.
 *
 * A pages record is not JSON: it is a small JSON header (the fields below) followed by the body as
 * the server sent it (transfer encoding removed, charset untouched). A compressed body of up to
 * 64 KiB keeps its content encoding too (`contentEncoding`): its reader decodes it
 * (services/common/page-content.ts), the parser in its worker threads. See `encodePageRecord` for
 * the framing; `pageHeader` is the header's schema.
 */
const pageFields = {
  v: version,
  request: frontierRecord.describe('The fetch request, echoed.'),
  finalUrl: httpUrl.describe('URL of the response recorded here (the request URL unless the fetcher followed a redirect itself, as for robots.txt).'),
  redirects: z
    .array(z.object({ url: z.string(), status: z.number().int() }))
    .max(16)
    .describe('The redirect chain so far: the hops that led to this request and, for a 3xx, this response too.'),
  location: httpUrl
    .optional()
    .describe("For a 3xx: its Location resolved against the URL, fragment removed. The fetcher does not follow it; the scheduler queues it as a discovery (reason redirect)."),
  status: z.number().int().min(0).max(999).describe('HTTP status of the final response; 0 when no response.'),
  headers: z
    .record(z.string(), z.string().max(MAX_PAGE_HEADER_VALUE))
    .refine((h) => Object.keys(h).length <= MAX_PAGE_HEADERS, { message: `at most ${MAX_PAGE_HEADERS} headers` })
    .describe(`Response headers, lower-case names, repeated ones joined with ", " (set-cookie with "\\n"); at most ${MAX_PAGE_HEADERS}, values cut at ${MAX_PAGE_HEADER_VALUE} characters.`),
  contentType: z.string().max(256).optional().describe('Lower-case type/subtype of Content-Type, parameters dropped (the full header is in headers).'),
  bodyTruncated: z.boolean().describe('True when the size cap cut the body.'),
  bodyTruncatedReason: z.string().max(500).optional().describe('Why the body was cut when not by the fetch size cap, e.g. the record would exceed its topic\'s max.message.bytes.'),
  bodyEncoding: z
    .literal('UTF-8')
    .optional()
    .describe('Set only when the body bytes are not what the server sent but text re-encoded as UTF-8 (records converted from the old all-JSON form); the charset of Content-Type then no longer applies.'),
  bytes: z.number().int().nonnegative().describe('Bytes received on the wire (after transfer encoding).'),
  decodedBytes: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Bytes after content decoding (gzip/br/deflate); absent while the body is still content-encoded (contentEncoding).'),
  contentEncoding: z
    .enum(['gzip', 'br', 'deflate'])
    .optional()
    .describe("Set when the body is still compressed as the server sent it (its Content-Encoding: gzip, br, or deflate with or without the zlib wrapper): decode it to get the page's bytes. Absent when the body is already decoded."),
  decodeLimit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('With contentEncoding: the most bytes the body is taken to decode to (the fetcher\'s decoded-size cap); a decoder cuts it there and counts it as truncated.'),
  timing: z.object({
    startedAt: epochMs,
    dnsMs: z.number().nonnegative().optional(),
    connectMs: z.number().nonnegative().optional(),
    ttfbMs: z.number().nonnegative().optional(),
    queueMs: z.number().nonnegative().optional().describe('Time waiting for a per-IP connection slot in the fetcher (included in totalMs).'),
    totalMs: z.number().nonnegative(),
  }),
  serverIp: z.string().max(64).optional(),
  connectionReused: z.boolean().optional().describe('Whether a kept-alive connection served the request.'),
  connectionClosed: z.boolean().optional().describe('Server asked to close the connection (keep-alive window ended).'),
  error: z.object({ code: errorCode, message: z.string().max(2000) }).optional(),
  fetchedAt: epochMs,
};

/** The JSON header of a framed pages record (schemas/json/pages.v1.schema.json describes it). */
export const pageHeader = z
  .object({
    ...pageFields,
    bodyBytes: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Length of the body that follows the header; absent when the record has no body (failed fetch, non-text content, no content).'),
  })
  .describe(
    'Header of a pages record. Wire form of the Kafka value: the 3 ASCII bytes "MGP", a format byte (1, or 2 when the body is still content-encoded), the header length as a 32-bit big-endian integer, the header as UTF-8 JSON, then bodyBytes bytes of body exactly as the server sent it after transfer decoding (no charset conversion): content-decoded too unless contentEncoding says otherwise.',
  );
export type PageHeader = z.infer<typeof pageHeader>;

/** A pages record in memory: the header fields and the body bytes. */
export const pageRecord = z.object({
  ...pageFields,
  body: z
    .custom<Buffer>((b) => Buffer.isBuffer(b), { message: 'body must be bytes (a Buffer)' })
    .optional()
    .describe('Body bytes (HTML, robots.txt, XML) as the server sent them: content-encoded when contentEncoding is set, decoded otherwise; absent for non-text content and failures.'),
});
export type PageRecord = z.infer<typeof pageRecord>;

/** First bytes of every framed pages record: "MGP" and the framing version. */
export const PAGE_MAGIC = Buffer.from('MGP', 'latin1');
export const PAGE_FORMAT_VERSION = 1;
/**
 * The framing version of a record whose body is still content-encoded: a reader that predates
 * contentEncoding refuses it instead of taking compressed bytes for the page.
 */
export const PAGE_FORMAT_ENCODED = 2;
const PREFIX_BYTES = 8;

export class PageRecordError extends Error {
  readonly code = 'MEGURI_ERR_DECODE';
}

/** The framed bytes of a page: prefix, JSON header, body (one copy of the body). */
export function encodePageRecord(page: PageRecord): Buffer {
  const { body, ...fields } = page;
  const header: PageHeader = body === undefined ? fields : { ...fields, bodyBytes: body.length };
  const json = JSON.stringify(header);
  const jsonBytes = Buffer.byteLength(json);
  const out = Buffer.allocUnsafe(PREFIX_BYTES + jsonBytes + (body?.length ?? 0));
  PAGE_MAGIC.copy(out, 0);
  out[3] = page.contentEncoding === undefined ? PAGE_FORMAT_VERSION : PAGE_FORMAT_ENCODED;
  out.writeUInt32BE(jsonBytes, 4);
  out.write(json, PREFIX_BYTES, 'utf8');
  if (body !== undefined) out.set(body, PREFIX_BYTES + jsonBytes);
  return out;
}

/** Size of the framed record without building it (for the size check of a cut body). */
export function encodedPageSize(page: PageRecord): number {
  const { body, ...fields } = page;
  const header: PageHeader = body === undefined ? fields : { ...fields, bodyBytes: body.length };
  return PREFIX_BYTES + Buffer.byteLength(JSON.stringify(header)) + (body?.length ?? 0);
}

function unframe(value: Buffer): Record<string, unknown> {
  if (value.length > 0 && value[0] === 0x7b) return fromJsonForm(value);
  if (value.length < PREFIX_BYTES || value[0] !== PAGE_MAGIC[0] || value[1] !== PAGE_MAGIC[1] || value[2] !== PAGE_MAGIC[2]) {
    throw new PageRecordError('not a pages record (no "MGP" prefix)');
  }
  const format = value[3];
  if (format !== PAGE_FORMAT_VERSION && format !== PAGE_FORMAT_ENCODED) {
    throw new PageRecordError(`pages framing version ${String(format)} is not supported (this build reads ${PAGE_FORMAT_VERSION} and ${PAGE_FORMAT_ENCODED})`);
  }
  const headerBytes = value.readUInt32BE(4);
  const bodyStart = PREFIX_BYTES + headerBytes;
  if (bodyStart > value.length) throw new PageRecordError(`pages header of ${headerBytes} bytes runs past the ${value.length}-byte record`);
  let header: unknown;
  try {
    header = JSON.parse(value.toString('utf8', PREFIX_BYTES, bodyStart));
  } catch (err) {
    throw new PageRecordError(`pages header is not JSON: ${(err as Error).message}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new PageRecordError('pages header is not a JSON object');
  const fields = header as Record<string, unknown>;
  if ((fields.contentEncoding !== undefined) !== (format === PAGE_FORMAT_ENCODED)) {
    throw new PageRecordError(`pages framing version ${format} ${format === PAGE_FORMAT_ENCODED ? 'needs' : 'cannot have'} a contentEncoding in its header`);
  }
  const bodyLength = value.length - bodyStart;
  const declared = fields.bodyBytes;
  delete fields.bodyBytes;
  if (declared === undefined) {
    if (bodyLength !== 0) throw new PageRecordError(`${bodyLength} bytes follow a pages header that declares no body`);
  } else {
    if (declared !== bodyLength) throw new PageRecordError(`pages header declares ${String(declared)} body bytes, ${bodyLength} follow`);
    // A view into the record, not a copy.
    fields.body = value.subarray(bodyStart);
  }
  return fields;
}

/** The old all-JSON form (body as decoded text): the text becomes UTF-8 bytes, marked as such. */
function fromJsonForm(value: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (err) {
    throw new PageRecordError(`starts like a pages record in the old JSON form but is not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new PageRecordError('pages record in JSON form is not an object');
  const fields = parsed as Record<string, unknown>;
  delete fields.charset;
  if (typeof fields.body === 'string') {
    fields.body = Buffer.from(fields.body, 'utf8');
    fields.bodyEncoding = 'UTF-8';
  }
  return fields;
}

/**
 * A fast test that zod would accept the header fields and return them as they are (the runtime
 * compiles one from pageRecord: services/common/page-decode.ts); without one, zod checks each header.
 */
export type PageHeaderTest = (fields: Record<string, unknown>) => boolean;

/**
 * Decodes one `pages` value (the framed form, or the older all-JSON form) and validates it.
 * Throws a PageRecordError (code MEGURI_ERR_DECODE) for bad framing and a ZodError for a header
 * that breaks the schema. With `validate: false` only the framing is checked (for callers that
 * validate afterwards, like the stream runtime). The body comes as stored: still compressed when
 * `contentEncoding` is set (decodePageContent in services/common/page-content.ts decodes it).
 */
export function decodePageRecord(value: Buffer, options: { validate?: boolean; conforms?: PageHeaderTest } = {}): PageRecord {
  const fields = unframe(value);
  return options.validate === false || options.conforms?.(fields) === true ? (fields as PageRecord) : pageRecord.parse(fields);
}

/** Like decodePageRecord, as a result instead of a throw (for readers that skip bad records). */
export function safeDecodePageRecord(value: Buffer, conforms?: PageHeaderTest): { ok: true; page: PageRecord } | { ok: false; reason: string } {
  let fields: Record<string, unknown>;
  try {
    fields = unframe(value);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  if (conforms?.(fields) === true) return { ok: true, page: fields as PageRecord };
  const parsed = pageRecord.safeParse(fields);
  if (!parsed.success) return { ok: false, reason: 'pages header breaks its schema: ' + parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  return { ok: true, page: parsed.data };
}
