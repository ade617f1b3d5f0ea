/**
 * Group membership on the real broker: a member that comes back keeps its partitions. Sticky
 * assignment (a dynamic member rejoining under a new member id gets what it held; the others keep
 * theirs), and static membership (a member restarted under the same instance id within the session
 * timeout gets its partitions back with no rebalance at all; a stop does not leave the group).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import type { GroupMember, TopicPartition } from '../../services/runtime/index.ts';
import { kafkaBrokers, uniquePrefix, waitFor } from '../support/transports.ts';

const PARTITIONS = 6;

/** A member that records the partitions it holds and every assignment change it sees. */
class Recorder {
  readonly held = new Set<number>();
  readonly events: string[] = [];
  member: GroupMember | undefined;
  constructor(
    readonly transport: KafkaTransport,
    readonly name: string,
  ) {}

  async join(groupId: string, topic: string, groupInstanceId?: string): Promise<void> {
    const parts = (tps: readonly TopicPartition[]): string => tps.map((tp) => tp.partition).join(',');
    this.member = await this.transport.join({
      groupId,
      topics: [topic],
      memberName: this.name,
      ...(groupInstanceId ? { groupInstanceId } : {}),
      onAssigned: async (tps) => {
        for (const tp of tps) this.held.add(tp.partition);
        this.events.push(`assigned ${parts(tps)}`);
      },
      onRevoked: async (tps) => {
        for (const tp of tps) this.held.delete(tp.partition);
        this.events.push(`revoked ${parts(tps)}`);
      },
      onLost: async (tps) => {
        for (const tp of tps) this.held.delete(tp.partition);
        this.events.push(`lost ${parts(tps)}`);
      },
      eachBatch: async () => {},
    });
  }

  /** Rebalances the member took part in (KafkaGroupMember counts its GROUP_JOIN events). */
  joins(): number {
    return (this.member as unknown as { joins: number }).joins;
  }

  sorted(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }
}

describe('group membership on kafka', { timeout: 240_000 }, () => {
  const transports: KafkaTransport[] = [];
  const transport = (): KafkaTransport => {
    const t = new KafkaTransport({ brokers: kafkaBrokers(), sessionTimeoutMs: 10_000 });
    transports.push(t);
    return t;
  };
  let topic = '';
  before(async () => {
    topic = `${uniquePrefix()}members`;
    const admin = transport();
    await admin.ensureTopics([{ name: topic, partitions: PARTITIONS }]);
  });
  after(async () => {
    await Promise.all(transports.map((t) => t.close().catch(() => undefined)));
  });

  it('a member that rejoins under a new member id gets back what it held; the other keeps its partitions', async () => {
    const group = `${topic}.sticky`;
    const a = new Recorder(transport(), 'a');
    const b = new Recorder(transport(), 'b');
    await a.join(group, topic);
    await b.join(group, topic);
    await waitFor('both members hold half', () => a.held.size === PARTITIONS / 2 && b.held.size === PARTITIONS / 2, 60_000);
    const aHeld = a.sorted();
    const bHeld = b.sorted();
    // Rejoins (what a task found migrated does): a new member id each time, every task lost and
    // reopened. Three, so that an assignment by member id order keeps them only by chance (1 in 8).
    for (let i = 1; i <= 3; i++) {
      a.member!.rejoin!('test: rejoin');
      await waitFor(`a rejoined (${i})`, () => a.events.filter((e) => e.startsWith('assigned')).length >= i + 1 && a.held.size === PARTITIONS / 2, 60_000);
      assert.deepEqual(a.sorted(), aHeld, `a got back what it held: ${a.events.join('; ')}`);
      assert.deepEqual(b.sorted(), bHeld, `b kept its partitions: ${b.events.join('; ')}`);
    }
    assert.ok(!b.events.some((e) => e.startsWith('revoked') || e.startsWith('lost')), `b gave nothing up: ${b.events.join('; ')}`);
    await Promise.all([a.member!.stop(), b.member!.stop()]);
  });

  it('a static member restarted within the session timeout gets its partitions back with no rebalance; a dynamic one leaves at once', async () => {
    const group = `${topic}.static`;
    const a = new Recorder(transport(), 'a');
    const b = new Recorder(transport(), 'b');
    await a.join(group, topic, 'pod-a');
    await b.join(group, topic, 'pod-b');
    await waitFor('both members hold half', () => a.held.size === PARTITIONS / 2 && b.held.size === PARTITIONS / 2, 60_000);
    const aHeld = a.sorted();
    const bEvents = b.events.length;
    const bJoins = b.joins();
    // The pod restarts: its process stops (no LeaveGroup for a static member) and a new one joins.
    await a.member!.stop();
    const restarted = new Recorder(transport(), 'a2');
    const t0 = Date.now();
    await restarted.join(group, topic, 'pod-a');
    await waitFor('the restarted member holds its partitions', () => restarted.held.size === PARTITIONS / 2, 30_000);
    assert.deepEqual(restarted.sorted(), aHeld, 'the same partitions as before the restart');
    assert.ok(Date.now() - t0 < 9_000, `back within the session timeout (${Date.now() - t0} ms)`);
    // No rebalance: b saw no change at all, and a while later still none.
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal(b.joins(), bJoins, `b took part in no rebalance: ${b.events.join('; ')}`);
    assert.deepEqual(b.events.slice(bEvents), [], `b's partitions never moved: ${b.events.join('; ')}`);
    await Promise.all([restarted.member!.stop(), b.member!.stop()]);

    // The same with dynamic members: a stop leaves the group and the other takes over at once.
    const dynGroup = `${topic}.dynamic`;
    const c = new Recorder(transport(), 'c');
    const d = new Recorder(transport(), 'd');
    await c.join(dynGroup, topic);
    await d.join(dynGroup, topic);
    await waitFor('both dynamic members hold half', () => c.held.size === PARTITIONS / 2 && d.held.size === PARTITIONS / 2, 60_000);
    const t1 = Date.now();
    const dJoins = d.joins();
    await c.member!.stop();
    await waitFor('d holds every partition', () => d.held.size === PARTITIONS, 30_000);
    assert.ok(Date.now() - t1 < 8_000, `a leave hands the partitions over before any session timeout (${Date.now() - t1} ms)`);
    assert.ok(d.joins() > dJoins, 'a dynamic member’s leave is a rebalance');
    await d.member!.stop();
  });
});
