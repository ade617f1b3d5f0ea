// Coordinators followed when they move (services/runtime/kafka/coordinator-moves.cjs): kafkajs's own
// OffsetManager and ConsumerGroup, over stand-in brokers and a stand-in cluster with meguri's
// coordinator cache, when the group's coordinator moves from broker 1 to broker 2.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { followsCoordinators, hasCoordinatorMoves, installCoordinatorMoves, isCoordinatorFailure } from '../../services/runtime/kafka/coordinator-moves.cjs';
import { installCoordinatorCache } from '../../services/runtime/kafka/coordinator-cache.cjs';
import '../../services/runtime/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const kafkajsSrc = path.join(path.dirname(require.resolve('kafkajs/package.json')), 'src');
const offsetManagerPath = path.join(kafkajsSrc, 'consumer', 'offsetManager', 'index.js');

interface KafkaError extends Error {
  readonly type?: string;
}
const { createErrorFromCode } = require(path.join(kafkajsSrc, 'protocol', 'error.js')) as { createErrorFromCode(code: number): KafkaError };
const { KafkaJSConnectionError } = require(path.join(kafkajsSrc, 'errors.js')) as { KafkaJSConnectionError: new (message: string) => KafkaError };
const createRetry = require(path.join(kafkajsSrc, 'retry', 'index.js')) as (options: object) => <T>(fn: () => Promise<T>) => Promise<T>;

const GROUP_LOAD_IN_PROGRESS = 14;
const GROUP_COORDINATOR_NOT_AVAILABLE = 15;
const NOT_COORDINATOR_FOR_GROUP = 16;

interface Commit {
  readonly groupId: string;
  readonly topics: readonly { topic: string; partitions: readonly { partition: number; offset: string }[] }[];
}
interface OffsetManager {
  coordinator: FakeBroker;
  resolveOffset(args: { topic: string; partition: number; offset: string }): void;
  commitOffsets(): Promise<void>;
}
type OffsetManagerClass = new (options: Record<string, unknown>) => OffsetManager;
interface ConsumerGroup {
  coordinator: FakeBroker | null;
  memberId: string | null;
  generationId: number | null;
  heartbeat(args: { interval: number }): Promise<void>;
  leave(): Promise<void>;
}
type ConsumerGroupClass = new (options: Record<string, unknown>) => ConsumerGroup;

const logger = { debug() {}, info() {}, warn() {}, error() {}, namespace: () => logger };
const emitter = { emit() {} };

/** A broker that answers coordinator requests, or fails them with `refusal` while it is set. */
class FakeBroker {
  refusal: (() => Error) | undefined;
  readonly commits: Commit[] = [];
  readonly heartbeats: string[] = [];
  readonly leaves: string[] = [];
  readonly ends: string[] = [];

  constructor(readonly nodeId: number) {}

  isConnected(): boolean {
    return true;
  }

  private answer(): void {
    if (this.refusal) throw this.refusal();
  }

  async offsetCommit(request: Commit): Promise<void> {
    this.answer();
    this.commits.push(request);
  }

  async heartbeat({ groupId }: { groupId: string }): Promise<void> {
    this.answer();
    this.heartbeats.push(groupId);
  }

  async leaveGroup({ groupId }: { groupId: string }): Promise<void> {
    this.answer();
    this.leaves.push(groupId);
  }

  async endTxn({ transactionalId }: { transactionalId: string }): Promise<void> {
    this.answer();
    this.ends.push(transactionalId);
  }

  async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    return { producerId: 7000, producerEpoch: 0 };
  }

  async addOffsetsToTxn({ groupId }: { groupId: string }): Promise<void> {
    this.offsetsAdded.push(groupId);
  }

  async txnOffsetCommit(request: Commit): Promise<void> {
    this.answer();
    this.commits.push(request);
  }

  readonly offsetsAdded: string[] = [];
}
installCoordinatorMoves({ Broker: FakeBroker });

