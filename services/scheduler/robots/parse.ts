/**
 * robots.txt parser (RFC 9309 §2.1–2.2, read the way Google's open-source parser reads it). Pure:
 * takes the body, returns plain data. Never throws on content; lines it cannot use are skipped.
 *
 * Why not the `robots-parser` package: (a) it lacks readings of Google's that sites are checked
 * against (an allowed `index.html` opening its directory, the 16,663-byte line limit, a partial
 * byte order mark); (b) it does not treat `%2A` in a rule as a literal `*`; (c) it lets any
 * non-user-agent line (a `sitemap`, an unknown field) split a run of user-agent lines, which the
 * RFC says other records must not do; (d) it has no size limit and no implicit `/robots.txt` allow;
 * (e) it only answers for absolute URLs of the same origin, and does not say which group a rule
 * came from; (f) it allocates an array per rule per check. Its matcher is otherwise sound, but
 * (a)–(e) are correctness gaps, and (f) matters at crawler scale.
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

// Keys are recognised by their start, as Google does (`disallowed:` is a disallow line).
const USER_AGENT = ['user-agent', 'useragent', 'user agent'];
// Google accepts these common misspellings of "disallow".
const DISALLOW = ['disallow', 'dissallow', 'dissalow', 'disalow', 'diasllow', 'disallaw'];
const SITEMAP = ['sitemap', 'site-map'];
const CRAWL_DELAY = ['crawl-delay', 'crawldelay'];

type Key = 'user-agent' | 'allow' | 'disallow' | 'sitemap' | 'crawl-delay' | null;

function startsWithAny(key: string, names: readonly string[]): boolean {
  for (const n of names) if (key.startsWith(n)) return true;
  return false;
}

function keyOf(key: string): Key {
  // The spellings nearly every file uses, without the prefix scan.
  if (key === 'disallow' || key === 'allow' || key === 'user-agent' || key === 'sitemap') return key;
  if (startsWithAny(key, USER_AGENT)) return 'user-agent';
  if (key.startsWith('allow')) return 'allow';
  if (startsWithAny(key, DISALLOW)) return 'disallow';
  if (startsWithAny(key, SITEMAP)) return 'sitemap';
  if (startsWithAny(key, CRAWL_DELAY)) return 'crawl-delay';
  return null;
}

const CRAWL_DELAY_VALUE = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const TWO_WORDS = /^([^ \t]+)[ \t]+([^ \t]+)$/;

/**
 * The product token a `user-agent` line names, lower-cased: `*` for the global group (also `* …`),
 * otherwise the leading run of letters, `-` and `_` (RFC 9309 §2.2.1's token characters), as Google
 * reads it: `Googlebot/2.1` and `Googlebot Images` both name `googlebot`, and so does `Googlebot2`.
 * Empty when the value names no usable token.
 */
export function groupToken(value: string): string {
  if (value.charCodeAt(0) === 42 /* * */ && (value.length === 1 || isAsciiSpace(value.charCodeAt(1)))) return '*';
  return value.slice(0, tokenEnd(value)).toLowerCase();
}

/**
 * Whether `name` is, as a whole, a product token a crawler can obey: one or more letters, `-` or `_`
 * (`Foobot`, `Foo_Bar`; not `Foobot/2.1`, `Foo Bar`, ` Foobot ` or `ツ`).
 */
export function isValidProductToken(name: string): boolean {
  return name.length > 0 && tokenEnd(name) === name.length;
}

/**
 * The product token of a crawler's user agent, lower-cased; empty when there is none. Accepted
 * forms: a bare token (`meguri`), a token with a version (`meguri/0.1`, anything may follow), a
 * token followed by a comment (`meguri (+https://…)`), with surrounding whitespace ignored.
 * Anything else (`Foo Bar`, `meguri*`, `360Spider`) names no token a group could be written for,
 * so only the `*` group applies to it, as Google's matcher does for an agent that is no valid token.
 */
