/**
 * The scheduler's ordering strategies on the TestDriver (no transport, no sleeps): breadth-first,
 * back-link count, and the in-partition PageRank variants, whose passed-on score travels through
 * the links topic back into the scheduler (the driver feeds it back as the topic would).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSchedulerDriver, seed, link as discovered } from '../support/scheduler-driver.ts';
import type { SchedulerDriver } from '../support/scheduler-driver.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import type { LinksRecord } from '../../schemas/index.ts';

const link = (url: string, source: string, contribution: number): LinksRecord => discovered(url, source, { contribution });

function orderingDriver(ordering: SchedulerOptionsInput['ordering']): Promise<SchedulerDriver> {
  return openSchedulerDriver({ ordering, revisitSweepMs: 1000, minIntervalMs: 0, requestTimeoutMs: 365 * 86_400_000, politeness: { kFactor: 0, suspendEnabled: false } });
}

/** Score records the scheduler passed on through the links topic. */
function passedOn(h: SchedulerDriver): { url: string; source: string; contribution: number }[] {
  return h.events('links').filter((r) => r.propagated === true) as unknown as { url: string; source: string; contribution: number }[];
}

describe('scheduler on the test driver: ordering strategies', () => {
  /** Fetches the home page of o.test, then finds three links on it (plus `extra` links elsewhere) and returns the fetch order of the three. */
  async function orderOf(ordering: 'bf' | 'blc' | 'ipr-dl1', extra: LinksRecord[]): Promise<string[]> {
    const h = await orderingDriver(ordering);
    await h.send(seed('http://o.test/'));
    await h.answer(h.next()); // robots.txt
    const home = await h.nextPage();
    // Held in flight while the links arrive, so the queue is complete before the next dispatch.
    for (const l of [link('http://o.test/a/b/c.html', 'http://o.test/', 0.1), link('http://o.test/x.html', 'http://o.test/', 0.2), link('http://o.test/yy.html', 'http://o.test/', 0.3), ...extra]) await h.send(l);
    assert.equal(h.progress.totals().queued, 3);
    await h.answer(home);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const req = await h.nextPage();
      order.push(new URL(req.url).pathname);
      await h.answer(req);
    }
    h.assertNoRequest();
    await h.stop();
    return order;
  }

  it('bf takes discovery order, blc back-link counts with fewer slashes then shorter URLs first, ipr-dl1 the summed contributions', async () => {
    assert.deepEqual(await orderOf('bf', []), ['/a/b/c.html', '/x.html', '/yy.html']);
    assert.deepEqual(await orderOf('blc', []), ['/x.html', '/yy.html', '/a/b/c.html']);
    // A second fetched page linking to /a/b/c.html outweighs any tie-break.
    assert.deepEqual(await orderOf('blc', [link('http://o.test/a/b/c.html', 'http://o.test/other.html', 0.01)]), ['/a/b/c.html', '/x.html', '/yy.html']);
    assert.deepEqual(await orderOf('ipr-dl1', []), ['/yy.html', '/x.html', '/a/b/c.html']);
    assert.deepEqual(await orderOf('ipr-dl1', [link('http://o.test/a/b/c.html', 'http://o.test/other.html', 0.25)]), ['/a/b/c.html', '/yy.html', '/x.html']);
  });

  it('ipr-vr passes score on from fetched pages along their stored out-links, through the links topic, while the ratio holds', async () => {
    const h = await orderingDriver('ipr-vr');
    await h.send(seed('http://v.test/a'));
    await h.answer(h.next()); // robots.txt
    const a = await h.nextPage();
    // a links to b and c; b (fetched next) links to d.
    await h.send(link('http://v.test/b', 'http://v.test/a', 1));
    await h.send(link('http://v.test/c', 'http://v.test/a', 1));
    await h.answer(a, { outDegree: 2, outLinks: ['http://v.test/b', 'http://v.test/c'] });
    const b = await h.nextPage();
    assert.equal(b.url, 'http://v.test/b');
    await h.send(link('http://v.test/d', 'http://v.test/b', 1));
    await h.answer(b, { outDegree: 1, outLinks: ['http://v.test/d'] });
    const c = await h.nextPage();
    assert.equal(c.url, 'http://v.test/c'); // held in flight from here on
    assert.equal(passedOn(h).length, 0);
    // a (score 1 + 1 = 2) now receives 10 from a page found later: 10 ≥ 1.5 × 2, so it passes 10 on.
    await h.send(link('http://v.test/a', 'http://w.test/hub', 10));
    const records = passedOn(h);
    assert.equal(records.length, 3, 'passed on from a, then from b');
    assert.deepEqual(records.slice(0, 2).map((r) => [r.source, r.url, r.contribution]), [
      ['http://v.test/a', 'http://v.test/b', 5],
      ['http://v.test/a', 'http://v.test/c', 5],
    ]);
    // b (score 2) received 5 ≥ 1.5 × 2 and passes it to d; c is in flight and keeps nothing going.
    assert.deepEqual([records[2]!.source, records[2]!.url, records[2]!.contribution], ['http://v.test/b', 'http://v.test/d', 5]);
    // Keyed by the receiving host, like every link.
    assert.deepEqual(h.driver.allOutput('links').map((r) => r.key), ['v.test', 'v.test', 'v.test']);
    // A small amount does not travel: 1 < 1.5 × (2 + 10).
    await h.send(link('http://v.test/a', 'http://w.test/other', 1));
    await h.advance(1000);
    assert.equal(passedOn(h).length, 3);
    assert.equal(h.progress.totals().scorePassedOn, 2);
    await h.stop();
  });

  it('ipr-ar accumulates what a fetched page receives and passes it on once it reaches 29/30 of the score', async () => {
    const h = await orderingDriver('ipr-ar');
    await h.send(seed('http://r.test/a'));
    await h.answer(h.next()); // robots.txt
    const a = await h.nextPage();
    await h.send(link('http://r.test/b', 'http://r.test/a', 1));
    await h.answer(a, { outDegree: 1, outLinks: ['http://r.test/b'] });
    const b = await h.nextPage(); // held in flight
    assert.equal(b.url, 'http://r.test/b');
    // a's score 2 → 3 with 1 pending: 1 < 29/30 × 3, kept.
    await h.send(link('http://r.test/a', 'http://w.test/x', 1));
    await h.advance(1000);
    assert.equal(passedOn(h).length, 0);
    // 100 more: 101 pending ≥ 29/30 × 103, so all 101 go on to b.
    await h.send(link('http://r.test/a', 'http://w.test/y', 100));
    assert.deepEqual(passedOn(h).map((r) => [r.url, r.contribution]), [['http://r.test/b', 101]]);
    await h.stop();
  });
});
