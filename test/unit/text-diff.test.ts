/**
 * The main text as paragraphs and the diff of two versions (services/common/text-diff.ts): the
 * parser's block boundaries, the bounds an outcome keeps to (a page too large for them, a topic
 * smaller than 1 MiB), and what the diff says when paragraphs are gained, lost and reordered.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractPage } from '../../services/parser/extract.ts';
import { pageToRecords } from '../../services/parser/outcome.ts';
import {
  boundText,
  cutChars,
  diffParagraphs,
  DIFF_PARAGRAPHS,
  packParagraphHashes,
  paragraphHash,
  PARAGRAPH_CHARS,
  quote,
  SHOWN_CHARS,
  splitParagraphs,
  TEXT_CHARS,
  unpackParagraphHashes,
} from '../../services/common/text-diff.ts';
import { changeRecord, outcomeLink } from '../../schemas/index.ts';
import type { OutcomeLink } from '../../schemas/index.ts';
import { fitLinksRecord, jsonBytes } from '../../topology/links-bounds.ts';
import { fetchedPage } from '../support/pages.ts';

const paragraphsOf = (html: string): string[] => {
  const ex = extractPage(html, 'http://t.test/');
  return splitParagraphs(ex.text, ex.breaks ?? []);
};

const hashesOf = (paragraphs: readonly string[]): string[] => unpackParagraphHashes(packParagraphHashes(paragraphs));

describe('main text as paragraphs', () => {
  it('cuts at block elements, not inline ones, and leaves boilerplate out', () => {
    const html = `<html><body><nav><a href="/x">Menu</a></nav><h1>Title  here</h1>
      <p>First <b>bold</b> para&amp;graph,
      over two lines.</p><div>Second<br>third</div><ul><li>one</li><li>two</li></ul>
      <footer>© footer</footer></body></html>`;
    assert.deepEqual(paragraphsOf(html), ['Title here', 'First bold para&graph, over two lines.', 'Second', 'third', 'one', 'two']);
  });

  it('gives the fallback text paragraphs too when the rules leave no main text', () => {
    assert.deepEqual(paragraphsOf('<html><body><nav><p>only</p><p>menus</p></nav></body></html>'), ['only', 'menus']);
  });

  it("a revisit's outcome carries them, a first fetch's their hashes (all of them carry text with mainText 'all'), within the schema", () => {
    const html = '<html><body><p>One.</p><p>Two.</p></body></html>';
    const { outcome } = pageToRecords(fetchedPage('http://t.test/a', html, 'text/html', 'revisit'));
    assert.deepEqual(outcome.text, { paragraphs: ['One.', 'Two.'] });
    assert.equal(outcome.textHashes, undefined);
    outcomeLink.parse(outcome);
    const first = pageToRecords(fetchedPage('http://t.test/a', html, 'text/html', 'new')).outcome;
    assert.equal(first.text, undefined);
    assert.deepEqual(first.textHashes, { hashes: packParagraphHashes(['One.', 'Two.']), paragraphCount: 2 });
    outcomeLink.parse(first);
    assert.deepEqual(pageToRecords(fetchedPage('http://t.test/a', html, 'text/html', 'new'), undefined, { mainText: 'all' }).outcome.text, { paragraphs: ['One.', 'Two.'] });
    // Not for a page that is not HTML, nor one without text.
    for (const reason of ['new', 'revisit'] as const) {
      const csv = pageToRecords(fetchedPage('http://t.test/b', 'a,b', 'text/csv', reason)).outcome;
      const empty = pageToRecords(fetchedPage('http://t.test/c', '<html><body></body></html>', 'text/html', reason)).outcome;
      assert.equal(csv.text ?? csv.textHashes ?? empty.text ?? empty.textHashes, undefined);
    }
  });

  it("a first fetch's hashes are those of the text a revisit carries, long paragraphs and long pages included", () => {
    const body = `<html><body>${Array.from({ length: 90 }, (_, i) => `<p>Paragraph ${i} ${'z'.repeat(i === 3 ? PARAGRAPH_CHARS + 100 : 40)}</p>`).join('')}</body></html>`;
    const first = pageToRecords(fetchedPage('http://t.test/l', body, 'text/html', 'new')).outcome;
    const again = pageToRecords(fetchedPage('http://t.test/l', body, 'text/html', 'revisit')).outcome;
    assert.equal(first.textHashes?.hashes, packParagraphHashes(again.text!.paragraphs));
    assert.equal(first.textHashes?.paragraphCount, 90);
  });
});

describe('bounds', () => {
  it('keeps a prefix of whole paragraphs of a page too large for them, with the totals', () => {
    const long = 'x'.repeat(PARAGRAPH_CHARS + 10);
    const paragraphs = [long, ...Array.from({ length: 40 }, (_, i) => `${i} ${'y'.repeat(3000)}`)];
    const t = boundText(paragraphs);
    assert.equal(t.truncated, true);
    assert.equal(t.paragraphCount, 41);
    assert.equal(t.chars, paragraphs.reduce((n, p) => n + p.length, 0));
    assert.equal(t.paragraphs[0], 'x'.repeat(PARAGRAPH_CHARS), 'a paragraph longer than the bound is cut');
    const total = t.paragraphs.reduce((n, p) => n + p.length, 0);
    assert.ok(total <= TEXT_CHARS && total + 3002 > TEXT_CHARS, `${total}: as many whole paragraphs as fit`);
    assert.deepEqual(t.paragraphs.slice(1), paragraphs.slice(1, t.paragraphs.length), 'a prefix: positions are the page’s');
    // A short page is carried whole, without totals.
    assert.deepEqual(boundText(['a', 'b']), { paragraphs: ['a', 'b'] });
    // Never half a surrogate pair.
    assert.equal(cutChars('ab😀', 3), 'ab');
  });

  it('bounds the outcome of a page whose main text is larger than the bound, and the links topic’s guard cuts it further', () => {
    const body = `<html><body>${Array.from({ length: 1200 }, (_, i) => `<p>Paragraph ${i} ${'ü\u0001'.repeat(60)}</p>`).join('')}</body></html>`;
    const { outcome } = pageToRecords(fetchedPage('http://t.test/big', body, 'text/html; charset=utf-8', 'revisit'));
    outcomeLink.parse(outcome);
    assert.equal(outcome.text?.truncated, true);
    assert.equal(outcome.text?.paragraphCount, 1200);
    assert.ok(jsonBytes(outcome) < 1024 * 1024, `${jsonBytes(outcome)} bytes: within the links topic's default max.message.bytes`);
    // A topic configured at 100 KB: later paragraphs are left out until it fits.
    const fit = fitLinksRecord(outcome, 100_000);
    assert.ok(fit !== undefined && fit.length === 1);
    const cut = fit[0] as OutcomeLink;
    assert.ok(jsonBytes(cut) <= 100_000);
    assert.ok(cut.text!.paragraphs.length > 0 && cut.text!.paragraphs.length < outcome.text!.paragraphs.length);
    assert.deepEqual(cut.text!.paragraphs, outcome.text!.paragraphs.slice(0, cut.text!.paragraphs.length));
    assert.equal(cut.text!.truncated, true);
    assert.equal(cut.text!.paragraphCount, 1200);
    outcomeLink.parse(cut);
  });
});

describe('diff of two versions', () => {
  const v1 = ['Intro.', 'Alpha paragraph.', 'Beta paragraph.', 'Gamma paragraph.', 'Outro.'];

  it('reports paragraphs gained, with their text and position', () => {
    const v2 = ['Intro.', 'Alpha paragraph.', 'New one.', 'Beta paragraph.', 'Gamma paragraph.', 'Outro.', 'Another new one.'];
    const d = diffParagraphs({ previous: hashesOf(v1), paragraphs: v2 });
    assert.deepEqual(d, {
      paragraphs: 7,
      previousParagraphs: 5,
      added: 2,
      removed: 0,
      moved: 0,
      addedParagraphs: [
        { at: 2, text: 'New one.' },
        { at: 6, text: 'Another new one.' },
      ],
      removedAt: [],
    });
  });

  it('reports paragraphs lost by their position in the previous version', () => {
    const d = diffParagraphs({ previous: hashesOf(v1), paragraphs: ['Intro.', 'Beta paragraph.', 'Outro.'] });
    assert.equal(d.added, 0);
    assert.equal(d.removed, 2);
    assert.deepEqual(d.removedAt, [1, 3]);
  });

  it('reports reordered paragraphs as moved, not as added and removed', () => {
    const d = diffParagraphs({ previous: hashesOf(v1), paragraphs: ['Intro.', 'Gamma paragraph.', 'Alpha paragraph.', 'Beta paragraph.', 'Outro.'] });
    assert.deepEqual([d.added, d.removed, d.moved], [0, 0, 1]);
    assert.deepEqual(d.addedParagraphs, []);
  });

  it('an edited paragraph is one removed and one added', () => {
    const d = diffParagraphs({ previous: hashesOf(v1), paragraphs: ['Intro.', 'Alpha paragraph, edited.', 'Beta paragraph.', 'Gamma paragraph.', 'Outro.'] });
    assert.deepEqual([d.added, d.removed, d.moved, d.removedAt], [1, 1, 0, [1]]);
    assert.deepEqual(d.addedParagraphs, [{ at: 1, text: 'Alpha paragraph, edited.' }]);
  });

  it('quotes at most three added paragraphs, each cut to the bound, and lists at most eight removed', () => {
    const many = Array.from({ length: 12 }, (_, i) => `new ${i} ${'z'.repeat(SHOWN_CHARS)}`);
    const d = diffParagraphs({ previous: hashesOf(Array.from({ length: 12 }, (_, i) => `old ${i}`)), paragraphs: many });
    assert.deepEqual([d.added, d.removed], [12, 12]);
    assert.equal(d.addedParagraphs.length, 3);
    assert.equal(d.removedAt.length, 8);
    for (const a of d.addedParagraphs) assert.ok(a.text.length <= SHOWN_CHARS && a.text.endsWith('…'));
    assert.equal(quote('short'), 'short');
    changeRecord.parse({ v: 1, url: 'http://t.test/', time: 1, kind: 'changed', diff: d });
  });

  it('compares the first 64 paragraphs of long versions, and does not count what lies past them', () => {
    const long = Array.from({ length: 100 }, (_, i) => `p${i}`);
    const stored = packParagraphHashes(long);
    assert.equal(stored.length, DIFF_PARAGRAPHS * 3, '192 characters of state at most');
    // One paragraph inserted near the top: p63 leaves the window, which is not a removal.
    const v2 = [...long.slice(0, 10), 'inserted', ...long.slice(10)];
    const d = diffParagraphs({ previous: unpackParagraphHashes(stored), previousTotal: 100, paragraphs: v2 });
    assert.deepEqual([d.added, d.removed, d.moved, d.partial], [1, 0, 0, true]);
    assert.deepEqual(d.addedParagraphs, [{ at: 10, text: 'inserted' }]);
    assert.deepEqual([d.paragraphs, d.previousParagraphs], [101, 100]);
  });

  it('hashes paragraphs into 3 base64url characters', () => {
    assert.match(paragraphHash('anything'), /^[A-Za-z0-9_-]{3}$/);
    assert.notEqual(paragraphHash('a'), paragraphHash('b'));
    assert.deepEqual(unpackParagraphHashes(packParagraphHashes(['a', 'b'])), [paragraphHash('a'), paragraphHash('b')]);
  });
});

describe('paragraph whitespace', () => {
  it('collapses every kind of whitespace as one replace-and-trim would, on random texts', () => {
    const pieces = ['a', 'bc', ' ', '  ', '\n', '\t', '\u00a0', '\u3000', '\u2028', 'x y', 'é', ' \n '];
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    for (let round = 0; round < 500; round++) {
      let text = '';
      const breaks: number[] = [];
      for (let i = rand(40); i >= 0; i--) {
        text += pieces[rand(pieces.length)];
        if (rand(5) === 0) breaks.push(text.length);
      }
      const expected: string[] = [];
      let from = 0;
      for (const to of [...breaks, text.length]) {
        const p = text.slice(from, to).replace(/\s+/g, ' ').trim();
        if (to > from && p !== '') expected.push(p);
        from = Math.max(from, to);
      }
      assert.deepEqual(splitParagraphs(text, breaks), expected, JSON.stringify({ text, breaks }));
    }
  });
});
