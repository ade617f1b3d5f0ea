/**
 * The part of a robots.txt an outcome carries (RFC 9309 §2.5: a crawler must parse at least the
 * first 500 KiB and may ignore the rest). A longer body is cut at the last line break within the
 * limit: a rule cut in half (`Allow: /public/x` becoming `Allow: /p`) is not the rule the site wrote.
 * The scheduler then parses all of what it receives, so the rules of the first ROBOTS_BODY_BYTES
 * apply, and nothing past them travels on `links`.
 */
import { ROBOTS_BODY_BYTES } from '../../schemas/links.ts';

export interface RobotsBody {
  readonly body: string;
  /** Bytes (UTF-8) of the whole text. */
  readonly bytes: number;
  /** The text was longer than `maxBytes`: `body` is its start. */
  readonly truncated: boolean;
}

function isLineBreak(byte: number | undefined): boolean {
  return byte === 0x0a || byte === 0x0d;
}

/** `text` cut to at most `maxBytes` of UTF-8, at a line break. */
export function robotsBody(text: string, maxBytes: number = ROBOTS_BODY_BYTES): RobotsBody {
  // Three UTF-8 bytes per UTF-16 unit at most, so a short text needs no counting.
  if (text.length * 3 <= maxBytes) return { body: text, bytes: Buffer.byteLength(text, 'utf8'), truncated: false };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return { body: text, bytes, truncated: false };
  const buf = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // The last line that ends within the limit is kept whole; the line the limit falls in is dropped.
  if (!isLineBreak(buf[end]) && !isLineBreak(buf[end - 1])) {
    while (end > 0 && !isLineBreak(buf[end - 1])) end--;
  }
  // Cut at an ASCII line break (or at 0), so no character is split.
  return { body: buf.toString('utf8', 0, end), bytes, truncated: true };
}