export function productToken(userAgent: string): string {
  // Surrounding whitespace is no part of a header value (RFC 9110 §5.5), so it is not held against it.
  const ua = userAgent.trim();
  const end = tokenEnd(ua);
  if (end === 0) return '';
  if (end < ua.length && ua.charCodeAt(end) !== 47 /* / */ && !/^\s+\(/.test(ua.slice(end))) return '';
  return ua.slice(0, end).toLowerCase();
}

/** Index of the first character that is not a letter, `-` or `_`. */
function tokenEnd(s: string): number {
  let end = 0;
  while (end < s.length) {
    const c = s.charCodeAt(end);
    if (!((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 45 /* - */ || c === 95) /* _ */) break;
    end++;
  }
  return end;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

function isAsciiSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * Trims ASCII whitespace only, as Google does: a stray U+FEFF or U+00A0 stays part of the line
 * (a byte order mark in the middle of a file spoils the line it starts), where String#trim would
 * quietly drop it.
 */
function trimAscii(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isAsciiSpace(s.charCodeAt(start))) start++;
  while (end > start && isAsciiSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/**
 * Bytes of one line that are read; the rest of a longer line is ignored. Google's figure: eight
 * times the 2,083-byte URL limit of old browsers, less one byte of its line buffer (16,663).
 */
export const MAX_LINE_BYTES = 2083 * 8 - 1;

/** `line` cut to at most MAX_LINE_BYTES of UTF-8, at a character boundary. */
function capLine(line: string): string {
  // Three UTF-8 bytes per UTF-16 unit at most, so most lines need no counting.
  if (line.length * 3 <= MAX_LINE_BYTES) return line;
  let bytes = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    // A surrogate pair is 4 bytes over two units: 2 each.
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
    if (bytes + size > MAX_LINE_BYTES) {
      // Never split a surrogate pair.
      const lo = c >= 0xdc00 && c <= 0xdfff ? i - 1 : i;
      return line.slice(0, lo);
    }
    bytes += size;
  }
  return line;
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
  // A UTF-8 byte order mark, or the start of one (Google skips `EF` and `EF BB` too: a truncated
  // mark is still no part of the first line).
  let skip = 0;
  while (skip < 3 && bytes[skip] === UTF8_BOM[skip]) skip++;
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
    let line = capLine(lines[i] ?? '');
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash);
    line = trimAscii(line);
    if (line === '') continue;

    let key: string;
    let value: string;
    const colon = line.indexOf(':');
    if (colon >= 0) {
      key = trimAscii(line.slice(0, colon)).toLowerCase();
      value = trimAscii(line.slice(colon + 1));
    } else {
      // Google: a missing colon is tolerated when the line is exactly "<key> <value>".
      const m = TWO_WORDS.exec(line);
      if (m === null) continue;
      key = (m[1] ?? '').toLowerCase();
      value = m[2] ?? '';
    }
    const lineNo = i + 1;

    const kind = keyOf(key);
    if (kind === 'user-agent') {
      if (current === null || inRules) {
        current = { agents: [], line: lineNo, rules: [] };
        groups.push(current);
        inRules = false;
      }
      const token = groupToken(value);
      if (token !== '' && !current.agents.includes(token)) current.agents.push(token);
    } else if (kind === 'allow' || kind === 'disallow') {
      // Rules before the first user-agent line belong to no group (RFC 9309 §2.1).
      if (current === null) continue;
      inRules = true;
      // An empty value allows everything, i.e. adds nothing. A pattern must start with "/" or
      // "*" (RFC 9309 §2.2.2); anything else can never match a path, so it is dropped.
      const c = value.charCodeAt(0);
      if (c === 47 || c === 42) {
        current.rules.push({ directive: kind, pattern: value, line: lineNo });
      }
    } else if (kind === 'crawl-delay') {
      if (current === null) continue;
      // Crawl-delay is a member of its group, so a user-agent line after it starts a new group.
      inRules = true;
      if (CRAWL_DELAY_VALUE.test(value)) {
        const delay = Number(value);
        current.crawlDelay = Math.max(current.crawlDelay ?? 0, delay);
      }
    } else if (kind === 'sitemap') {
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
