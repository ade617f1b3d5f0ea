/**
 * Keeps the rules a host's state stores within a size that fits any store record (and, on Kafka,
 * its changelog's max.message.bytes): the outcome brings at most 500 KiB of robots.txt, and its
 * stored form (toJSON, itself a string inside the host's JSON state) can be larger than the text.
 *
 * A set over STORED_RULES_BYTES keeps only the groups that apply to the crawler's agent (all that
 * the scheduler ever matches with). Still over, it keeps every `disallow` rule before any `allow`
 * rule, in file order, up to the limit, and sitemaps up to a quarter of it: an `allow` left out
 * makes the crawl more careful, never less. Only a single group of more than ~600 KB of
 * `disallow` rules loses some of them. The result says `truncated`.
 */
import { productToken } from './parse.ts';
import { selectGroups } from './match.ts';
import { toJSON } from './serialize.ts';
import type { RobotsGroup, RobotsRule, RobotsRules } from './types.ts';

/** Bytes of stored rules (toJSON as a JSON string value) a host's state keeps at most. */
export const STORED_RULES_BYTES = 700_000;

/** Bytes a value takes as a JSON string inside another JSON document (quotes, escapes, UTF-8). */
function storedBytes(value: string): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

function ruleBytes(r: RobotsRule): number {
  // `[0,"pattern",line],` with its escapes, as one more element of the stored array.
  return storedBytes(r.pattern) + String(r.line).length + 8;
}

function keepWithin(groups: readonly RobotsGroup[], budget: number): RobotsGroup[] {
  let left = budget;
  const kept = groups.map((g) => ({ g, rules: new Set<RobotsRule>() }));
  for (const directive of ['disallow', 'allow'] as const) {
    for (const k of kept) {
      for (const r of k.g.rules) {
        if (r.directive !== directive) continue;
        const size = ruleBytes(r);
        if (size > left) continue;
        left -= size;
        k.rules.add(r);
      }
    }
  }
  return kept.map(({ g, rules }) => ({ ...g, rules: g.rules.filter((r) => rules.has(r)) }));
}

function capSitemaps(sitemaps: readonly string[], budget: number): string[] {
  const out: string[] = [];
  let left = budget;
  for (const s of sitemaps) {
    const size = storedBytes(s) + 2;
    if (size > left) break;
    left -= size;
    out.push(s);
  }
  return out;
}

/** `rules` as they may be stored for `agent`: unchanged when they fit `maxBytes`. */
export function boundRules(rules: RobotsRules, agent: string, maxBytes: number = STORED_RULES_BYTES): RobotsRules {
  if (storedBytes(toJSON(rules)) <= maxBytes) return rules;
  const token = agent.trim() === '*' ? '*' : productToken(agent) || '*';
  const own: RobotsRules = { ...rules, groups: selectGroups(rules, token).groups, truncated: true };
  if (storedBytes(toJSON(own)) <= maxBytes) return own;
  const sitemaps = capSitemaps(own.sitemaps, Math.floor(maxBytes / 4));
  const fixed = storedBytes(toJSON({ ...own, sitemaps, groups: own.groups.map((g) => ({ ...g, rules: [] })) }));
  return { ...own, sitemaps, groups: keepWithin(own.groups, maxBytes - fixed) };
}
