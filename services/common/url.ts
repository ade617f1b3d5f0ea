/**
 * URL normalisation shared by the parser (discovered links) and the scheduler (seeds), so one page
 * always has one spelling and the scheduler's "seen" set deduplicates reliably.
 *
 * normalizeUrl() applies, in order:
 *   1. WHATWG `URL` parsing relative to `base` (lower-cases scheme and host, IDN → punycode,
 *      removes the scheme's default port, resolves `.`/`..` segments, empty path → `/`);
 *   2. only `http:`/`https:` survive (javascript:, mailto:, data:, ftp: … are rejected);
 *   3. the fragment, user name and password are dropped (never sent, never part of identity),
 *      as are an empty query (`?`) and one trailing dot of the host (`example.com.`);
 *   4. the optional server-alias map rewrites the host name (`www.example.com` → `example.com`);
 *   5. percent-escapes in path and query get upper-case hex, and escapes of unreserved characters
 *      (`A-Z a-z 0-9 - . _ ~`) are decoded; reserved ones (`%2F`, `%3F`, `%26` …) stay encoded;
 *   6. session and tracking parameters are removed, from the query (`?sid=…`, `utm_source=…`) and
 *      from path parameters (`;jsessionid=…`): DEFAULT_STRIP_PARAMS unless `stripParams` says
 *      otherwise. They name a visitor or a campaign, not a page, and a server that puts a fresh
 *      one in every link would otherwise be an endless supply of "new" URLs;
 *   7. the result must be at most `maxLength` (2048) characters.
 */
import { parse as parseDomain } from 'tldts';

export const MAX_URL_LENGTH = 2048;

export type RejectReason =
  | 'empty' // nothing but whitespace
  | 'invalid' // WHATWG parser refused it (bad host, bad port, no base for a relative URL …)
  | 'scheme' // parsed, but not http(s)
  | 'too-long'; // longer than maxLength after normalisation

export type NormalizeResult = { ok: true; url: string } | { ok: false; reason: RejectReason };

export interface NormalizeOptions {
  /** Host-name aliases, lower-case: `{ 'www.example.com': 'example.com' }`. */
  aliases?: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
  /** Maximum length of the normalised URL; default 2048. */
  maxLength?: number;
  /** Query and path parameters removed; default DEFAULT_STRIP_PARAMS (ParamFilter.none keeps all). */
  stripParams?: ParamFilter;
}

/**
 * Session and tracking parameters removed by default (names compared case-insensitively; a
 * trailing `*` matches every name with that prefix). Session ids: Java servlets, PHP, ASP, ASP.NET
 * cookieless sessions in the query, ColdFusion, osCommerce/Zen Cart; tracking: Google Analytics
 * and Ads, Facebook, Microsoft Ads, Mailchimp, Yandex, HubSpot, Marketo, TikTok, X, Instagram.
 */
export const DEFAULT_STRIP_PARAMS: readonly string[] = [
  'jsessionid', 'phpsessid', 'sid', 'sessionid', 'session_id', 'aspsessionid*', 'cfid', 'cftoken', 'oscsid', 'zenid',
  'utm_*', 'fbclid', 'gclid', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'msclkid', 'mc_eid', 'mc_cid', 'yclid',
  '_hsenc', '_hsmi', 'mkt_tok', 'ttclid', 'twclid', 'igshid',
];

/** A compiled list of parameter names (exact, or prefixes written `name*`), case-insensitive. */
export class ParamFilter {
  static readonly none = new ParamFilter([]);
  private readonly exact: ReadonlySet<string>;
  private readonly prefixes: readonly string[];

  constructor(readonly names: readonly string[]) {
    const exact = new Set<string>();
    const prefixes: string[] = [];
    for (const raw of names) {
      const name = raw.trim().toLowerCase();
      if (name === '' || name === '*') continue;
      if (name.endsWith('*')) prefixes.push(name.slice(0, -1));
      else exact.add(name);
    }
    this.exact = exact;
    this.prefixes = prefixes;
  }

  get empty(): boolean {
    return this.exact.size === 0 && this.prefixes.length === 0;
  }

  matches(name: string): boolean {
    const lower = name.toLowerCase();
    if (this.exact.has(lower)) return true;
    for (const p of this.prefixes) if (lower.startsWith(p)) return true;
    return false;
  }
}

