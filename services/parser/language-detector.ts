/**
 * ELD's detection (eld 2.1.0, the `eld/small` tables of 60 languages) computed with less work per
 * text. The answers are ELD's: the same cleaning of the text, the same byte 4-grams, the same
 * scores and the same reliability rule; test/unit/language-detector.test.ts checks them against
 * `eld.detect()` text by text.
 *
 * Why not call `eld.detect()`: in a crawl it cost about 90 µs per page in the parse worker, most of
 * it in two places. The n-gram table is an object of 81,000 keys whose values are small objects
 * keyed by language number, walked with `for … in`; and the text's n-grams are gathered as keys of
 * a fresh object. Here a text's n-grams go into a reused Set, and each n-gram's entry is turned
 * once into (language, score) pairs in one pool, found through a Map of the n-grams seen so far
 * (those of real text repeat: a few thousand cover most pages). The same texts cost a third.
 *
 * The tables are ELD's own, read from the files beside its `eld/small` entry (the package exports
 * no path to them); loadEldTables() checks their shape, and openDetector() falls back to
 * `eld.detect()` when they cannot be read or used.
 */
import { readFile } from 'node:fs/promises';

export interface EldTables {
  /** Language codes by ELD's language number. */
  languages: readonly string[];
  /**
   * An n-gram's entry (one character per UTF-8 byte, see byteChars): its (language number, score)
   * pairs one after the other, or undefined for an n-gram ELD does not know.
   */
  ngram(gram: string): readonly number[] | undefined;
  /** The character ELD writes for each byte value 0–255. */
  byteChars: readonly string[];
  /** ELD's separator pattern: runs of non-letters, each replaced by one space. */
  separators: RegExp;
  /** A correct detection's average score per language (the reliability threshold is ¾ of it). */
  averageScores: Readonly<Record<string, number>>;
}

export interface Detection {
  /** ISO 639-1 code, or '' when no n-gram of the text is known. */
  language: string;
  /** ELD's isReliable() with its default threshold. */
  reliable: boolean;
}

// ELD's constants: texts are cut at 1,000 characters; words are gathered until 350 bytes (at a
// space) or 380 bytes (anywhere); a word counts for at most 70 bytes; stored scores are offset by
// 53; the raw score per n-gram is scaled by x / (x + 25); reliable means at least ¾ of the average.
const MAX_CHARS = 1000;
const CUT_AT_SPACE = 350;
const CUT_ANYWHERE = 380;
const MAX_WORD_BYTES = 70;
const BASE_NGRAM_SCORE = 53;
const SCALE = 25;
const RELIABLE_SHARE = 0.75;

/** Distinct n-grams whose compiled entries are kept; past it, others are looked up each time. */
export const DEFAULT_CACHED_NGRAMS = 100_000;

// Languages per n-gram entry are fewer than this (ELD has 60).
const PAIRS_PER_ENTRY = 128;

export interface LanguageDetector {
  detect(text: string): Detection;
  /** ELD's getScores(): each language with a positive score, its score per n-gram scaled to 0–1. */
  scores(text: string): Record<string, number>;
}

/**
 * Compiled n-gram entries: (language, score) pairs appended to one pool; the Map keeps, per n-gram,
 * where its pairs start and how many there are (start × 128 + pairs; an unknown n-gram is 0). At
 * most `cachedNgrams` n-grams are kept; the pairs of others are read once and overwritten.
 */
class NgramPool {
  private readonly compiled = new Map<string, number>();
  private pool = new Int32Array(16 * 1024);
  private used = 0;

  constructor(
    private readonly ngram: EldTables['ngram'],
    private readonly cachedNgrams: number,
  ) {}

  /** Adds the scores of `gram` for each of its languages to `scores`. */
  addScores(gram: string, scores: Float64Array): void {
    const entry = this.entryOf(gram);
    const pool = this.pool;
    const start = 2 * Math.floor(entry / PAIRS_PER_ENTRY);
    const end = start + 2 * (entry % PAIRS_PER_ENTRY);
    for (let p = start; p < end; p += 2) scores[pool[p]!]! += pool[p + 1]!;
  }

  private entryOf(gram: string): number {
    const hit = this.compiled.get(gram);
    if (hit !== undefined) return hit;
    const pairs = this.ngram(gram);
    let entry = 0;
    if (pairs !== undefined) {
      const start = this.used;
      for (let p = 0; p < pairs.length; p += 2) {
        if (this.used + 2 > this.pool.length) {
          const grown = new Int32Array(this.pool.length * 2);
          grown.set(this.pool);
          this.pool = grown;
        }
        this.pool[this.used++] = pairs[p]!;
        this.pool[this.used++] = pairs[p + 1]! + BASE_NGRAM_SCORE;
      }
      entry = (start / 2) * PAIRS_PER_ENTRY + (this.used - start) / 2;
      // not kept: its pairs are read once from the end of the pool, then overwritten
      if (this.compiled.size >= this.cachedNgrams) this.used = start;
    }
    if (this.compiled.size < this.cachedNgrams) this.compiled.set(gram, entry);
    return entry;
  }
}