/** Two brokers; `coordinator` is the node FindCoordinator names. The clock never moves: the cache always holds. */
function fakeCluster() {
  class FakeCluster {
    readonly brokers = new Map([
      [1, new FakeBroker(1)],
      [2, new FakeBroker(2)],
    ]);
    coordinator = 1;
    readonly retry = { initialRetryTime: 1, retries: 3, factor: 0, multiplier: 1, maxRetryTime: 5 };
    readonly lookups: string[] = [];
    refreshes = 0;
    private readonly offsets = {};

    async findGroupCoordinator({ groupId, coordinatorType = 0 }: { groupId: string; coordinatorType?: number }): Promise<FakeBroker> {
      this.lookups.push(`${coordinatorType}:${groupId}`);
      return this.findBroker({ nodeId: this.coordinator });
    }

    async findBroker({ nodeId }: { nodeId: number }): Promise<FakeBroker> {
      const broker = this.brokers.get(nodeId);
      if (!broker) throw new Error(`broker ${nodeId} not found`);
      return broker;
    }

    async refreshMetadata(): Promise<void> {
      this.refreshes++;
    }

    async refreshMetadataIfNecessary(): Promise<void> {}

    committedOffsets(): object {
      return this.offsets;
    }

    broker(nodeId: number): FakeBroker {
      return this.brokers.get(nodeId)!;
    }
  }
  installCoordinatorCache(FakeCluster, () => 0);
  return new FakeCluster();
}

async function offsetManager(OffsetManagerClass: OffsetManagerClass, cluster: ReturnType<typeof fakeCluster>): Promise<OffsetManager> {
  return new OffsetManagerClass({
    cluster,
    coordinator: await cluster.findGroupCoordinator({ groupId: 'g' }),
    memberAssignment: { t: [0] },
    autoCommit: true,
    autoCommitInterval: null,
    autoCommitThreshold: null,
    topicConfigurations: {},
    instrumentationEmitter: emitter,
    groupId: 'g',
    generationId: 3,
    memberId: 'm',
  });
}

/** kafkajs's OffsetManager, patched by meguri (or as it ships, with `own`). */
function offsetManagerClass(own = false): OffsetManagerClass {
  if (!own) return require(offsetManagerPath) as OffsetManagerClass;
  const saved = require.cache[offsetManagerPath];
  delete require.cache[offsetManagerPath];
  try {
    return require(offsetManagerPath) as OffsetManagerClass;
  } finally {
    if (saved) require.cache[offsetManagerPath] = saved;
  }
}

interface EosManager {
  initProducerId(): Promise<void>;
  beginTransaction(): void;
  sendOffsets(args: { consumerGroupId: string; topics: Commit['topics'] }): Promise<void>;
}
type EosManagerFactory = (options: Record<string, unknown>) => EosManager;
const eosManagerPath = path.join(kafkajsSrc, 'producer', 'eosManager', 'index.js');

/** kafkajs's eosManager factory, as meguri installs it (or as it ships, with `own`). */
function eosManagerFactory(own: boolean): EosManagerFactory {
  if (!own) return require(eosManagerPath) as EosManagerFactory;
  const saved = require.cache[eosManagerPath];
  delete require.cache[eosManagerPath];
  try {
    return require(eosManagerPath) as EosManagerFactory;
  } finally {
    if (saved) require.cache[eosManagerPath] = saved;
  }
}

/** Retries as kafkajs's consumer.commitOffsets does. */
const retry = createRetry({ initialRetryTime: 1, retries: 3, factor: 0, multiplier: 1, maxRetryTime: 5 });