const DEFAULT_FILTER = new ParamFilter(DEFAULT_STRIP_PARAMS);

/** The filter for a list of names; the default list when none is given. */
export function paramFilter(names?: readonly string[]): ParamFilter {
  return names === undefined ? DEFAULT_FILTER : names.length === 0 ? ParamFilter.none : new ParamFilter(names);
}

function paramName(pair: string): string {
  const eq = pair.indexOf('=');
  return eq < 0 ? pair : pair.slice(0, eq);
}

/** The query (`?a=1&b=2` or '') without the filtered parameters; '' when none is left. */
function filterQuery(search: string, filter: ParamFilter): string {
  if (search.length <= 1) return '';
  const pairs = search.slice(1).split('&');
  const kept = pairs.filter((p) => !filter.matches(paramName(p)));
  if (kept.length === pairs.length) return search;
  return kept.some((p) => p !== '') ? '?' + kept.join('&') : '';
}

/** The path without filtered `;name=value` path parameters (`/a;jsessionid=X` → `/a`). */
function filterPathParams(path: string, filter: ParamFilter): string {
  if (!path.includes(';')) return path;
  return path
    .split('/')
    .map((segment) => {
      const semi = segment.indexOf(';');
      if (semi < 0) return segment;
      const params = segment.slice(semi + 1).split(';');
      const kept = params.filter((p) => !filter.matches(paramName(p)));
      return kept.length === params.length ? segment : [segment.slice(0, semi), ...kept].join(';');
    })
    .join('/');
}

/**
 * Removes the filtered parameters from an already normalised absolute URL (what the scheduler
 * applies to every URL it takes in, so its settings decide identity whatever wrote the record).
 * Cheap when there is nothing to remove.
 */
export function stripUrlParams(url: string, filter: ParamFilter = DEFAULT_FILTER): string {
  if (filter.empty) return url;
  const hostStart = url.indexOf('://');
  if (hostStart < 0) return url;
  const pathStart = url.indexOf('/', hostStart + 3);
  if (pathStart < 0) return url;
  const q = url.indexOf('?', pathStart);
  // Most URLs have neither a query nor path parameters: answered without slicing them.
  if (q < 0 && url.indexOf(';', pathStart) < 0) return url;
  const path = q < 0 ? url.slice(pathStart) : url.slice(pathStart, q);
  const search = q < 0 ? '' : url.slice(q);
  if (search === '' && !path.includes(';')) return url;
  const newPath = filterPathParams(path, filter);
  const newSearch = filterQuery(search, filter);
  return newPath === path && newSearch === search ? url : url.slice(0, pathStart) + newPath + newSearch;
}

// Cheap pre-filter: an input this many times longer than the limit cannot shrink enough to fit
// (only whitespace, tabs/newlines and dot segments get removed), so it is not worth parsing.
const RAW_LENGTH_FACTOR = 4;

function aliasFor(
  aliases: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
  host: string,
): string | undefined {
  if (aliases instanceof Map) return aliases.get(host);
  const rec = aliases as Readonly<Record<string, string>>;
  return Object.hasOwn(rec, host) ? rec[host] : undefined;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87; // a-f
  return -1;
}

function isUnreserved(c: number): boolean {
  return (
    (c >= 65 && c <= 90) || // A-Z
    (c >= 97 && c <= 122) || // a-z
    (c >= 48 && c <= 57) || // 0-9
    c === 45 || // -
    c === 46 || // .
    c === 95 || // _
    c === 126 // ~
  );
}

const HEX_UPPER = '0123456789ABCDEF';

/**
 * Upper-cases the hex digits of every `%xx` and decodes those that encode an unreserved
 * character. A `%` not followed by two hex digits is left alone (browsers send it verbatim).
 */
