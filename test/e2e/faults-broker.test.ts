/**
 * Fault campaign (docs/reliability.md): the broker itself stopped mid-crawl (SIGTERM to its PID),
 * down for 10 s, and started again on the same ports with the same data. The test runs its own broker
 * so the suite's shared broker never goes down under other tests. The schedulers hold prefilled
 * state. The crawl must complete with the figures of a crawl without faults. (How soon it is back to
 * its rate is a figure of `npm run bench:faults`: at test size a fault covers most of the crawl.)
 */
import { describe, it, before, after } from 'node:test';
import { LocalBroker } from '../support/local-broker.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import { assertPromisesKept } from '../support/fault-assertions.ts';
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
  });
});
