// meguri's replacement for kafkajs 2.2.4's producer send (services/runtime/kafka/send-messages.cjs),
// driven through kafkajs's own eosManager and retrier against stand-in brokers that keep a log per
// partition with the broker's idempotence rules (a batch's sequence numbers must follow the last
// ones; a batch sent again with the same ones is a duplicate, acknowledged and not written).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import createSendMessages from '../../services/runtime/kafka/send-messages.cjs';
import '../../services/runtime/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const kafkajsSrc = path.join(path.dirname(require.resolve('kafkajs/package.json')), 'src');
const sendMessagesPath = path.join(kafkajsSrc, 'producer', 'sendMessages.js');

type SendMessages = typeof createSendMessages;
interface KafkaError extends Error {
  readonly type?: string;
  readonly retriable?: boolean;
}
const createRetry = require(path.join(kafkajsSrc, 'retry', 'index.js')) as (options: object) => Parameters<SendMessages>[0]['retrier'];
const createEosManager = require(path.join(kafkajsSrc, 'producer', 'eosManager', 'index.js')) as (options: object) => EosManager;
const { createErrorFromCode } = require(path.join(kafkajsSrc, 'protocol', 'error.js')) as { createErrorFromCode(code: number): KafkaError };
const { KafkaJSRequestTimeoutError } = require(path.join(kafkajsSrc, 'errors.js')) as { KafkaJSRequestTimeoutError: new (message: string) => KafkaError };
const KafkajsCluster = require(path.join(kafkajsSrc, 'cluster', 'index.js')) as { prototype: { findLeaderForPartitions: unknown } };

const NOT_LEADER_FOR_PARTITION = 6;
const CONCURRENT_TRANSACTIONS = 51;
const INVALID_RECORD = 87;

interface EosManager {
  initProducerId(): Promise<void>;
  beginTransaction(): void;
  getSequence(topic: string, partition: number | string): number;
}

