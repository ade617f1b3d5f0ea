import { z } from 'zod';

/** Every record carries its schema version so consumers can branch on it when the shape evolves. */
export const SCHEMA_VERSION = 1 as const;
export const version = z.literal(SCHEMA_VERSION).describe('Schema version of this record.');

export const httpUrl = z
  .string()
  .min(1)
  .max(8192)
  .refine((s) => /^https?:\/\//i.test(s), { message: 'must be an absolute http(s) URL' })
  .describe('Absolute http(s) URL, normalised.');

export const epochMs = z.number().int().nonnegative().describe('Milliseconds since the Unix epoch.');

export const validators = z
  .object({
    etag: z.string().max(1024).optional(),
    lastModified: z.string().max(256).optional().describe('Last-Modified header as received.'),
  })
  .describe('HTTP validators for a conditional GET.');

/** Where a record lives in a topic; lets subscribers fetch content from `pages` without a copy. */
export const recordPointer = z
  .object({
    topic: z.string().describe('Full topic name, the crawl\'s topic prefix included (e.g. `crawl.pages`): assign it as it is.'),
    partition: z.number().int().nonnegative(),
    offset: z.string().regex(/^\d+$/).describe('Offset as a decimal string (Kafka offsets are 64-bit): parse it as a 64-bit integer.'),
  })
  .describe('Where the `pages` record is: read it by assigning (topic, partition) at this offset, with isolation.level=read_committed.');

/**
 * What every hash of a page's content is computed over (changes.md5, revisits.previousHash and
 * newHash, links outcome md5), said once so each field can carry it.
 */
export const TEXT_MD5 =
  "MD5 (32 lower-case hex digits) of the page's text: the body decoded with its charset (BOM, then the Content-Type charset, then a <meta> or XML declaration in the first 1,024 bytes, else windows-1252 for HTML; Shift_JIS read as windows-31j and ISO-8859-1 as windows-1252, as browsers do), re-encoded as UTF-8 — so on a page not in UTF-8 it is not the MD5 of the body bytes. A body that is not text (result not-html) is not decoded: its MD5 is over the bytes as sent.";

/** The text fingerprint, as every topic carries it. */
export const TEXT_FINGERPRINT =
  "64-bit simhash of the page's main text, exactly 16 lower-case hex digits (leading zeros kept). Main text: every text node except those in script, style, noscript, template, svg, math, form controls, nav, header, footer, aside, iframe, object, hidden elements, ARIA navigation/banner/contentinfo/complementary roles, and elements whose class or id holds a boilerplate word (nav, menu, footer, header, sidebar, banner, ad(s), advert(isement), breadcrumb(s), cookie(s)); when that leaves nothing, the visible text. Two versions are the same content when their fingerprints differ in at most 3 bits (changeHammingThreshold).";

/** A page's title, as every topic carries it. */
export const PAGE_TITLE =
  'Text of the first <title> element (outside <svg>): entities decoded, runs of ASCII whitespace collapsed to one space, trimmed, cut at 1,024 characters. Absent when the page has no title or it is empty.';

/** Stable error codes; the fetcher and parser never invent free-text kinds. */
export const errorCode = z
  .string()
  .regex(/^MEGURI_ERR_[A-Z0-9_]+$/)
  .describe('Stable error code, e.g. MEGURI_ERR_TIMEOUT.');
