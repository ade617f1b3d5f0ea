/**
 * Rule matching (RFC 9309 §2.2.2–2.2.3). Patterns are normalised and compiled once per (rules,
 * agent) pair; a check then costs one normalisation of the URL path plus, per rule, a prefix test
 * and, for wildcard rules, a few indexOf calls.
 *
 * Wildcards are matched greedily left to right: each literal piece between `*`s is taken at its
 * first occurrence after the previous one. For `*`-only globs that is exact (an earlier placement
 * never leaves less room for the rest) and it is linear in the path length, so a pattern with many
 * `*`s cannot backtrack catastrophically the way a naive RegExp translation can.
 */
import { canonicalize, pathAndQuery } from './encoding.ts';
import { productToken } from './parse.ts';
import type { MatchResult, MatchedRule, RobotsGroup, RobotsRules } from './types.ts';

interface CompiledRule {
  /** The normalised pattern without its `$` anchor. */
  readonly canonical: string;
  /** Literal prefix up to the first `*` (the whole pattern when there is none). */
  readonly head: string;
  /** Non-empty literal pieces between `*`s. */
  readonly middle: readonly string[];
  /** Literal after the last `*`, or null when the pattern has no `*`. */
  readonly tail: string | null;
  /** Pattern ended in `$`: the match must reach the end of the path. */
  readonly anchored: boolean;
  /** Octets of the normalised pattern: the precedence key. */
  readonly length: number;
  readonly allow: boolean;
  readonly line: number;
  readonly result: MatchResult;
}

export interface AgentMatcher {
  /** Product token the groups were selected for; `*` when the agent has none. */
  readonly token: string;
  /** Token of the selected group(s): the agent's own, `*` on fallback, null when none applies. */
  readonly group: string | null;
  /** Largest `crawl-delay` (seconds) among the selected groups. */
  readonly crawlDelay: number | undefined;
  /** Number of effective rules after merging (with the directory rules of allowed index pages). */
  readonly ruleCount: number;
  isAllowed(urlOrPath: string): MatchResult;
}

const ALLOWED_NO_RULE: MatchResult = Object.freeze({ allowed: true, rule: null });

function compileRule(directive: 'allow' | 'disallow', pattern: string, line: number, group: string): CompiledRule {
  const anchored = pattern.endsWith('$');
  return compileCanonical(directive, canonicalize(anchored ? pattern.slice(0, -1) : pattern, true), anchored, pattern, line, group);
}

/**
 * Google reads an allowed `…/index.html` (any last segment starting `index.htm`) as allowing its
 * directory too: `Allow: /d/index.html` also allows exactly `/d/`, ranked as the pattern `/d/$`.
 * Returns that extra rule, or null. Only for `allow`: a disallowed index page closes nothing more.
 */
function indexDirectoryRule(r: CompiledRule, pattern: string, group: string): CompiledRule | null {
  const written = r.canonical + (r.anchored ? '$' : '');
  const slash = written.lastIndexOf('/');
  if (slash < 0 || !written.startsWith('/index.htm', slash)) return null;
  return compileCanonical('allow', written.slice(0, slash + 1), true, pattern, r.line, group);
}

function compileCanonical(
  directive: 'allow' | 'disallow',
  canonical: string,
  anchored: boolean,
  pattern: string,
  line: number,
  group: string,
): CompiledRule {
  const pieces = canonical.split('*');
  const head = pieces[0] ?? '';
  const tail = pieces.length > 1 ? (pieces[pieces.length - 1] ?? '') : null;
  const middle = pieces.slice(1, -1).filter((p) => p !== '');
  const rule: MatchedRule = Object.freeze({ directive, pattern, line, group });
  return {
    canonical,
    head,
    middle,
    tail,
    anchored,
    length: canonical.length + (anchored ? 1 : 0),
    allow: directive === 'allow',
    line,
    result: Object.freeze({ allowed: directive === 'allow', rule }),
  };
}

function ruleMatches(r: CompiledRule, path: string): boolean {
  if (!path.startsWith(r.head)) return false;
  if (r.tail === null) return !r.anchored || path.length === r.head.length;
  let pos = r.head.length;
  for (const piece of r.middle) {
    const at = path.indexOf(piece, pos);
    if (at < 0) return false;
    pos = at + piece.length;
  }
  if (r.anchored) return path.length - r.tail.length >= pos && path.endsWith(r.tail);
  return r.tail === '' || path.indexOf(r.tail, pos) >= 0;
}

/** `/robots.txt` itself is always allowed (RFC 9309 §2.2.2). */
function isRobotsTxt(path: string): boolean {
  return path.startsWith('/robots.txt') && (path.length === 11 || path.charCodeAt(11) === 63 /* ? */);
}