/** kafkajs's own send, as it ships: what the replacement must not do. */
function kafkajsSend(): SendMessages {
  const saved = require.cache[sendMessagesPath];
  delete require.cache[sendMessagesPath];
  try {
    return require(sendMessagesPath) as SendMessages;
  } finally {
    if (saved) require.cache[sendMessagesPath] = saved;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const logger = { debug() {}, info() {}, warn() {}, error() {}, namespace: () => logger };

interface Message {
  readonly partition: number;
  readonly value: string;
}
interface ProduceRequest {
  readonly producerId: number;
  readonly topicData: readonly { topic: string; partitions: readonly { partition: string; firstSequence: number; messages: readonly Message[] }[] }[];
}
/** How a broker treats its n-th produce request: written or not, answered after `delay`, or failed. */
interface Behaviour {
  readonly delay?: number;
  readonly fail?: KafkaError;
  readonly write?: boolean;
}

/** One partition's log on the broker side: records, and the producer's last sequence numbers. */
class PartitionLog {
  readonly values: string[] = [];
  readonly batches: { firstSequence: number; count: number; baseOffset: number }[] = [];

  append(firstSequence: number, messages: readonly Message[]): number {
    const duplicate = this.batches.find((b) => b.firstSequence === firstSequence && b.count === messages.length);
    if (duplicate) return duplicate.baseOffset;
    const last = this.batches.at(-1);
    const expected = last ? last.firstSequence + last.count : 0;
    if (firstSequence !== expected) throw createErrorFromCode(45); // OUT_OF_ORDER_SEQUENCE_NUMBER
    const baseOffset = this.values.length;
    this.values.push(...messages.map((m) => m.value));
    this.batches.push({ firstSequence, count: messages.length, baseOffset });
    return baseOffset;
  }
}

class FakeBroker {
  calls = 0;
  inFlight = 0;
  readonly requests: string[][] = [];

  constructor(
    readonly nodeId: number,
    private readonly world: World,
    private readonly behaviour: (call: number) => Behaviour = () => ({}),
  ) {}

  async produce({ topicData }: ProduceRequest): Promise<unknown> {
    const call = ++this.calls;
    this.inFlight++;
    this.world.events.push(`produce ${this.nodeId}`);
    this.requests.push(topicData.flatMap(({ topic, partitions }) => partitions.map((p) => `${topic}/${p.partition}`)));
    try {
      const { delay = 0, fail, write = false } = this.behaviour(call);
      let answer: unknown;
      if (!fail || write) {
        answer = {
          topics: topicData.map(({ topic, partitions }) => ({
            topicName: topic,
            partitions: partitions.map((p) => ({
              partition: Number(p.partition),
              errorCode: 0,
              baseOffset: String(this.world.log(topic, p.partition).append(p.firstSequence, p.messages)),
              logAppendTime: '-1',
              logStartOffset: '0',
            })),
          })),
        };
      }
      await sleep(delay);
      if (fail) throw fail;
      return answer;
    } finally {
      this.inFlight--;
    }
  }
}

/** The transaction coordinator: InitProducerId and AddPartitionsToTxn. */
class FakeCoordinator {
  readonly added: string[][] = [];
  failAdds = 0;

  constructor(private readonly world: World) {}

  async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    return { producerId: 7000, producerEpoch: 0 };
  }

  async addPartitionsToTxn({ topics }: { topics: { topic: string; partitions: string[] }[] }): Promise<void> {
    this.world.events.push('addPartitionsToTxn');
    this.added.push(topics.flatMap(({ topic, partitions }) => partitions.map((p) => `${topic}/${p}`)));
    await sleep(1);
    if (this.failAdds > 0) {
      this.failAdds--;
      throw createErrorFromCode(CONCURRENT_TRANSACTIONS);
    }
  }
}

/** A cluster of brokers with partition leaders that can move when metadata is refreshed. */
class World {
  readonly events: string[] = [];
  readonly logs = new Map<string, PartitionLog>();
  readonly brokers = new Map<number, FakeBroker>();
  readonly coordinator = new FakeCoordinator(this);
  /** topic -> partition -> leader node id */
  leaders: Record<string, Record<number, number>> = {};
  /** Leaders after the next metadata refresh. */
  nextLeaders: Record<string, Record<number, number>> | undefined;
  refreshes = 0;

  log(topic: string, partition: number | string): PartitionLog {
    const key = `${topic}/${partition}`;
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = new PartitionLog()));
    return log;
  }
}

/** kafkajs's Cluster, as far as a send and the eosManager use it, over `world`. */
function clusterOf(world: World) {
  return {
    retry: { initialRetryTime: 5, retries: 5, factor: 0, multiplier: 1, maxRetryTime: 20 },
    targetTopics: new Set<string>(),
    async addMultipleTargetTopics(topics: string[]) {
      for (const t of topics) this.targetTopics.add(t);
    },
    async refreshMetadataIfNecessary() {},
    async refreshMetadata() {
      world.refreshes++;
      if (world.nextLeaders) world.leaders = world.nextLeaders;
      world.nextLeaders = undefined;
    },
    findTopicPartitionMetadata(topic: string) {
      return Object.entries(world.leaders[topic] ?? {}).map(([partitionId, leader]) => ({ partitionId: Number(partitionId), leader }));
    },
    // kafkajs's own, over the metadata above.
    findLeaderForPartitions: KafkajsCluster.prototype.findLeaderForPartitions,
    async findBroker({ nodeId }: { nodeId: number | string }) {
      const broker = world.brokers.get(Number(nodeId));
      if (!broker) throw new Error(`no broker ${nodeId}`);
      return broker;
    },
    async findGroupCoordinator() {
      return world.coordinator;
    },
    async findControllerBroker() {
      return world.coordinator;
    },
    isConnected: () => true,
    async connect() {},
    removeBroker() {},
  };
}

