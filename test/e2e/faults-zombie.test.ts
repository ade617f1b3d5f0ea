/**
 * Fault campaign (docs/reliability.md): a zombie scheduler. One of two schedulers is stopped with
 * SIGSTOP past its session timeout while the other takes its partitions over, then resumed with
 * SIGCONT. Its late commits must be refused (fencing), it must rejoin and restore its state from the
 * changelogs, and the committed `frontier`, `changes` and `revisits` must hold no duplicate.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kafkaBrokers } from '../support/transports.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import { assertPromisesKept, describeFigures } from '../support/fault-assertions.ts';
import { faultTestSettings } from '../support/fault-test-settings.ts';

describe('fault campaign: a scheduler paused past its session timeout', { timeout: 600_000 }, () => {
  it('fences the zombie, which rejoins and restores; no duplicate in frontier, changes or revisits', async () => {
    const { figures, zombie } = await runScenario('zombie scheduler', { brokers: kafkaBrokers().join(',') }, faultTestSettings({ pauseMs: 25_000 }));
    assert.ok(zombie, 'the zombie scenario reports on the zombie');
    const about = `${JSON.stringify(zombie)} ${describeFigures(figures)}`;
    assert.ok(zombie.takenOver, `the other scheduler held every partition while the zombie was stopped: ${about}`);
    assert.ok(zombie.pausedMs >= 25_000, `stopped past the session timeout: ${about}`);
    assertPromisesKept(figures);
    assert.ok(zombie.refusals.length > 0, `the zombie's late commits were refused (fenced / stale generation in its log): ${about}`);
    assert.ok(zombie.aliveAtEnd, `the zombie keeps running: ${about}`);
    assert.ok(zombie.partitionsAtEnd > 0, `the zombie rejoined the group and owns partitions again: ${about}`);
    assert.ok(zombie.readyAtEnd, `the zombie restored its partitions (/readyz 200): ${about}`);
  });
});
