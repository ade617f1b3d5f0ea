/**
 * The fetcher's stable error codes. A PageRecord's `error.code` is always one of these; the
 * scheduler reads `retryable` from this table (the record itself only carries code and message) to
 * decide between re-issuing the request with backoff and recording the failure as the outcome.
 */
import { errors as undiciErrors } from 'undici';

export const FETCH_ERRORS = {
  /** The name does not resolve: NXDOMAIN, no address records, or no entry in the static map. */
  MEGURI_ERR_DNS: { retryable: false, description: 'host name does not resolve' },
  /** Resolver trouble that may pass: SERVFAIL, timeout, refused, network down. */
  MEGURI_ERR_DNS_TEMPORARY: { retryable: true, description: 'temporary name resolution failure' },
  /**
   * The address policy refused the server address (docs/politeness.md, "Address policy"): not
   * public (loopback, private, link-local, ...), or under static DNS neither a --resolve name nor
   * an --allow-address range. Checked on the address actually dialled.
   */
  MEGURI_ERR_FORBIDDEN_ADDRESS: { retryable: false, description: 'server address refused by the address policy' },
  MEGURI_ERR_CONNECT: { retryable: true, description: 'TCP connection failed (refused, unreachable)' },
  MEGURI_ERR_CONNECT_TIMEOUT: { retryable: true, description: 'TCP/TLS connection setup timed out' },
  MEGURI_ERR_TLS: { retryable: false, description: 'TLS handshake or certificate verification failed' },
  MEGURI_ERR_HEADERS_TIMEOUT: { retryable: true, description: 'no response headers in time' },
  MEGURI_ERR_TIMEOUT: { retryable: true, description: 'total time limit exceeded' },
  MEGURI_ERR_RESET: { retryable: true, description: 'connection reset or closed by the server mid-exchange' },
  MEGURI_ERR_REDIRECT_LIMIT: { retryable: false, description: 'too many redirects or a redirect loop' },
  MEGURI_ERR_BAD_REDIRECT: { retryable: false, description: 'redirect Location is not a valid http(s) URL, or longer than the URL limit' },
  MEGURI_ERR_BODY_TOO_LARGE: { retryable: false, description: 'body exceeds the size cap (oversize: "error")' },
  MEGURI_ERR_DECOMPRESS: { retryable: false, description: 'corrupt or unsupported content encoding' },
  MEGURI_ERR_BINARY: { retryable: false, description: 'binary content served with a text type' },
  MEGURI_ERR_INVALID_URL: { retryable: false, description: 'request URL cannot be fetched' },
  /** The server broke HTTP/1.1: parser errors (bad chunk size, HTTP/0.9 reply, invalid header), length mismatch. */
  MEGURI_ERR_PROTOCOL: { retryable: false, description: 'malformed HTTP response' },
  MEGURI_ERR_ABORTED: { retryable: true, description: 'fetcher closed before the fetch finished' },
  MEGURI_ERR_INTERNAL: { retryable: true, description: 'unexpected fetcher failure' },
} as const satisfies Record<string, { retryable: boolean; description: string }>;

export type FetchErrorCode = keyof typeof FETCH_ERRORS;

export function isRetryable(code: string): boolean {
  const entry = (FETCH_ERRORS as Record<string, { retryable: boolean } | undefined>)[code];
  return entry?.retryable ?? false;
}

/** An error carrying a stable code; thrown inside the fetcher, never out of `fetch()`. */
export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

function errCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const c = (err as { code: unknown }).code;
    if (typeof c === 'string') return c;
  }
  return undefined;
}

