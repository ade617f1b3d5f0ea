/**
 * Fault campaign (docs/reliability.md): a scheduler pod deleted and recreated mid-crawl — SIGTERM,
 * then the same name (static member, MEGURI_STATIC_MEMBERSHIP as its StatefulSet sets it) started
 * again on the same data directory — on the shared test broker, with prefilled scheduler state. It
 * must get its partitions back without a rebalance and without restoring what its stores hold.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kafkaBrokers } from '../support/transports.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import { assertPromisesKept, describeFigures } from '../support/fault-assertions.ts';
import { faultTestSettings } from '../support/fault-test-settings.ts';

describe('fault campaign: a scheduler pod restart', { timeout: 600_000 }, () => {
  it('comes back as the same static member, restoring nothing its stores hold', async () => {
    const prefill = 5_000;
    const { figures } = await runScenario('scheduler pod restart', { brokers: kafkaBrokers().join(',') }, faultTestSettings({ prefillUrlsPerPartition: prefill }));
    assertPromisesKept(figures);
    assert.equal(figures.eventsAfterFault.rebalances, 0, `no member was told of a rebalance: ${describeFigures(figures)}`);
    assert.equal(figures.eventsAfterFault.generationsLost, 0, `no member lost its generation: ${describeFigures(figures)}`);
    // The restarted scheduler's stores were current but for the last second's writes.
    assert.ok(figures.eventsAfterFault.restoredRecords < prefill / 10, `the restart restored only what its stores lacked: ${describeFigures(figures)}`);
  });
});
