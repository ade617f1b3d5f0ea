/**
 * The fetcher core: one FrontierRecord in, one PageRecord out, never a thrown error.
 *
 * Built on undici keep-alive pools per origin (see pools.ts for why not undici's Agent) whose
 * connector dials the IP from our resolver while Host and TLS SNI stay the host name. Requests are driven through the low-level
 * dispatch handler API so the body is read chunk by chunk: caps apply to wire bytes and to
 * decompressed bytes (a gzip bomb stops at the cap), unwanted bodies are skipped early, and nothing
 * is buffered twice.
 */
import { subscribe } from 'node:diagnostics_channel';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import type { Transform } from 'node:stream';
import { constants as zc, createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { buildConnector } from 'undici';
import type { Dispatcher } from 'undici';
import pkg from '../../package.json' with { type: 'json' };
import { SCHEMA_VERSION } from '../../schemas/common.ts';
import type { FrontierRecord } from '../../schemas/frontier.ts';
import { MAX_PAGE_HEADERS, MAX_PAGE_HEADER_VALUE } from '../../schemas/pages.ts';
import type { PageRecord } from '../../schemas/pages.ts';
import type { Clock } from '../runtime/clock.ts';
import { clockDuration, systemClock } from '../runtime/clock.ts';
import { decodeAll, isZlibWrapped } from '../common/page-content.ts';
import type { ContentEncoding } from '../common/page-content.ts';
import { BINARY_SNIFF_BYTES, looksBinary, parseContentType, textKindOf } from './decode.ts';
import type { TextKind } from './decode.ts';
import { AddressPolicy } from './address-policy.ts';
import type { AddressSource } from './address-policy.ts';
import { createResolver, normalizeHost } from './dns.ts';
import type { NameResolver, ResolveEntry, ResolverStats } from './dns.ts';
import { classifyError, errorMessage, FetchError } from './errors.ts';
import { dropInterimResponses } from './interim.ts';
import { decodeHeaderUtf8, resolveRedirect, truncateText } from './location.ts';
import type { FetchErrorCode } from './errors.ts';
import { Limiter } from './limiter.ts';
import { OriginPools } from './pools.ts';
import { FETCHER_DEFAULTS } from './defaults.ts';
import type { FetcherDefaults } from './defaults.ts';

export const FETCHER_VERSION: string = pkg.version;
export const DEFAULT_CONTACT = 'https://meguri.invalid/bot';

export function defaultUserAgent(contact: string = DEFAULT_CONTACT): string {
  return `meguri/${FETCHER_VERSION} (+${contact})`;
}

export interface FetcherOptions {
  /** Name resolution. Default: static mode over `resolve` (no DNS traffic at all). */
  resolver?: NameResolver;
  /** `PATTERN=IP` entries for the default static resolver; ignored when `resolver` is given. */
  resolve?: Iterable<ResolveEntry | string>;
  /**
   * `--allow-address` ranges (CIDR or single address) the address policy lets the fetcher dial
   * besides public addresses (system DNS) and names mapped by `--resolve` (either mode). Under
   * static DNS nothing else is dialled: not even a public IP-literal URL.
   */
  allowAddresses?: Iterable<string>;
  /**
   * Source of `timing.startedAt` and `fetchedAt`. Time limits are wall-clock; reported durations are
   * measured in wall time and given in the clock's milliseconds (`clock.speed`), so a scheduler on a
   * scaled clock compares them with its own intervals.
   */
  clock?: Clock;
  /** Full User-Agent string (`--user-agent`). Default `meguri/<version> (+<contact>)`. */
  userAgent?: string;
  /** Contact URL for the default User-Agent (`--contact`). */
  contact?: string;
  /** Requests in flight per server IP, across all hosts on it. Default 2. */
  perIpConcurrency?: number;
  /** Requests in flight in total. Default 256. */
  maxConcurrency?: number;
  /**
   * Kept-alive connections per origin, 1 or 2. Default 1: a polite crawler rarely has two requests
   * for one host in flight, and with 2 undici's pool tends to open the second connection for a
   * request sent right after the previous one finished (the first is not marked free yet).
   */
  connectionsPerOrigin?: number;
  /** Idle time before a kept-alive connection is closed, unless the server says less. Default 10 000. */
  keepAliveTimeoutMs?: number;
  /** Cap on a server's `Keep-Alive: timeout=` hint. Default 60 000. */
  keepAliveMaxTimeoutMs?: number;
  /** TCP connect plus TLS handshake. Default 10 000. */
  connectTimeoutMs?: number;
  /** From sending the request to the end of the response headers. Default 15 000. */
  headersTimeoutMs?: number;
  /** One request/response exchange (each redirect hop), body included. Default 30 000. */
  totalTimeoutMs?: number;
  /**
   * Redirect hops a chain may take before MEGURI_ERR_REDIRECT_LIMIT; 0..15. Default 5. Only
   * robots.txt redirects are followed here (RFC 9309 §2.3.1.2); a page's 3xx ends the request with
   * its resolved `location` and the scheduler queues the target, so robots.txt and politeness apply
   * to it (docs/politeness.md, "Redirects"). The hops of such a chain travel on the request.
   */
  maxRedirects?: number;
  /** Body bytes read from the wire (before content decoding). Default 2 MiB. */
  maxBodyBytes?: number;
  /** Body bytes after gzip/deflate/br decoding. Default 8 MiB. */
  maxDecodedBytes?: number;
  /**
   * A compressed body of up to 64 KiB is stored as the server sent it (the record's
   * `contentEncoding` and `decodeLimit`) and decoded by its reader, the parser in its worker
   * threads, instead of here on the event loop; the reader also makes the binary check
   * (MEGURI_ERR_BINARY) and reports a corrupt stream (MEGURI_ERR_DECOMPRESS). Default true. Applies
   * with `oversize: 'truncate'` (with `error` a body past the decoded cap must fail here).
   */
  keepCompressed?: boolean;
  /**
   * What a cap does: `truncate` (default) keeps what fit and sets `bodyTruncated`, which is what a
   * crawler wants from an oversized page (links near the top still count); `error` fails the fetch
   * with MEGURI_ERR_BODY_TOO_LARGE and no body.
   */
  oversize?: 'truncate' | 'error';
  /**
   * Bodies we do not keep (non-text types, redirects) are read and thrown away up to this many
   * bytes so the connection can be reused; longer ones are cut by closing it. Default 64 KiB.
   */
  discardBodyBytes?: number;
  /** Accept header. */
  accept?: string;
  /** TLS settings for https origins. */
  tls?: { rejectUnauthorized?: boolean; ca?: string | Buffer | (string | Buffer)[] };
}

export interface FetcherStats {
  started: number;
  completed: number;
  failed: number;
  inFlight: number;
  waiting: number;
  busyIps: number;
  newConnections: number;
  reusedConnections: number;
  /** Requests re-sent once because a kept-alive connection turned out to be closed. */
  staleRetries: number;
  wireBytes: number;
  decodedBytes: number;
  errors: Record<string, number>;
  dns: ResolverStats;
}

export interface Fetcher {
  fetch(req: FrontierRecord): Promise<PageRecord>;
  close(): Promise<void>;
  stats(): FetcherStats;
}

/** Content types of a gzip file: inflated like Content-Encoding: gzip when the request is for a sitemap or feed. */
const GZIP_FILE_TYPES: ReadonlySet<string> = new Set(['application/gzip', 'application/x-gzip']);
const DEFAULTS: Readonly<FetcherDefaults> = FETCHER_DEFAULTS;
export { FETCHER_DEFAULTS };

/** The three time limits from one `--timeout`: connect and header waits never exceed the whole. */
export function fetchTimeouts(totalSeconds: number): Pick<FetcherOptions, 'totalTimeoutMs' | 'headersTimeoutMs' | 'connectTimeoutMs'> {
  const total = Math.max(1, Math.round(totalSeconds * 1000));
  return { totalTimeoutMs: total, headersTimeoutMs: Math.min(DEFAULTS.headersTimeoutMs, total), connectTimeoutMs: Math.min(DEFAULTS.connectTimeoutMs, total) };
}

/** Response headers always copied first, so a flood of other headers cannot push them out. */
const KEPT_HEADERS = [
  'content-type',
  'content-length',
  'etag',
  'last-modified',
  'retry-after',
  'location',
  'cache-control',
  'x-robots-tag',
  'content-language',
  'server',
] as const;
const MAX_HEADER_VALUE = MAX_PAGE_HEADER_VALUE;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Longest redirect target passed on (the URL limit of every topic record). */
const MAX_LOCATION_LENGTH = 8192;

// Truncated compressed input is decoded as far as it goes instead of failing at the end.
const ZLIB_OPTS = { finishFlush: zc.Z_SYNC_FLUSH };
const BROTLI_OPTS = { finishFlush: zc.BROTLI_OPERATION_FLUSH };
/**
 * A compressed body up to this size is kept whole: stored as it came for its reader to decode
 * (keepCompressed), or decoded in one synchronous call when it ends, which for a page of tens of
 * kilobytes costs a quarter to a half of the CPU of a decompression stream (a zlib handle, stream
 * plumbing and a thread-pool round trip per chunk). Larger bodies stream through a decoder here.
 */
const DECODE_AT_END_MAX_BYTES = 64 * 1024;

/** Reason passed to undici when we stop reading on purpose; never surfaces in a record. */
const STOP = new Error('response no longer needed');

/** What a kept network chunk may hold beside the body (a response's headers) and still be kept as it is. */
const MAX_SPARE_BYTES = 4096;

/**
 * A body that is one network chunk: a view into the socket read that brought it. Node gives every
 * read an ArrayBuffer of exactly the bytes read, so when the rest of that buffer is only the
 * response's headers the view is kept as it is; a copy would be one more buffer outside V8's heap
 * per page (such buffers, alive across two young collections, are what starts full collections).
 * A view into a read that holds much more gets a copy of its own, not to keep the rest alive.
 */
export function ownBytes(view: Buffer): Buffer {
  return view.buffer.byteLength - view.length <= MAX_SPARE_BYTES ? view : Buffer.from(view);
}

function ms(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function headerValue(v: string | string[] | undefined, separator = ', '): string | undefined {
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : v.join(separator);
  return truncateText(s, MAX_HEADER_VALUE);
}

/** The response headers a page keeps: the important ones first, then the rest, at most MAX_PAGE_HEADERS. */
function keptHeaders(headers: Record<string, string | string[] | undefined>, location: string | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  let count = 0;
  for (const name of KEPT_HEADERS) {
    const v = headerValue(name === 'location' ? location : headers[name]);
    if (v !== undefined) {
      kept[name] = v;
      count++;
    }
  }
  for (const name in headers) {
    if (count >= MAX_PAGE_HEADERS) break;
    const lower = name.toLowerCase();
    if (Object.hasOwn(kept, lower)) continue;
    // Cookies cannot be joined with commas (their dates contain them).
    const v = headerValue(headers[name], lower === 'set-cookie' ? '\n' : ', ');
    if (v === undefined) continue;
    kept[lower] = v;
    count++;
  }
  return kept;
}

function withoutHash(u: URL): string {
  return u.hash === '' ? u.href : u.href.slice(0, u.href.length - u.hash.length);
}

function isValidHeaderValue(v: string): boolean {
  return !/[\r\n\0]/.test(v);
}

/*
 * Which socket served a request: undici publishes `undici:client:sendHeaders` (with the socket)
 * synchronously right after calling the handler's onRequestStart on that socket, so the exchange
 * that just started is the one the message is about.
 */
let startingExchange: Exchange | null = null;
let channelReady = false;

interface SendHeadersMessage {
  request?: { origin?: unknown; path?: unknown };
  socket?: Socket;
}

function markStarting(ex: Exchange): void {
  startingExchange = ex;
}

function listenForSockets(): void {
  if (channelReady) return;
  channelReady = true;
  subscribe('undici:client:sendHeaders', (message) => {
    const ex = startingExchange;
    if (ex === null) return;
    startingExchange = null;
    const m = message as SendHeadersMessage;
    if (m.socket !== undefined && m.request?.path === ex.path && String(m.request.origin) === ex.origin) ex.attachSocket(m.socket);
  });
}

type Mode = 'discard' | 'collect';

/** One request/response exchange; the outcome is the exchange itself. */
class Exchange implements Dispatcher.DispatchHandler {
  responded = false;
  status = 0;
  headers: Record<string, string> = {};
  location: string | undefined;
  contentType: string | undefined;
  /** Body bytes after content decoding, charset untouched (the parser decodes text). */
  body: Buffer | undefined;
  truncated = false;
  bytes = 0;
  decodedBytes = 0;
  ttfbMs: number | undefined;
  connectMs: number | undefined;
  /** Time spent waiting for a per-IP slot before this exchange (and the hops before it), ms. */
  queueMs = 0;
  serverIp: string | undefined;
  reused: boolean | undefined;
  closed: boolean | undefined;
  error: { code: FetchErrorCode; message: string } | undefined;

  private controller: Dispatcher.DispatchController | undefined;
  /** The outcome is decided; later events only clean up. */
  private settled = false;
  /** undici is finished with us (completed, failed or aborted by us). */
  private netDone = false;
  private mode: Mode = 'discard';
  private declaredCharset: string | undefined;
  private encoding: 'identity' | ContentEncoding = 'identity';
  /** The encoding is the response's Content-Encoding (not a gzip file asked for as a sitemap). */
  private encodingFromHeader = false;
  /** The body is stored still compressed with this encoding (keepCompressed). */
  keptEncoding: ContentEncoding | undefined;
  /** The body is the output of decodeAtEnd (one synchronous decompression), not network chunks. */
  private decodedAtEnd = false;
  private decoder: Transform | undefined;
  /** Compressed chunks kept to be decoded at the end (DECODE_AT_END_MAX_BYTES), until a decoder streams. */
  private compressed: Buffer[] | undefined;
  private compressedBytes = 0;
  private chunks: Buffer[] = [];
  private binaryChecked = false;
  private timer: NodeJS.Timeout | undefined;
  private t0 = 0;
  private resolveDone: ((ex: Exchange) => void) | undefined;

  constructor(
    private readonly core: FetcherCore,
    readonly origin: string,
    readonly path: string,
    readonly ip: string,
    private readonly textDefault: TextKind,
  ) {
    this.serverIp = ip;
  }

  run(headers: string[]): Promise<Exchange> {
    const done = new Promise<Exchange>((resolve) => {
      this.resolveDone = resolve;
    });
    this.t0 = performance.now();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fail('MEGURI_ERR_TIMEOUT', `total time limit of ${this.core.o.totalTimeoutMs} ms exceeded`);
    }, this.core.o.totalTimeoutMs);
    try {
      this.core.pools.dispatch(
        {
          origin: this.origin,
          path: this.path,
          method: 'GET',
          headers,
          headersTimeout: this.core.o.headersTimeoutMs,
          bodyTimeout: this.core.o.totalTimeoutMs,
        },
        this,
      );
    } catch (err) {
      this.netDone = true;
      this.fail(classifyError(err), errorMessage(err));
    }
    return done;
  }

  /** A stale kept-alive connection: it failed before any response. Worth one more try. */
  get staleConnection(): boolean {
    return this.reused === true && !this.responded && this.error?.code === 'MEGURI_ERR_RESET';
  }

  attachSocket(socket: Socket): void {
    const connectMs = this.core.freshSockets.get(socket);
    if (connectMs !== undefined) {
      this.core.freshSockets.delete(socket);
      this.reused = false;
      this.connectMs = ms(connectMs);
      this.core.counters.newConnections++;
    } else {
      this.reused = true;
      this.core.counters.reusedConnections++;
    }
    this.serverIp = socket.remoteAddress ?? this.ip;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.netDone) {
      // Timed out or closed while waiting for a connection.
      controller.abort(STOP);
      return;
    }
    this.controller = controller;
    markStarting(this);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (this.netDone || statusCode < 200) return;
    this.controller = controller;
    this.responded = true;
    this.status = statusCode;
    this.ttfbMs = ms(performance.now() - this.t0);
    const loc = headers.location;
    const rawLocation = typeof loc === 'string' ? loc : loc?.[0];
    this.location = rawLocation !== undefined ? decodeHeaderUtf8(rawLocation) : undefined;
    const kept = keptHeaders(headers, this.location);
    this.headers = kept;
    const conn = headerValue(headers.connection);
    this.closed = conn !== undefined && /(?:^|,)\s*close\s*(?:,|$)/i.test(conn);
    const ct = parseContentType(kept['content-type']);
    this.contentType = ct?.essence;
    this.declaredCharset = ct?.charset;

    const o = this.core.o;
    const declared = kept['content-length'] !== undefined ? Number(kept['content-length']) : undefined;
    const redirect = REDIRECT_STATUSES.has(statusCode) && this.location !== undefined;
    // A gzip file asked for as a sitemap (`sitemap.xml.gz`) is XML the server did not decode.
    const gzipFile = this.textDefault === 'xml' && ct !== undefined && GZIP_FILE_TYPES.has(ct.essence);
    const kind = redirect || statusCode === 204 || statusCode === 205 || statusCode === 304 ? undefined : ct === undefined ? this.textDefault : gzipFile ? 'xml' : textKindOf(ct.essence);
    if (kind === undefined) {
      this.mode = 'discard';
      if (declared !== undefined && declared > o.discardBodyBytes) this.stopAndSettle();
      return;
    }
    this.mode = 'collect';
    if (declared !== undefined && declared > o.maxBodyBytes && o.oversize === 'error') {
      this.fail('MEGURI_ERR_BODY_TOO_LARGE', `content-length ${declared} exceeds the ${o.maxBodyBytes}-byte cap`);
      return;
    }
    const ce = headerValue(headers['content-encoding'])?.trim().toLowerCase() ?? '';
    if (ce === '' || ce === 'identity') this.encoding = gzipFile ? 'gzip' : 'identity';
    else if (ce === 'gzip' || ce === 'x-gzip') this.encoding = 'gzip';
    else if (ce === 'deflate') this.encoding = 'deflate';
    else if (ce === 'br') this.encoding = 'br';
    else this.fail('MEGURI_ERR_DECOMPRESS', `unsupported content-encoding: ${ce.slice(0, 100)}`);
    this.encodingFromHeader = this.encoding !== 'identity';
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.netDone) return;
    const o = this.core.o;
    this.bytes += chunk.length;
    if (this.mode === 'discard') {
      if (this.bytes > o.discardBodyBytes) this.stopAndSettle();
      return;
    }
    let data = chunk;
    let cut = false;
    if (this.bytes > o.maxBodyBytes) {
      if (o.oversize === 'error') {
        this.fail('MEGURI_ERR_BODY_TOO_LARGE', `body exceeds the ${o.maxBodyBytes}-byte cap`);
        return;
      }
      data = chunk.subarray(0, chunk.length - (this.bytes - o.maxBodyBytes));
      cut = true;
      this.truncated = true;
    }
    if (this.encoding === 'identity') {
      this.take(data);
      if (cut && !this.settled) {
        this.stopNetwork();
        this.finishBody();
      }
      return;
    }
    if (this.decoder === undefined && this.compressedBytes + data.length <= DECODE_AT_END_MAX_BYTES) {
      if (data.length > 0) {
        (this.compressed ??= []).push(data);
        this.compressedBytes += data.length;
      }
      if (cut) {
        this.stopNetwork();
        this.decodeAtEnd();
      }
      return;
    }
    const decoder = this.decoder ?? this.streamKept(data);
    // No back-pressure on the socket: undici 7 crashes the process (an assertion in its socket 'end'
    // handler, nodejs/undici#5360) when a paused response meets the server's FIN. The wire cap
    // bounds what the decoder can hold, so the compressed input is simply buffered.
    if (data.length > 0) decoder.write(data);
    if (cut) {
      this.stopNetwork();
      decoder.end();
    }
  }

  onResponseEnd(): void {
    if (this.netDone) return;
    this.netDone = true;
    if (this.settled) return;
    if (this.mode === 'discard') this.settle();
    else if (this.decoder !== undefined) this.decoder.end();
    else if (this.compressed !== undefined) this.decodeAtEnd();
    else this.finishBody();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.netDone) return;
    this.netDone = true;
    this.fail(classifyError(err), errorMessage(err));
  }

  /** Fails without ever dispatching (closed fetcher, no slot). */
  failEarly(code: FetchErrorCode, message: string): Exchange {
    this.netDone = true;
    this.fail(code, message);
    return this;
  }

  /** A decoder for a body grown past DECODE_AT_END_MAX_BYTES: it is given what was kept first. */
  private streamKept(next: Buffer): Transform {
    const kept = this.compressed ?? [];
    this.compressed = undefined;
    const decoder = this.startDecoder(kept[0] ?? next);
    for (const chunk of kept) decoder.write(chunk);
    return decoder;
  }

  /** Decodes the kept compressed body in one call, or keeps it compressed for its reader; past the decoded cap, a stream cuts it as it would have. */
  private decodeAtEnd(): void {
    const kept = this.compressed ?? [];
    this.compressed = undefined;
    if (this.settled || this.encoding === 'identity') return;
    const input = kept.length === 1 ? kept[0]! : Buffer.concat(kept, this.compressedBytes);
    const o = this.core.o;
    if (o.keepCompressed && o.oversize === 'truncate' && this.encodingFromHeader) {
      this.keepEncoded(this.encoding, input, kept.length === 1);
      return;
    }
    let decoded: Buffer;
    try {
      decoded = decodeAll(this.encoding, input, o.maxDecodedBytes);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        const decoder = this.startDecoder(input);
        decoder.end(input);
        return;
      }
      this.fail('MEGURI_ERR_DECOMPRESS', `${this.encoding}: ${errorMessage(err)}`);
      return;
    }
    this.decodedAtEnd = true;
    this.take(decoded);
    this.finishBody();
  }

  /**
   * The body is stored as the server compressed it, for its reader to decode
   * (services/common/page-content.ts), which also makes the binary check and turns a corrupt stream
   * into MEGURI_ERR_DECOMPRESS: nothing of it is decoded here.
   */
  private keepEncoded(encoding: ContentEncoding, input: Buffer, isNetworkChunk: boolean): void {
    this.keptEncoding = encoding;
    this.body = isNetworkChunk ? ownBytes(input) : input;
    this.settle();
  }

  private startDecoder(first: Buffer): Transform {
    let d: Transform;
    if (this.encoding === 'gzip') d = createGunzip(ZLIB_OPTS);
    else if (this.encoding === 'br') d = createBrotliDecompress(BROTLI_OPTS);
    else d = isZlibWrapped(first) ? createInflate(ZLIB_OPTS) : createInflateRaw(ZLIB_OPTS);
    d.on('data', (out: Buffer) => this.take(out));
    d.on('end', () => this.finishBody());
    d.on('error', (err: Error) => this.fail('MEGURI_ERR_DECOMPRESS', `${this.encoding}: ${errorMessage(err)}`));
    this.decoder = d;
    return d;
  }

  /** Takes decoded body bytes, enforcing the decoded cap and the binary check. */
  private take(buf: Buffer): void {
    if (this.settled) return;
    const o = this.core.o;
    let piece = buf;
    let overflow = false;
    const room = o.maxDecodedBytes - this.decodedBytes;
    if (piece.length > room) {
      piece = piece.subarray(0, room);
      overflow = true;
    }
    if (piece.length > 0) {
      this.chunks.push(piece);
      this.decodedBytes += piece.length;
    }
    if (!this.binaryChecked && this.decodedBytes >= BINARY_SNIFF_BYTES) {
      this.binaryChecked = true;
      const head = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.decodedBytes);
      if (looksBinary(head, this.declaredCharset)) {
        this.fail('MEGURI_ERR_BINARY', `binary content served as ${this.contentType ?? 'untyped'}`);
        return;
      }
    }
    if (overflow) {
      if (o.oversize === 'error') {
        this.fail('MEGURI_ERR_BODY_TOO_LARGE', `decoded body exceeds the ${o.maxDecodedBytes}-byte cap`);
        return;
      }
      this.truncated = true;
      this.stopNetwork();
      this.finishBody();
    }
  }

  private finishBody(): void {
    if (this.settled) return;
    const chunks = this.chunks;
    const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.decodedBytes);
    if (!this.binaryChecked) {
      this.binaryChecked = true;
      if (looksBinary(buf, this.declaredCharset)) {
        this.fail('MEGURI_ERR_BINARY', `binary content served as ${this.contentType ?? 'untyped'}`);
        return;
      }
    }
    // The output of a one-call decompression is a buffer of its own already (its spare room lives
    // only as long as the page, which is encoded into its record at once).
    this.body = chunks.length === 1 && !this.decodedAtEnd ? ownBytes(buf) : buf;
    this.settle();
  }

  private fail(code: FetchErrorCode, message: string): void {
    if (this.settled) return;
    this.error = { code, message };
    this.body = undefined;
    this.stopNetwork();
    this.settle();
  }

  private stopAndSettle(): void {
    this.stopNetwork();
    this.settle();
  }

  /** Stops reading: undici closes the connection (it cannot be reused mid-body). */
  private stopNetwork(): void {
    if (this.netDone) return;
    this.netDone = true;
    this.controller?.abort(STOP);
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.decoder !== undefined && !this.decoder.writableFinished) this.decoder.destroy();
    this.decoder = undefined;
    this.chunks = [];
    this.resolveDone?.(this);
  }
}

