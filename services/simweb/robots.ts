/**
 * robots.txt for the simulated web: the texts each host serves, and the simple matcher the
 * ground truth uses. The crawler has its own matcher; this one is deliberately small and
 * documented so tests have an independent reference:
 *
 * - Groups: consecutive `User-agent:` lines open a group; rules before any `User-agent:` are
 *   ignored. The crawler's product token is compared case-insensitively with each agent value
 *   (anything after a `/` or space in the value is ignored). All groups naming the token are
 *   merged; if none does, all `*` groups are merged; if there is no `*` group either, all is allowed.
 * - Rules: `Allow:`/`Disallow:` patterns match the URL's path plus query from the start. `*` matches
 *   any run of characters, a trailing `$` anchors at the end. Empty patterns are ignored.
 * - Precedence: the matching rule with the longest pattern wins; on a tie Allow wins; no match
 *   means allowed. `/robots.txt` itself is always allowed.
 * - HTTP status: 2xx parse the body; 4xx (including 404) allow everything; 5xx disallow everything.
 */

import { rngFor } from './random.ts';

/** What a host answers for /robots.txt. */
export interface RobotsResponse {
  status: number;
  body: string;
}

interface Rule {
  allow: boolean;
  pattern: string;
  re: RegExp;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelay?: number;
}

/** A parsed robots.txt (or the outcome of its HTTP status). */
export interface RobotsRules {
  /** 'parsed' for 2xx, 'allow-all' for 4xx, 'disallow-all' for 5xx. */
  mode: 'parsed' | 'allow-all' | 'disallow-all';
  groups: Group[];
  sitemaps: string[];
}

function patternToRegExp(pattern: string): RegExp {
  let p = pattern;
  let anchored = false;
  if (p.endsWith('$')) {
    anchored = true;
    p = p.slice(0, -1);
  }
  const body = p
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp('^' + body + (anchored ? '$' : ''), 's');
}

/** Parses a robots.txt response into rule groups. */
export function parseRobots(res: RobotsResponse): RobotsRules {
  if (res.status >= 500) return { mode: 'disallow-all', groups: [], sitemaps: [] };
  if (res.status >= 400 || res.status < 200 || res.status >= 300) {
    return { mode: 'allow-all', groups: [], sitemaps: [] };
  }
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | undefined;
  let lastWasAgent = false;
  for (const rawLine of res.body.split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!lastWasAgent || current === undefined) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    if (key === 'sitemap') {
      sitemaps.push(value);
      continue;
    }
    lastWasAgent = false;
    if (current === undefined) continue;
    if (key === 'allow' || key === 'disallow') {
      if (value === '') continue;
      current.rules.push({ allow: key === 'allow', pattern: value, re: patternToRegExp(value) });
    } else if (key === 'crawl-delay') {
      const d = Number(value);
      if (Number.isFinite(d) && d >= 0) current.crawlDelay = d;
    }
  }
  return { mode: 'parsed', groups, sitemaps };
}

function agentMatches(agentValue: string, token: string): boolean {
  const name = agentValue.split(/[/\s]/)[0] ?? '';
  return name === token;
}

function groupsFor(rules: RobotsRules, userAgent: string): Group[] {
  const token = userAgent.toLowerCase();
  const specific = rules.groups.filter((g) => g.agents.some((a) => agentMatches(a, token)));
  if (specific.length > 0) return specific;
  return rules.groups.filter((g) => g.agents.includes('*'));
}

/** Whether `pathAndQuery` (starting with '/') may be fetched by `userAgent` under `rules`. */
export function robotsAllows(rules: RobotsRules, userAgent: string, pathAndQuery: string): boolean {
  if (pathAndQuery === '/robots.txt') return true;
  if (rules.mode === 'allow-all') return true;
  if (rules.mode === 'disallow-all') return false;
  let best: Rule | undefined;
  for (const g of groupsFor(rules, userAgent)) {
    for (const r of g.rules) {
      if (!r.re.test(pathAndQuery)) continue;
      if (
        best === undefined ||
        r.pattern.length > best.pattern.length ||
        (r.pattern.length === best.pattern.length && r.allow && !best.allow)
      ) {
        best = r;
      }
    }
  }
  return best === undefined || best.allow;
}