// A word's n-grams: 4 bytes with a stride of 3, the first marked by a leading space, and the
// word's last 4 bytes (all of them when shorter) with a trailing space.
function addWord(word: string, seen: Set<string>): void {
  const len = word.length > MAX_WORD_BYTES ? MAX_WORD_BYTES : word.length;
  let j = 0;
  for (; j + 4 < len; j += 3) seen.add((j === 0 ? ' ' : '') + word.substring(j, j + 4));
  seen.add((j === 0 ? ' ' : '') + word.substring(len !== 3 ? len - 4 : 0) + ' ');
}

/**
 * The distinct n-grams of `text` (already cut, cleaned and lower-cased) into `seen`: its words
 * written one character per UTF-8 byte (`dict`), until ELD's cut at a space or anywhere.
 */
function collectNgrams(text: string, dict: readonly string[], seen: Set<string>): void {
  // The current word: `word` holds what is already encoded, text[runStart, i) the ASCII run
  // after it, which is taken as a slice instead of character by character.
  let word = '';
  let runStart = 0;
  let bytes = 0;
  const n = text.length;
  let i = 0;
  for (; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c === 32) {
        word += text.slice(runStart, i);
        runStart = i + 1;
        if (word !== '') {
          addWord(word, seen);
          word = '';
        }
        if (bytes > CUT_AT_SPACE) break;
      }
      bytes++;
    } else {
      word += text.slice(runStart, i);
      if (c < 0x800) {
        word += dict[0xc0 | (c >> 6)]! + dict[0x80 | (c & 0x3f)]!;
        bytes += 2;
      } else if (c < 0xd800 || c >= 0xe000) {
        word += dict[0xe0 | (c >> 12)]! + dict[0x80 | ((c >> 6) & 0x3f)]! + dict[0x80 | (c & 0x3f)]!;
        bytes += 3;
      } else {
        // a surrogate pair (a lone high surrogate at the end reads the missing half as 0, as ELD does)
        i++;
        c = 0x10000 + (((c & 0x3ff) << 10) | (text.charCodeAt(i) & 0x3ff));
        word += dict[0xf0 | (c >> 18)]! + dict[0x80 | ((c >> 12) & 0x3f)]! + dict[0x80 | ((c >> 6) & 0x3f)]! + dict[0x80 | (c & 0x3f)]!;
        bytes += 4;
      }
      runStart = i + 1;
    }
    if (bytes > CUT_ANYWHERE) {
      i++;
      break;
    }
  }
  if (runStart < i) word += text.slice(runStart, Math.min(i, n));
  if (word !== '') addWord(word, seen);
}

