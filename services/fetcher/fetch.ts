/**
 * The fetcher core: one FrontierRecord in, one PageRecord out, never a thrown error. It resolves the
 * host, checks the address policy, runs the exchange (exchange.ts) within the per-IP and global
 * limits, follows robots.txt redirects (a page's redirect ends its record with the target), and
 * turns the outcome into the pages record.
 *
 * Built on undici keep-alive pools per origin (see pools.ts for why not undici's Agent) whose
 * connector dials the IP from our resolver while Host and TLS SNI stay the host name. The settings
 * are options.ts's schema; the body handling is exchange.ts's.
 */
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';
import { SCHEMA_VERSION } from '../../schemas/common.ts';
import type { FrontierRecord } from '../../schemas/frontier.ts';
import type { PageRecord } from '../../schemas/pages.ts';
import type { Clock } from '../runtime/clock.ts';
import { clockDuration, systemClock } from '../runtime/clock.ts';
import type { TextKind } from './decode.ts';
import { AddressPolicy } from './address-policy.ts';
import type { AddressSource } from './address-policy.ts';
import { createResolver, normalizeHost } from './dns.ts';
import type { NameResolver, ResolverStats } from './dns.ts';
import { errorMessage, FetchError } from './errors.ts';
import { dropInterimResponses } from './interim.ts';
import { resolveRedirect, truncateText } from './location.ts';
import { Limiter } from './limiter.ts';
import { OriginPools } from './pools.ts';
import { Exchange, listenForSockets, ms, REDIRECT_STATUSES } from './exchange.ts';
import type { ExchangeHost } from './exchange.ts';
import { defaultUserAgent, fetcherSettings } from './options.ts';
import type { FetcherOptions, FetcherSettings } from './options.ts';

export { FETCHER_DEFAULTS } from './defaults.ts';
export { ownBytes } from './exchange.ts';
export { DEFAULT_CONTACT, FETCHER_VERSION, defaultUserAgent, fetchTimeouts, fetcherSettingsSchema } from './options.ts';
export type { FetcherOptions, FetcherSettings } from './options.ts';

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

/** Longest redirect target passed on (the URL limit of every topic record). */
const MAX_LOCATION_LENGTH = 8192;

function withoutHash(u: URL): string {
  return u.hash === '' ? u.href : u.href.slice(0, u.href.length - u.hash.length);
}

function isValidHeaderValue(v: string): boolean {
  return !/[\r\n\0]/.test(v);
}

/** Shared state of one fetcher: connection pools, resolver, limiter and counters. */
class FetcherCore implements Fetcher, ExchangeHost {
  readonly o: FetcherSettings;
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
    const o = fetcherSettings(opts);
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

export function createFetcher(options: FetcherOptions = {}): Fetcher {
  const core = new FetcherCore(options);
  return {
    fetch: (req) => core.fetch(req),
    close: () => core.close(),
    stats: () => core.stats(),
  };
}
