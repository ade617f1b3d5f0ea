/**
 * The live view's numbers, fed one record at a time (pure; the server and the topic readers are
 * elsewhere): throughput, servers active, errors, requests issued and answered, recent changes and
 * pages per server country (Muraoka et al. Fig. 2).
 */
import type { CountryLookup } from '../common/country.ts';

export interface LivePage {
  url: string;
  status: number;
  bytes: number;
  serverIp?: string;
  at: number;
}

export interface LiveChange {
  url: string;
  kind: string;
  at: number;
}

export interface LiveSnapshot {
  at: number;
  pages: number;
  errors: number;
  bytes: number;
  /** Pages per second over the last `windowMs`. */
  pagesPerSecond: number;
  servers: number;
  /** Servers with a page in the last `windowMs`. */
  serversActive: number;
  /** Fetch requests the scheduler issued (frontier records). */
  requested: number;
  /** Requested but not answered yet: the part of the frontier in flight. */
  pending: number;
  changes: LiveChange[];
  countries: Record<string, { pages: number; servers: number }>;
  unknown: { pages: number; servers: number };
}

const RECENT_CHANGES = 20;

export class LiveState {
  private pages = 0;
  private errors = 0;
  private bytes = 0;
  private requested = 0;
  private readonly recent: number[] = [];
  private readonly lastSeen = new Map<string, number>();
  private readonly serverCountry = new Map<string, string | undefined>();
  private readonly countryPages = new Map<string, number>();
  private unknownPages = 0;
  private readonly changes: LiveChange[] = [];

  constructor(
    private readonly lookup: CountryLookup,
    private readonly windowMs = 10_000,
  ) {}

  onPage(p: LivePage): void {
    this.pages++;
    this.bytes += p.bytes;
    if (p.status === 0 || p.status >= 500) this.errors++;
    this.recent.push(p.at);
    let host: string;
    try {
      host = new URL(p.url).hostname;
    } catch {
      return;
    }
    this.lastSeen.set(host, p.at);
    if (!this.serverCountry.has(host) || (this.serverCountry.get(host) === undefined && p.serverIp !== undefined)) {
      this.serverCountry.set(host, p.serverIp === undefined ? undefined : this.lookup(p.serverIp));
    }
    const country = this.serverCountry.get(host);
    if (country === undefined) this.unknownPages++;
    else this.countryPages.set(country, (this.countryPages.get(country) ?? 0) + 1);
  }

  onRequest(n = 1): void {
    this.requested += n;
  }

  onChange(c: LiveChange): void {
    this.changes.unshift(c);
    if (this.changes.length > RECENT_CHANGES) this.changes.pop();
  }

  snapshot(now: number): LiveSnapshot {
    const from = now - this.windowMs;
    while (this.recent.length > 0 && this.recent[0]! < from) this.recent.shift();
    let active = 0;
    for (const t of this.lastSeen.values()) if (t >= from) active++;
    const countries: LiveSnapshot['countries'] = {};
    let unknownServers = 0;
    for (const c of this.serverCountry.values()) {
      if (c === undefined) unknownServers++;
      else (countries[c] ??= { pages: this.countryPages.get(c) ?? 0, servers: 0 }).servers++;
    }
    return {
      at: now,
      pages: this.pages,
      errors: this.errors,
      bytes: this.bytes,
      pagesPerSecond: this.recent.length / (this.windowMs / 1000),
      servers: this.lastSeen.size,
      serversActive: active,
      requested: this.requested,
      pending: Math.max(0, this.requested - this.pages),
      changes: [...this.changes],
      countries,
      unknown: { pages: this.unknownPages, servers: unknownServers },
    };
  }
}