/** A transactional send function over `world`, with kafkajs's eosManager in a transaction. */
async function transactionalSend(world: World, create: SendMessages) {
  const cluster = clusterOf(world);
  const eosManager = createEosManager({ logger, cluster, transactional: true, transactionalId: 'tx', transactionTimeout: 1000 });
  await eosManager.initProducerId();
  eosManager.beginTransaction();
  const retrier = createRetry(cluster.retry);
  const partitioner = ({ message }: { message: unknown }) => (message as Message).partition;
  const send = create({ logger, cluster, partitioner, eosManager, retrier });
  return { eosManager, send: (messages: Message[]) => send({ acks: -1, timeout: 1000, topicMessages: [{ topic: 't', messages }] }) };
}

/** Messages for partitions 0 (leader 1), 1 and 2 (leader 2). */
function messages(round: string): Message[] {
  return [0, 1, 2, 0, 1, 2, 0].map((partition, i) => ({ partition, value: `${round}-${partition}-${i}` }));
}

function threeBrokers(behaviour1?: (call: number) => Behaviour, behaviour2?: (call: number) => Behaviour): World {
  const world = new World();
  world.leaders = { t: { 0: 1, 1: 2, 2: 2 } };
  world.brokers.set(1, new FakeBroker(1, world, behaviour1));
  world.brokers.set(2, new FakeBroker(2, world, behaviour2));
  return world;
}

const valuesOf = (world: World, partition: number) => world.log('t', partition).values;
const expectedValues = (rounds: string[], partition: number) => rounds.flatMap((r) => messages(r).filter((m) => m.partition === partition).map((m) => m.value));

