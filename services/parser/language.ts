/**
 * The language of a page: detected from its main text with ELD (the Efficient Language Detector,
 * n-gram tables for 60 languages, pure JavaScript, `eld/small` database), falling back to what the
 * page declares (`<html lang>`, then the Content-Language header) when the text is too short or
 * the detector is not sure.
 *
 * Why ELD: on the project's multilingual sample (test/fixtures/lang/samples.json, 11 languages
 * including Japanese, Chinese and Korean, long and short texts) `npm run bench:language` measures
 * it against tinyld (and franc was tried the same way): ELD and tinyld both label every sample
 * correctly, franc mistakes Spanish and Portuguese for Galician; ELD is about 3× faster per text
 * than tinyld and 6-9× faster than franc. Its cost is memory (≈ 50 MB of n-gram tables per parser
 * worker, loaded once); docs/feeds.md has the figures.
 *
 * Only the first DETECT_CHARS characters of the main text are looked at: the language of a page
 * is settled long before that (the project's multilingual samples, 23–320 characters, are all
labelled right), and the detector's cost, which grows with the text, stays small on every page.
 *
 * Languages are ISO 639-1 codes ('ja', 'en'); declared tags are reduced to their primary subtag
 * ('ja-JP' → 'ja', 'zh-Hant-TW' → 'zh').
 *
 * The n-gram tables take about half a second to load, so they are loaded on demand: a parser
 * awaits loadLanguageDetector() before its first page (the parser service and its workers do);
 * until then detectText() answers undefined and pages fall back to their declared language.
 * Detection itself runs in language-detector.ts (ELD's answers, a third of its cost); when ELD's
 * table files cannot be read there, `eld.detect()` answers instead.
 */
import { openDetector } from './language-detector.ts';
import type { OpenDetector } from './language-detector.ts';
import { primaryTag } from './language-tags.ts';

export { parseLanguageList, primaryTag } from './language-tags.ts';

export type LanguageSource = 'text' | 'html' | 'header';

export interface LanguageGuess {
  /** ISO 639-1 (or the declared primary subtag), lower-case. */
  lang: string;
  source: LanguageSource;
}

export const DETECT_CHARS = 1500;
/** Text shorter than this (in weighted letters, see letterWeight) is not trusted to the detector. */
export const MIN_DETECT_LETTERS = 40;

// Scripts whose characters each carry a word's worth of signal (kana, CJK ideographs, Hangul).
const DENSE_SCRIPT = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const LETTER = /\p{L}/u;

/**
 * Letters in the text, where a kana, kanji or hangul character counts as three; counting stops
 * once `enough` is reached (callers only ask whether there are that many).
 */
export function letterWeight(text: string, enough = Infinity): number {
  let n = 0;
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    // ASCII answers without a regular expression: most text of most pages is ASCII.
    if (c < 128) n += (c >= 97 && c <= 122) || (c >= 65 && c <= 90) ? 1 : 0;
    else if (DENSE_SCRIPT.test(ch)) n += 3;
    else if (LETTER.test(ch)) n += 1;
    if (n >= enough) return n;
  }
  return n;
}

let detector: OpenDetector | undefined;
let loading: Promise<void> | undefined;

/** Loads the detector's tables (once); resolves when detection is available. */
export function loadLanguageDetector(): Promise<void> {
  loading ??= openDetector().then(
    (d) => {
      detector = d;
    },
    () => {
      // Without the tables, pages keep their declared language (html lang, Content-Language).
    },
  );
  return loading;
}

/** Which detector answers: ELD's tables through language-detector.ts, ELD's own detect(), or none yet. */
export function languageDetectorKind(): OpenDetector['kind'] | undefined {
  return detector?.kind;
}

/**
 * The detector's answer for this text, or undefined when the text is too short or the answer not
 * reliable. Exposed for benchmarks and tests; pages go through pageLanguage().
 */
export function detectText(text: string): string | undefined {
  const sample = text.length > DETECT_CHARS ? text.slice(0, DETECT_CHARS) : text;
  if (detector === undefined || letterWeight(sample, MIN_DETECT_LETTERS) < MIN_DETECT_LETTERS) return undefined;
  const r = detector.detect(sample);
  if (r.language === '' || !r.reliable) return undefined;
  return r.language;
}

/** The page's language: detected from its main text, else declared by the page, else by the server. */
export function pageLanguage(text: string, htmlLang: string | null | undefined, contentLanguage?: string): LanguageGuess | undefined {
  const detected = detectText(text);
  if (detected !== undefined) return { lang: detected, source: 'text' };
  const declared = primaryTag(htmlLang);
  if (declared !== undefined) return { lang: declared, source: 'html' };
  const header = primaryTag(contentLanguage);
  if (header !== undefined) return { lang: header, source: 'header' };
  return undefined;
}
