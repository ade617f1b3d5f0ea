/**
 * The fetcher's settings when none are given, apart from fetch.ts so that the command line can show
 * them in its help without loading the HTTP client.
 */
const DEFAULTS = {
  perIpConcurrency: 2,
  maxConcurrency: 256,
  connectionsPerOrigin: 1,
  keepAliveTimeoutMs: 10_000,
  keepAliveMaxTimeoutMs: 60_000,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 15_000,
  totalTimeoutMs: 30_000,
  maxRedirects: 5,
  maxBodyBytes: 2 * 1024 * 1024,
  maxDecodedBytes: 8 * 1024 * 1024,
  oversize: 'truncate' as 'truncate' | 'error',
  keepCompressed: true,
  discardBodyBytes: 64 * 1024,
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5',
};
export type FetcherDefaults = typeof DEFAULTS;
export const FETCHER_DEFAULTS: Readonly<FetcherDefaults> = DEFAULTS;
