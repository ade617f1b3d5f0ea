/**
 * A page's main text as paragraphs, and what changed between two versions of it, bounded at every
 * step (docs/topics.md, "Main text and diffs"). Pure.
 *
 *   paragraphs  the main text cut at block-level element boundaries (p, div, li, br, h1…), runs of
 *               whitespace collapsed to one space, empty ones dropped;
 *   outcome     carries them (boundText): each cut at PARAGRAPH_CHARS, whole ones while the total
 *               stays within TEXT_CHARS and TEXT_PARAGRAPHS, `truncated` with the page's totals
 *               when that is not all of them;
 *   state       the scheduler keeps an 18-bit hash per paragraph (3 base64url characters) of the
 *               first DIFF_PARAGRAPHS of the version last reported on `changes`: ≤ 192 bytes per URL;
 *   diff        a longest common subsequence of the two hash lists: paragraphs of the new version
 *               outside it are added, those of the old version removed; an added and a removed one
 *               with the same hash are one paragraph moved. The record quotes the first DIFF_SHOWN
 *               added paragraphs (≤ SHOWN_CHARS each) and the positions of the first
 *               REMOVED_POSITIONS removed ones (their text is not kept: 10^7 URLs' texts would be GBs).
 */

import { DIFF_PARAGRAPHS, DIFF_SHOWN, PARAGRAPH_CHARS, REMOVED_POSITIONS, SHOWN_CHARS, TEXT_CHARS, TEXT_PARAGRAPHS } from '../../schemas/text.ts';
import type { MainText, TextDiff } from '../../schemas/text.ts';

export { DIFF_PARAGRAPHS, DIFF_SHOWN, PARAGRAPH_CHARS, REMOVED_POSITIONS, SHOWN_CHARS, TEXT_CHARS, TEXT_PARAGRAPHS };
/** Characters of one paragraph hash as stored (base64url, 6 bits each: 18 bits). */
export const HASH_CHARS = 3;

const WS = /\s+/g;
/** A run of two whitespace characters, or one that is not a plain space: what collapsing would change. */
const UNCOLLAPSED = /\s\s|[^\S ]/;

/** Cuts `s` at `max` UTF-16 code units without splitting a surrogate pair. */
export function cutChars(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** The main text cut at `breaks` (ascending offsets of block boundaries), whitespace collapsed, empty ones dropped. */
export function splitParagraphs(text: string, breaks: readonly number[]): string[] {
  const out: string[] = [];
  let from = 0;
  const take = (to: number): void => {
    if (to <= from) return;
    // Trimmed first, then collapsed only where needed (the same string, as trim and \s take the same
    // characters): most paragraphs need no replace, which took as long as the whole extraction.
    let p = text.slice(from, to).trim();
    if (UNCOLLAPSED.test(p)) p = p.replace(WS, ' ');
    if (p !== '') out.push(p);
    from = to;
  };
  for (const at of breaks) take(Math.min(at, text.length));
  take(text.length);
  return out;
}

export type BoundedText = MainText;

/**
 * The paragraphs an outcome carries: a prefix of the page's, each cut at PARAGRAPH_CHARS, up to the
 * first that would take the total past `maxChars` or the count past `maxParagraphs` (a prefix, so
 * positions stay those of the page).
 */
export function boundText(paragraphs: readonly string[], maxChars = TEXT_CHARS, maxParagraphs = TEXT_PARAGRAPHS): BoundedText {
  const kept: string[] = [];
  let chars = 0;
  let cut = false;
  for (const p of paragraphs) {
    const q = cutChars(p, PARAGRAPH_CHARS);
    if (kept.length === maxParagraphs || chars + q.length > maxChars) break;
    if (q.length !== p.length) cut = true;
    kept.push(q);
    chars += q.length;
  }
  if (!cut && kept.length === paragraphs.length) return { paragraphs: kept };
  let total = 0;
  for (const p of paragraphs) total += p.length;
  return { paragraphs: kept, truncated: true, paragraphCount: paragraphs.length, chars: total };
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** 18-bit hash of a paragraph (FNV-1a over its UTF-16 code units, murmur3's finaliser) as 3 base64url characters. */
export function paragraphHash(p: string): string {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < p.length; i++) h = Math.imul(h ^ p.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return B64[(h >>> 12) & 63]! + B64[(h >>> 6) & 63]! + B64[h & 63]!;
}

/** Hashes of the first DIFF_PARAGRAPHS paragraphs, packed as the scheduler stores them. */
export function packParagraphHashes(paragraphs: readonly string[], window = DIFF_PARAGRAPHS): string {
  let s = '';
  for (let i = 0; i < paragraphs.length && i < window; i++) s += paragraphHash(paragraphs[i]!);
  return s;
}

export function unpackParagraphHashes(packed: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + HASH_CHARS <= packed.length; i += HASH_CHARS) out.push(packed.slice(i, i + HASH_CHARS));
  return out;
}

export type { TextDiff };

/** Pairs of indices (old, new) of a longest common subsequence of two short lists, in order. */
function lcsPairs(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  // len[i][j]: LCS length of a[i..] and b[j..], in one flat array
  const len = new Uint16Array((n + 1) * (m + 1));
  const at = (i: number, j: number): number => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) len[at(i, j)] = a[i] === b[j] ? len[at(i + 1, j + 1)]! + 1 : Math.max(len[at(i + 1, j)]!, len[at(i, j + 1)]!);
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (len[at(i + 1, j)]! >= len[at(i, j + 1)]!) i++;
    else j++;
  }
  return pairs;
}

