/**
 * Hoshino et al.'s server-discovery crawl, as pure rules.
 *
 *  - Every seed is a start site. A found URL is *internal* when its host is the start URL's host or
 *    a subdomain of it (Table 4: from `example.jp`, `www.example.jp` is internal; from
 *    `www.example.jp`, `example.jp` and `sv1.example.jp` are external). Everything else is
 *    *external*: a server, recorded and not fetched.
 *  - Variable sampling: of the internal URLs found at depth n, a seeded random share R is crawled at
 *    depth n+1. Each URL is kept or dropped by a hash of (sample seed, start site, URL) — the same
 *    answer every time it is found, on every partition, so the sample is reproducible and a URL found
 *    twice is not drawn twice. Seeds (depth 0) are always crawled.
 *  - The query restriction (a URL counts as visited by its form without the query) is the
 *    scheduler's `queryRestriction: 'form'` (templates.ts).
 */
import { hostName, withinDomain } from './url.ts';
import { fmix32 } from './hash.ts';

export type UrlClass = 'internal' | 'external';

/** Table 4: internal when the host is the start site's host or a subdomain of it. */
export function classify(startSite: string, host: string): UrlClass {
  return withinDomain(hostName(host), hostName(startSite)) ? 'internal' : 'external';
}

/** FNV-1a over the text, as a number in [0, 1). */
function unitHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // One more avalanche round so URLs that differ in their last character spread over [0, 1).
  return fmix32(h) / 0x1_0000_0000;
}

/** The internal URL is in the sample that is crawled (rate 1: every URL). */
export function sampled(url: string, startSite: string, rate: number, seed: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return unitHash(`${seed}\u0000${startSite}\u0000${url}`) < rate;
}

/** The root URL of the server a URL is on: what `--follow-servers` seeds. */
export function serverRoot(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}/`;
}

/** One row per depth of the discovery figures (Hoshino et al.'s load and yield curves). */
export interface DepthRow {
  readonly depth: number;
  readonly pagesCrawled: number;
  readonly externalServersFound: number;
  /** pages crawled at depths ≤ this one / all pages crawled */
  readonly loadRatio: number;
  /** external servers found at depths ≤ this one / all found */
  readonly yieldRatio: number;
}

/** Per-depth counts to rows with cumulative load and yield ratios. */
export function depthRows(pagesByDepth: readonly number[], serversByDepth: readonly number[]): DepthRow[] {
  const depths = Math.max(pagesByDepth.length, serversByDepth.length);
  const totalPages = pagesByDepth.reduce((a, b) => a + (b ?? 0), 0);
  const totalServers = serversByDepth.reduce((a, b) => a + (b ?? 0), 0);
  const rows: DepthRow[] = [];
  let pages = 0;
  let servers = 0;
  for (let depth = 0; depth < depths; depth++) {
    const p = pagesByDepth[depth] ?? 0;
    const s = serversByDepth[depth] ?? 0;
    pages += p;
    servers += s;
    rows.push({
      depth,
      pagesCrawled: p,
      externalServersFound: s,
      loadRatio: totalPages > 0 ? Math.round((pages / totalPages) * 1e4) / 1e4 : 0,
      yieldRatio: totalServers > 0 ? Math.round((servers / totalServers) * 1e4) / 1e4 : 0,
    });
  }
  return rows;
}
