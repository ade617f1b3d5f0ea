/**
 * Data model of the robots.txt engine. Everything here is plain JSON-able data so the scheduler can
 * keep it per host in RocksDB (see serialize.ts); compiled matchers are derived from it lazily and
 * cached outside the object (see match.ts).
 */

export type Directive = 'allow' | 'disallow';

/** One `allow`/`disallow` line as written (pattern trimmed, not yet normalised). */
export interface RobotsRule {
  directive: Directive;
  /** The path pattern as written in the file, e.g. `/private*` or `/*.pdf$`. */
  pattern: string;
  /** 1-based line in the file; 0 for rules synthesised by the fetch-status policy. */
  line: number;
}

/** A group: one or more `user-agent` lines followed by its rules. */
export interface RobotsGroup {
  /** Lower-cased product tokens, `*` for the global group. */
  agents: string[];
  /** Line of the group's first `user-agent` line (0 when synthesised). */
  line: number;
  rules: RobotsRule[];
  /** `crawl-delay` in seconds (may be fractional), when the group has a valid one. */
  crawlDelay?: number;
}

/**
 * Where a rule set came from: a parsed file, the "unavailable" verdict (4xx, too many redirects:
 * no restrictions) or the "unreachable" verdict (5xx, network error: complete disallow).
 */
export type RobotsOrigin = 'file' | 'unavailable' | 'unreachable';

export interface RobotsRules {
  origin: RobotsOrigin;
  groups: RobotsGroup[];
  /** Every `sitemap` URL in file order (global, any position). */
  sitemaps: string[];
  /** Bytes of the body that were parsed (at most the size limit). */
  parsedBytes: number;
  /** True when the body was longer than the size limit and the rest was ignored. */
  truncated: boolean;
  /** Crawler user agent recorded at parse time; the default agent for isAllowed(). */
  agent?: string;
  /** The parsed part of the body, only when requested (ParseOptions.keepRaw). */
  raw?: string;
}

export interface MatchedRule {
  directive: Directive;
  /** The pattern as written in the file. */
  pattern: string;
  line: number;
  /** The user-agent token of the group the rule came from (`*` for the global group). */
  group: string;
}

export interface MatchResult {
  allowed: boolean;
  /** The deciding rule, or null when no rule matched (then `allowed` is true). */
  rule: MatchedRule | null;
}
