/**
 * Name resolution for the fetcher.
 *
 * `static` mode answers only from a resolve map (`--resolve PATTERN=IP`) and IP literals; any other
 * name fails at once with MEGURI_ERR_DNS, so tests, benchmarks and the demo never put a DNS packet
 * on the wire. `system` mode asks the configured DNS servers through c-ares (dns.promises.Resolver,
 * not dns.lookup: getaddrinfo would run on the libuv thread pool and stall file I/O at crawl rates),
 * caches answers within TTL bounds, caches NXDOMAIN for a while, and coalesces concurrent lookups of
 * one name. The static map is consulted first in both modes. Whether an answer may be dialled is
 * not decided here but by the fetcher's address policy (address-policy.ts), on the address it dials.
 */
import { Resolver as CaresResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Clock } from '../runtime/clock.ts';
import { systemClock } from '../runtime/clock.ts';
import { FetchError } from './errors.ts';
import { parseResolveEntry, validHostName } from './resolve-entry.ts';
import type { ResolveEntry } from './resolve-entry.ts';

export { parseResolveEntry };
export type { ResolveEntry };

/** Exact names and wildcard suffixes; the most specific match wins (exact, then longest suffix). */
export class StaticResolveMap {
  private readonly exact = new Map<string, string>();
  private readonly wildcard = new Map<string, string>();

  constructor(entries: Iterable<ResolveEntry | string> = []) {
    for (const e of entries) this.add(typeof e === 'string' ? parseResolveEntry(e) : e);
  }

  get size(): number {
    return this.exact.size + this.wildcard.size;
  }

  add(entry: ResolveEntry): void {
    const wild = entry.pattern.startsWith('*.');
    const table = wild ? this.wildcard : this.exact;
    const key = wild ? entry.pattern.slice(2) : entry.pattern;
    const prev = table.get(key);
    if (prev !== undefined && prev !== entry.ip) {
      throw new RangeError(`--resolve ${entry.pattern} is mapped twice (${prev} and ${entry.ip})`);
    }
    table.set(key, entry.ip);
  }

  /** `host` must be lower-case without a trailing dot. */
  lookup(host: string): string | undefined {
    const hit = this.exact.get(host);
    if (hit !== undefined || this.wildcard.size === 0) return hit;
    // Walk the suffixes from the longest: a.b.sim.test tries b.sim.test, then sim.test, then test.
    let dot = host.indexOf('.');
    while (dot >= 0) {
      const w = this.wildcard.get(host.slice(dot + 1));
      if (w !== undefined) return w;
      dot = host.indexOf('.', dot + 1);
    }
    return undefined;
  }
}

/** Lower-cases, drops IPv6 brackets and a trailing root dot. */
export function normalizeHost(host: string): string {
  let h = host;
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h.toLowerCase();
}

export interface AddressRecord {
  address: string;
  /** Seconds. */
  ttl: number;
}

/** One DNS query; rejects with a Node dns error (`code` ENOTFOUND, ENODATA, ESERVFAIL, ...). */
export type RawResolve = (host: string, rrtype: 'A' | 'AAAA') => Promise<AddressRecord[]>;

export interface NameResolver {
  readonly mode: 'static' | 'system';
  /** Resolves to one IP; rejects with a FetchError (MEGURI_ERR_DNS or MEGURI_ERR_DNS_TEMPORARY). */
  resolve(host: string): Promise<string>;
  /** The answer when known without waiting (static map, literal, fresh cache entry). */
  peek(host: string): string | undefined;
  /** The `--resolve` map's address for `host`, if the map names it (the map wins in both modes). */
  mapped(host: string): string | undefined;
  stats(): ResolverStats;
  close(): void;
}

export interface ResolverStats {
  staticHits: number;
  cacheHits: number;
  negativeHits: number;
  queries: number;
  coalesced: number;
  failures: number;
  cacheSize: number;
}

export interface StaticResolverOptions {
  mode: 'static';
  /** `PATTERN=IP` strings or parsed entries. */
  resolve?: Iterable<ResolveEntry | string>;
  /** Accepted for symmetry with system mode and never called: static mode asks no resolver. */
  rawResolve?: RawResolve;
}