export interface DiffInput {
  /** Stored hashes of the previous version (its first DIFF_PARAGRAPHS paragraphs). */
  previous: readonly string[];
  /** Paragraphs of the previous version in all, when more than `previous` holds. */
  previousTotal?: number;
  /** The new version's paragraphs as the outcome carried them. */
  paragraphs: readonly string[];
  /** Paragraphs of the new version in all, when the outcome carried fewer. */
  total?: number;
}

/** What changed between the previous version's hashes and the new paragraphs: see the module comment. */
export function diffParagraphs(input: DiffInput, window = DIFF_PARAGRAPHS): TextDiff {
  const a = input.previous.slice(0, window);
  const newParas = input.paragraphs.slice(0, window);
  const b = newParas.map(paragraphHash);
  const oldTotal = Math.max(input.previousTotal ?? 0, input.previous.length);
  const newTotal = Math.max(input.total ?? 0, input.paragraphs.length);
  const oldPartial = oldTotal > a.length;
  const newPartial = newTotal > b.length;
  const pairs = lcsPairs(a, b);
  const keptOld = new Uint8Array(a.length);
  const keptNew = new Uint8Array(b.length);
  for (const [i, j] of pairs) {
    keptOld[i] = 1;
    keptNew[j] = 1;
  }
  // Past the last common paragraph, a version compared only in part may go on beyond its window:
  // what the other version has there may just lie outside it, so it is neither added nor removed.
  if (pairs.length > 0) {
    const [lastOld, lastNew] = pairs[pairs.length - 1]!;
    if (newPartial) for (let i = lastOld + 1; i < a.length; i++) keptOld[i] = 2;
    if (oldPartial) for (let j = lastNew + 1; j < b.length; j++) keptNew[j] = 2;
  }
  // An added paragraph with the hash of a removed one is one paragraph that moved.
  const removedByHash = new Map<string, number[]>();
  for (let i = 0; i < a.length; i++) if (keptOld[i] === 0) (removedByHash.get(a[i]!) ?? removedByHash.set(a[i]!, []).get(a[i]!)!).push(i);
  let moved = 0;
  for (let j = 0; j < b.length; j++) {
    if (keptNew[j] !== 0) continue;
    const same = removedByHash.get(b[j]!);
    const i = same?.shift();
    if (i === undefined) continue;
    keptNew[j] = 3;
    keptOld[i] = 3;
    moved++;
  }
  const addedParagraphs: { at: number; text: string }[] = [];
  let added = 0;
  for (let j = 0; j < b.length; j++) {
    if (keptNew[j] !== 0) continue;
    added++;
    if (addedParagraphs.length < DIFF_SHOWN) addedParagraphs.push({ at: j, text: quote(newParas[j]!) });
  }
  const removedAt: number[] = [];
  let removed = 0;
  for (let i = 0; i < a.length; i++) {
    if (keptOld[i] !== 0) continue;
    removed++;
    if (removedAt.length < REMOVED_POSITIONS) removedAt.push(i);
  }
  const diff: TextDiff = { paragraphs: newTotal, previousParagraphs: oldTotal, added, removed, moved, addedParagraphs, removedAt };
  if (oldPartial || newPartial) diff.partial = true;
  return diff;
}

/** A paragraph as a record quotes it: at most SHOWN_CHARS characters, a cut one ending with '…'. */
export function quote(p: string): string {
  return p.length <= SHOWN_CHARS ? p : cutChars(p, SHOWN_CHARS - 1) + '…';
}
