import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { eld } from 'eld/small';
import { compactNgrams, createDetector, loadEldNgrams, loadEldTables, openDetector, withCompactNgrams } from '../../services/parser/language-detector.ts';
import { extractPage } from '../../services/parser/extract.ts';
import { detectText, languageDetectorKind, loadLanguageDetector } from '../../services/parser/language.ts';
import { SimWebModel } from '../../services/simweb/model.ts';
import { renderPage } from '../../services/simweb/render.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const samples = JSON.parse(readFileSync(path.join(here, '..', 'fixtures', 'lang', 'samples.json'), 'utf8')) as { lang: string; text: string }[];

/** Texts that exercise every rule: whole samples, slices cut inside words and multi-byte characters, mixed scripts, digits and punctuation, emoji and lone surrogates, words over 70 bytes, texts past 1,000 characters. */
function variedTexts(): string[] {
  const texts = samples.map((s) => s.text);
  for (const s of samples) {
    for (let k = 1; k <= 8; k++) texts.push(s.text.slice(k * 7, k * 7 + 25 * k), s.text.slice(k * 13));
    texts.push(s.text.toUpperCase(), s.text.repeat(12), s.text.replace(/ /g, ''), `${s.text} 2026-11-27 #42 ${s.text}`);
  }
  for (let i = 0; i + 1 < samples.length; i++) texts.push(`${samples[i]!.text} ${samples[i + 1]!.text}`);
  texts.push(
    '',
    '   ',
    'a',
    'one two',
    'the cat sat',
    'x'.repeat(200),
    `${'supercalifragilistic'.repeat(6)} words after a very long word`,
    'Emoji 😀 between words 🎉 and an ideograph 𠮷 outside the basic plane',
    `Lone surrogate at the end \ud83d`,
    `İstanbul'da ÇOK güzel bir gün, don't it’s rock\`n roll`,
    'Ελληνικά κείμενα και עברית וגם العربية معًا',
  );
  // Pages of the simulated web, as the parser sees them (their main text, first 1,500 characters).
  const model = new SimWebModel({ seed: 5, hosts: 20, pagesPerHost: 10 }, 8080, 0);
  for (let host = 0; host < 20; host++) {
    for (let page = 0; page < 10; page++) {
      if (model.pageKind(host, page) !== 'html') continue;
      const r = renderPage(model, { host, page, kind: 'html', path: model.pathOf(host, page), links: model.pageLinks(host, page), invalidLinks: false, state: model.pageState(host, page, 0) }, 20_000);
      texts.push(extractPage(r.body.toString('utf8'), model.urlOf(host, page)).text.slice(0, 1500));
    }
  }
  return texts;
}

/** ELD's scores in a fixed order, to compare exactly. */
function sorted(scores: Record<string, number>): [string, number][] {
  return Object.entries(scores).sort(([a], [b]) => a.localeCompare(b));
}

test('the compiled detector gives eld.detect()’s language, reliability and scores for every text', async () => {
  const detector = createDetector(await loadEldTables());
  const detect = (t: string) => detector.detect(t);
  const texts = variedTexts();
  const differ = texts.filter((t) => {
    const want = eld.detect(t);
    const got = detect(t);
    return got.language !== want.language || got.reliable !== (want.language !== '' && want.isReliable());
  });
  assert.deepEqual(differ.map((t) => t.slice(0, 60)), []);
  // the same n-grams and sums: every language's scaled score is ELD's, to the last bit
  for (const t of texts) assert.deepEqual(sorted(detector.scores(t)), sorted(eld.detect(t).getScores()), t.slice(0, 60));
  // the set is not trivial: many languages answered, reliable and not
  const answers = texts.map((t) => detect(t));
  assert.ok(new Set(answers.map((a) => a.language)).size >= 12);
  assert.ok(answers.filter((a) => a.reliable).length > 100);
  assert.ok(answers.filter((a) => a.language !== '' && !a.reliable).length > 0);
  assert.ok(answers.some((a) => a.language === ''));
});

