/**
 * The fetcher's stable error codes. A PageRecord's `error.code` is always one of these; the
 * scheduler reads `retryable` from this table (the record itself only carries code and message) to
 * decide between re-issuing the request with backoff and recording the failure as the outcome.
 */

export const FETCH_ERRORS = {
  /** The name does not resolve: NXDOMAIN, no address records, or no entry in the static map. */
  MEGURI_ERR_DNS: { retryable: false, description: 'host name does not resolve' },
  /** Resolver trouble that may pass: SERVFAIL, timeout, refused, network down. */
  MEGURI_ERR_DNS_TEMPORARY: { retryable: true, description: 'temporary name resolution failure' },
  /** System DNS mode: the name (or an IP-literal URL) points into a private or reserved range. */
  MEGURI_ERR_BLOCKED_ADDRESS: { retryable: false, description: 'address is not public (private, loopback, reserved)' },
  MEGURI_ERR_CONNECT: { retryable: true, description: 'TCP connection failed (refused, unreachable)' },
  MEGURI_ERR_CONNECT_TIMEOUT: { retryable: true, description: 'TCP/TLS connection setup timed out' },
  MEGURI_ERR_TLS: { retryable: false, description: 'TLS handshake or certificate verification failed' },
  MEGURI_ERR_HEADERS_TIMEOUT: { retryable: true, description: 'no response headers in time' },
  MEGURI_ERR_TIMEOUT: { retryable: true, description: 'total time limit exceeded' },
  MEGURI_ERR_RESET: { retryable: true, description: 'connection reset or closed by the server mid-exchange' },
  MEGURI_ERR_REDIRECT_LIMIT: { retryable: false, description: 'too many redirects or a redirect loop' },
  MEGURI_ERR_BAD_REDIRECT: { retryable: false, description: 'redirect Location is not a valid http(s) URL' },
  MEGURI_ERR_BODY_TOO_LARGE: { retryable: false, description: 'body exceeds the size cap (oversize: "error")' },
  MEGURI_ERR_DECOMPRESS: { retryable: false, description: 'corrupt or unsupported content encoding' },
  MEGURI_ERR_BINARY: { retryable: false, description: 'binary content served with a text type' },
  MEGURI_ERR_INVALID_URL: { retryable: false, description: 'request URL cannot be fetched' },
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

/** Maps whatever undici, net, tls or zlib threw to a stable code. */
export function classifyError(err: unknown): FetchErrorCode {
  if (err instanceof FetchError) return err.code;
  const code = errCode(err) ?? errCode((err as { cause?: unknown } | null)?.cause);
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

export function errorMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const code = errCode(err);
  const text = code !== undefined && !msg.includes(code) ? `${code}: ${msg}` : msg;
  return text.length > 2000 ? text.slice(0, 2000) : text;
}
