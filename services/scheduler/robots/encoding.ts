/**
 * Percent-encoding normalisation of rule patterns and URL paths, so both sides of a comparison are
 * in one octet form. It follows what Google's matcher does, and RFC 9309 §2.2.2–2.2.3 where Google's
 * tests say nothing:
 *
 * - non-ASCII characters in a pattern become percent-encoded UTF-8 (`/ツ` → `/%E3%83%84`). A URL is
 *   taken as already encoded, as a crawler sends it: its non-ASCII characters are kept, so a raw
 *   `/ツ` in a URL matches no encoded rule (Google's tests pin that down);
 * - `%xx` hex digits are upper-cased on both sides (`%c3%a9` → `%C3%A9`, RFC 3986 §6.2.2.1);
 * - percent-encoded octets are otherwise not decoded: `%62%61%7A` is not `baz`, and `/a%2Fb` is
 *   another resource than `/a/b`. (RFC 9309's example table would decode unreserved octets; Google's
 *   tests assert the opposite, and Google's reading is the one sites are checked against.)
 * - in the query (after the first literal `?`) the gen-delims that RFC 3986 lets a query carry as
 *   plain data, `:` `/` `?` `@`, compare equal to their encoded form, as in RFC 9309 §2.2.2's
 *   example where `/foo/bar?baz=https://foo.bar` and `…?baz=https%3A%2F%2Ffoo.bar` are one path.
 *   They are decoded rather than encoded so a wildcard rule ending in `/print` still sees the
 *   slashes of a query that was sent unencoded, as a byte-wise matcher would;
 * - a literal `*` or `$` is always kept encoded (`%2A`, `%24`), so in a canonical pattern a bare `*`
 *   is always the wildcard (RFC 9309 §2.2.3: `%2A` in a rule matches a `*` in the URL);
 * - ASCII characters that may not appear unencoded in a URI (controls, space, `"`, `<`, `>`, `\`,
 *   `^`, backtick, `{`, `|`, `}`) and a `%` not followed by two hex digits are encoded.
 *
 * A canonical pattern is ASCII, so its string length is its octet length: what precedence counts.
 */

const KEEP = 0;
const ENCODE = 1;
const PERCENT = 2;
const STAR = 3;
const DOLLAR = 4;
const QUESTION = 5;

const CLASS = new Uint8Array(128).fill(ENCODE);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') CLASS[c.charCodeAt(0)] = KEEP;
for (const c of ":/[]@!&'()+,;=") CLASS[c.charCodeAt(0)] = KEEP;
CLASS[0x25] = PERCENT;
CLASS[0x2a] = STAR;
CLASS[0x24] = DOLLAR;
CLASS[0x3f] = QUESTION;

/** Reserved octets that compare equal to their encoded form inside the query. */
const QUERY_DATA = new Uint8Array(128);
for (const c of ':/?@') QUERY_DATA[c.charCodeAt(0)] = 1;

const HEX = '0123456789ABCDEF';

/** Strings made only of KEEP characters and `?` (plus the `*` wildcard in patterns) are canonical. */
// (A URL's non-ASCII characters are kept as they are.)
const CANONICAL_PATH = /^[A-Za-z0-9\-._~:/[\]@!&'()+,;=?\u0080-\uffff]*$/;
const CANONICAL_PATTERN = /^[A-Za-z0-9\-._~:/[\]@!&'()+,;=?*]*$/;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function pct(byte: number): string {
  return '%' + HEX[byte >> 4] + HEX[byte & 15];
}

function utf8Percent(cp: number): string {
  if (cp < 0x800) return pct(0xc0 | (cp >> 6)) + pct(0x80 | (cp & 63));
  if (cp < 0x10000) return pct(0xe0 | (cp >> 12)) + pct(0x80 | ((cp >> 6) & 63)) + pct(0x80 | (cp & 63));
  return (
    pct(0xf0 | (cp >> 18)) + pct(0x80 | ((cp >> 12) & 63)) + pct(0x80 | ((cp >> 6) & 63)) + pct(0x80 | (cp & 63))
  );
}

/**
 * Canonical form of a path (with query) or, when `pattern` is true, of a rule pattern whose
 * trailing `$` anchor the caller has already removed: a bare `*` is then kept as the wildcard.
 */
export function canonicalize(input: string, pattern: boolean): string {
  // Fast path: most paths and patterns are already canonical. (A RegExp scan beats a charCodeAt
  // loop here by about 2x.)
  if ((pattern ? CANONICAL_PATTERN : CANONICAL_PATH).test(input)) return input;

  const n = input.length;
  let inQuery = false;
  let out = '';
  for (let i = 0; i < n; i++) {
    const c = input.charCodeAt(i);
    if (c >= 128) {
      if (!pattern) {
        out += input[i];
        continue;
      }
      let cp = c;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const lo = input.charCodeAt(i + 1);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
          i++;
        }
      }
      // A lone surrogate cannot be UTF-8 encoded: use U+FFFD like TextEncoder does.
      if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
      out += utf8Percent(cp);
      continue;
    }
    switch (CLASS[c]) {
      case KEEP:
        out += input[i];
        break;
      case QUESTION:
        inQuery = true;
        out += '?';
        break;
      case STAR:
        out += pattern ? '*' : '%2A';
        break;
      case DOLLAR:
        out += '%24';
        break;
      case PERCENT: {
        const h = i + 2 < n ? hexValue(input.charCodeAt(i + 1)) : -1;
        const l = h >= 0 ? hexValue(input.charCodeAt(i + 2)) : -1;
        if (l < 0) {
          out += '%25';
          break;
        }
        const byte = (h << 4) | l;
        if (inQuery && byte < 128 && QUERY_DATA[byte] === 1) {
          out += String.fromCharCode(byte);
        } else {
          out += pct(byte);
        }
        i += 2;
        break;
      }
      default:
        out += pct(c);
    }
  }
  return out;
}

/** Index of the first `/`, `?` or `;` at or after `from`, or -1. */
function pathStartAt(url: string, from: number): number {
  for (let i = from; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 || c === 63 || c === 59) return i;
  }
  return -1;
}

/**
 * The path, params and query of a URL with the fragment dropped, always starting with `/`, read the
 * way Google's matcher reads it: `https://h/p?q#f` → `/p?q`, `//h/p` → `/p`, `/p` → `/p`, and
 * without a scheme the text before the first `/`, `?` or `;` is the authority (`example.com/a` →
 * `/a`, `example.com?a` → `/?a`, `a` → `/`). A `://` after the path has begun is no scheme
 * separator (`/a?u=http://b`). Hand-written because `new URL()` would dominate the cost of a match.
 */
export function pathAndQuery(url: string): string {
  let from = 0;
  if (url.charCodeAt(0) === 47) {
    if (url.charCodeAt(1) !== 47) {
      // A path given directly: the common case.
      const hash = url.indexOf('#');
      return hash < 0 ? url : url.slice(0, hash);
    }
    from = 2;
  }
  const early = pathStartAt(url, from);
  const scheme = url.indexOf('://', from);
  const authority = scheme >= 0 && (early < 0 || scheme < early) ? scheme + 3 : from;
  const start = pathStartAt(url, authority);
  if (start < 0) return '/';
  let end = url.indexOf('#', from);
  if (end >= 0 && end < start) return '/';
  if (end < 0) end = url.length;
  const path = url.slice(start, end);
  return url.charCodeAt(start) === 47 ? path : '/' + path;
}
