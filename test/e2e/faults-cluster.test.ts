/**
 * Fault campaign (docs/reliability.md) on a cluster of three brokers of the test's own (topics with
 * three copies, two in sync), with scheduler state prefilled so restores do real work: every broker
 * restarted in turn (controlled shutdown, back in sync before the next), and the broker leading most
 * `links` partitions killed with SIGKILL. On several brokers a send spans several leaders and a
 * group's coordinator moves: nothing may be lost, requested twice or reported twice in `changes`.
 * (How soon the crawl is back to its rate is a figure of `npm run bench:faults`: at test size a
 * fault covers most of the crawl, and the rest is the tail of a few hosts.)
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { LocalBroker } from '../support/local-broker.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import { assertPromisesKept, describeFigures } from '../support/fault-assertions.ts';
import { faultTestSettings } from '../support/fault-test-settings.ts';

describe('fault campaign: a cluster of three brokers', { timeout: 900_000 }, () => {
  let cluster: LocalBroker | undefined;
  before(async () => {
    cluster = await LocalBroker.start({ nodes: 3 });
  });
  after(() => cluster?.destroy());

  const settings = faultTestSettings({ replication: { factor: 3, minInsyncReplicas: 2 }, prefillUrlsPerPartition: 2_000 });

  it('completes exactly once through a rolling restart of every broker', async () => {
    if (!cluster) throw new Error('no cluster');
    const { figures } = await runScenario('rolling restart', cluster, { ...settings, rollingRounds: 1, brokerDownMs: 1_000 });
    assertPromisesKept(figures);
    assert.equal(figures.urlsWithTwoNew, 0, describeFigures(figures));
  });

  it('completes exactly once after the broker leading most links partitions is killed', async () => {
    if (!cluster) throw new Error('no cluster');
    const { figures } = await runScenario('kill -9 leader', cluster, { ...settings, brokerDownMs: 5_000 });
    assertPromisesKept(figures);
    assert.equal(figures.urlsWithTwoNew, 0, describeFigures(figures));
    assert.equal(figures.uncommittedRequestsFetched, 0, `no aborted request was read: ${describeFigures(figures)}`);
  });
});
