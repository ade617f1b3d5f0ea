// Coordinator lookups kept for a moment (services/runtime/kafka/coordinator-cache.cjs).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { COORDINATOR_TTL_MS, hasCoordinatorCache, installCoordinatorCache } from '../../services/runtime/kafka/coordinator-cache.cjs';
import '../../services/runtime/kafka/kafkajs.ts';

interface FakeBroker {
  readonly nodeId: number;
}

/** A stand-in for kafkajs's Cluster: counts FindCoordinator requests, knows some brokers. */
function fakeClusterClass() {
  return class FakeCluster {
    lookups: string[] = [];
    refreshes = 0;
    coordinator = 1;
    brokers = new Set([1, 2]);
    unreachable = new Set<number>();

    async findGroupCoordinator({ groupId, coordinatorType = 0 }: { groupId: string; coordinatorType?: number }): Promise<FakeBroker> {
      this.lookups.push(`${coordinatorType}:${groupId}`);
      return this.findBroker({ nodeId: this.coordinator });
    }

    async refreshMetadata(): Promise<void> {
      this.refreshes++;
    }

    async findBroker({ nodeId }: { nodeId: number }): Promise<FakeBroker> {
      if (!this.brokers.has(nodeId)) throw Object.assign(new Error(`broker ${nodeId} not found`), { name: 'KafkaJSBrokerNotFound' });
      if (this.unreachable.has(nodeId)) throw Object.assign(new Error(`broker ${nodeId} refused`), { name: 'KafkaJSConnectionError' });
      return { nodeId };
    }
  };
}

describe('kafkajs coordinator cache', () => {
  it('asks once per key within the time, again after it', async () => {
    let clock = 0;
    const Cluster = fakeClusterClass();
    installCoordinatorCache(Cluster, () => clock);
    const cluster = new Cluster();
    for (let i = 0; i < 4; i++) assert.deepEqual(await cluster.findGroupCoordinator({ groupId: 'scope-a', coordinatorType: 1 }), { nodeId: 1 });
    await cluster.findGroupCoordinator({ groupId: 'group' });
    await cluster.findGroupCoordinator({ groupId: 'group', coordinatorType: 0 });
    // A transactional id and a group of the same name are different coordinators.
    await cluster.findGroupCoordinator({ groupId: 'scope-a' });
    assert.deepEqual(cluster.lookups, ['1:scope-a', '0:group', '0:scope-a']);
    clock += COORDINATOR_TTL_MS - 1;
    await cluster.findGroupCoordinator({ groupId: 'scope-a', coordinatorType: 1 });
    assert.equal(cluster.lookups.length, 3);
    // The coordinator moved: the next lookup after the time finds the new one.
    cluster.coordinator = 2;
    clock += 1;
    assert.deepEqual(await cluster.findGroupCoordinator({ groupId: 'scope-a', coordinatorType: 1 }), { nodeId: 2 });
    assert.equal(cluster.lookups.length, 4);
  });

  it('forgets every answer when the metadata is refreshed', async () => {
    const Cluster = fakeClusterClass();
    installCoordinatorCache(Cluster, () => 0);
    const cluster = new Cluster();
    await cluster.findGroupCoordinator({ groupId: 'g' });
    await cluster.refreshMetadata();
    assert.equal(cluster.refreshes, 1);
    cluster.coordinator = 2;
    assert.deepEqual(await cluster.findGroupCoordinator({ groupId: 'g' }), { nodeId: 2 });
    assert.equal(cluster.lookups.length, 2);
  });

  it('asks again when the remembered broker is gone or cannot be reached', async () => {
    const Cluster = fakeClusterClass();
    installCoordinatorCache(Cluster, () => 0);
    const cluster = new Cluster();
    await cluster.findGroupCoordinator({ groupId: 'g' });
    cluster.brokers.delete(1);
    cluster.coordinator = 2;
    assert.deepEqual(await cluster.findGroupCoordinator({ groupId: 'g' }), { nodeId: 2 });
    cluster.unreachable.add(2);
    cluster.brokers.add(1);
    cluster.coordinator = 1;
    assert.deepEqual(await cluster.findGroupCoordinator({ groupId: 'g' }), { nodeId: 1 });
    assert.equal(cluster.lookups.length, 3);
  });

  it('keeps nothing when the lookup fails', async () => {
    const Cluster = fakeClusterClass();
    installCoordinatorCache(Cluster, () => 0);
    const cluster = new Cluster();
    cluster.coordinator = 9;
    await assert.rejects(cluster.findGroupCoordinator({ groupId: 'g' }), /broker 9 not found/);
    cluster.coordinator = 1;
    assert.deepEqual(await cluster.findGroupCoordinator({ groupId: 'g' }), { nodeId: 1 });
    assert.equal(cluster.lookups.length, 2);
  });

  it('installs once, and is installed in the kafkajs meguri loads', () => {
    const Cluster = fakeClusterClass();
    installCoordinatorCache(Cluster);
    const installed = Cluster.prototype.findGroupCoordinator;
    installCoordinatorCache(Cluster);
    assert.equal(Cluster.prototype.findGroupCoordinator, installed);
    const require = createRequire(import.meta.url);
    const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
    const KafkajsCluster = require(path.join(kafkajsDir, 'src', 'cluster', 'index.js')) as Parameters<typeof hasCoordinatorCache>[0];
    assert.equal(hasCoordinatorCache(KafkajsCluster), true);
  });
});