type ResolvedOptions = FetcherDefaults;

/** Shared state of one fetcher: connection pools, resolver, limiter and counters. */
class FetcherCore implements Fetcher {
  readonly o: ResolvedOptions;
  readonly pools: OriginPools;
  readonly resolver: NameResolver;
  readonly policy: AddressPolicy;
  readonly freshSockets = new WeakMap<Socket, number>();
  readonly counters = { started: 0, completed: 0, failed: 0, newConnections: 0, reusedConnections: 0, staleRetries: 0, wireBytes: 0, decodedBytes: 0 };
  private readonly errorCounts: Record<string, number> = {};
  private readonly limiter: Limiter;
  private readonly clock: Clock;
  private readonly ownsResolver: boolean;
  private readonly baseHeaders: string[];
  private closed = false;

  constructor(opts: FetcherOptions) {
    const o: ResolvedOptions = { ...DEFAULTS };
    for (const key of Object.keys(DEFAULTS) as (keyof ResolvedOptions)[]) {
      const v = opts[key];
      if (v !== undefined) (o as Record<string, unknown>)[key] = v;
    }
    checkOptions(o);
    this.o = o;
    this.clock = opts.clock ?? systemClock;
    this.ownsResolver = opts.resolver === undefined;
    this.resolver = opts.resolver ?? createResolver({ mode: 'static', resolve: opts.resolve ?? [] });
    this.policy = new AddressPolicy({ allow: opts.allowAddresses ?? [], onlyAllowed: this.resolver.mode === 'static' });
    this.limiter = new Limiter(o.perIpConcurrency, o.maxConcurrency);
    const ua = opts.userAgent ?? defaultUserAgent(opts.contact);
    if (!isValidHeaderValue(ua) || ua.length === 0) throw new RangeError('userAgent must be a non-empty single-line string');
    this.baseHeaders = ['user-agent', ua, 'accept', o.accept, 'accept-encoding', 'gzip, deflate, br'];

    const dial = buildConnector({
      timeout: o.connectTimeoutMs,
      rejectUnauthorized: opts.tls?.rejectUnauthorized ?? true,
      ...(opts.tls?.ca !== undefined ? { ca: opts.tls.ca } : {}),
    });
    const resolver = this.resolver;
    const fresh = this.freshSockets;
    // Dials the resolved IP; `host` (name:port) stays as is, so undici still derives TLS SNI and
    // certificate checks from the name. The address policy judges this very IP, right before the
    // dial: an answer that changed since fetchChain checked it (DNS rebinding) is judged again.
    const connect: buildConnector.connector = (options, callback) => {
      const t0 = performance.now();
      const go = (ip: string): void => {
        const refused = this.refusal(options.hostname, ip);
        if (refused !== undefined) return callback(refused, null);
        dial({ ...options, hostname: ip }, (err, socket) => {
          if (err !== null) return callback(err, null);
          fresh.set(socket, performance.now() - t0);
          dropInterimResponses(socket);
          callback(null, socket);
        });
      };
      const known = resolver.peek(options.hostname);
      if (known !== undefined) go(known);
      else resolver.resolve(options.hostname).then(go, (err: Error) => callback(err, null));
    };
    this.pools = new OriginPools(o.connectionsPerOrigin, {
      connect,
      pipelining: 1,
      keepAliveTimeout: o.keepAliveTimeoutMs,
      keepAliveMaxTimeout: o.keepAliveMaxTimeoutMs,
      keepAliveTimeoutThreshold: 1000,
      headersTimeout: o.headersTimeoutMs,
      bodyTimeout: o.totalTimeoutMs,
      maxHeaderSize: 64 * 1024,
    });
    listenForSockets();
  }