export function normalizePercentEncoding(s: string): string {
  let i = s.indexOf('%');
  if (i === -1) return s;
  let out = '';
  let last = 0;
  while (i !== -1) {
    if (i + 2 < s.length) {
      const hi = hexValue(s.charCodeAt(i + 1));
      const lo = hexValue(s.charCodeAt(i + 2));
      if (hi >= 0 && lo >= 0) {
        const code = hi * 16 + lo;
        out += s.slice(last, i);
        out += isUnreserved(code) ? String.fromCharCode(code) : '%' + HEX_UPPER[hi] + HEX_UPPER[lo];
        last = i + 3;
        i = s.indexOf('%', last);
        continue;
      }
    }
    i = s.indexOf('%', i + 1);
  }
  return last === 0 ? s : out + s.slice(last);
}

/** Normalises `raw` (resolved against `base` when relative). Never throws. */
export function normalizeUrl(raw: string, base?: string | URL, opts?: NormalizeOptions): NormalizeResult {
  const maxLength = opts?.maxLength ?? MAX_URL_LENGTH;
  if (raw.length > maxLength * RAW_LENGTH_FACTOR) return { ok: false, reason: 'too-long' };
  const trimmed = raw.trim();
  if (trimmed === '') return { ok: false, reason: 'empty' };

  let u: URL;
  try {
    u = new URL(trimmed, base);
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  const scheme = u.protocol;
  if (scheme !== 'http:' && scheme !== 'https:') return { ok: false, reason: 'scheme' };

  let hostname = u.hostname;
  if (hostname === '') return { ok: false, reason: 'invalid' };
  if (hostname.length > 1 && hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  // DNS limits (RFC 1035 §2.3.4): such a name can never resolve, and records cap hosts at 253.
  if (hostname.length > 253 || hostname.split('.').some((label) => label.length > 63)) return { ok: false, reason: 'invalid' };
  if (opts?.aliases) hostname = aliasFor(opts.aliases, hostname) ?? hostname;
  const host = u.port === '' ? hostname : `${hostname}:${u.port}`;

  const filter = opts?.stripParams ?? DEFAULT_FILTER;
  const path = filterPathParams(normalizePercentEncoding(u.pathname), filter);
  // `search` is '' for both "no query" and a bare '?', which drops the empty query too.
  const search = filterQuery(normalizePercentEncoding(u.search), filter);
  const url = `${scheme}//${host}${path}${search}`;
  if (url.length > maxLength) return { ok: false, reason: 'too-long' };
  return { ok: true, url };
}

// Root-relative paths made only of unreserved characters and `/`, without dot segments or a
// leading `//`: resolving them is plain concatenation with the base's origin, and they are the
// most common kind of link on real pages.
const SIMPLE_ROOT_PATH = /^\/(?![/])[A-Za-z0-9\-._~/]*$/;
/** A path relative to the base's directory (`p/1.html`) of unreserved characters, not starting with a dot. */
const SIMPLE_RELATIVE_PATH = /^[A-Za-z0-9\-_~][A-Za-z0-9\-._~/]*$/;

/**
 * A resolver for many links against one base: same results as `normalizeUrl(raw, base, opts)`,
 * with the base parsed once and shortcuts for simple root-relative and directory-relative paths.
 */
export function urlResolver(base: string, opts?: NormalizeOptions): (raw: string) => NormalizeResult {
  const b = normalizeUrl(base, undefined, opts);
  if (!b.ok) return (raw) => normalizeUrl(raw, base, opts);
  const baseUrl = b.url;
  const schemeEnd = baseUrl.indexOf('://');
  const scheme = baseUrl.slice(0, schemeEnd + 1);
  const origin = baseUrl.slice(0, baseUrl.indexOf('/', schemeEnd + 3));
  // The base's directory: its path up to the last '/' (a normalised URL has no fragment; its query,
  // if any, is not part of the path).
  const query = baseUrl.indexOf('?', origin.length);
  const directory = baseUrl.slice(0, baseUrl.lastIndexOf('/', (query < 0 ? baseUrl.length : query) - 1) + 1);
  const maxLength = opts?.maxLength ?? MAX_URL_LENGTH;
  // An alias file rewrites host names, which only normalizeUrl applies to a URL's own host.
  const ownHosts = opts?.aliases === undefined;
  const result = (url: string): NormalizeResult => (url.length > maxLength ? { ok: false, reason: 'too-long' } : { ok: true, url });
  return (raw) => {
    if (raw.length <= maxLength) {
      const c = raw.charCodeAt(0);
      if (c === 47 /* / */) {
        if (SIMPLE_ROOT_PATH.test(raw) && !raw.includes('/.')) return result(origin + raw);
        // Protocol-relative (`//host/path`): the page's scheme in front.
        if (ownHosts && raw.charCodeAt(1) === 47) {
          const absolute = scheme + raw;
          const end = plainAbsoluteEnd(absolute);
          if (end > 0) return result(absolute.slice(0, end));
        }
      } else if (c === 35 /* # */) {
        // Only a fragment: the page itself (normalised URLs have none).
        return { ok: true, url: baseUrl };
      } else if (c === 104 /* h */ && ownHosts) {
        const end = plainAbsoluteEnd(raw);
        if (end > 0) return result(raw.slice(0, end));
      }
      // `p/1.html`: no scheme (no ':'), query, parameters or dot segments, so the URL parser would
      // only put the base's directory in front of it.
      if (SIMPLE_RELATIVE_PATH.test(raw) && !raw.includes('/.')) return result(directory + raw);
    }
    return normalizeUrl(raw, baseUrl, opts);
  };
}

/**
 * For an absolute URL that normalizeUrl would return as it is, up to its fragment —
 * `http(s)://host[:port]/path[#fragment]` with a host name the WHATWG parser keeps as written,
 * within DNS's limits, a port neither default nor padded, and a path of unreserved characters
 * without dot segments, query or parameters — where the normalised URL ends (before the `#`);
 * 0 for any other string, which then takes normalizeUrl.
 */
function plainAbsoluteEnd(raw: string): number {
  const schemeLength = raw.startsWith('http://') ? 4 : raw.startsWith('https://') ? 5 : 0;
  if (schemeLength === 0) return 0;
  const hostStart = schemeLength + 3;
  const slash = raw.indexOf('/', hostStart);
  if (slash < 0) return 0;
  const colon = raw.indexOf(':', hostStart);
  const hostEnd = colon >= 0 && colon < slash ? colon : slash;
  if (hostEnd === hostStart) return 0;
  if (hostEnd !== slash && !plainPort(raw, colon + 1, slash, schemeLength)) return 0;
  if (!plainHostName(raw.slice(hostStart, hostEnd))) return 0;
  const hash = raw.indexOf('#', slash);
  const end = hash < 0 ? raw.length : hash;
  const path = raw.slice(slash, end);
  return SIMPLE_ROOT_PATH.test(path) && !path.includes('/.') ? end : 0;
}


/**
 * The host of an absolute http(s) URL: lower-case host name plus the port when it is not the
 * default one (robots.txt and politeness both apply per scheme+host+port authority).
 * Returns '' when `url` is not an absolute URL.
 */
/**
 * The port in url[from, to) is kept as written by the WHATWG parser: 1–5 digits, no leading zero,
 * at most 65535, not the scheme's default (which the parser drops).
 */
function plainPort(url: string, from: number, to: number, schemeEnd: number): boolean {
  const n = to - from;
  if (n < 1 || n > 5 || url.charCodeAt(from) === 48 /* 0 */) return false;
  let port = 0;
  for (let i = from; i < to; i++) {
    const d = url.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    port = port * 10 + d;
  }
  if (port > 65535) return false;
  const scheme = url.slice(0, schemeEnd).toLowerCase();
  return (scheme === 'http' && port !== 80) || (scheme === 'https' && port !== 443);
}

/**
 * A host name the WHATWG parser keeps as written, within DNS's limits: labels of [a-z0-9_-], none
 * empty or over 63 characters, and either a last label that is not a number or a canonical dotted
 * quad (other numeric forms are IPv4 shorthands the parser rewrites or rejects).
 */
function plainHostName(host: string): boolean {
  // DNS's limits (RFC 1035 §2.3.4), which normalizeUrl enforces: longer names are left to it.
  if (host.length > 253) return false;
  let labelStart = 0;
  let lastLabel = 0;
  let numericLabel = true;
  for (let i = 0; i <= host.length; i++) {
    const c = i < host.length ? host.charCodeAt(i) : 46; /* . ends the last label */
    if (c === 46) {
      if (i === labelStart || i - labelStart > 63) return false; // empty or over-long label
      lastLabel = labelStart;
      labelStart = i + 1;
      if (i < host.length) numericLabel = true;
      continue;
    }
    const digit = c >= 48 && c <= 57;
    if (!digit && !(c >= 97 && c <= 122) && c !== 45 /* - */ && c !== 95 /* _ */) return false;
    if (!digit) numericLabel = false;
  }
  if (!numericLabel) {
    // Two more the parser rewrites or rejects: a last label of 0x and hex digits (a number, so
    // the name is read as IPv4) and punycode labels ("xn--", which it decodes to check).
    return !isHexNumber(host, lastLabel) && !host.includes('xn--');
  }
  // An IPv4 address: only its canonical dotted-quad form is kept as written.
  const labels = host.split('.');
  return labels.length === 4 && labels.every((l) => /^(0|[1-9][0-9]{0,2})$/.test(l) && Number(l) <= 255);
}

/** Whether host[from..] is 0x followed by hex digits only (lower case, as plainHostName allows). */
function isHexNumber(host: string, from: number): boolean {
  if (host.charCodeAt(from) !== 48 /* 0 */ || host.charCodeAt(from + 1) !== 120 /* x */) return false;
  for (let i = from + 2; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

export function hostOf(url: string): string {
  const start = url.indexOf('://');
  if (start > 0 && start < 6) {
    let end = start + 3;
    let plain = true;
    let colon = -1;
    for (; end < url.length; end++) {
      const c = url.charCodeAt(end);
      if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
      if (c === 58 /* : */ && colon < 0) colon = end;
      // userinfo, upper case, IPv6, a second colon or escapes: let the real parser decide
      else if (c === 64 /* @ */ || c === 58 /* : */ || c === 37 /* % */ || c === 92 /* \ */ || c === 91 /* [ */ || (c >= 65 && c <= 90)) {
        plain = false;
      }
    }
    if (plain && colon > start + 3 && plainPort(url, colon + 1, end, start) && plainHostName(url.slice(start + 3, colon))) return url.slice(start + 3, end);
    if (plain && colon < 0 && end > start + 3) return url.slice(start + 3, end);
  }
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

// Extensions of server-side scripts whose output is typically generated per request.
const DYNAMIC_EXT = new Set([
  'cgi', 'fcgi', 'pl', 'php', 'php3', 'php4', 'php5', 'phtml', 'asp', 'aspx', 'ashx', 'jsp', 'jspx',
  'do', 'action', 'cfm', 'cfml', 'dll', 'exe', 'py', 'rb',
]);

/**
 * A URL is "dynamic" (a candidate spider trap) when
 *   - it has a non-empty query string, or
 *   - its path has a `;` (matrix/session parameters such as `;jsessionid=`), or
 *   - a path segment is `cgi-bin` (any case), or
 *   - the last path segment ends in a script extension: .cgi .fcgi .pl .php(3|4|5) .phtml .asp
 *     .aspx .ashx .jsp .jspx .do .action .cfm .cfml .dll .exe .py .rb
 * Expects a normalised URL (no fragment); anything unparsable counts as not dynamic.
 */
export function isDynamicUrl(url: string): boolean {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) return false;
  const pathStart = url.indexOf('/', schemeEnd + 3);
  const q = url.indexOf('?', schemeEnd + 3);
  if (q >= 0 && q < url.length - 1) return true;
  if (pathStart < 0 || (q >= 0 && q < pathStart)) return false;
  let path = url.slice(pathStart, q >= 0 ? q : undefined);
  const hash = path.indexOf('#');
  if (hash >= 0) path = path.slice(0, hash);
  if (path.includes(';')) return true;
  const lower = path.toLowerCase();
  if (lower.includes('/cgi-bin/') || lower.endsWith('/cgi-bin')) return true;
  const lastSlash = lower.lastIndexOf('/');
  const dot = lower.lastIndexOf('.');
  if (dot <= lastSlash) return false;
  return DYNAMIC_EXT.has(lower.slice(dot + 1));
}

const siteCache = new Map<string, string>();
const SITE_CACHE_MAX = 50_000;

/** Strips a `:port` suffix, keeping IPv6 literals (`[::1]:8080` → `[::1]`). */
function stripPort(host: string): string {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return close > 0 ? host.slice(0, close + 1) : host;
  }
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

/**
 * The site a host belongs to, for "same site" decisions:
 *   - the registrable domain (public suffix + one label) when the host's suffix is on the Public
 *     Suffix List, ICANN or private section (`a.b.example.co.uk` → `example.co.uk`,
 *     `alice.github.io` → `alice.github.io` since github.io is a private suffix);
 *   - otherwise the full host name: IP addresses, `localhost`, and names under suffixes the list
 *     does not know, so every `hN.sim.test` host of the simulated web is its own site.
 * The port is ignored. Lower-case input expected (hostOf() output).
 */
export function siteOf(host: string): string {
  const cached = siteCache.get(host);
  if (cached !== undefined) return cached;
  const name = stripPort(host);
  let site = name;
  if (!name.startsWith('[')) {
    const r = parseDomain(name, { allowPrivateDomains: true, extractHostname: false });
    if (r.isIp !== true && (r.isIcann === true || r.isPrivate === true) && r.domain) site = r.domain;
  }
  if (siteCache.size >= SITE_CACHE_MAX) siteCache.clear();
  siteCache.set(host, site);
  return site;
}

/**
 * The registrable domain of a host name by the Public Suffix List's own algorithm: the public
 * suffix plus one label, with the list's default rule (`*`) for suffixes it does not list, so
 * `www.example.org` → `example.org`, `a.b.example.co.uk` → `example.co.uk`, `h1.sim.test` →
 * `sim.test`. IP addresses and single-label names are their own domain. Unlike siteOf() (page caps,
 * where an unknown suffix keeps hosts apart), this groups hosts the way an operator's "this domain"
 * does. The port is ignored.
 */
export function registrableDomain(host: string): string {
  const name = stripPort(host.toLowerCase());
  if (name.startsWith('[')) return name;
  const r = parseDomain(name, { allowPrivateDomains: true, extractHostname: false });
  return r.isIp !== true && r.domain ? r.domain : name;
}

/** Host name of a host key or URL authority, without port, lower case. */
export function hostName(host: string): string {
  const h = host.toLowerCase();
  if (h.startsWith('[')) {
    const close = h.indexOf(']');
    return close > 0 ? h.slice(0, close + 1) : h;
  }
  const colon = h.lastIndexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** `name` equals `root` or is a subdomain of it. */
export function withinDomain(name: string, root: string): boolean {
  return name === root || (name.length > root.length && name.endsWith(root) && name.charCodeAt(name.length - root.length - 1) === 46 /* . */);
}

/**
 * `url` repeats `prevUrl`'s scheme and authority character for character, up to a `/`, `?`, `#` or
 * its end: then it has `prevUrl`'s host, since the URL parser derives a host from those characters
 * alone. Links come bundled by target host, and a page's links often name the host of the one
 * before, so most of them skip the host parse this way.
 */
export function sameAuthority(url: string, prevUrl: string): boolean {
  const schemeEnd = prevUrl.indexOf('://');
  if (schemeEnd <= 0) return false;
  let end = schemeEnd + 3;
  while (end < prevUrl.length) {
    const c = prevUrl.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  if (url.length < end) return false;
  for (let i = 0; i < end; i++) if (url.charCodeAt(i) !== prevUrl.charCodeAt(i)) return false;
  const next = url.charCodeAt(end);
  return url.length === end || next === 47 || next === 63 || next === 35;
}

/**
 * hostKey(url) given `prevHost`, the hostKey of `prevUrl`: `prevHost` itself when the authority
 * repeats (sameAuthority), so a bundle's links also share one host string, whose hash the maps
 * keyed by host then compute once. Any other URL (and any URL after `prevUrl` '') takes hostKey.
 */
export function hostKeyAfter(url: string, prevUrl: string, prevHost: string): string {
  return sameAuthority(url, prevUrl) ? prevHost : hostKey(url);
}

/**
 * The scheduler's unit of politeness and ownership: host[:port] of a URL, lower-case — the same
 * function the parser keys `links` records with, so a host's records always meet its state.
 * Topic URLs are validated absolute http(s) URLs; anything unusable fails loudly here.
 */
export function hostKey(url: string): string {
  const host = hostOf(url);
  if (host === '') throw new TypeError(`not an absolute http(s) URL: ${url}`);
  return host;
}