/** The groups that apply to a product token (its own, else `*`), and the label rules report. */
export function selectGroups(rules: RobotsRules, token: string): { label: string | null; groups: RobotsGroup[] } {
  if (token !== '*') {
    const own = rules.groups.filter((g) => g.agents.includes(token));
    if (own.length > 0) return { label: token, groups: own };
  }
  const global = rules.groups.filter((g) => g.agents.includes('*'));
  if (global.length > 0) return { label: '*', groups: global };
  return { label: null, groups: [] };
}

function compileAgent(rules: RobotsRules, token: string): AgentMatcher {
  // Every group naming the agent counts, merged into one (RFC 9309 §2.2.1; Google does the same).
  const { label, groups } = selectGroups(rules, token);
  const compiled: CompiledRule[] = [];
  let crawlDelay: number | undefined;
  for (const g of groups) {
    if (g.crawlDelay !== undefined) crawlDelay = Math.max(crawlDelay ?? 0, g.crawlDelay);
    for (const r of g.rules) {
      const rule = compileRule(r.directive, r.pattern, r.line, label ?? '*');
      compiled.push(rule);
      const index = rule.allow ? indexDirectoryRule(rule, r.pattern, label ?? '*') : null;
      if (index !== null) compiled.push(index);
    }
  }
  // Most octets first, allow before disallow on a tie, then file order: the first match decides.
  compiled.sort((a, b) => b.length - a.length || Number(b.allow) - Number(a.allow) || a.line - b.line);
  const n = compiled.length;

  // Rules whose literal head fixes the path's second character only need checking for paths with
  // that character there; bucketing by it skips most literal rules. Buckets keep precedence order.
  const always = compiled.filter((r) => r.head.length < 2);
  const buckets: (readonly CompiledRule[] | undefined)[] = new Array<readonly CompiledRule[] | undefined>(128);
  for (const r of compiled) {
    if (r.head.length < 2) continue;
    const c = r.head.charCodeAt(1);
    if (buckets[c] === undefined) buckets[c] = compiled.filter((x) => x.head.length < 2 || x.head.charCodeAt(1) === c);
  }

  return {
    token,
    group: label,
    crawlDelay,
    ruleCount: n,
    isAllowed(urlOrPath: string): MatchResult {
      if (n === 0) return ALLOWED_NO_RULE;
      const path = canonicalize(pathAndQuery(urlOrPath), false);
      if (isRobotsTxt(path)) return ALLOWED_NO_RULE;
      const candidates = buckets[path.charCodeAt(1)] ?? always;
      for (let i = 0; i < candidates.length; i++) {
        const r = candidates[i] as CompiledRule;
        if (ruleMatches(r, path)) return r.result;
      }
      return ALLOWED_NO_RULE;
    },
  };
}

const cache = new WeakMap<RobotsRules, Map<string, AgentMatcher>>();

/**
 * The compiled matcher of `rules` for a crawler user agent (full UA string or bare token; default:
 * the agent recorded at parse time, else `*`). Cached per rules object, so calling it per URL is
 * cheap; treat `rules` as immutable once it has been used.
 */
export function forAgent(rules: RobotsRules, agent?: string): AgentMatcher {
  const ua = agent ?? rules.agent ?? '*';
  let perAgent = cache.get(rules);
  if (perAgent === undefined) {
    perAgent = new Map();
    cache.set(rules, perAgent);
  }
  // Keyed by the UA string as given (the per-call case) and by its token (shared by all UAs).
  let matcher = perAgent.get(ua);
  if (matcher !== undefined) return matcher;
  const token = ua.trim() === '*' ? '*' : productToken(ua) || '*';
  const key = '\0' + token;
  matcher = perAgent.get(key);
  if (matcher === undefined) {
    matcher = compileAgent(rules, token);
    perAgent.set(key, matcher);
  }
  perAgent.set(ua, matcher);
  return matcher;
}

/**
 * Whether the crawler may fetch `urlOrPath` (absolute URL or path with query), and the deciding
 * rule. Longest pattern wins; on equal length `allow` wins; no matching rule means allowed.
 */
export function isAllowed(rules: RobotsRules, urlOrPath: string, agent?: string): MatchResult {
  return forAgent(rules, agent).isAllowed(urlOrPath);
}

/** `crawl-delay` in seconds for the agent, if its group(s) set one. */
export function crawlDelay(rules: RobotsRules, agent?: string): number | undefined {
  return forAgent(rules, agent).crawlDelay;
}