export interface SystemResolverOptions {
  mode: 'system';
  /** Overrides applied before any query. */
  resolve?: Iterable<ResolveEntry | string>;
  /** DNS servers (`ip` or `ip:port`); default: the system's resolv.conf servers. */
  servers?: string[];
  /** Which records to ask for. Default `ipv4first` (A, then AAAA when there is no A record). */
  family?: 'ipv4' | 'ipv6' | 'ipv4first';
  /** Lower bound on how long an answer is cached, whatever its TTL. Default 30 s. */
  minTtlMs?: number;
  /** Upper bound on how long an answer is cached. Default 1 h. */
  maxTtlMs?: number;
  /** How long NXDOMAIN / no-address answers are cached. Default 5 min. */
  negativeTtlMs?: number;
  /** How long temporary failures are cached, so a dead resolver is not hammered. Default 5 s. */
  errorTtlMs?: number;
  /** c-ares per-try timeout. Default 3000 ms. */
  timeoutMs?: number;
  /** c-ares tries per server. Default 2. */
  tries?: number;
  /** Cache capacity; the oldest entries go first. Default 100 000. */
  maxEntries?: number;
  /** Time source for cache expiry. Default: wall clock. */
  clock?: Clock;
  /** Replaces c-ares (tests inject a fake; nothing else should). */
  rawResolve?: RawResolve;
}

export type ResolverOptions = StaticResolverOptions | SystemResolverOptions;

function literalIp(host: string): string | undefined {
  return isIP(host) !== 0 ? host : undefined;
}

function newStats(): ResolverStats {
  return { staticHits: 0, cacheHits: 0, negativeHits: 0, queries: 0, coalesced: 0, failures: 0, cacheSize: 0 };
}

class StaticResolver implements NameResolver {
  readonly mode = 'static' as const;
  private readonly counters = newStats();
  constructor(private readonly map: StaticResolveMap) {}

  peek(host: string): string | undefined {
    const h = normalizeHost(host);
    return literalIp(h) ?? this.map.lookup(h);
  }

  mapped(host: string): string | undefined {
    return this.map.lookup(normalizeHost(host));
  }

  resolve(host: string): Promise<string> {
    const ip = this.peek(host);
    if (ip !== undefined) {
      this.counters.staticHits++;
      return Promise.resolve(ip);
    }
    this.counters.failures++;
    return Promise.reject(new FetchError('MEGURI_ERR_DNS', `${host}: no --resolve mapping (static DNS mode)`));
  }

  stats(): ResolverStats {
    return { ...this.counters };
  }

  close(): void {}
}

interface CacheEntry {
  ip?: string;
  error?: FetchError;
  expiresAt: number;
}

const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'EBADNAME', 'EBADQUERY', 'EFORMERR', 'ENOTIMP']);

function dnsCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return 'EUNKNOWN';
}

/** The caching, coalescing resolver; exported for unit tests of its cache logic. */
export class SystemResolver implements NameResolver {
  readonly mode = 'system' as const;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<string>>();
  private readonly counters = newStats();
  private readonly raw: RawResolve;
  private readonly cares: CaresResolver | undefined;
  private readonly clock: Clock;
  private readonly minTtlMs: number;
  private readonly maxTtlMs: number;
  private readonly negativeTtlMs: number;
  private readonly errorTtlMs: number;
  private readonly maxEntries: number;
  private readonly family: 'ipv4' | 'ipv6' | 'ipv4first';

  constructor(
    private readonly map: StaticResolveMap,
    opts: SystemResolverOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.minTtlMs = opts.minTtlMs ?? 30_000;
    this.maxTtlMs = opts.maxTtlMs ?? 3_600_000;
    this.negativeTtlMs = opts.negativeTtlMs ?? 300_000;
    this.errorTtlMs = opts.errorTtlMs ?? 5_000;
    this.maxEntries = opts.maxEntries ?? 100_000;
    this.family = opts.family ?? 'ipv4first';
    if (!(this.minTtlMs >= 0 && this.maxTtlMs >= this.minTtlMs)) {
      throw new RangeError(`dns: need 0 <= minTtlMs <= maxTtlMs (got ${this.minTtlMs}, ${this.maxTtlMs})`);
    }
    if (opts.rawResolve) {
      this.raw = opts.rawResolve;
    } else {
      const cares = new CaresResolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
      if (opts.servers && opts.servers.length > 0) cares.setServers(opts.servers);
      this.cares = cares;
      this.raw = (host, rrtype) => (rrtype === 'A' ? cares.resolve4(host, { ttl: true }) : cares.resolve6(host, { ttl: true }));
    }
  }

