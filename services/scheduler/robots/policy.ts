/**
 * What a robots.txt fetch outcome means for crawling (RFC 9309 §2.3.1, §2.4; Google's documented
 * handling). Pure: the fetcher reports what happened, this decides which rules apply, how long the
 * decision may be used and when to fetch robots.txt again.
 */
import { parse } from './parse.ts';
import type { ParseOptions } from './parse.ts';
import type { RobotsRules } from './types.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface RobotsPolicyOptions {
  /** Redirect hops the fetcher follows (RFC 9309 §2.3.1.2: at least five). More = unavailable. */
  maxRedirects: number;
  /** Re-fetch interval after a definite answer (2xx or 4xx). */
  recheckAfterMs: number;
  /** How long a definite answer may be used (RFC 9309 §2.4: no more than 24 hours). */
  maxCacheMs: number;
  /** First retry delay while unreachable; the delay then doubles (see rulesForFetchResult). */
  retryInitialMs: number;
  /** Retry delay cap while unreachable. */
  retryMaxMs: number;
  /** After this long unreachable, stop assuming complete disallow (RFC 9309 §2.3.1.4: e.g. 30 days). */
  giveUpAfterMs: number;
  /**
   * Use the last good copy, if given, while unreachable instead of complete disallow. RFC 9309
   * §2.4 permits it; off by default, matching Google (disallow everything until 30 days).
   */
  useCacheWhileUnreachable: boolean;
}

export const DEFAULT_POLICY: Readonly<RobotsPolicyOptions> = Object.freeze({
  maxRedirects: 5,
  recheckAfterMs: 6 * HOUR,
  maxCacheMs: DAY,
  retryInitialMs: MINUTE,
  retryMaxMs: 6 * HOUR,
  giveUpAfterMs: 30 * DAY,
  useCacheWhileUnreachable: false,
});

export interface RobotsFetchResult {
  /** Final HTTP status after redirects; undefined when no response arrived. */
  status?: number;
  body?: string | Uint8Array;
  /** Redirect hops followed to reach `status`. */
  redirects?: number;
  /** Set for network errors, timeouts and bodies cut short: the file is unreachable. */
  error?: unknown;
  /** Start of the current run of unreachable fetches, null/undefined if the last one succeeded. */
  unreachableSinceMs?: number | null;
  nowMs: number;
  /** Last successfully parsed copy, used after a long outage (and optionally during one). */
  cached?: RobotsRules | null;
  parseOptions?: ParseOptions;
  policy?: Partial<RobotsPolicyOptions>;
}

export type RobotsFetchOutcome =
  /** 2xx: the body's rules apply. */
  | 'parsed'
  /** 4xx, too many redirects, or unreachable too long without a cached copy: no restrictions. */
  | 'unavailable'
  /** 5xx, 429, network error: complete disallow until a retry succeeds. */
  | 'unreachable'
  /** Unreachable, using the last good copy. */
  | 'cached';

export interface RobotsFetchDecision {
  outcome: RobotsFetchOutcome;
  rules: RobotsRules;
  /** Why, for logs and the CLI. */
  reason: string;
  /** How long this decision may be used before it must be replaced. */
  cacheForMs: number;
  /** When to fetch robots.txt again. */
  recheckAfterMs: number;
  /** Value to store for the next call's `unreachableSinceMs`: null once reachable. */
  unreachableSinceMs: number | null;
}

/** No restrictions (RFC 9309 §2.3.1.3). */
export function allowAllRules(agent?: string): RobotsRules {
  const rules: RobotsRules = { origin: 'unavailable', groups: [], sitemaps: [], parsedBytes: 0, truncated: false };
  if (agent !== undefined) rules.agent = agent;
  return rules;
}

/** Complete disallow (RFC 9309 §2.3.1.4); `/robots.txt` itself stays allowed for the retry. */
export function disallowAllRules(agent?: string): RobotsRules {
  const rules: RobotsRules = {
    origin: 'unreachable',
    groups: [{ agents: ['*'], line: 0, rules: [{ directive: 'disallow', pattern: '/', line: 0 }] }],
    sitemaps: [],
    parsedBytes: 0,
    truncated: false,
  };
  if (agent !== undefined) rules.agent = agent;
  return rules;
}