/** The Crawl-delay (seconds) that applies to `userAgent`, if any. */
export function robotsCrawlDelay(rules: RobotsRules, userAgent: string): number | undefined {
  for (const g of groupsFor(rules, userAgent)) if (g.crawlDelay !== undefined) return g.crawlDelay;
  return undefined;
}

/** Knobs for the default robots.txt each host gets. */
export interface RobotsGenOptions {
  /** Share of hosts that have no robots.txt (404). Default 0.2. */
  noRobotsShare?: number;
  /** Share of hosts that disallow everything for everybody. Default 0.02. */
  disallowAllShare?: number;
  /** Share of hosts with a Crawl-delay line. Default 0.05. */
  crawlDelayShare?: number;
  /** Crawl-delay values (seconds) to choose from. Default [0.5, 1, 2]. */
  crawlDelays?: number[];
}

const P_ROBOTS = 0x0b07;

/**
 * The robots.txt host `hostIndex` serves unless overridden. Rules refer to paths that exist in the
 * generated site (`/private0..2/`, `*.cgi`, `/item?id=`, `/d/`), written in varied styles (case,
 * comments, wildcards, Allow overrides, agent-specific groups).
 */
export function defaultRobots(
  seed: number,
  hostIndex: number,
  origin: string,
  userAgent: string,
  opts: RobotsGenOptions = {},
): RobotsResponse {
  const rng = rngFor(seed, hostIndex, P_ROBOTS);
  const noRobots = opts.noRobotsShare ?? 0.2;
  const disallowAll = opts.disallowAllShare ?? 0.02;
  const crawlDelayShare = opts.crawlDelayShare ?? 0.05;
  const delays = opts.crawlDelays ?? [0.5, 1, 2];
  const u = rng.next();
  if (hostIndex !== 0 && u < noRobots) return { status: 404, body: 'Not Found\n' };
  const lines: string[] = [`# robots.txt for ${origin.replace(/^https?:\/\//, '')}`];
  if (hostIndex !== 0 && u < noRobots + disallowAll) {
    lines.push('User-agent: *', 'Disallow: /', '');
    return { status: 200, body: lines.join('\n') };
  }
  const star: string[] = [];
  if (rng.chance(0.5)) {
    if (rng.chance(0.5)) {
      star.push('Disallow: /private');
      if (rng.chance(0.5)) star.push('Allow: /private1/');
    } else {
      star.push('Disallow: /private*/');
      if (rng.chance(0.3)) star.push('Allow: /private2/*.html$');
    }
  }
  if (rng.chance(0.4)) star.push(rng.chance(0.5) ? 'Disallow: /*.cgi$' : 'disallow: /cgi/');
  if (rng.chance(0.2)) star.push('Disallow: /item?id=1');
  if (rng.chance(0.15)) star.push('Disallow: /d/');
  if (rng.chance(0.1)) star.push('Disallow: /p/*3.html$', 'Allow: /p/3.html');
  if (star.length === 0 || rng.chance(0.2)) star.push('Disallow: /admin/  # not linked anywhere');
  if (rng.chance(crawlDelayShare)) star.push(`Crawl-delay: ${rng.pick(delays)}`);
  lines.push(rng.chance(0.2) ? 'user-agent: *' : 'User-agent: *', ...star, '');
  if (rng.chance(0.3)) lines.push('User-agent: EvilBot', 'User-agent: OtherBot', 'Disallow: /', '');
  if (rng.chance(0.1)) {
    // A group naming our crawler replaces the `*` group entirely.
    lines.push(`User-agent: ${userAgent}`, 'Disallow: /d/', 'Disallow: /*.cgi$', '');
  }
  if (rng.chance(0.5)) lines.push(`Sitemap: ${origin}/sitemap.xml`);
  return { status: 200, body: lines.join('\n') + '\n' };
}
