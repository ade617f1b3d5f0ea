/**
 * The fault campaign's counting rules (test/support/fault-figures.ts): what counts as lost, as a
 * duplicate request of the scheduler, as a re-fetch of an in-flight request, as a duplicate change.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crawlFigures } from '../support/fault-figures.ts';
import type { CrawlEvidence } from '../support/fault-figures.ts';

const base: CrawlEvidence = {
  expected: new Set(['h0/', 'h0/a', 'h1/']),
  fetches: [
    { key: 'h0/', wallMs: 1 },
    { key: 'h0/a', wallMs: 2 },
    { key: 'h1/', wallMs: 3 },
  ],
  frontier: [
    { partition: 0, offset: 0, requestId: 'r1', key: 'h0/' },
    { partition: 0, offset: 1, requestId: 'r2', key: 'h0/a' },
    { partition: 1, offset: 0, requestId: 'r3', key: 'h1/' },
  ],
  pages: [
    { requestId: 'r1', key: 'h0/' },
    { requestId: 'r2', key: 'h0/a' },
    { requestId: 'r3', key: 'h1/' },
  ],
  changes: [
    { key: 'h0/', kind: 'new', md5: 'a' },
    { key: 'h0/a', kind: 'new', md5: 'b' },
    { key: 'h1/', kind: 'new', md5: 'c' },
  ],
  revisits: 0,
  deadLetters: 0,
  fetcherKills: [],
};

describe('fault campaign figures', () => {
  it('counts a clean crawl as complete with nothing duplicated', () => {
    const f = crawlFigures(base);
    assert.deepEqual(
      { reachable: f.reachable, fetched: f.fetched, lost: f.lost, dup: f.schedulerDuplicates, re: f.refetches, changes: f.duplicateChanges, pages: f.duplicatePages },
      { reachable: 3, fetched: 3, lost: 0, dup: 0, re: 0, changes: 0, pages: 0 },
    );
  });

  it('counts reachable pages never requested as lost, and requests outside the set as unexpected', () => {
    const f = crawlFigures({ ...base, fetches: [{ key: 'h0/', wallMs: 1 }, { key: 'h9/x', wallMs: 2 }] });
    assert.equal(f.fetched, 1);
    assert.equal(f.lost, 2);
    assert.equal(f.unexpected, 1);
  });

  it('tells a second committed request (scheduler) from one request fetched twice (in-flight re-fetch)', () => {
    const twiceRequested = crawlFigures({
      ...base,
      frontier: [...base.frontier, { partition: 0, offset: 2, requestId: 'r4', key: 'h0/a' }],
      fetches: [...base.fetches, { key: 'h0/a', wallMs: 9 }],
    });
    assert.equal(twiceRequested.schedulerDuplicates, 1);
    assert.equal(twiceRequested.refetches, 0);
    const fetchedTwice = crawlFigures({ ...base, fetches: [...base.fetches, { key: 'h0/a', wallMs: 9 }] });
    assert.equal(fetchedTwice.schedulerDuplicates, 0);
    assert.equal(fetchedTwice.refetches, 1);
  });

  it('counts a fetched request that was never committed (an aborted transaction read) as a scheduler duplicate', () => {
    const f = crawlFigures({ ...base, pages: [...base.pages, { requestId: 'aborted', key: 'h1/' }], fetches: [...base.fetches, { key: 'h1/', wallMs: 5 }] });
    assert.equal(f.uncommittedRequestsFetched, 1);
    assert.equal(f.schedulerDuplicates, 1);
    assert.equal(f.refetches, 0);
    assert.equal(f.duplicatePages, 0);
  });

  it('bounds re-fetches by the requests fetched but not committed by the fetchers at a kill', () => {
    // Committed up to offset 1 on partition 0 (r2 uncommitted) and nothing on partition 1 (r3 uncommitted);
    // r3 was not fetched yet at the kill, so only r2 was in flight.
    const f = crawlFigures({ ...base, fetcherKills: [{ atWallMs: 2, committed: new Map([[0, 1]]) }] });
    assert.equal(f.inFlightAtKills, 1);
  });

  it('counts a second `new` for a URL and a repeated change as duplicate changes', () => {
    const f = crawlFigures({
      ...base,
      changes: [...base.changes, { key: 'h0/', kind: 'new', md5: 'other' }, { key: 'h1/', kind: 'changed', md5: 'd' }, { key: 'h1/', kind: 'changed', md5: 'd' }, { key: 'h1/', kind: 'changed', md5: 'e' }],
    });
    assert.equal(f.duplicateChanges, 2);
    assert.equal(f.urlsWithTwoNew, 1);
    assert.equal(f.changes, 7);
  });
});
