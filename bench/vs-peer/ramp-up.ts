/**
 * How fast a crawl gets going, read from the simulated web's access log: a crawl that starts from
 * 5 seeds has to discover the other hosts before it can keep them all busy, so its first seconds
 * run below the rate it reaches later. The figures are taken on the server side, so every
 * contender is measured the same way whatever it reports itself.
 *
 * - full speed: pages per second between the crawl's 50 % and 95 % page (past the ramp, before the
 *   last hosts run dry);
 * - time to full speed: from the crawl's first request to the first moment the pages of the last
 *   `windowMs` reach `share` of full speed;
 * - time to all hosts: from the first request to the first page of the last host the crawl reached.
 */

/** One request as the simulated web logged it (`AccessLogEntry`, the fields used here). */
export interface ServedRequest {
  readonly wallMs: number;
  readonly host: string;
  readonly path: string;
  readonly status: number;
}

export interface RampUp {
  readonly pages: number;
  readonly fullSpeedPagesPerS: number;
  readonly timeToFullSpeedS: number;
  readonly hostsReached: number;
  readonly timeToAllHostsS: number;
}

export interface RampUpOptions {
  /** Sliding window the rate is measured over; default 2 s. */
  readonly windowMs?: number;
  /** Share of full speed that counts as reached; default 0.9. */
  readonly share?: number;
}

/** A fetched page: a 200 that is not robots.txt or a sitemap. */
export function isPage(r: ServedRequest): boolean {
  return r.status === 200 && r.path !== '/robots.txt' && !r.path.endsWith('.xml');
}

/** Ramp-up figures of one crawl; undefined when it fetched too few pages to tell (under 20). */
export function rampUp(requests: readonly ServedRequest[], options: RampUpOptions = {}): RampUp | undefined {
  const windowMs = options.windowMs ?? 2_000;
  const share = options.share ?? 0.9;
  if (requests.length === 0) return undefined;
  // A loop, not Math.min(...): a long crawl has more requests than a call takes arguments.
  let start = Infinity;
  for (const r of requests) if (r.wallMs < start) start = r.wallMs;
  const pages = requests.filter(isPage).sort((a, b) => a.wallMs - b.wallMs);
  if (pages.length < 20) return undefined;
  const at = (q: number): number => pages[Math.min(pages.length - 1, Math.floor(q * (pages.length - 1)))]!.wallMs;
  const middle = Math.floor(0.95 * (pages.length - 1)) - Math.floor(0.5 * (pages.length - 1));
  const spanMs = at(0.95) - at(0.5);
  const fullSpeed = spanMs > 0 ? (middle * 1000) / spanMs : Infinity;
  // Pages in (t − window, t] for t at each page, the window's left edge moving with it.
  const needed = (share * fullSpeed * windowMs) / 1000;
  let reachedAt = pages[pages.length - 1]!.wallMs;
  for (let i = 0, left = 0; i < pages.length; i++) {
    const t = pages[i]!.wallMs;
    while (pages[left]!.wallMs <= t - windowMs) left++;
    // Before a whole window has passed since the start the window is not full; do not count it.
    if (t - start >= windowMs && i - left + 1 >= needed) {
      reachedAt = t;
      break;
    }
  }
  const firstPageOfHost = new Map<string, number>();
  for (const p of pages) if (!firstPageOfHost.has(p.host)) firstPageOfHost.set(p.host, p.wallMs);
  let lastHostAt = start;
  for (const t of firstPageOfHost.values()) if (t > lastHostAt) lastHostAt = t;
  return {
    pages: pages.length,
    fullSpeedPagesPerS: Math.round(fullSpeed * 10) / 10,
    timeToFullSpeedS: Math.round(reachedAt - start) / 1000,
    hostsReached: firstPageOfHost.size,
    timeToAllHostsS: Math.round(lastHostAt - start) / 1000,
  };
}
