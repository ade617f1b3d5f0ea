import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectText, letterWeight, loadLanguageDetector, pageLanguage, parseLanguageList, primaryTag } from '../../services/parser/language.ts';


before(() => loadLanguageDetector());
const here = path.dirname(fileURLToPath(import.meta.url));
const samples = JSON.parse(readFileSync(path.join(here, '..', 'fixtures', 'lang', 'samples.json'), 'utf8')) as { lang: string; text: string }[];

test('every sample text of the multilingual set is detected as its language', () => {
  const wrong = samples.filter((s) => pageLanguage(s.text, null)?.lang !== s.lang).map((s) => `${s.lang}: ${s.text.slice(0, 30)}`);
  assert.deepEqual(wrong, []);
  assert.ok(new Set(samples.map((s) => s.lang)).has('ja'));
});

test('the detected language wins over a wrong declaration; short text falls back to html lang, then Content-Language', () => {
  const ja = samples.find((s) => s.lang === 'ja')!.text;
  assert.deepEqual(pageLanguage(ja, 'en-US'), { lang: 'ja', source: 'text' });
  assert.deepEqual(pageLanguage('Menu', 'ja-JP'), { lang: 'ja', source: 'html' });
  assert.deepEqual(pageLanguage('Menu', null, 'de-DE, en'), { lang: 'de', source: 'header' });
  assert.deepEqual(pageLanguage('Menu', 'not a tag!', 'fr'), { lang: 'fr', source: 'header' });
  assert.equal(pageLanguage('Menu', null), undefined);
  assert.equal(pageLanguage('', ''), undefined);
});

test('letter weights count CJK characters thrice; too little text is not trusted to the detector', () => {
  assert.equal(letterWeight('abc 12!'), 3);
  assert.equal(letterWeight('日本語'), 9);
  assert.equal(detectText('ok'), undefined);
  assert.equal(detectText('東京の天気は晴れ、明日は雨の予報です。'), 'ja');
});

test('primary subtags and --languages lists', () => {
  assert.equal(primaryTag('ja-JP'), 'ja');
  assert.equal(primaryTag('zh-Hant-TW'), 'zh');
  assert.equal(primaryTag('EN'), 'en');
  assert.equal(primaryTag('en_GB'), 'en');
  assert.equal(primaryTag('x'), undefined);
  assert.equal(primaryTag(undefined), undefined);
  assert.deepEqual([...parseLanguageList('ja, en-US,ja')], ['ja', 'en']);
  assert.throws(() => parseLanguageList('ja,???'), /not a language code/);
  assert.throws(() => parseLanguageList(' , '), /empty/);
});