  /** The policy's error for dialling `ip` for `host`, or undefined when it may be dialled. */
  refusal(host: string, ip: string): FetchError | undefined {
    const h = normalizeHost(host);
    const source: AddressSource = isIP(h) !== 0 ? 'literal' : this.resolver.mapped(h) === ip ? 'resolve-map' : 'dns';
    const verdict = this.policy.check(ip, source, h);
    return verdict.allowed ? undefined : new FetchError('MEGURI_ERR_FORBIDDEN_ADDRESS', verdict.reason);
  }

  async fetch(req: FrontierRecord): Promise<PageRecord> {
    const startedAt = this.clock.now();
    const t0 = performance.now();
    this.counters.started++;
    try {
      if (req.reason === 'address') return await this.resolveOnly(req, startedAt, t0);
      return await this.fetchChain(req, startedAt, t0);
    } catch (err) {
      // Only a bug gets here; the contract is a record, never a rejection.
      return this.finish(req, startedAt, t0, req.url, [], undefined, undefined, new FetchError('MEGURI_ERR_INTERNAL', errorMessage(err)));
    }
  }

  private async fetchChain(req: FrontierRecord, startedAt: number, t0: number): Promise<PageRecord> {
    // A page request that is itself a redirect target carries the chain so far.
    const redirects: { url: string; status: number }[] = req.reason === 'robots' ? [] : [...(req.redirects ?? [])];
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return this.finish(req, startedAt, t0, req.url, redirects, undefined, undefined, new FetchError('MEGURI_ERR_INVALID_URL', `cannot parse URL: ${req.url.slice(0, 200)}`));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return this.finish(req, startedAt, t0, req.url, redirects, undefined, undefined, new FetchError('MEGURI_ERR_INVALID_URL', `unsupported scheme ${url.protocol}`));
    }
    const textDefault: TextKind = req.reason === 'robots' ? 'text' : req.reason === 'sitemap' || req.reason === 'feed' ? 'xml' : 'html';
    let current = req.url;
    let seen: Set<string> | undefined;
    let queuedMs = 0;
    for (;;) {
      if (this.closed) {
        return this.finish(req, startedAt, t0, current, redirects, undefined, undefined, new FetchError('MEGURI_ERR_ABORTED', 'fetcher closed'));
      }
      const td = performance.now();
      let ip: string;
      try {
        ip = await this.resolver.resolve(url.hostname);
      } catch (err) {
        const fe = err instanceof FetchError ? err : new FetchError('MEGURI_ERR_DNS_TEMPORARY', errorMessage(err));
        return this.finish(req, startedAt, t0, current, redirects, undefined, ms(performance.now() - td), fe);
      }
      const dnsMs = ms(performance.now() - td);
      const refused = this.refusal(url.hostname, ip);
      if (refused !== undefined) return this.finish(req, startedAt, t0, current, redirects, undefined, dnsMs, refused);
      const ex = await this.exchange(url, ip, redirects.length === 0 ? req.validators : undefined, textDefault, req.userAgent);
      queuedMs += ex.queueMs;
      ex.queueMs = queuedMs;
      if (ex.error !== undefined || !(REDIRECT_STATUSES.has(ex.status) && ex.location !== undefined)) {
        return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs);
      }
      redirects.push({ url: current, status: ex.status });
      let next: URL;
      try {
        next = resolveRedirect(ex.location, url);
      } catch (err) {
        return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs, err instanceof FetchError ? err : new FetchError('MEGURI_ERR_BAD_REDIRECT', errorMessage(err)));
      }
      if (req.reason !== 'robots') return this.redirectOutcome(req, startedAt, t0, current, redirects, ex, dnsMs, next.href);
      if (redirects.length > this.o.maxRedirects) {
        return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs, new FetchError('MEGURI_ERR_REDIRECT_LIMIT', `more than ${this.o.maxRedirects} redirects`));
      }
      seen ??= new Set([withoutHash(url)]);
      if (seen.has(next.href)) {
        return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs, new FetchError('MEGURI_ERR_REDIRECT_LIMIT', `redirect loop back to ${next.href.slice(0, 200)}`));
      }
      seen.add(next.href);
      url = next;
      current = next.href;
    }
  }

  /** reason=address: the host's IP only, no request to the server (the scheduler keys and caps by it). */
  private async resolveOnly(req: FrontierRecord, startedAt: number, t0: number): Promise<PageRecord> {
    const td = performance.now();
    try {
      const ip = await this.resolver.resolve(new URL(req.url).hostname);
      const rec = this.finish(req, startedAt, t0, req.url, [], undefined, ms(performance.now() - td));
      rec.serverIp = ip;
      return rec;
    } catch (err) {
      const fe = err instanceof FetchError ? err : new FetchError('MEGURI_ERR_DNS_TEMPORARY', errorMessage(err));
      return this.finish(req, startedAt, t0, req.url, [], undefined, ms(performance.now() - td), fe);
    }
  }

  /**
   * A page's 3xx is not followed: the record ends here with the resolved target in `location`, and
   * the scheduler treats the target like a discovered link. A chain past the hop limit, or one that
   * comes back to a URL it already passed, ends here instead.
   */
  private redirectOutcome(
    req: FrontierRecord,
    startedAt: number,
    t0: number,
    current: string,
    redirects: { url: string; status: number }[],
    ex: Exchange,
    dnsMs: number,
    target: string,
  ): PageRecord {
    if (redirects.length > this.o.maxRedirects) {
      return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs, new FetchError('MEGURI_ERR_REDIRECT_LIMIT', `more than ${this.o.maxRedirects} redirects`));
    }
    if (redirects.some((hop) => hop.url === target)) {
      return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs, new FetchError('MEGURI_ERR_REDIRECT_LIMIT', `redirect loop back to ${target.slice(0, 200)}`));
    }
    if (target.length > MAX_LOCATION_LENGTH) {
      return this.finish(req, startedAt, t0, current, redirects, ex, dnsMs, new FetchError('MEGURI_ERR_BAD_REDIRECT', `redirect target longer than ${MAX_LOCATION_LENGTH} characters`));
    }
    const rec = this.finish(req, startedAt, t0, current, redirects, ex, dnsMs);
    if (rec.error === undefined) rec.location = target;
    return rec;
  }

  private async exchange(url: URL, ip: string, validators: FrontierRecord['validators'], textDefault: TextKind, userAgent?: string): Promise<Exchange> {
    const origin = url.origin;
    const path = url.pathname + url.search;
    const tq = performance.now();
    const slot = this.limiter.acquire(ip);
    if (slot !== true && !(await slot)) {
      return new Exchange(this, origin, path, ip, textDefault).failEarly('MEGURI_ERR_ABORTED', 'fetcher closed');
    }
    // Waiting for the IP's slot is the crawler's own queueing, not the server's time: politeness
    // (speed, k × download time) must not see it (docs/politeness.md).
    const queueMs = slot === true ? 0 : performance.now() - tq;
    try {
      let headers = this.baseHeaders;
      // A per-host User-Agent set by the scheduler (an operator's host rule) replaces the fetcher's own.
      if (userAgent !== undefined && userAgent.length > 0 && isValidHeaderValue(userAgent)) {
        headers = headers.slice();
        headers[1] = userAgent;
      }
      const etag = validators?.etag;
      const lastModified = validators?.lastModified;
      if ((etag !== undefined && isValidHeaderValue(etag)) || (lastModified !== undefined && isValidHeaderValue(lastModified))) {
        headers = headers.slice();
        if (etag !== undefined && isValidHeaderValue(etag)) headers.push('if-none-match', etag);
        if (lastModified !== undefined && isValidHeaderValue(lastModified)) headers.push('if-modified-since', lastModified);
      }
      let ex = await new Exchange(this, origin, path, ip, textDefault).run(headers);
      if (ex.staleConnection && !this.closed) {
        this.counters.staleRetries++;
        ex = await new Exchange(this, origin, path, ip, textDefault).run(headers);
      }
      ex.queueMs = queueMs;
      return ex;
    } finally {
      this.limiter.release(ip);
    }
  }

  /** A wall-clock duration in the clock's milliseconds, rounded to the microsecond. */
  private duration(wallMs: number): number {
    return ms(clockDuration(this.clock, wallMs));
  }

  private finish(
    req: FrontierRecord,
    startedAt: number,
    t0: number,
    finalUrl: string,
    redirects: { url: string; status: number }[],
    ex: Exchange | undefined,
    dnsMs: number | undefined,
    failure?: FetchError,
  ): PageRecord {
    const cause = failure ?? ex?.error;
    // Everything below that a server chose is bounded to what the pages schema accepts.
    const error = cause !== undefined ? { code: cause.code, message: truncateText(cause.message, 2000) } : undefined;
    const status = ex?.status ?? 0;
    const rec: PageRecord = {
      v: SCHEMA_VERSION,
      request: req,
      finalUrl,
      redirects,
      status: Number.isInteger(status) && status >= 0 && status <= 999 ? status : 0,
      headers: ex?.headers ?? {},
      bodyTruncated: ex?.truncated ?? false,
      bytes: ex?.bytes ?? 0,
      timing: { startedAt, totalMs: this.duration(performance.now() - t0) },
      fetchedAt: this.clock.now(),
    };
    if (dnsMs !== undefined) rec.timing.dnsMs = this.duration(dnsMs);
    if (ex !== undefined && ex.queueMs > 0) rec.timing.queueMs = this.duration(ex.queueMs);
    if (ex !== undefined) {
      if (ex.connectMs !== undefined) rec.timing.connectMs = this.duration(ex.connectMs);
      if (ex.ttfbMs !== undefined) rec.timing.ttfbMs = this.duration(ex.ttfbMs);
      if (ex.contentType !== undefined) rec.contentType = truncateText(ex.contentType, 256);
      if (ex.serverIp !== undefined && ex.serverIp.length <= 64) rec.serverIp = ex.serverIp;
      if (ex.reused !== undefined) rec.connectionReused = ex.reused;
      if (ex.closed !== undefined) rec.connectionClosed = ex.closed;
      if (error === undefined && ex.body !== undefined) rec.body = ex.body;
      this.counters.wireBytes += ex.bytes;
      this.counters.decodedBytes += ex.decodedBytes;
      if (error === undefined && ex.keptEncoding !== undefined && ex.body !== undefined) {
        // Decoded by its reader (services/common/page-content.ts), at most up to the cap.
        rec.contentEncoding = ex.keptEncoding;
        rec.decodeLimit = Math.max(1, this.o.maxDecodedBytes);
      } else {
        rec.decodedBytes = ex.decodedBytes;
      }
    }
    if (ex === undefined) rec.decodedBytes = 0;
    if (error !== undefined) {
      rec.error = error;
      rec.bodyTruncated = false;
      this.counters.failed++;
      this.errorCounts[error.code] = (this.errorCounts[error.code] ?? 0) + 1;
    }
    this.counters.completed++;
    return rec;
  }

  stats(): FetcherStats {
    const l = this.limiter.stats();
    return {
      ...this.counters,
      inFlight: l.inFlight,
      waiting: l.waitingGlobal + l.waitingPerIp,
      busyIps: l.busyIps,
      errors: { ...this.errorCounts },
      dns: this.resolver.stats(),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.limiter.close();
    await this.pools.destroy(new FetchError('MEGURI_ERR_ABORTED', 'fetcher closed'));
    if (this.ownsResolver) this.resolver.close();
  }
}

