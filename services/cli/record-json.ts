/**
 * Consumed values as JSON for the inspection commands (tail, replay): most topics are JSON already;
 * a `pages` record (JSON header + body bytes) is printed as its header with the body decoded to text
 * the way the parser reads it, and the body's size in bytes.
 */
import { PAGE_MAGIC } from '../../schemas/index.ts';
import { safeDecodePageRecord } from '../common/page-decode.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { pageText } from '../parser/charset.ts';
import { decodePageContent } from '../common/page-content.ts';

export type ReadValue = { ok: true; value: unknown; page?: PageRecord } | { ok: false; reason: string };

/** True for a value in the framed pages form. */
export function isFramedPage(value: Buffer): boolean {
  return value.length >= PAGE_MAGIC.length && value.subarray(0, PAGE_MAGIC.length).equals(PAGE_MAGIC);
}

/** A page as one JSON object: header fields, `bodyBytes`, and `body` as text with the `charset` used. */
export function pageJson(page: PageRecord): Record<string, unknown> {
  const { body, ...fields } = page;
  if (body === undefined) return fields;
  const text = pageText(page);
  return { ...fields, bodyBytes: body.length, ...(text !== undefined ? { charset: text.charset, body: text.text } : {}) };
}

/** Reads one value of `logical` (a topic's base name); pages in either form, JSON otherwise. */
export function readValue(logical: string, value: Buffer): ReadValue {
  if (logical === 'pages' || isFramedPage(value)) {
    const decoded = safeDecodePageRecord(value);
    if (!decoded.ok) return { ok: false, reason: decoded.reason };
    // Shown as the parser reads it: a body stored compressed is decoded first.
    const page = decodePageContent(decoded.page);
    return { ok: true, value: pageJson(page), page };
  }
  try {
    return { ok: true, value: JSON.parse(value.toString('utf8')) as unknown };
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
}