test('answers do not depend on the cache of compiled n-grams, full or not', async () => {
  const tables = await loadEldTables();
  const cached = createDetector(tables).detect;
  const uncached = createDetector(tables, 0).detect;
  const small = createDetector(tables, 50).detect;
  for (const t of variedTexts()) {
    const want = cached(t);
    assert.deepEqual(uncached(t), want);
    assert.deepEqual(small(t), want);
    assert.deepEqual(cached(t), want);
  }
});

test('the parser detects through the compiled tables', async () => {
  await loadLanguageDetector();
  assert.equal(languageDetectorKind(), 'compiled');
  assert.equal(detectText(samples.find((s) => s.lang === 'ja')!.text), 'ja');
});

test('without readable tables the parser falls back to eld.detect(), with the same answers', async () => {
  const fallback = await openDetector(() => Promise.reject(new Error('no such file')));
  assert.equal(fallback.kind, 'eld');
  const compiled = await openDetector();
  assert.equal(compiled.kind, 'compiled');
  for (const t of variedTexts()) assert.deepEqual(fallback.detect(t), compiled.detect(t), t.slice(0, 60));
  // tables of another shape are refused, so the fallback answers rather than wrong scores
  const wrongShape = await openDetector(async () => {
    const tables = await loadEldTables();
    return { ...tables, languages: Array.from({ length: 200 }, (_, i) => `l${i}`) };
  });
  assert.equal(wrongShape.kind, 'eld');
});

test('over the compact n-gram table the build writes, the detector answers exactly as over ELD\'s module', async () => {
  const tables = await loadEldTables();
  const { data, eld: version } = await loadEldNgrams();
  // Through JSON, as the build writes it and a worker reads it.
  const compact = JSON.parse(JSON.stringify(compactNgrams(data, version))) as ReturnType<typeof compactNgrams>;
  assert.equal(compact.grams.length, Object.keys(data.ngrams).length);
  const fromModule = createDetector(tables);
  const fromCompact = createDetector(withCompactNgrams(tables, compact));
  for (const text of variedTexts()) {
    assert.deepEqual(fromCompact.detect(text), fromModule.detect(text), text.slice(0, 80));
    assert.deepEqual(fromCompact.scores(text), fromModule.scores(text), text.slice(0, 80));
  }
});

test('the tables take the compact file when it was made from the installed ELD, and ELD\'s module otherwise', async () => {
  const { data, eld: version } = await loadEldNgrams();
  const compact = compactNgrams(data, version);
  // A marked copy: the first n-gram scores far higher for language 0, which the scores then show.
  const gram = compact.grams[0]!;
  const marked = { ...compact, pairs: compact.pairs.map((v, i) => (i === 1 ? v + 1e6 : v)) };
  const dir = mkdtempSync(path.join(tmpdir(), 'meguri-eld-'));
  try {
    const file = path.join(dir, 'ngrams.json');
    const probe = (tables: Awaited<ReturnType<typeof loadEldTables>>): readonly number[] | undefined => tables.ngram(gram);
    writeFileSync(file, JSON.stringify(marked));
    assert.equal(probe(await loadEldTables(pathToFileURL(file)))![1], compact.pairs[1]! + 1e6, 'the compact file is read');
    writeFileSync(file, JSON.stringify({ ...marked, eld: '0.0.1' }));
    assert.equal(probe(await loadEldTables(pathToFileURL(file)))![1], compact.pairs[1], 'another ELD version: its module');
    assert.equal(probe(await loadEldTables(pathToFileURL(path.join(dir, 'missing.json'))))![1], compact.pairs[1], 'no file: its module');
    writeFileSync(file, JSON.stringify(marked).slice(0, 1000));
    assert.equal(probe(await loadEldTables(pathToFileURL(file)))![1], compact.pairs[1], 'a damaged file: its module');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
