/**
 * Fault campaign (docs/reliability.md): the broker itself stopped mid-crawl (SIGTERM to its PID),
 * down for 10 s, and started again on the same ports with the same data. The test runs its own broker
 * so the suite's shared broker never goes down under other tests. The schedulers hold prefilled
 * state. The crawl must complete with the figures of a crawl without faults, and come back to its
 * rate within a minute.
 */
import { describe, it, before, after } from 'node:test';
import { LocalBroker } from '../support/local-broker.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import assert from 'node:assert/strict';
import { assertPromisesKept, describeFigures } from '../support/fault-assertions.ts';
import { faultTestSettings } from '../support/fault-test-settings.ts';

describe('fault campaign: broker restart', { timeout: 600_000 }, () => {
  let broker: LocalBroker | undefined;
  before(async () => {
    broker = await LocalBroker.start();
  });
  after(() => broker?.destroy());

  it('completes the crawl with the same figures after the broker was down for 10 s', async () => {
    if (!broker) throw new Error('no broker');
    const { figures } = await runScenario('broker restart', broker, faultTestSettings({ brokerDownMs: 10_000, prefillUrlsPerPartition: 5_000 }));
    assertPromisesKept(figures);
    assert.ok(figures.recoveryS.every((s) => s !== null && s <= 60), `back to its rate within 60 s: ${describeFigures(figures)}`);
  });
});
