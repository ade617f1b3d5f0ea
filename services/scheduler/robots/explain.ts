/** Human-readable answers for `meguri robots check` and logs. */
import { forAgent } from './match.ts';
import type { MatchedRule, RobotsOrigin, RobotsRules } from './types.ts';

export interface ExplainEntry {
  url: string;
  allowed: boolean;
  /** e.g. `Disallow: /private* (line 7)`, or null when no rule matched. */
  rule: string | null;
}

/** `Disallow: /private* (line 7)`; rules synthesised by the fetch policy say why instead of a line. */
export function describeRule(rule: MatchedRule, origin: RobotsOrigin = 'file'): string {
  const head = `${rule.directive === 'allow' ? 'Allow' : 'Disallow'}: ${rule.pattern}`;
  if (rule.line > 0) return `${head} (line ${rule.line})`;
  return origin === 'unreachable' ? `${head} (robots.txt unreachable)` : `${head} (implicit)`;
}

/** Checks each URL for `agent`, in input order. */
export function explain(rules: RobotsRules, agent: string, urls: readonly string[]): ExplainEntry[] {
  const matcher = forAgent(rules, agent);
  return urls.map((url) => {
    const { allowed, rule } = matcher.isAllowed(url);
    return { url, allowed, rule: rule === null ? null : describeRule(rule, rules.origin) };
  });
}