const TLS_CODES = new Set([
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

/** undici's SocketError messages for responses that break the protocol rather than the connection. */
const PROTOCOL_SOCKET_MESSAGES = new Set(['bad response', 'bad upgrade']);

/**
 * True for what undici reports when the bytes a server sent are not HTTP/1.1: its llhttp parser
 * errors (HTTPParserError; undici 7 leaves their `code` unset, so the class is what identifies
 * them), a response where none was asked for, an unrequested 1xx/upgrade, and the parser's own
 * assertions that some malformed status lines trip (e.g. a status below 100).
 */
function isProtocolViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if (err instanceof undiciErrors.HTTPParserError) return true;
  const e = err as { name?: unknown; code?: unknown; message?: unknown; stack?: unknown };
  if (e.name === 'HTTPParserError') return true;
  if (e.code === 'UND_ERR_SOCKET' && typeof e.message === 'string' && PROTOCOL_SOCKET_MESSAGES.has(e.message)) return true;
  return e.code === 'ERR_ASSERTION' && typeof e.stack === 'string' && /undici[\\/]lib[\\/]dispatcher[\\/]client-h1/.test(e.stack);
}

/** Maps whatever undici, net, tls or zlib threw to a stable code. */
export function classifyError(err: unknown): FetchErrorCode {
  if (err instanceof FetchError) return err.code;
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause instanceof FetchError) return cause.code;
  if (isProtocolViolation(err) || isProtocolViolation(cause)) return 'MEGURI_ERR_PROTOCOL';
  const code = errCode(err) ?? errCode(cause);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'MEGURI_ERR_CONNECT_TIMEOUT';
    case 'UND_ERR_HEADERS_TIMEOUT':
      return 'MEGURI_ERR_HEADERS_TIMEOUT';
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return 'MEGURI_ERR_TIMEOUT';
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
      return 'MEGURI_ERR_RESET';
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
    case 'EADDRNOTAVAIL':
      return 'MEGURI_ERR_CONNECT';
    case 'UND_ERR_HEADERS_OVERFLOW':
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_RESPONSE_STATUS_CODE':
    case 'UND_ERR_NOT_SUPPORTED':
      return 'MEGURI_ERR_PROTOCOL';
    case 'UND_ERR_INVALID_ARG':
      return 'MEGURI_ERR_INVALID_URL';
    case 'UND_ERR_ABORTED':
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return 'MEGURI_ERR_ABORTED';
    case 'Z_DATA_ERROR':
    case 'Z_BUF_ERROR':
    case 'Z_NEED_DICT':
    case 'ERR_BROTLI_DECOMPRESSION_FAILED':
      return 'MEGURI_ERR_DECOMPRESS';
  }
  if (code !== undefined) {
    if (code.startsWith('HPE_')) return 'MEGURI_ERR_PROTOCOL';
    if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) return 'MEGURI_ERR_TLS';
    if (code.startsWith('ERR__') || code.startsWith('ERR_BROTLI')) return 'MEGURI_ERR_DECOMPRESS';
  }
  return 'MEGURI_ERR_INTERNAL';
}

/** Plain words for undici's terse protocol complaints. */
const SOCKET_MESSAGE_TEXT: Record<string, string> = {
  'bad response': 'bad response: the server sent a response undici cannot accept (an unrequested 100 Continue, or bytes while no request was outstanding)',
  'bad upgrade': 'bad upgrade: the server switched protocols (101) although no upgrade was requested',
};

export function errorMessage(err: unknown): string {
  if (errCode(err) === 'ERR_ASSERTION' && isProtocolViolation(err)) {
    const check = /assert\((.*)\)/.exec(String((err as Error).message))?.[1];
    return `malformed response: undici's HTTP/1.1 parser gave up${check !== undefined ? ` (${check.slice(0, 200)})` : ''}`;
  }
  const raw = err instanceof Error ? err.message : String(err);
  const msg = errCode(err) === 'UND_ERR_SOCKET' ? (SOCKET_MESSAGE_TEXT[raw] ?? raw) : raw;
  const code = errCode(err);
  const text = code !== undefined && !msg.includes(code) ? `${code}: ${msg}` : msg;
  return text.length > 2000 ? text.slice(0, 2000) : text;
}