/** A detector over `tables`; `cachedNgrams` bounds the Map of compiled entries. */
export function createDetector(tables: EldTables, cachedNgrams = DEFAULT_CACHED_NGRAMS): LanguageDetector {
  const { languages, ngram, byteChars: dict, separators, averageScores } = tables;
  const count = languages.length;
  if (count >= PAIRS_PER_ENTRY) throw new RangeError(`${count} languages: at most ${PAIRS_PER_ENTRY - 1}`);
  const scores = new Float64Array(count);
  const threshold = languages.map((l) => (averageScores[l] ?? 0) * RELIABLE_SHARE);
  const pool = new NgramPool(ngram, cachedNgrams);
  const seen = new Set<string>();

  /** Scores `input` into `scores`; returns its number of distinct n-grams. */
  function score(input: string): number {
    const text = input.substring(0, MAX_CHARS).replace(separators, ' ').trim().toLowerCase();
    seen.clear();
    collectNgrams(text, dict, seen);
    scores.fill(0);
    for (const gram of seen) pool.addScores(gram, scores);
    return seen.size;
  }

  function detect(input: string): Detection {
    const grams = score(input);
    // The language: the first with the highest score.
    let language = -1;
    let top = 0;
    for (let l = 0; l < count; l++) {
      if (scores[l]! > top) {
        top = scores[l]!;
        language = l;
      }
    }
    if (language < 0) return { language: '', reliable: false };
    return { language: languages[language]!, reliable: isReliable(language, grams) };
  }

  function scaled(raw: number, grams: number): number {
    const perGram = raw / grams;
    return perGram / (perGram + SCALE);
  }

  // ELD ranks the languages by score per n-gram, scaled to 0–1, and calls the answer reliable
  // unless the best scaled score is under the threshold of the detected language, or within 0.01 of
  // the second entry's *language number* (that is what ELD 2.1.0 compares; kept so that answers
  // stay identical).
  function isReliable(language: number, grams: number): boolean {
    if (grams < 3) return false;
    let best = -1;
    let bestScore = -1;
    let second = -1;
    let secondScore = -1;
    for (let l = 0; l < count; l++) {
      if (scores[l]! <= 0) continue;
      const s = scaled(scores[l]!, grams);
      if (s > bestScore) {
        second = best;
        secondScore = bestScore;
        best = l;
        bestScore = s;
      } else if (s > secondScore) {
        second = l;
        secondScore = s;
      }
    }
    const next = second >= 0 ? second : 0;
    return !(threshold[language]! > bestScore || 0.01 > Math.abs(bestScore - next));
  }

  return {
    detect,
    scores(input: string): Record<string, number> {
      const grams = score(input);
      const out: Record<string, number> = {};
      for (let l = 0; l < count; l++) if (scores[l]! > 0) out[languages[l]!] = scaled(scores[l]!, grams);
      return out;
    },
  };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/**
 * ELD's n-gram table as plain arrays: the n-grams, and their (language, score) pairs end to end.
 * Its JSON loads in about a tenth of the time of ELD's 1.6 MB module of 81,000 small objects (some
 * 260–600 ms of CPU in every parse worker); scripts/build.mjs writes it into dist/ beside the
 * compiled detector (COMPACT_NGRAMS_FILE), stamped with the ELD version it was made from.
 */
export interface CompactNgrams {
  readonly eld: string;
  /** Language codes by ELD's language number. */
  readonly languages: readonly string[];
  readonly grams: readonly string[];
  /** Where the pairs of grams[i] end in `pairs`; those of grams[0] start at 0. */
  readonly ends: readonly number[];
  readonly pairs: readonly number[];
}

export const COMPACT_NGRAMS_FILE = 'eld-small-ngrams.json';

/** ELD's n-gram module's data: language numbers and n-gram entries. */
export interface EldNgramsData {
  readonly languages: Readonly<Record<string, unknown>>;
  readonly ngrams: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** Language codes by number from ELD's numbering (0…n−1). */
function languageList(byNumber: Readonly<Record<string, unknown>>): string[] {
  const languages: string[] = [];
  for (let l = 0; typeof byNumber[l] === 'string'; l++) languages.push(byNumber[l] as string);
  if (languages.length !== Object.keys(byNumber).length) throw new Error('eld: language numbers are not 0…n−1');
  return languages;
}

/** Appends an n-gram's entry (language number → score) to `pairs` as (language, score) pairs. */
function appendPairs(byLanguage: Readonly<Record<string, number>>, pairs: number[]): number[] {
  for (const lang in byLanguage) pairs.push(Number(lang), byLanguage[lang]!);
  return pairs;
}

/** The compact form of ELD's n-gram data. */
export function compactNgrams(data: EldNgramsData, eld: string): CompactNgrams {
  const grams: string[] = [];
  const ends: number[] = [];
  const pairs: number[] = [];
  for (const gram in data.ngrams) {
    appendPairs(data.ngrams[gram]!, pairs);
    grams.push(gram);
    ends.push(pairs.length);
  }
  return { eld, languages: languageList(data.languages), grams, ends, pairs };
}

/** EldTables.ngram over the compact form. */
function compactLookup({ grams, ends, pairs }: CompactNgrams): EldTables['ngram'] {
  const index = new Map<string, number>();
  for (let i = 0; i < grams.length; i++) index.set(grams[i]!, i);
  return (gram) => {
    const i = index.get(gram);
    return i === undefined ? undefined : pairs.slice(i === 0 ? 0 : ends[i - 1], ends[i]);
  };
}

/** `tables` with their n-grams answered from the compact form (what a build's dist/ runs). */
export function withCompactNgrams(tables: EldTables, compact: CompactNgrams): EldTables {
  return { ...tables, languages: [...compact.languages], ngram: compactLookup(compact) };
}

/** EldTables.ngram over ELD's own objects. */
function objectLookup(ngrams: Readonly<Record<string, Readonly<Record<string, number>> | undefined>>): EldTables['ngram'] {
  return (gram) => {
    const byLanguage = ngrams[gram];
    return byLanguage === undefined ? undefined : appendPairs(byLanguage, []);
  };
}

function isCompactNgrams(x: unknown, eld: string): x is CompactNgrams {
  if (!isRecord(x) || x['eld'] !== eld) return false;
  const { languages, grams, ends, pairs } = x;
  return Array.isArray(languages) && Array.isArray(grams) && Array.isArray(ends) && Array.isArray(pairs) && grams.length === ends.length && ends[ends.length - 1] === pairs.length;
}

/** The installed ELD's version, from the package.json two levels above its `eld/small` entry. */
async function eldVersion(entry: string): Promise<string> {
  const pkg: unknown = JSON.parse(await readFile(new URL('../../package.json', entry), 'utf8'));
  if (!isRecord(pkg) || typeof pkg['version'] !== 'string') throw new Error('eld: no version in its package.json');
  return pkg['version'];
}

/**
 * The compact n-gram table written beside this module by the build, when it is there, readable and
 * made from the installed ELD; undefined otherwise (running from the sources, ELD changed since, or
 * a damaged file).
 */
async function readCompactNgrams(file: URL, eld: string): Promise<CompactNgrams | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined; // a damaged file: ELD's module serves as well
  }
  return isCompactNgrams(data, eld) ? data : undefined;
}

