/**
 * `changed` records that say what changed (services/scheduler/change-diff.ts), on the scheduler's
 * test driver with outcomes made by the parser from real HTML: paragraphs gained, lost and
 * reordered; a boilerplate-only change (no record); a URL known before paragraph hashes were kept
 * (no diff, then one); the state a URL keeps for it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import { pageToRecords } from '../../services/parser/outcome.ts';
import { hammingDistance } from '../../services/common/fingerprint.ts';
import { changeRecord } from '../../schemas/index.ts';
import type { ChangeRecord, FrontierRecord, OutcomeLink } from '../../schemas/index.ts';
import type { UrlState } from '../../services/scheduler/state.ts';
import { fetchedPage } from '../support/pages.ts';
import { changeLines } from '../../services/cli/change-lines.ts';

const URL_A = 'http://r.test/a';
const DAY = 86_400_000;

/** A page with the given main-text paragraphs and boilerplate around them. */
function html(paragraphs: readonly string[], boilerplate = 'Menu'): string {
  return `<html><head><title>A</title></head><body><nav><a href="/">${boilerplate}</a></nav><main>${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}</main><footer>${boilerplate} footer</footer></body></html>`;
}

/** What the parser's outcome says about a page, as the fields a test answer overrides. */
function parsed(body: string): Partial<OutcomeLink> {
  const { outcome } = pageToRecords(fetchedPage(URL_A, body, 'text/html; charset=utf-8', 'revisit'));
  const { md5, fingerprint, text } = outcome;
  return { md5, fingerprint, ...(text ? { text } : {}) };
}

const V1 = [
  'The harbour opened at dawn and the first boats went out with the tide.',
  'Fishermen reported calm water along the northern coast all morning.',
  'By noon the market stalls were full of mackerel, squid and sea bream.',
  'The weather service expects rain to arrive late in the evening.',
];

async function driver(): Promise<{ h: SchedulerDriver; revisit: () => Promise<FrontierRecord> }> {
  const h = await openSchedulerDriver({ revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * DAY, politeness: { kFactor: 0, suspendEnabled: false } });
  return { h, revisit: () => h.advanceToPage(DAY) };
}

/** A made-up word of its own for each n (digits all look alike to the fingerprint). */
function word(n: number): string {
  const syllables = ['ka', 'mi', 'to', 're', 'su', 'no', 'ha', 'yu', 'ri', 'se'];
  let w = '';
  for (let k = n + 10; k > 0; k = Math.floor(k / 10)) w += syllables[k % 10]!;
  return w;
}

const changes = (h: SchedulerDriver): ChangeRecord[] => h.events('changes').map((c) => changeRecord.parse(c));

