/**
 * Politeness settings: one strict zod schema, units in the names. Defaults come from the papers
 * where they give a number (10 s minimum interval: Hoshino et al.; k = 10 "wait 10× the last download
 * time": the incremental archive crawler paper; depth 15: Muraoka et al.); the rest are chosen here and explained in docs/politeness.md.
 */
import { z } from 'zod';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Timeouts, disconnects and send/receive errors: what Muraoka et al. counts as "errors" in the formula. */
export const DEFAULT_RING_ERROR_CODES = [
  'MEGURI_ERR_TIMEOUT',
  'MEGURI_ERR_CONNECT_TIMEOUT',
  'MEGURI_ERR_HEADERS_TIMEOUT',
  'MEGURI_ERR_RESET',
  'MEGURI_ERR_CONNECT',
  'MEGURI_ERR_PROTOCOL',
] as const;

/**
 * Errors that mean the host (not one page) is in trouble and drive back-off and parking. Page-level
 * errors (oversize body, binary content, bad redirect) are the page's problem and do not count.
 */
export const DEFAULT_FAILURE_ERROR_CODES = [...DEFAULT_RING_ERROR_CODES, 'MEGURI_ERR_DNS_TEMPORARY'] as const;

const ms = (d: number) => z.number().int().min(0).default(d);

export const politenessConfigSchema = z.strictObject({
  // Host interval floor (rule 3) and the dynamic formula (Muraoka et al., Table 2).
  minIntervalMs: ms(10 * SECOND).describe('Configured minimum gap between the end of one request to a host and the start of the next; also minInterval of the dynamic formula.'),
  maxDelay1Ms: ms(20 * SECOND).describe('maxDelay1: most delay added for a slow line (speed term of the dynamic formula).'),
  maxDelay2Ms: ms(30 * SECOND).describe('maxDelay2: most delay added for a bad line (error term: errors among the last 10 requests / 10).'),
  targetSpeedBytesPerS: z.number().positive().default(25_000).describe('targetSpeed: a host at least this fast gets no speed delay.'),
  ringErrorCodes: z.array(z.string()).default([...DEFAULT_RING_ERROR_CODES]).describe('Error codes counted as errors in the ring of the last 10 requests.'),

  // k × last download time (the incremental archive crawler paper, Najork).
  kFactor: z.number().min(0).default(10).describe('k when S/C (servers / parallel connections) is not known.'),

  // Back-off and parking.
  failureErrorCodes: z.array(z.string()).default([...DEFAULT_FAILURE_ERROR_CODES]).describe('Error codes that count as a host failure (with HTTP 429 and 5xx).'),
  backoffBaseMs: ms(30 * SECOND).describe('Gap after the first consecutive failure.'),
  backoffFactor: z.number().min(1).default(2).describe('Each further consecutive failure multiplies the gap by this.'),
  backoffMaxMs: ms(30 * MINUTE).describe('Cap of the exponential back-off gap.'),
  maxRetryAfterMs: ms(7 * DAY).describe('A Retry-After further away than this is clamped (a broken date must not lose a host forever).'),
  parkAfterFailures: z.number().int().min(1).default(5).describe('Consecutive failures after which the host is parked.'),
  parkBaseMs: ms(HOUR).describe('First parking duration.'),
  parkFactor: z.number().min(1).default(2).describe('Each further parking (without a success between) multiplies the duration by this.'),
  parkMaxMs: ms(DAY).describe('Cap of the parking duration.'),

  // Suspend windows (Muraoka et al., Table 1).
  suspendEnabled: z.boolean().default(true).describe('Suspend a host after crawling it continuously for suspendAfterMs.'),
  suspendAfterMs: ms(HOUR).describe('T: length of a continuous crawl of one host before it is suspended.'),
  suspendForMs: ms(10 * MINUTE).describe('U: suspension length; an idle gap this long also ends a continuous run.'),
  keepAliveMode: z.boolean().default(false).describe('Crawl a host back to back while the server keeps the connection alive; suspend it when the server closes it.'),
  keepAliveIntervalMs: ms(SECOND).describe('Host interval floor in keep-alive mode (replaces minIntervalMs, k × e is not applied).'),
  keepAliveSuspendMs: ms(5 * MINUTE).describe("U': suspension after the server closed the keep-alive connection."),

  // Caps.
  maxPagesPerSite: z.number().int().min(0).default(1_000_000).describe('Distinct pages (new URLs fetched) per site at most; at the cap no new URL of the site is queued, revisits of its known pages go on.'),
  siteCapScope: z.enum(['host', 'domain']).default('host').describe('What maxPagesPerSite counts: a host (name and port), or a registrable domain (all its hosts that one scheduler partition owns).'),
  maxDepth: z.number().int().min(0).default(15).describe('Hops from the nearest seed beyond which links are not followed.'),
  maxCgiHops: z.number().int().min(0).default(10).describe('Hops out of dynamic pages a link may be followed.'),
  maxPerIp: z.number().int().min(1).default(2).describe('Concurrent requests to one IP address across all its hosts.'),
  maxPerHost: z
    .number()
    .int()
    .min(1)
    .default(1)
    .describe('Requests in flight to one host at once. Above 1 only while the host asks for no wait between requests (its interval is 0: no minimum interval, crawl-delay, k × e or dynamic delay, no failures); the per-IP cap still applies.'),
  ipBusyRetryMs: ms(SECOND).describe('When an IP is at its cap, look at the host again after this long.'),
});

export type PolitenessConfig = z.infer<typeof politenessConfigSchema>;
export type PolitenessConfigInput = z.input<typeof politenessConfigSchema>;

/** Parses (and fills defaults of) a partial config; throws on unknown keys or bad values. */
export function politenessConfig(input: PolitenessConfigInput = {}): PolitenessConfig {
  return politenessConfigSchema.parse(input);
}

/**
 * The policy config with the settings the scheduler options already own (minimum interval, depth
 * and CGI-hop limits) taken from them, so the two never disagree; `overrides` sets the rest.
 */
export function politenessFromSchedulerOptions(
  options: Pick<PolitenessConfig, 'minIntervalMs' | 'maxDepth' | 'maxCgiHops'>,
  overrides: Omit<PolitenessConfigInput, 'minIntervalMs' | 'maxDepth' | 'maxCgiHops'> = {},
): PolitenessConfig {
  return politenessConfig({ ...overrides, minIntervalMs: options.minIntervalMs, maxDepth: options.maxDepth, maxCgiHops: options.maxCgiHops });
}