  mapped(host: string): string | undefined {
    return this.map.lookup(normalizeHost(host));
  }

  peek(host: string): string | undefined {
    const h = normalizeHost(host);
    const mapped = this.map.lookup(h);
    if (mapped !== undefined) return mapped;
    const lit = literalIp(h);
    if (lit !== undefined) return lit;
    const e = this.cache.get(h);
    return e !== undefined && e.ip !== undefined && e.expiresAt > this.clock.now() ? e.ip : undefined;
  }

  resolve(host: string): Promise<string> {
    const h = normalizeHost(host);
    const mapped = this.map.lookup(h);
    if (mapped !== undefined) {
      this.counters.staticHits++;
      return Promise.resolve(mapped);
    }
    const lit = literalIp(h);
    if (lit !== undefined) return Promise.resolve(lit);
    const e = this.cache.get(h);
    if (e !== undefined) {
      if (e.expiresAt > this.clock.now()) {
        if (e.ip !== undefined) {
          this.counters.cacheHits++;
          return Promise.resolve(e.ip);
        }
        this.counters.negativeHits++;
        return Promise.reject(e.error ?? new FetchError('MEGURI_ERR_DNS', `${h}: does not resolve (cached)`));
      }
      this.cache.delete(h);
    }
    const pending = this.inflight.get(h);
    if (pending !== undefined) {
      this.counters.coalesced++;
      return pending;
    }
    const p = this.query(h).finally(() => this.inflight.delete(h));
    this.inflight.set(h, p);
    return p;
  }

  private async query(host: string): Promise<string> {
    if (!validHostName(host)) {
      return this.fail(host, new FetchError('MEGURI_ERR_DNS', `${host}: not a valid host name`), this.negativeTtlMs);
    }
    const order: ('A' | 'AAAA')[] = this.family === 'ipv4' ? ['A'] : this.family === 'ipv6' ? ['AAAA'] : ['A', 'AAAA'];
    let lastCode = 'ENODATA';
    for (const rrtype of order) {
      this.counters.queries++;
      let answers: AddressRecord[];
      try {
        answers = await this.raw(host, rrtype);
      } catch (err) {
        lastCode = dnsCode(err);
        // NXDOMAIN means no record of any type exists; only "no data" is worth the next type.
        if (lastCode === 'ENODATA') continue;
        if (NOT_FOUND_CODES.has(lastCode)) break;
        const temp = new FetchError('MEGURI_ERR_DNS_TEMPORARY', `${host}: ${lastCode} (${rrtype})`);
        return this.fail(host, temp, this.errorTtlMs);
      }
      const first = answers[0];
      if (first === undefined) continue;
      const ttlMs = Math.min(this.maxTtlMs, Math.max(this.minTtlMs, first.ttl * 1000));
      this.store(host, { ip: first.address, expiresAt: this.clock.now() + ttlMs });
      return first.address;
    }
    return this.fail(host, new FetchError('MEGURI_ERR_DNS', `${host}: ${lastCode}`), this.negativeTtlMs);
  }

  private fail(host: string, error: FetchError, ttlMs: number): never {
    this.counters.failures++;
    if (ttlMs > 0) this.store(host, { error, expiresAt: this.clock.now() + ttlMs });
    throw error;
  }

  private store(host: string, entry: CacheEntry): void {
    this.cache.delete(host);
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(host, entry);
  }

  stats(): ResolverStats {
    return { ...this.counters, cacheSize: this.cache.size };
  }

  close(): void {
    this.cares?.cancel();
    this.cache.clear();
  }
}

export function createResolver(opts: ResolverOptions): NameResolver {
  const map = new StaticResolveMap(opts.resolve ?? []);
  return opts.mode === 'static' ? new StaticResolver(map) : new SystemResolver(map, opts);
}
