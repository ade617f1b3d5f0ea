/**
 * One request/response exchange, driven through undici's low-level dispatch handler API so the body
 * is read chunk by chunk: caps apply to wire bytes and to decompressed bytes (a gzip bomb stops at
 * the cap), unwanted bodies are skipped early, and nothing is buffered twice. The exchange is its
 * own outcome: status, kept headers, body (decoded, or kept compressed for its reader), timings.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { Transform } from 'node:stream';
import { constants as zc, createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { MAX_PAGE_HEADERS, MAX_PAGE_HEADER_VALUE } from '../../schemas/pages.ts';
import { decodeAll, isZlibWrapped } from '../common/page-content.ts';
import type { ContentEncoding } from '../common/page-content.ts';
import { BINARY_SNIFF_BYTES, looksBinary, parseContentType, textKindOf } from './decode.ts';
import type { TextKind } from './decode.ts';
import { classifyError, errorMessage } from './errors.ts';
import type { FetchErrorCode } from './errors.ts';
import { decodeHeaderUtf8, truncateText } from './location.ts';
import type { OriginPools } from './pools.ts';
import type { FetcherSettings } from './options.ts';

/** What an exchange needs of the fetcher it belongs to. */
export interface ExchangeHost {
  readonly o: FetcherSettings;
  readonly pools: OriginPools;
  /** Sockets dialled and not yet used, with their connect time (ms). */
  readonly freshSockets: WeakMap<Socket, number>;
  readonly counters: { newConnections: number; reusedConnections: number };
}

/** Content types of a gzip file: inflated like Content-Encoding: gzip when the request is for a sitemap or feed. */
const GZIP_FILE_TYPES: ReadonlySet<string> = new Set(['application/gzip', 'application/x-gzip']);

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

export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
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

/** Milliseconds rounded to the microsecond. */
export function ms(x: number): number {
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

/** Subscribes (once per process) to undici's sendHeaders channel, to learn which socket served each exchange. */
export function listenForSockets(): void {
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
export class Exchange implements Dispatcher.DispatchHandler {
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
    private readonly core: ExchangeHost,
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
