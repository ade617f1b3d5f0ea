/**
 * Redirect targets and header text as a server sends them, made safe for a `pages` record.
 *
 * undici hands header values over as latin1 strings (one character per byte), so a UTF-8
 * `Location: /café` arrives as "/cafÃ©" and would be percent-encoded as the wrong bytes. Servers
 * that send non-ASCII in Location send UTF-8 almost always, and browsers read it so; bytes that are
 * not valid UTF-8 stay latin1.
 */
import { httpUrl } from '../../schemas/common.ts';
import { FetchError } from './errors.ts';

/** The longest URL a record may carry (schemas/common.ts `httpUrl`). */
export const MAX_URL_LENGTH: number = httpUrl.maxLength ?? 8192;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Re-reads a latin1 header string as UTF-8 when its bytes are valid UTF-8; otherwise returns it unchanged. */
export function decodeHeaderUtf8(value: string): string {
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c > 0xff) return value; // not a byte string: nothing to re-read
    if (c > 0x7f) ascii = false;
  }
  if (ascii) return value;
  try {
    return strictUtf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

/** Cuts `s` to at most `max` UTF-16 units without splitting a surrogate pair. */
export function truncateText(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * Resolves a redirect's Location against the URL that answered. Throws a FetchError
 * (MEGURI_ERR_BAD_REDIRECT) for a target that cannot be parsed, is not http(s), or is longer than
 * a record's URL limit: such a target could never be recorded, fetched or re-scheduled.
 */
export function resolveRedirect(location: string, base: URL): URL {
  const shown = (s: string): string => JSON.stringify(truncateText(s, 200)) + (s.length > 200 ? ` (${s.length} characters)` : '');
  let next: URL;
  try {
    next = new URL(location, base);
  } catch {
    throw new FetchError('MEGURI_ERR_BAD_REDIRECT', `unparseable Location: ${shown(location)}`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new FetchError('MEGURI_ERR_BAD_REDIRECT', `redirect to unsupported scheme ${truncateText(next.protocol, 50)}`);
  }
  next.hash = '';
  if (next.href.length > MAX_URL_LENGTH) {
    throw new FetchError('MEGURI_ERR_BAD_REDIRECT', `redirect target is ${next.href.length} characters, over the ${MAX_URL_LENGTH}-character URL limit: ${shown(next.href)}`);
  }
  return next;
}