/** ELD's small n-gram data as its module has it (what compactNgrams() takes), and ELD's version. */
export async function loadEldNgrams(): Promise<{ data: EldNgramsData; eld: string }> {
  const entry = import.meta.resolve('eld/small');
  const m: unknown = await import(new URL('../ngrams/small.js', entry).href);
  return { data: ngramsDataOf(m), eld: await eldVersion(entry) };
}

function ngramsDataOf(module: unknown): EldNgramsData {
  const data = isRecord(module) ? module['ngramsData'] : undefined;
  if (!isRecord(data) || !isRecord(data['languages']) || !isRecord(data['ngrams'])) throw new Error('eld: unexpected n-gram data');
  return data as unknown as EldNgramsData;
}

/**
 * ELD's small tables, imported from the files beside the `eld/small` entry; the n-grams from the
 * build's compact copy (`compactFile`, beside this module in dist/) when there is one made from this
 * ELD version. Rejects when a file is missing or not of the expected shape (another ELD version).
 */
export async function loadEldTables(compactFile = new URL(`./${COMPACT_NGRAMS_FILE}`, import.meta.url)): Promise<EldTables> {
  const entry = import.meta.resolve('eld/small');
  const load = async (relative: string): Promise<Record<string, unknown>> => {
    const m: unknown = await import(new URL(relative, entry).href);
    if (!isRecord(m)) throw new Error(`eld: ${relative} is not a module`);
    return m;
  };
  const compact = await readCompactNgrams(compactFile, await eldVersion(entry));
  const [ngramModule, dictionary, patterns, averages] = await Promise.all([
    compact === undefined ? load('../ngrams/small.js') : undefined,
    load('../dictionary.js'),
    load('../regexPatterns.js'),
    load('../avgScore.js'),
  ]);
  const byteChars = dictionary['dictionary'];
  const separators = patterns['separators'];
  const averageScores = averages['avgScore'];
  if (!Array.isArray(byteChars) || byteChars.length !== 256 || !byteChars.every((c) => typeof c === 'string' && c.length === 1)) throw new Error('eld: unexpected byte dictionary');
  if (!(separators instanceof RegExp) || !separators.global) throw new Error('eld: unexpected separator pattern');
  if (!isRecord(averageScores)) throw new Error('eld: unexpected average scores');
  let languages: string[];
  let ngram: EldTables['ngram'];
  if (compact !== undefined) {
    languages = [...compact.languages];
    ngram = compactLookup(compact);
  } else {
    const data = ngramsDataOf(ngramModule);
    languages = languageList(data.languages);
    ngram = objectLookup(data.ngrams);
  }
  return {
    languages,
    ngram,
    byteChars: byteChars as string[],
    separators,
    averageScores: averageScores as Record<string, number>,
  };
}

export interface OpenDetector {
  /** 'compiled': createDetector() over ELD's tables; 'eld': ELD's own detect(). */
  kind: 'compiled' | 'eld';
  detect(text: string): Detection;
}

/**
 * The detector a parser uses: the compiled one over ELD's tables, or ELD's own `detect()` (the same
 * answers, slower) when the tables cannot be read. Rejects only when ELD cannot be loaded at all.
 */
export async function openDetector(loadTables: () => Promise<EldTables> = loadEldTables): Promise<OpenDetector> {
  let compiled: LanguageDetector;
  try {
    compiled = createDetector(await loadTables());
  } catch {
    const { eld } = await import('eld/small');
    return {
      kind: 'eld',
      detect: (text) => {
        const r = eld.detect(text);
        return { language: r.language, reliable: r.language !== '' && r.isReliable() };
      },
    };
  }
  return { kind: 'compiled', detect: (text) => compiled.detect(text) };
}
