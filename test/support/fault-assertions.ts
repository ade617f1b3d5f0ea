/**
 * What every fault scenario must show (issue: "Prove it on a real broker"): the crawl completed,
 * nothing lost, no request issued twice by the scheduler, re-fetches only of requests that were in
 * flight in a killed fetcher, no `changes` record twice, nothing dead-lettered, no process crashed.
 */
import assert from 'node:assert/strict';
import type { ScenarioFigures } from './fault-figures.ts';

export function describeFigures(f: ScenarioFigures): string {
  const { logDir, refetched, duplicated, ...rest } = f;
  const twice = duplicated.slice(0, 10).map((d) => `${d.key} (${d.requests.join(', ')})`);
  const refetches = refetched.slice(0, 10).map((r) => `${r.key} at ${r.fetchedAtMs.map((t) => ((t - f.startedAtMs) / 1000).toFixed(1)).join(' & ')} s${r.inFlightAtAKill ? ' (in flight at a kill)' : ''}`);
  return `${JSON.stringify(rest)}${twice.length > 0 ? ` requested twice: ${twice.join('; ')}` : ''}${refetches.length > 0 ? ` re-fetched: ${refetches.join(', ')}` : ''} (service logs: ${logDir}, kept when a promise was broken or TEST_FAULT_LOGS is set)`;
}

export function assertPromisesKept(f: ScenarioFigures): void {
  const about = describeFigures(f);
  // The harness first: a web that stops answering makes fetches fail, and re-requests then follow.
  assert.ok(f.webStallMaxMs < 5_000, `the simulated web kept answering (worst stall ${f.webStallMaxMs} ms): ${about}`);
  assert.equal(f.unexpected, 0, `nothing outside the reachable, allowed pages was fetched: ${about}`);
  assert.equal(f.lost, 0, `every reachable, allowed page was fetched: ${about}`);
  assert.ok(f.completed, `the crawl completed: ${about}`);
  assert.equal(f.schedulerDuplicates, 0, `no URL was requested twice by the scheduler (committed frontier, plus aborted requests fetched): ${about}`);
  assert.ok(f.refetches <= f.inFlightAtKills, `re-fetches (${f.refetches}) bounded by the requests in flight at fetcher kills, their restarts and broker outages (${f.inFlightAtKills}): ${about}`);
  assert.equal(f.duplicateChanges, 0, `no \`changes\` record was committed twice: ${about}`);
  assert.equal(f.revisits, 0, `no page is due for a revisit within the crawl, so no \`revisits\` record: ${about}`);
  assert.equal(f.deadLetters, 0, `nothing in a healthy web is dead-lettered: ${about}`);
  assert.deepEqual(f.crashes, [], `no service exited on its own: ${about}`);
}