describe('kafkajs producer send', () => {
  it("sends nothing again while a request is in flight: a broker's retriable failure resends only its own partitions", async () => {
    // Broker 1 refuses its first request at once; broker 2 answers its first after 40 ms, well after
    // kafkajs's retry (5 ms) would have gone out.
    const world = threeBrokers(
      (call) => (call === 2 ? { fail: createErrorFromCode(NOT_LEADER_FOR_PARTITION) } : {}),
      (call) => (call === 2 ? { delay: 40 } : {}),
    );
    const { send, eosManager } = await transactionalSend(world, createSendMessages);
    await send(messages('a'));
    const metadata = await send(messages('b'));
    await send(messages('c'));

    const broker1 = world.brokers.get(1)!;
    const broker2 = world.brokers.get(2)!;
    assert.equal(broker2.calls, 3, 'broker 2 got each send once');
    assert.equal(broker1.calls, 4, 'broker 1 got the failed send twice');
    for (const partition of [0, 1, 2]) {
      assert.deepEqual(valuesOf(world, partition), expectedValues(['a', 'b', 'c'], partition), `partition ${partition}: every message once, in order`);
      const batches = world.log('t', partition).batches;
      batches.forEach((b, i) => i > 0 && assert.equal(b.firstSequence, batches[i - 1]!.firstSequence + batches[i - 1]!.count));
      assert.equal(eosManager.getSequence('t', partition), valuesOf(world, partition).length, `partition ${partition}: sequence in step with the log`);
    }
    assert.equal(world.refreshes, 1, 'metadata refreshed after NOT_LEADER_FOR_PARTITION');
    assert.deepEqual(
      metadata.map((m) => [m.topicName, m.partition]).sort(),
      [
        ['t', 0],
        ['t', 1],
        ['t', 2],
      ],
      'one answer per partition',
    );
  });

  it('kafkajs 2.2.4 own send writes the in-flight request twice in the same case (the defect)', async () => {
    const world = threeBrokers(
      (call) => (call === 2 ? { fail: createErrorFromCode(NOT_LEADER_FOR_PARTITION) } : {}),
      (call) => (call === 2 ? { delay: 40 } : {}),
    );
    const { send } = await transactionalSend(world, kafkajsSend());
    await send(messages('a'));
    await send(messages('b'));
    assert.equal(world.brokers.get(2)!.calls, 3);
    assert.equal(valuesOf(world, 1).length, expectedValues(['a', 'b', 'b'], 1).length, 'partition 1 holds the second send twice');
  });

  it('adds every partition of a send to the transaction in one request before any record goes out, and again only after it failed', async () => {
    const world = threeBrokers();
    world.coordinator.failAdds = 1;
    const { send } = await transactionalSend(world, createSendMessages);
    await send(messages('a'));
    assert.deepEqual(world.events, ['addPartitionsToTxn', 'addPartitionsToTxn', 'produce 1', 'produce 2']);
    assert.deepEqual(world.coordinator.added, [
      ['t/0', 't/1', 't/2'],
      ['t/0', 't/1', 't/2'],
    ]);
    // Partitions already in the transaction are not added again.
    await send(messages('b'));
    assert.equal(world.coordinator.added.length, 2);
    for (const partition of [0, 1, 2]) assert.deepEqual(valuesOf(world, partition), expectedValues(['a', 'b'], partition));

    // kafkajs's own: one AddPartitionsToTxn per broker, at once.
    const theirs = threeBrokers();
    const { send: theirSend } = await transactionalSend(theirs, kafkajsSend());
    await theirSend(messages('a'));
    assert.equal(theirs.coordinator.added.length, 2);
  });

  it("sends a failed broker's partitions to their new leader even when it already answered for others", async () => {
    const world = threeBrokers((call) => (call === 1 ? { fail: createErrorFromCode(NOT_LEADER_FOR_PARTITION), delay: 5 } : {}));
    // After the refresh, partition 0 is led by broker 2, which had answered for 1 and 2.
    world.nextLeaders = { t: { 0: 2, 1: 2, 2: 2 } };
    const { send } = await transactionalSend(world, createSendMessages);
    const metadata = await send(messages('a'));
    assert.deepEqual(world.brokers.get(2)!.requests, [['t/1', 't/2'], ['t/0']]);
    for (const partition of [0, 1, 2]) assert.deepEqual(valuesOf(world, partition), expectedValues(['a'], partition));
    assert.equal(metadata.length, 3);

    // kafkajs's own reports success without ever writing partition 0.
    const theirs = threeBrokers((call) => (call === 1 ? { fail: createErrorFromCode(NOT_LEADER_FOR_PARTITION), delay: 5 } : {}));
    theirs.nextLeaders = { t: { 0: 2, 1: 2, 2: 2 } };
    const { send: theirSend } = await transactionalSend(theirs, kafkajsSend());
    await theirSend(messages('a'));
    assert.deepEqual(valuesOf(theirs, 0), []);
  });

  it('sends a request whose answer was lost again with the same sequence numbers (the broker keeps one copy)', async () => {
    const world = threeBrokers(undefined, (call) => (call === 1 ? { fail: new KafkaJSRequestTimeoutError('Request Produce timed out'), write: true } : {}));
    const { send, eosManager } = await transactionalSend(world, createSendMessages);
    await send(messages('a'));
    await send(messages('b'));
    assert.equal(world.brokers.get(2)!.calls, 3);
    for (const partition of [0, 1, 2]) {
      assert.deepEqual(valuesOf(world, partition), expectedValues(['a', 'b'], partition));
      assert.equal(eosManager.getSequence('t', partition), valuesOf(world, partition).length);
    }
  });

  it('ends the send on a non-retriable error only once every request settled, keeping the sequence numbers of what was written', async () => {
    const world = threeBrokers(
      (call) => (call === 1 ? { fail: createErrorFromCode(INVALID_RECORD) } : {}),
      () => ({ delay: 30 }),
    );
    const { send, eosManager } = await transactionalSend(world, createSendMessages);
    await assert.rejects(send(messages('a')), (e: KafkaError) => e.type === 'INVALID_RECORD');
    assert.equal(world.brokers.get(2)!.inFlight, 0, 'no request in flight when the send fails');
    assert.equal(world.brokers.get(1)!.calls, 1, 'not retried');
    assert.equal(eosManager.getSequence('t', 0), 0, 'the refused partition gave its sequence numbers back');
    assert.equal(eosManager.getSequence('t', 1), valuesOf(world, 1).length);
  });

  it('is the send kafkajs loaded through meguri uses', () => {
    assert.equal(require(sendMessagesPath), createSendMessages);
  });
});
