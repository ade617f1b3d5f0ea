/**
 * robots.txt parser (RFC 9309 §2.1–2.2, plus Google's documented leniencies). Pure: takes the body,
 * returns plain data. Never throws on content; lines it cannot use are skipped.
 *
 * Why not the `robots-parser` package: checked against the RFC it (a) never decodes percent-encoded
 * unreserved characters, so `Disallow: /~u` misses `/%7Eu`; (b) does not treat `%2A` in a rule as a
 * literal `*`; (c) lets any non-user-agent line (a `sitemap`, an unknown field) split a run of
 * user-agent lines, which the RFC says other records must not do; (d) has no size limit and no
 * implicit `/robots.txt` allow; (e) only answers for absolute URLs of the same origin, and does not
 * say which group a rule came from; (f) allocates an array per rule per check. Its matcher is
 * otherwise sound, but (a)–(e) are correctness gaps, and (f) matters at crawler scale.
 */
import type { RobotsGroup, RobotsRules } from './types.ts';

/** RFC 9309 §2.5: parse at least 500 KiB. */
export const DEFAULT_MAX_BYTES = 512_000;

export interface ParseOptions {
  /** Bytes of the body to parse; the rest is ignored. Default 512,000 (500 KiB). */
  maxBytes?: number;
  /** Crawler user agent to record as the default for isAllowed(). */
  agent?: string;
  /** Keep the parsed text in `raw` (costs storage; useful for diagnostics). */
  keepRaw?: boolean;
}

const USER_AGENT = new Set(['user-agent', 'useragent', 'user agent']);
// Google accepts these common misspellings of "disallow".
const DISALLOW = new Set(['disallow', 'dissallow', 'dissalow', 'disalow', 'diasllow', 'disallaw']);
const SITEMAP = new Set(['sitemap', 'site-map']);
const CRAWL_DELAY = new Set(['crawl-delay', 'crawldelay']);

const CRAWL_DELAY_VALUE = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const TWO_WORDS = /^(\S+)[ \t]+(\S+)$/;

/**
 * The product token a `user-agent` line names, lower-cased: `*` for the global group (also `* …`),
 * otherwise the leading run of token characters (`Googlebot/2.1` → `googlebot`). RFC 9309 tokens
 * are letters, `-` and `_`; digits are accepted too so a token like `360Spider` is not truncated
 * into another crawler's name. Empty when the value names no usable token.
 */
export function groupToken(value: string): string {
  if (value.charCodeAt(0) === 42 /* * */ && (value.length === 1 || /\s/.test(value[1] ?? ''))) return '*';
  return leadingToken(value);
}

/**
 * The product token of a crawler's user agent string (`meguri/0.1 (+https://…)` → `meguri`),
 * lower-cased; empty when there is none.
 */
export function productToken(userAgent: string): string {
  return leadingToken(userAgent.trim());
}

function leadingToken(s: string): string {
  let end = 0;
  while (end < s.length) {
    const c = s.charCodeAt(end);
    const ok =
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 /* - */ || c === 95; /* _ */
    if (!ok) break;
    end++;
  }
  return s.slice(0, end).toLowerCase();
}

function isLineBreak(byte: number | undefined): boolean {
  return byte === 0x0a || byte === 0x0d;
}

/**
 * Decodes at most `maxBytes` of the body as UTF-8 (BOM stripped, invalid sequences become U+FFFD).
 * When the limit cuts a line, that partial line is dropped: a cut `Allow: /public/x` would become
 * a broader `Allow: /p`, and a cut rule is not the rule the site wrote.
 */
function decodeBody(body: string | Uint8Array, maxBytes: number): { text: string; bytes: number; truncated: boolean } {
  if (typeof body === 'string') {
    const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
    // Three UTF-8 bytes per UTF-16 unit is the worst case, so short strings need no encoding.
    if (text.length * 3 <= maxBytes) return { text, bytes: Buffer.byteLength(text, 'utf8'), truncated: false };
    return decodeBody(new TextEncoder().encode(text), maxBytes);
  }
  let bytes = body;
  let skip = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) skip = 3;
  const truncated = bytes.length - skip > maxBytes;
  let end = truncated ? skip + maxBytes : bytes.length;
  if (truncated && !isLineBreak(bytes[end]) && !isLineBreak(bytes[end - 1])) {
    while (end > skip && !isLineBreak(bytes[end - 1])) end--;
  }
  bytes = bytes.subarray(skip, end);
  return { text: new TextDecoder('utf-8').decode(bytes), bytes: bytes.length, truncated };
}

export function parse(body: string | Uint8Array, opts: ParseOptions = {}): RobotsRules {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const { text, bytes, truncated } = decodeBody(body, maxBytes);
  const lines = text.split(/\r\n|\r|\n/);

  const groups: RobotsGroup[] = [];
  const sitemaps: string[] = [];
  let current: RobotsGroup | null = null;
  // True once the current group has a rule: the next user-agent line starts a new group.
  let inRules = false;

  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] ?? '';
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash);
    line = line.trim();
    if (line === '') continue;

    let key: string;
    let value: string;
    const colon = line.indexOf(':');
    if (colon >= 0) {
      key = line.slice(0, colon).trim().toLowerCase();
      value = line.slice(colon + 1).trim();
    } else {
      // Google: a missing colon is tolerated when the line is exactly "<key> <value>".
      const m = TWO_WORDS.exec(line);
      if (m === null) continue;
      key = (m[1] ?? '').toLowerCase();
      value = m[2] ?? '';
    }
    const lineNo = i + 1;

    if (USER_AGENT.has(key)) {
      if (current === null || inRules) {
        current = { agents: [], line: lineNo, rules: [] };
        groups.push(current);
        inRules = false;
      }
      const token = groupToken(value);
      if (token !== '' && !current.agents.includes(token)) current.agents.push(token);
    } else if (key === 'allow' || DISALLOW.has(key)) {
      // Rules before the first user-agent line belong to no group (RFC 9309 §2.1).
      if (current === null) continue;
      inRules = true;
      // An empty value allows everything, i.e. adds nothing. A pattern must start with "/" or
      // "*" (RFC 9309 §2.2.2); anything else can never match a path, so it is dropped.
      const c = value.charCodeAt(0);
      if (c === 47 || c === 42) {
        current.rules.push({ directive: key === 'allow' ? 'allow' : 'disallow', pattern: value, line: lineNo });
      }
    } else if (CRAWL_DELAY.has(key)) {
      if (current === null) continue;
      // Crawl-delay is a member of its group, so a user-agent line after it starts a new group.
      inRules = true;
      if (CRAWL_DELAY_VALUE.test(value)) {
        const delay = Number(value);
        current.crawlDelay = Math.max(current.crawlDelay ?? 0, delay);
      }
    } else if (SITEMAP.has(key)) {
      // Sitemaps are global and do not interrupt a group.
      if (value !== '') sitemaps.push(value);
    }
    // Unknown fields are ignored and, per RFC 9309 §2.2.4, do not interfere with groups.
  }

  const rules: RobotsRules = {
    origin: 'file',
    groups: groups.filter((g) => g.agents.length > 0),
    sitemaps,
    parsedBytes: bytes,
    truncated,
  };
  if (opts.agent !== undefined) rules.agent = opts.agent;
  if (opts.keepRaw === true) rules.raw = text;
  return rules;
}
