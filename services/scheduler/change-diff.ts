/**
 * What a `changed` record says changed (docs/topics.md, "Main text and diffs"): the scheduler keeps
 * 18-bit hashes of the first 64 main-text paragraphs of the version it last reported on `changes`
 * (UrlState.paragraphHashes, ≤ 192 characters, and paragraphCount), and compares the paragraphs a new version's outcome
 * carries with them (services/common/text-diff.ts). No text is kept: the added paragraphs the record
 * quotes come from the outcome, removed ones are named by position.
 */
import type { ChangeRecord, OutcomeLink } from '../../schemas/index.ts';
import { DIFF_PARAGRAPHS, HASH_CHARS, diffParagraphs, packParagraphHashes, unpackParagraphHashes } from '../common/text-diff.ts';
import type { UrlState } from './state.ts';

type Hashes = Pick<UrlState, 'paragraphHashes' | 'paragraphCount'>;

/** The stored hashes of the version an outcome carries: from its text, else its `textHashes` (none without either). */
function hashesOf(outcome: OutcomeLink): Hashes {
  const text = outcome.text;
  if (text === undefined || text.paragraphs.length === 0) {
    const h = outcome.textHashes;
    if (h === undefined || h.hashes === '') return {};
    return h.paragraphCount > h.hashes.length / HASH_CHARS ? { paragraphHashes: h.hashes, paragraphCount: h.paragraphCount } : { paragraphHashes: h.hashes };
  }
  const tp = packParagraphHashes(text.paragraphs);
  const total = text.paragraphCount ?? text.paragraphs.length;
  return total > Math.min(DIFF_PARAGRAPHS, text.paragraphs.length) ? { paragraphHashes: tp, paragraphCount: total } : { paragraphHashes: tp };
}

/**
 * The `diff` field of a change record, and `next`'s hashes updated to the version it reports:
 * `new` and `changed` store the outcome's; `gone` drops them. A `changed` record gets a diff only
 * when the previous version's hashes are known (kept since this was built) and the outcome carries text.
 */
export function textChange(outcome: OutcomeLink, previous: UrlState | undefined, next: UrlState, kind: ChangeRecord['kind']): Pick<ChangeRecord, 'diff'> {
  delete next.paragraphHashes;
  delete next.paragraphCount;
  if (kind === 'gone') return {};
  Object.assign(next, hashesOf(outcome));
  const text = outcome.text;
  if (kind !== 'changed' || previous?.paragraphHashes === undefined || text === undefined || next.paragraphHashes === undefined) return {};
  const diff = diffParagraphs({
    previous: unpackParagraphHashes(previous.paragraphHashes),
    ...(previous.paragraphCount !== undefined ? { previousTotal: previous.paragraphCount } : {}),
    paragraphs: text.paragraphs,
    ...(text.paragraphCount !== undefined ? { total: text.paragraphCount } : {}),
  });
  return { diff };
}

/**
 * The hashes a fetched known page keeps: those it had, or, for a page without any yet (known
 * before this was built, or its text not carried then), those of this version, so its next
 * `changed` record has something to be compared with. A new page gets its own with its `new` record.
 */
export function keptHashes(u: UrlState | undefined, outcome: OutcomeLink, revisit: boolean): Hashes {
  if (u?.paragraphHashes !== undefined) return u.paragraphCount !== undefined ? { paragraphHashes: u.paragraphHashes, paragraphCount: u.paragraphCount } : { paragraphHashes: u.paragraphHashes };
  if (!revisit || u?.lastFetchAt === undefined || outcome.result !== 'ok') return {};
  return hashesOf(outcome);
}
