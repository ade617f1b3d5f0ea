/**
 * Boilerplate ticks of the simulated web's change model: a share of pages whose date line and promo
 * box change every period on top of their Poisson changes (bench:freshness's web).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeModel } from '../../services/simweb/index.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

test('a third of the pages tick every 30 minutes: new ETag versions, the main text unchanged', () => {
  const model = new ChangeModel(7, T0, { minIntervalMs: 2 * HOUR, maxIntervalMs: 1000 * HOUR, boilerplateOnlyShare: 0, boilerplateTickShare: 1 / 3 });
  const plain = new ChangeModel(7, T0, { minIntervalMs: 2 * HOUR, maxIntervalMs: 1000 * HOUR, boilerplateOnlyShare: 0 });
  let ticking = 0;
  const pages = 300;
  for (let page = 0; page < pages; page++) {
    const t = T0 + 10 * HOUR + 60_000;
    const a = model.stateAt(1, page, t);
    const b = plain.stateAt(1, page, t);
    assert.equal(a.contentVersion, b.contentVersion, 'ticks never touch the main text');
    const events = model.changes(1, page, T0, t);
    assert.deepEqual(events.map((e) => e.t), [...events.map((e) => e.t)].sort((x, y) => x - y));
    const content = events.filter((e) => e.kind === 'content').length;
    assert.equal(content, b.contentVersion, 'content changes are the Poisson ones');
    if (model.boilerplateTicks(1, page)) {
      ticking++;
      assert.equal(a.version, b.version + 20, '20 ticks in 10 hours');
      assert.equal(events.length - content, 20);
      assert.equal(model.versionAt(1, page, t), a.version);
      assert.ok(a.lastModified >= T0 + 10 * HOUR);
    } else {
      assert.equal(a.version, b.version);
      assert.equal(events.length, content);
    }
  }
  assert.ok(ticking > pages * 0.25 && ticking < pages * 0.42, `${ticking} of ${pages} pages tick`);
  // Ticks in (from, to] only.
  const tick = [...Array(pages).keys()].find((p) => model.boilerplateTicks(1, p))!;
  const ticks = model.changes(1, tick, T0 + 30 * 60_000, T0 + 90 * 60_000).filter((e) => e.kind === 'boilerplate');
  // No page is boilerplate-only here, so every boilerplate event is a tick.
  assert.deepEqual(ticks.map((e) => e.t - T0), [60 * 60_000, 90 * 60_000]);
});
