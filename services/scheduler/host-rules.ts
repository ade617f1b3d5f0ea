/**
 * Per-host rules an operator sets without stopping the crawl (`--host-rules F`): a JSON object keyed
 * by a host name (`www.example.org`: that host, any port) or a domain pattern (`*.example.org`: the
 * domain itself and every subdomain), e.g.
 *
 *   { "example.org": { "block": true }, "*.shop.example": { "maxPages": 1000, "minIntervalS": 30 } }
 *
 * The most specific key wins: the exact host, then the longest matching pattern; its fields replace
 * the crawl's settings for that host (fields it does not set keep the crawl's). The file is parsed
 * strictly: an unknown field or a bad value is refused with the key named.
 */
import { z } from 'zod';
import { hostName } from './scope.ts';

export const hostRuleSchema = z.strictObject({
  block: z.boolean().optional().describe('No request at all to the host, robots.txt included; its queued URLs are given up.'),
  minIntervalS: z.number().min(0).max(86_400).optional().describe('Seconds between the end of one request to the host and the start of the next, at least.'),
  maxPages: z.number().int().min(0).optional().describe('Distinct pages (new URLs the server answered) fetched from the host at most.'),
  maxPerHost: z.number().int().min(1).max(64).optional().describe('Requests in flight to the host at once (politeness.maxPerHost for this host; above 1 only while the host asks for no wait between requests).'),
  maxDepth: z.number().int().min(0).optional().describe('Links to the host deeper than this many hops from a seed are not followed.'),
  judgeTraps: z.boolean().optional().describe('false: no URL template of the host is treated as a trap; one judged a trap before is admitted and fetched again (within maxUrlsPerTemplate). The undo of a wrong verdict (`templateSkipped` in `meguri stats hosts`).'),
  userAgent: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\x20-\x7e]+$/, 'a single line of printable ASCII')
    .optional()
    .describe('User-Agent sent to the host; its product token selects the robots.txt group.'),
});

export type HostRule = z.infer<typeof hostRuleSchema>;

const KEY = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/;

export class HostRulesError extends Error {}

/** The rules of one file, looked up per host. */
export class HostRules {
  private readonly exact = new Map<string, HostRule>();
  /** suffix → rule, longest suffix first */
  private readonly patterns: [string, HostRule][] = [];

  private constructor(entries: [string, HostRule][]) {
    for (const [key, rule] of entries) {
      if (key.startsWith('*.')) this.patterns.push([key.slice(2), rule]);
      else this.exact.set(key, rule);
    }
    this.patterns.sort((a, b) => b[0].length - a[0].length);
  }

  static empty(): HostRules {
    return new HostRules([]);
  }

  /** Parses the file's JSON text; throws HostRulesError naming the key (and field) at fault. */
  static parse(text: string, source = 'host rules'): HostRules {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new HostRulesError(`${source}: not JSON: ${(err as Error).message}`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new HostRulesError(`${source}: expected an object keyed by host or "*.domain"`);
    const entries: [string, HostRule][] = [];
    for (const [rawKey, value] of Object.entries(raw)) {
      const key = rawKey.trim().toLowerCase().replace(/\.$/, '');
      if (!KEY.test(key)) throw new HostRulesError(`${source}: key ${JSON.stringify(rawKey)} is not a host name or a "*.domain" pattern`);
      const checked = hostRuleSchema.safeParse(value);
      if (!checked.success) {
        const issue = checked.error.issues[0]!;
        const field = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
        throw new HostRulesError(`${source}: ${JSON.stringify(rawKey)}${field}: ${issue.message}`);
      }
      entries.push([key, checked.data]);
    }
    return new HostRules(entries);
  }

  get size(): number {
    return this.exact.size + this.patterns.length;
  }

  /** The rule for a host (host key or name, any port), or undefined. */
  ruleFor(host: string): HostRule | undefined {
    if (this.size === 0) return undefined;
    const name = hostName(host);
    const exact = this.exact.get(name);
    if (exact) return exact;
    for (const [suffix, rule] of this.patterns) {
      if (name === suffix || (name.endsWith(suffix) && name.charCodeAt(name.length - suffix.length - 1) === 46)) return rule;
    }
    return undefined;
  }
}

/** Where the scheduler reads the current rules (a file watcher swaps them while the crawl runs). */
export interface HostRulesSource {
  current(): HostRules;
}

export function fixedHostRules(rules: HostRules): HostRulesSource {
  return { current: () => rules };
}
