/**
 * Fault campaign (docs/reliability.md): the schedulers — the exactly-once, stateful service — killed
 * with SIGKILL one after the other, three times, during a multi-process crawl on the shared test
 * broker. Their state moves through the changelogs; nothing may be lost, requested twice or
 * reported twice in `changes`.
 */
import { describe, it } from 'node:test';
import { kafkaBrokers } from '../support/transports.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import { assertPromisesKept } from '../support/fault-assertions.ts';
import { faultTestSettings } from '../support/fault-test-settings.ts';

describe('fault campaign: kill -9 of the schedulers', { timeout: 600_000 }, () => {
  it('survives kill -9 of each scheduler in turn with exactly-once output', async () => {
    const { figures } = await runScenario('kill -9 schedulers', { brokers: kafkaBrokers().join(',') }, faultTestSettings());
    assertPromisesKept(figures);
  });
});
