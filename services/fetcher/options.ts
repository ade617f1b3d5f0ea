/**
 * The fetcher's settings: what createFetcher takes (FetcherOptions), and the tunable part of it
 * checked by one strict zod schema, with the defaults of defaults.ts filled in.
 */
import { z } from 'zod';
import pkg from '../../package.json' with { type: 'json' };
import type { Clock } from '../runtime/clock.ts';
import type { NameResolver, ResolveEntry } from './dns.ts';
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

const D = FETCHER_DEFAULTS;
const positive = (fallback: number) => z.number().positive().default(fallback);

/**
 * The tunable settings (every key of FETCHER_DEFAULTS), each with its default: positive finite
 * time limits and caps, 1 or 2 connections per origin, at most 15 redirect hops (a record keeps at
 * most 16). Strict: a key that is not a setting is an error.
 */
export const fetcherSettingsSchema = z.strictObject({
  perIpConcurrency: z.number().int().min(1).default(D.perIpConcurrency),
  maxConcurrency: z.number().int().min(1).default(D.maxConcurrency),
  connectionsPerOrigin: z.number().int().min(1).max(2).default(D.connectionsPerOrigin),
  keepAliveTimeoutMs: positive(D.keepAliveTimeoutMs),
  keepAliveMaxTimeoutMs: positive(D.keepAliveMaxTimeoutMs),
  connectTimeoutMs: positive(D.connectTimeoutMs),
  headersTimeoutMs: positive(D.headersTimeoutMs),
  totalTimeoutMs: positive(D.totalTimeoutMs),
  maxRedirects: z.number().int().min(0).max(15).default(D.maxRedirects),
  maxBodyBytes: positive(D.maxBodyBytes),
  maxDecodedBytes: positive(D.maxDecodedBytes),
  oversize: z.enum(['truncate', 'error']).default(D.oversize),
  keepCompressed: z.boolean().default(D.keepCompressed),
  discardBodyBytes: z.number().int().min(0).default(D.discardBodyBytes),
  accept: z.string().default(D.accept),
});

/** The settings a fetcher runs with: every one present. */
export type FetcherSettings = z.infer<typeof fetcherSettingsSchema>;

/**
 * The settings of `options` with defaults for those left out (or undefined); a RangeError naming
 * each bad one otherwise. The other options (resolver, clock, TLS, ...) are not settings and are
 * left to the fetcher.
 */
export function fetcherSettings(options: FetcherOptions): FetcherSettings {
  const given: Record<string, unknown> = {};
  for (const key of Object.keys(D) as (keyof FetcherDefaults)[]) {
    if (options[key] !== undefined) given[key] = options[key];
  }
  const parsed = fetcherSettingsSchema.safeParse(given);
  if (!parsed.success) throw new RangeError(`fetcher options:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The three time limits from one `--timeout`: connect and header waits never exceed the whole. */
export function fetchTimeouts(totalSeconds: number): Pick<FetcherOptions, 'totalTimeoutMs' | 'headersTimeoutMs' | 'connectTimeoutMs'> {
  const total = Math.max(1, Math.round(totalSeconds * 1000));
  return { totalTimeoutMs: total, headersTimeoutMs: Math.min(D.headersTimeoutMs, total), connectTimeoutMs: Math.min(D.connectTimeoutMs, total) };
}