describe('kafkajs coordinator moves', () => {
  it('commits offsets on the new coordinator after the old one answers NOT_COORDINATOR', async () => {
    const cluster = fakeCluster();
    const manager = await offsetManager(offsetManagerClass(), cluster);
    assert.equal(manager.coordinator.nodeId, 1);
    // A rolling restart moves the group to broker 2.
    cluster.coordinator = 2;
    cluster.broker(1).refusal = () => createErrorFromCode(NOT_COORDINATOR_FOR_GROUP);
    manager.resolveOffset({ topic: 't', partition: 0, offset: '41' });

    let attempts = 0;
    await retry(async () => {
      attempts++;
      await manager.commitOffsets();
    });
    assert.equal(attempts, 2, 'the second attempt goes to the new coordinator');
    assert.deepEqual(cluster.broker(2).commits, [{ groupId: 'g', memberId: 'm', groupGenerationId: 3, topics: [{ topic: 't', partitions: [{ partition: '0', offset: '42' }] }] }]);
    assert.equal(manager.coordinator.nodeId, 2);
    assert.deepEqual(cluster.lookups, ['0:g', '0:g']);

    // Stays there: the next commit asks nobody.
    manager.resolveOffset({ topic: 't', partition: 0, offset: '50' });
    await manager.commitOffsets();
    assert.equal(cluster.broker(2).commits.length, 2);
    assert.equal(cluster.lookups.length, 2);
  });

  it('kafkajs 2.2.4 own offset manager keeps committing to the old coordinator (the defect)', async () => {
    const cluster = fakeCluster();
    const manager = await offsetManager(offsetManagerClass(true), cluster);
    cluster.coordinator = 2;
    cluster.broker(1).refusal = () => createErrorFromCode(NOT_COORDINATOR_FOR_GROUP);
    manager.resolveOffset({ topic: 't', partition: 0, offset: '41' });
    await assert.rejects(
      retry(() => manager.commitOffsets()),
      (e: Error) => /not the correct coordinator/.test(e.message),
    );
    assert.equal(cluster.broker(2).commits.length, 0);
  });

  it('looks up again past the coordinator cache after COORDINATOR_NOT_AVAILABLE, a load in progress and connection errors', async () => {
    for (const refusal of [
      () => createErrorFromCode(GROUP_COORDINATOR_NOT_AVAILABLE),
      () => createErrorFromCode(GROUP_LOAD_IN_PROGRESS),
      () => new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'),
    ]) {
      const cluster = fakeCluster();
      const manager = await offsetManager(offsetManagerClass(), cluster);
      cluster.coordinator = 2;
      cluster.broker(1).refusal = refusal;
      manager.resolveOffset({ topic: 't', partition: 0, offset: '9' });
      await assert.rejects(manager.commitOffsets());
      // kafkajs refreshes no metadata after these, and the cached answer (broker 1) is still fresh.
      assert.equal(cluster.refreshes, 0);
      await manager.commitOffsets();
      assert.equal(cluster.broker(2).commits.length, 1, refusal().message);
    }
    assert.equal(isCoordinatorFailure(createErrorFromCode(22)), false, 'ILLEGAL_GENERATION is not about the coordinator');
  });

  it('keeps a coordinator that is found again after refusing (still loading), and asks once per refusal', async () => {
    const cluster = fakeCluster();
    const manager = await offsetManager(offsetManagerClass(), cluster);
    cluster.broker(1).refusal = () => createErrorFromCode(GROUP_LOAD_IN_PROGRESS);
    manager.resolveOffset({ topic: 't', partition: 0, offset: '1' });
    await assert.rejects(manager.commitOffsets());
    cluster.broker(1).refusal = undefined;
    await manager.commitOffsets();
    assert.equal(cluster.broker(1).commits.length, 1);
    assert.equal(cluster.lookups.length, 2);
    manager.resolveOffset({ topic: 't', partition: 0, offset: '2' });
    await manager.commitOffsets();
    assert.equal(cluster.lookups.length, 2);
  });

  it("moves the consumer group's heartbeats and LeaveGroup to the new coordinator", async () => {
    const ConsumerGroup = require(path.join(kafkajsSrc, 'consumer', 'consumerGroup.js')) as ConsumerGroupClass;
    const cluster = fakeCluster();
    const group = new ConsumerGroup({ cluster, groupId: 'g', topics: ['t'], topicConfigurations: {}, logger, instrumentationEmitter: emitter, assigners: [], retry: {} });
    group.coordinator = await cluster.findGroupCoordinator({ groupId: 'g' });
    group.memberId = 'm';
    group.generationId = 3;
    await group.heartbeat({ interval: 0 });
    cluster.coordinator = 2;
    cluster.broker(1).refusal = () => createErrorFromCode(GROUP_COORDINATOR_NOT_AVAILABLE);
    await assert.rejects(group.heartbeat({ interval: 0 }), /group coordinator is not available/);
    await group.heartbeat({ interval: 0 });
    assert.deepEqual([cluster.broker(1).heartbeats.length, cluster.broker(2).heartbeats.length], [1, 1]);
    assert.equal(group.coordinator?.nodeId, 2);
    await group.leave();
    assert.deepEqual(cluster.broker(2).leaves, ['g']);
  });

  it("makes the cache look a transactional id's coordinator up again after it refused a request", async () => {
    const cluster = fakeCluster();
    const key = { groupId: 'tx', coordinatorType: 1 };
    const old = await cluster.findGroupCoordinator(key);
    cluster.coordinator = 2;
    old.refusal = () => createErrorFromCode(NOT_COORDINATOR_FOR_GROUP);
    // Another key's refusal does not count.
    await assert.rejects(old.heartbeat({ groupId: 'tx' }));
    assert.equal((await cluster.findGroupCoordinator(key)).nodeId, 1);
    await assert.rejects(old.endTxn({ transactionalId: 'tx' }));
    assert.equal((await cluster.findGroupCoordinator(key)).nodeId, 2);
    assert.deepEqual(cluster.lookups, ['1:tx', '1:tx']);
  });

  it("retries a transaction's sendOffsets on the group's new coordinator after NOT_COORDINATOR", async () => {
    for (const own of [false, true]) {
      const cluster = fakeCluster();
      const eosManager = eosManagerFactory(own)({ logger, cluster, transactional: true, transactionalId: 'tx', transactionTimeout: 1000 });
      await eosManager.initProducerId();
      eosManager.beginTransaction();
      // The group's coordinator, asked once for this transaction's earlier steps, then moved.
      await cluster.findGroupCoordinator({ groupId: 'g', coordinatorType: 0 });
      cluster.coordinator = 2;
      cluster.broker(1).refusal = () => createErrorFromCode(NOT_COORDINATOR_FOR_GROUP);
      const offsets = { consumerGroupId: 'g', topics: [{ topic: 't', partitions: [{ partition: 0, offset: '5' }] }] };
      if (own) {
        // kafkajs 2.2.4 as it ships: the transaction fails at the first refusal.
        await assert.rejects(eosManager.sendOffsets(offsets), /not the correct coordinator/);
        continue;
      }
      await eosManager.sendOffsets(offsets);
      assert.equal(cluster.broker(2).commits.length, 1);
      assert.deepEqual(cluster.broker(2).commits[0]!.topics, offsets.topics);
    }
  });

  it('is installed in the kafkajs meguri loads, once', () => {
    const classes = {
      Broker: require(path.join(kafkajsSrc, 'broker', 'index.js')) as { prototype: Record<string, unknown> },
      OffsetManager: require(offsetManagerPath) as { prototype: { getCoordinator(): Promise<unknown> } },
      ConsumerGroup: require(path.join(kafkajsSrc, 'consumer', 'consumerGroup.js')) as {
        prototype: { heartbeat(args: { interval: number }): Promise<unknown>; leave(): Promise<unknown> };
      },
    };
    assert.equal(hasCoordinatorMoves(classes), true);
    assert.equal(followsCoordinators(require(eosManagerPath)), true);
    const heartbeat = classes.Broker.prototype.heartbeat;
    installCoordinatorMoves(classes);
    assert.equal(classes.Broker.prototype.heartbeat, heartbeat);
  });
});
