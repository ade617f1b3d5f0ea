import { z } from 'zod';

/**
 * A page's main text as paragraphs, and the summary of a change to it (services/common/text-diff.ts
 * makes both; docs/topics.md, "Main text and diffs", says why they are bounded as they are).
 */

/** Characters of one paragraph an outcome carries at most (a longer one is cut). */
export const PARAGRAPH_CHARS = 4096;
/** Characters (UTF-16 code units) of all paragraphs an outcome carries at most. */
export const TEXT_CHARS = 65_536;
/** Paragraphs an outcome carries at most. */
export const TEXT_PARAGRAPHS = 2000;
/** Paragraphs of each version a diff compares (the scheduler keeps an 18-bit hash of each). */
export const DIFF_PARAGRAPHS = 64;
/** Added paragraphs a `changed` record quotes at most. */
export const DIFF_SHOWN = 3;
/** Characters of a quoted paragraph at most (a longer one is cut and ends with '…'). */
export const SHOWN_CHARS = 500;
/** Positions of removed paragraphs a `changed` record lists at most. */
export const REMOVED_POSITIONS = 8;

const count = z.number().int().nonnegative();

export const mainText = z
  .object({
    paragraphs: z
      .array(z.string().min(1).max(PARAGRAPH_CHARS))
      .max(TEXT_PARAGRAPHS)
      .describe(
        `The main text (as the fingerprint reads it, boilerplate left out) cut at block-level elements (p, div, li, br, h1…), whitespace runs collapsed to one space, empty ones dropped. A prefix of the page's paragraphs: each cut at ${PARAGRAPH_CHARS} characters, whole ones while they total at most ${TEXT_CHARS} characters (UTF-16 code units) and ${TEXT_PARAGRAPHS} paragraphs.`,
      ),
    truncated: z.boolean().optional().describe('`paragraphs` is not all of the main text (a paragraph was cut, or later ones left out).'),
    paragraphCount: count.optional().describe('With `truncated`: paragraphs of the whole main text (as the parser extracts it: its first 200,000 characters).'),
    chars: count.optional().describe('With `truncated`: characters of all of its paragraphs.'),
  })
  .describe("For an `ok` HTML page: its main text, so consumers need not decode the HTML.");
export type MainText = z.infer<typeof mainText>;

/** Which fetched pages' outcomes carry their main text (`--main-text`); the others carry `textHashes`. */
export const MAIN_TEXT_MODES = ['revisits', 'all'] as const;
export type MainTextMode = (typeof MAIN_TEXT_MODES)[number];

export const textHashes = z
  .object({
    hashes: z
      .string()
      .regex(/^[A-Za-z0-9_-]*$/)
      .max(DIFF_PARAGRAPHS * 3)
      .describe(`18-bit hashes (3 base64url characters each) of the first ${DIFF_PARAGRAPHS} paragraphs of the main text, as \`text\` would have carried them.`),
    paragraphCount: count.describe('Paragraphs of the whole main text.'),
  })
  .describe("For an `ok` HTML page whose outcome does not carry `text` (a first fetch, unless the parser runs with `--main-text all`): its paragraphs' hashes, so the page's next `changed` record can say what changed.");
export type TextHashes = z.infer<typeof textHashes>;

export const textDiff = z
  .object({
    paragraphs: count.describe("Paragraphs of the new version's main text."),
    previousParagraphs: count.describe('Paragraphs of the version last reported on `changes` (the one compared against).'),
    added: count.describe(`Paragraphs in the new version and not in the previous one (of the first ${DIFF_PARAGRAPHS} of each).`),
    removed: count.describe('Paragraphs of the previous version no longer there.'),
    moved: count.describe('Paragraphs in both versions, at another place relative to the others.'),
    addedParagraphs: z
      .array(z.object({ at: count.describe('Position in the new version (0-based).'), text: z.string().max(SHOWN_CHARS) }))
      .max(DIFF_SHOWN)
      .describe(`The first ${DIFF_SHOWN} added paragraphs, each cut at ${SHOWN_CHARS} characters (a cut one ends with '…'); the whole text is in the outcome's \`text\`.`),
    removedAt: z
      .array(count)
      .max(REMOVED_POSITIONS)
      .describe(`Positions (0-based) in the previous version of the first ${REMOVED_POSITIONS} removed paragraphs. Their text is not kept by the crawler: a consumer that kept the previous version's paragraphs finds them there.`),
    partial: z.boolean().optional().describe(`Only the first ${DIFF_PARAGRAPHS} paragraphs of each version were compared (a version had more, or its outcome carried a cut text).`),
  })
  .describe('For `changed`: what changed in the main text, paragraph by paragraph (18-bit hashes of each paragraph; a collision hides a change with odds of about 1 in 4,000 per paragraph). Absent when the previous version was reported before the crawler kept paragraph hashes.');
export type TextDiff = z.infer<typeof textDiff>;
