/**
 * Redirects as discoveries. The fetcher does not follow a page's 3xx; its target comes back as a
 * discovered link carrying the chain so far, and the target host's scheduler queues it like any
 * other URL, so its robots.txt, interval, caps and IP state apply. This module holds the small
 * rules around that: the hop limit, the queue place of a target, and whose IP an outcome names.
 */
import { MAX_REDIRECT_HOPS } from '../../schemas/frontier.ts';
import type { OutcomeLink, RedirectHop } from '../../schemas/index.ts';
import { hostOf } from '../common/url.ts';

/**
 * Added to a redirect target's score for its place in the host queue only: above any score a link
 * can give (scores are sums of contributions, far below this), still within the queue keys' range.
 * The page a user asked for is the target, so it should not wait behind the host's whole backlog.
 */
export const REDIRECT_QUEUE_BOOST = 1e8;

/** Score used for the queue key of a URL: redirect targets go ahead of the host's new URLs. */
export function queueScore(score: number, redirectChain: readonly RedirectHop[] | undefined): number {
  return redirectChain !== undefined ? REDIRECT_QUEUE_BOOST + score : score;
}

/** The chain that led to a target is longer than a chain may be: the target is not queued. */
export function pastHopLimit(chain: readonly RedirectHop[], maxHops: number = MAX_REDIRECT_HOPS): boolean {
  return chain.length > maxHops;
}

/**
 * Whether the server IP of an outcome is the IP of `host`. A robots.txt request may be redirected
 * to another host by the fetcher, and then the address that answered is that host's: it must not
 * overwrite the origin host's IP (the frontier is keyed by it, and the per-IP cap counts by it).
 */
export function ipBelongsToHost(host: string, outcome: Pick<OutcomeLink, 'url' | 'finalUrl' | 'serverIp'>): boolean {
  if (outcome.serverIp === undefined || outcome.serverIp === '') return false;
  const answered = outcome.finalUrl ?? outcome.url;
  return hostOf(answered) === host;
}

/** Redirect figures of a partition (kept in its stats). */
export interface RedirectCounters {
  /** 3xx outcomes of page requests (each one a hop) */
  redirects?: number;
  /** redirect targets queued as new URLs */
  redirectTargetsQueued?: number;
  /** chains ended by the hop limit or a loop (MEGURI_ERR_REDIRECT_LIMIT) */
  redirectLimitReached?: number;
}

/** Counts one page outcome's part in redirect chains. */
export function countRedirectOutcome(stats: RedirectCounters, outcome: Pick<OutcomeLink, 'result' | 'errorCode' | 'status'>): void {
  if (outcome.status >= 300 && outcome.status < 400 && outcome.status !== 304) stats.redirects = (stats.redirects ?? 0) + 1;
  if (outcome.errorCode === 'MEGURI_ERR_REDIRECT_LIMIT') stats.redirectLimitReached = (stats.redirectLimitReached ?? 0) + 1;
}
