/**
 * Crawl scope: which discovered URLs the crawl may queue at all.
 *
 *  - `host`: URLs on a seed's host name (any port or scheme);
 *  - `domain`: URLs on a seed's registrable domain (registrableDomain) or any subdomain of it — the seed
 *    `https://www.example.org/` admits `example.org`, `www.example.org`, `docs.example.org`;
 *  - `web`: every URL (the depth and trap bounds still apply).
 *
 * On top of the mode, `include` and `exclude` regular expressions are matched against the
 * normalised URL: with any include given a URL must match one; a URL matching an exclude is out
 * whatever else holds (exclude wins). Seeds are always taken and extend a host/domain scope; seeds
 * added later extend it the same way.
 */
import { hostName, registrableDomain } from '../common/url.ts';

export { hostName, withinDomain } from '../common/url.ts';

export type ScopeMode = 'host' | 'domain' | 'web';

/** A compiled URL filter; throws with the bad pattern named. */
export interface UrlFilter {
  readonly include: readonly RegExp[];
  readonly exclude: readonly RegExp[];
}

export function compileUrlFilter(include: readonly string[], exclude: readonly string[]): UrlFilter {
  const compile = (flag: string) => (pattern: string): RegExp => {
    try {
      return new RegExp(pattern);
    } catch (err) {
      throw new Error(`${flag} ${JSON.stringify(pattern)} is not a valid regular expression: ${(err as Error).message}`);
    }
  };
  return { include: include.map(compile('--include')), exclude: exclude.map(compile('--exclude')) };
}

/** The URL passes the include/exclude rules (exclude wins; no include means every URL). */
export function passesFilter(url: string, filter: UrlFilter): boolean {
  // Loops rather than some() with a closure over `url`: this runs for every link.
  for (const r of filter.exclude) if (r.test(url)) return false;
  if (filter.include.length === 0) return true;
  for (const r of filter.include) if (r.test(url)) return true;
  return false;
}

/** The scope entry a seed on `host` adds: its host name (`host` mode) or registrable domain (`domain`). */
export function scopeEntry(mode: ScopeMode, host: string): string | undefined {
  if (mode === 'web') return undefined;
  const name = hostName(host);
  return mode === 'host' ? name : registrableDomain(name);
}

/**
 * The scope entries of one partition (every seed's entry, sent to every partition) and the test.
 * Domain mode walks the host name's labels upwards, so the test costs a few set look-ups.
 */
export class CrawlScope {
  private readonly entries = new Set<string>();
  /** The host last tested and its answer: a bundle's links all name one host, in one string. */
  private lastHost: string | undefined;
  private lastIncluded = false;

  constructor(readonly mode: ScopeMode) {}

  /** Adds the seed's host or domain; true when it was not in the scope yet. */
  add(host: string): boolean {
    const entry = scopeEntry(this.mode, host);
    if (entry === undefined || this.entries.has(entry)) return false;
    this.entries.add(entry);
    this.lastHost = undefined;
    return true;
  }

  /** Restores an entry read back from the partition's store. */
  restore(entry: string): void {
    this.entries.add(entry);
    this.lastHost = undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  includes(host: string): boolean {
    if (this.mode === 'web') return true;
    if (host === this.lastHost) return this.lastIncluded;
    this.lastIncluded = this.test(host);
    this.lastHost = host;
    return this.lastIncluded;
  }

  private test(host: string): boolean {
    const name = hostName(host);
    if (this.mode === 'host') return this.entries.has(name);
    let candidate = name;
    for (;;) {
      if (this.entries.has(candidate)) return true;
      const dot = candidate.indexOf('.');
      if (dot < 0) return false;
      candidate = candidate.slice(dot + 1);
    }
  }
}