describe('changed records with a diff of the main text', () => {
  it('says which paragraphs were gained, lost and reordered; reports no boilerplate-only change', async () => {
    const { h, revisit } = await driver();
    await h.send(seed(URL_A));
    await h.answer(h.next()); // robots.txt
    await h.answer(await h.nextPage(), parsed(html(V1)));
    assert.deepEqual(changes(h).map((c) => [c.kind, c.diff]), [['new', undefined]]);
    const stored = (await h.driver.store<UrlState>('urls').get(URL_A))!;
    assert.equal(stored.paragraphHashes?.length, 4 * 3, 'three characters of state per paragraph');
    assert.equal(stored.paragraphCount, undefined);

    // Gains a paragraph in the middle.
    const added = 'A storm warning was issued for the southern islands in the afternoon.';
    const v2 = [V1[0]!, V1[1]!, added, V1[2]!, V1[3]!];
    await h.answer(await revisit(), parsed(html(v2)));
    let c = changes(h).at(-1)!;
    assert.equal(c.kind, 'changed');
    assert.deepEqual(c.diff, { paragraphs: 5, previousParagraphs: 4, added: 1, removed: 0, moved: 0, addedParagraphs: [{ at: 2, text: added }], removedAt: [] });
    // As `meguri tail changes --diff` prints it.
    assert.deepEqual(changeLines(c).slice(1), ['  paragraphs 4 → 5: +1 -0', `  + [2] ${added}`]);
    assert.match(changeLines(c)[0]!, /^\d{4}-\d\d-\d\dT[\d:.]+Z changed http:\/\/r\.test\/a$/);

    // Only the boilerplate changes: a new MD5, the same main text, no record.
    const boiler = parsed(html(v2, 'Menu 2026-03-01 12:00'));
    assert.notEqual(boiler.md5, parsed(html(v2)).md5);
    await h.answer(await revisit(), boiler);
    assert.equal(changes(h).length, 2, 'no changed record for a boilerplate-only change');
    assert.deepEqual(h.events('revisits').map((r) => r.result), ['changed', 'unchanged']);

    // Reordered: the same paragraphs, two of them swapped.
    const v3 = [v2[0]!, v2[3]!, v2[1]!, v2[2]!, v2[4]!];
    assert.ok(hammingDistance(parsed(html(v3)).fingerprint!, parsed(html(v2)).fingerprint!) > 3, 'the fingerprint sees the reorder');
    await h.answer(await revisit(), parsed(html(v3)));
    c = changes(h).at(-1)!;
    assert.equal(c.kind, 'changed');
    assert.deepEqual([c.diff?.added, c.diff?.removed, c.diff?.moved], [0, 0, 1]);

    // Loses two paragraphs (the first and the third of the previous version).
    const v4 = [v3[1]!, v3[3]!, v3[4]!];
    await h.answer(await revisit(), parsed(html(v4)));
    c = changes(h).at(-1)!;
    assert.deepEqual([c.diff?.added, c.diff?.removed, c.diff?.removedAt, c.diff?.paragraphs], [0, 2, [0, 2], 3]);
    assert.deepEqual(changeLines(c).slice(1), ['  paragraphs 5 → 3: +0 -2', '  - removed at 0, 2 (positions in the previous version)']);

    // Gone: the record has no diff and the URL keeps no hashes.
    await h.answer(await revisit(), { status: 404, result: 'gone', md5: undefined });
    assert.deepEqual(changes(h).map((x) => x.kind), ['new', 'changed', 'changed', 'changed', 'gone']);
    assert.equal(changes(h).at(-1)!.diff, undefined);
    assert.equal((await h.driver.store<UrlState>('urls').get(URL_A))!.paragraphHashes, undefined);
    await h.stop();
  });

  it('a URL known without paragraph hashes gets them on its next fetch, and a diff from then on', async () => {
    const { h, revisit } = await driver();
    await h.send(seed(URL_A));
    await h.answer(h.next());
    // As an outcome of a parser from before main text was carried.
    const { text: _none, ...old } = parsed(html(V1));
    await h.answer(await h.nextPage(), old);
    assert.equal((await h.driver.store<UrlState>('urls').get(URL_A))!.paragraphHashes, undefined);
    const v2 = [...V1, 'Harbour lights will be replaced next week, the port authority said.'];
    await h.answer(await revisit(), parsed(html(v2)));
    assert.equal(changes(h).at(-1)!.kind, 'changed');
    assert.equal(changes(h).at(-1)!.diff, undefined, 'nothing to compare with');
    const v3 = v2.slice(1);
    await h.answer(await revisit(), parsed(html(v3)));
    assert.deepEqual([changes(h).at(-1)!.diff?.removed, changes(h).at(-1)!.diff?.removedAt], [1, [0]]);
    await h.stop();
  });

  it('keeps at most 64 hashes of a long page, and says the diff is partial', async () => {
    const { h, revisit } = await driver();
    await h.send(seed(URL_A));
    await h.answer(h.next());
    const long = Array.from({ length: 90 }, (_, i) => `The ${word(i)} ${word(i + 101)} met the ${word(i + 202)} near the ${word(i + 303)}.`);
    await h.answer(await h.nextPage(), parsed(html(long)));
    const stored = (await h.driver.store<UrlState>('urls').get(URL_A))!;
    assert.equal(stored.paragraphHashes?.length, 192);
    assert.equal(stored.paragraphCount, 90);
    // Twenty paragraphs added at the top push the last twenty of the window out of it: not removed.
    const update = Array.from({ length: 20 }, (_, i) => `Update: the ${word(i + 500)} left the ${word(i + 600)}.`);
    await h.answer(await revisit(), parsed(html([...update, ...long])));
    const c = changes(h).at(-1)!;
    assert.deepEqual([c.kind, c.diff?.added, c.diff?.removed, c.diff?.partial, c.diff?.paragraphs, c.diff?.previousParagraphs], ['changed', 20, 0, true, 110, 90]);
    assert.deepEqual(c.diff?.addedParagraphs.map((x) => x.at), [0, 1, 2]);
    await h.stop();
  });
});
