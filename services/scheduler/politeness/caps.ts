/**
 * Caps of Muraoka et al. (Table 1) as small predicates: pages per site, depth from the seed, hops out of
 * dynamic (CGI/query) pages counted separately from depth, and concurrent requests per IP.
 */
import type { PolitenessConfig } from './config.ts';
import { hostInterval } from './interval.ts';
import type { PolitenessContext } from './interval.ts';
import type { PolitenessState } from './state.ts';

/**
 * The site may still get new pages: fewer than maxPagesPerSite distinct pages (new URLs fetched)
 * so far. Revisits of known pages are not limited by it.
 */
export function underPageCap(distinctPages: number, config: Pick<PolitenessConfig, 'maxPagesPerSite'>): boolean {
  return distinctPages < config.maxPagesPerSite;
}

/**
 * The site a host's pages count towards: the host itself (name and port), or its registrable
 * domain (`a.example.co.uk` and `b.example.co.uk` → `example.co.uk`; hosts without one, such as IP
 * addresses, count alone). `siteOf` is the registrable-domain function (services/common/url.ts).
 */
export function siteCapKey(host: string, config: Pick<PolitenessConfig, 'siteCapScope'>, siteOf: (host: string) => string): string {
  return config.siteCapScope === 'domain' ? siteOf(host) : host;
}

export function withinDepth(depth: number, config: Pick<PolitenessConfig, 'maxDepth'>): boolean {
  return depth <= config.maxDepth;
}

/** Links out of dynamic pages are followed only maxCgiHops hops (stops calendar and diary traps). */
export function withinCgiHops(cgiHops: number, config: Pick<PolitenessConfig, 'maxCgiHops'>): boolean {
  return cgiHops <= config.maxCgiHops;
}

/** Why a discovered link is not followed, or undefined when it may be. */
export function linkCapExceeded(link: { depth: number; cgiHops: number }, config: Pick<PolitenessConfig, 'maxDepth' | 'maxCgiHops'>): 'depth' | 'cgi-hops' | undefined {
  if (!withinDepth(link.depth, config)) return 'depth';
  if (!withinCgiHops(link.cgiHops, config)) return 'cgi-hops';
  return undefined;
}

/**
 * At most maxPerIp requests in flight to one IP across all the hosts it serves (one address with
 * many sub-domains must not get one crawl process per sub-domain). An unknown IP is not limited:
 * the address is learnt from the first outcome.
 */
export function mayStartOnIp(inflightByIp: ReadonlyMap<string, number>, ip: string | undefined, config: Pick<PolitenessConfig, 'maxPerIp'>): boolean {
  if (ip === undefined) return true;
  return (inflightByIp.get(ip) ?? 0) < config.maxPerIp;
}

/** Count bookkeeping for the map mayStartOnIp reads; mutates it (the scheduler owns one per process). */
export function ipStarted(inflightByIp: Map<string, number>, ip: string | undefined): void {
  if (ip !== undefined) inflightByIp.set(ip, (inflightByIp.get(ip) ?? 0) + 1);
}

export function ipFinished(inflightByIp: Map<string, number>, ip: string | undefined): void {
  if (ip === undefined) return;
  const left = (inflightByIp.get(ip) ?? 0) - 1;
  if (left > 0) inflightByIp.set(ip, left);
  else inflightByIp.delete(ip);
}

/**
 * One more request may overlap the `inFlight` ones already sent to a host: fewer than `maxPerHost`
 * are out, and the host's interval is 0 with no failure streak. A host that asks for any wait
 * between requests (minimum interval, crawl-delay, k × e, the dynamic formula, a back-off) is
 * asked one request at a time, whatever `maxPerHost` says.
 */
export function mayOverlap(inFlight: number, maxPerHost: number, state: PolitenessState, config: PolitenessConfig, ctx: PolitenessContext = {}): boolean {
  if (inFlight === 0) return true;
  if (inFlight >= maxPerHost) return false;
  return state.f === 0 && hostInterval(state, config, ctx).ms === 0;
}