function describeFailure(input: RobotsFetchResult): string {
  if (input.error !== undefined && input.error !== null) {
    const msg = input.error instanceof Error ? input.error.message : String(input.error);
    return `fetch failed (${msg})`;
  }
  if (input.status === undefined) return 'no response';
  return `HTTP ${input.status}`;
}

/**
 * Decides which rules apply after fetching robots.txt:
 *
 * - 2xx (within the redirect limit): parse the body.
 * - more than `maxRedirects` hops, or a final 3xx: unavailable, no restrictions (RFC 9309 §2.3.1.2).
 * - 4xx other than 429, including 401/403: unavailable, no restrictions (RFC 9309 §2.3.1.3; Google
 *   treats 401/403 the same way).
 * - 5xx, 429 (Google treats it as a server error), other statuses, network errors: unreachable,
 *   complete disallow. Retries back off: the next delay equals the time unreachable so far, clamped
 *   to [retryInitialMs, retryMaxMs], so retries come at roughly 1, 2, 4, 8… minutes up to 6 hours
 *   with no attempt counter to store. After `giveUpAfterMs` (30 days) the last good copy is used if
 *   there is one, else no restrictions (RFC 9309 §2.3.1.4; Google's documented behaviour).
 */
export function rulesForFetchResult(input: RobotsFetchResult): RobotsFetchDecision {
  const p: RobotsPolicyOptions = { ...DEFAULT_POLICY, ...input.policy };
  const agent = input.parseOptions?.agent;
  // A definite answer may be used for up to maxCacheMs, but is refreshed well before that.
  const recheck = Math.min(p.recheckAfterMs, p.maxCacheMs);
  const definite = (outcome: 'parsed' | 'unavailable', rules: RobotsRules, reason: string): RobotsFetchDecision => ({
    outcome,
    rules,
    reason,
    cacheForMs: p.maxCacheMs,
    recheckAfterMs: recheck,
    unreachableSinceMs: null,
  });

  const status = input.status;
  const failed = input.error !== undefined && input.error !== null;
  if (!failed && status !== undefined) {
    const redirects = input.redirects ?? 0;
    if (redirects > p.maxRedirects) {
      return definite('unavailable', allowAllRules(agent), `more than ${p.maxRedirects} redirects: unavailable, no restrictions`);
    }
    if (status >= 200 && status < 300) {
      return definite('parsed', parse(input.body ?? '', input.parseOptions), `HTTP ${status}: rules parsed`);
    }
    if (status >= 300 && status < 400) {
      return definite('unavailable', allowAllRules(agent), `HTTP ${status} after ${redirects} redirects: unavailable, no restrictions`);
    }
    if (status >= 400 && status < 500 && status !== 429) {
      return definite('unavailable', allowAllRules(agent), `HTTP ${status}: unavailable, no restrictions`);
    }
  }

  const since = input.unreachableSinceMs ?? input.nowMs;
  const elapsed = Math.max(0, input.nowMs - since);
  const what = describeFailure(input);
  if (elapsed >= p.giveUpAfterMs) {
    const days = Math.floor(elapsed / DAY);
    const base = { cacheForMs: p.retryMaxMs, recheckAfterMs: p.retryMaxMs, unreachableSinceMs: since };
    if (input.cached) {
      return { ...base, outcome: 'cached', rules: input.cached, reason: `${what}; unreachable for ${days} days: using the last good copy` };
    }
    return { ...base, outcome: 'unavailable', rules: allowAllRules(agent), reason: `${what}; unreachable for ${days} days and no cached copy: no restrictions` };
  }
  const retry = Math.min(p.retryMaxMs, Math.max(p.retryInitialMs, elapsed));
  const base = { cacheForMs: retry, recheckAfterMs: retry, unreachableSinceMs: since };
  if (p.useCacheWhileUnreachable && input.cached) {
    return { ...base, outcome: 'cached', rules: input.cached, reason: `${what}: unreachable, using the last good copy` };
  }
  return { ...base, outcome: 'unreachable', rules: disallowAllRules(agent), reason: `${what}: unreachable, complete disallow` };
}