function checkOptions(o: ResolvedOptions): void {
  const positive: (keyof ResolvedOptions)[] = [
    'keepAliveTimeoutMs',
    'keepAliveMaxTimeoutMs',
    'connectTimeoutMs',
    'headersTimeoutMs',
    'totalTimeoutMs',
    'maxBodyBytes',
    'maxDecodedBytes',
  ];
  for (const k of positive) {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new RangeError(`fetcher option ${k} must be a positive number, got ${String(v)}`);
  }
  if (!Number.isInteger(o.connectionsPerOrigin) || o.connectionsPerOrigin < 1 || o.connectionsPerOrigin > 2) {
    throw new RangeError(`connectionsPerOrigin must be 1 or 2, got ${o.connectionsPerOrigin}`);
  }
  if (!Number.isInteger(o.maxRedirects) || o.maxRedirects < 0 || o.maxRedirects > 15) {
    throw new RangeError(`maxRedirects must be an integer in 0..15 (the record keeps at most 16 hops), got ${o.maxRedirects}`);
  }
  if (!Number.isInteger(o.discardBodyBytes) || o.discardBodyBytes < 0) throw new RangeError(`discardBodyBytes must be an integer >= 0, got ${o.discardBodyBytes}`);
  if (o.oversize !== 'truncate' && o.oversize !== 'error') throw new RangeError(`oversize must be "truncate" or "error", got ${String(o.oversize)}`);
}

export function createFetcher(options: FetcherOptions = {}): Fetcher {
  const core = new FetcherCore(options);
  return {
    fetch: (req) => core.fetch(req),
    close: () => core.close(),
    stats: () => core.stats(),
  };
}
