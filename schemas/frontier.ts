import { z } from 'zod';
import { version, httpUrl, epochMs, validators } from './common.ts';

/**
 * Why a request is made. `address` asks the fetcher only to resolve the host's name (no request to
 * the server), so the scheduler knows the IP before the first request and can key and cap by it.
 */
export const fetchReason = z.enum(['seed', 'new', 'revisit', 'robots', 'sitemap', 'feed', 'redirect', 'address']);

/** Redirects a URL may take before the chain ends with MEGURI_ERR_REDIRECT_LIMIT. */
export const MAX_REDIRECT_HOPS = 5;

/** One redirect response of a chain: the URL that answered and its 3xx status. */
export const redirectHop = z.object({ url: httpUrl, status: z.number().int().min(300).max(399) });
export type RedirectHop = z.infer<typeof redirectHop>;

/** frontier: one fetch request, emitted by the scheduler when the host is due. */
export const frontierRecord = z.object({
  v: version,
  requestId: z.string().min(1).max(128).describe('Unique id; the outcome echoes it so the scheduler can close the loop.'),
  url: httpUrl,
  host: z.string().min(1).max(253),
  reason: fetchReason,
  score: z.number().finite().describe('Priority score (incremental PageRank approximation) at emit time.'),
  depth: z.number().int().nonnegative().describe('Hops from the nearest seed.'),
  cgiHops: z.number().int().nonnegative().describe('Hops since the last static page (dynamic-page trap limit).'),
  validators: validators.optional(),
  startSite: z.string().min(1).max(300).optional().describe('Discovery crawl (Hoshino et al.): host name of the start site this URL was found from; the parser copies it onto the page\'s links.'),
  userAgent: z.string().min(1).max(256).optional().describe('User-Agent for this request (a per-host rule of the scheduler); the fetcher\'s own otherwise.'),
  attempt: z.number().int().positive().describe('1 for the first try; incremented when a lost request is re-issued.'),
  ip: z.string().max(64).optional().describe('Resolved server IP when known (frontier is then keyed by it).'),
  redirects: z
    .array(redirectHop)
    .max(MAX_REDIRECT_HOPS)
    .optional()
    .describe('For reason=redirect: the redirect responses that led here, first first (its length is the hop count).'),
  daily: z
    .literal(true)
    .optional()
    .describe('The URL is a daily page (--daily-file): links new on it are fetched at once (the parser marks them via=daily).'),
  issuedAt: epochMs,
});
export type FrontierRecord = z.infer<typeof frontierRecord>;
