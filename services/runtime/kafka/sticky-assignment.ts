/**
 * Which member of a group gets which task (a partition number, the same in every input topic), so
 * that a rebalance moves only the tasks that must move.
 *
 * kafkajs's round-robin assigner deals partitions out by sorted member id; a member that rejoins
 * gets a new id, so after a broker restart the deal reshuffled nearly every partition, and each
 * moved scheduler partition was restored from its changelog by a member that had never held it.
 * Here every member says, in its join metadata, the tasks it owns and the tasks whose stores it
 * holds on disk (warm); the leader keeps each member's owned tasks up to a balanced quota, and gives
 * each task left over to a member that holds it warm if one has room, else to the least loaded
 * (Kafka's sticky assignor and Kafka Streams' warm-up preference, in one pass, for eager rebalances).
 */
// kafkajs with the read_committed fix: never import 'kafkajs' itself for runtime values.
import { kafkajs } from './kafkajs.ts';
import type { PartitionAssigner } from 'kafkajs';

export interface MemberClaim {
  readonly memberId: string;
  /** Tasks the member runs now. */
  readonly owned: readonly number[];
  /** Tasks whose stores the member holds locally (a restore there is short). */
  readonly warm: readonly number[];
}

/**
 * Balanced and sticky: every member gets ⌊N/M⌋ or ⌈N/M⌉ tasks; a task stays with a member that owns
 * it whenever the balance allows; each task goes to exactly one member. Deterministic for the
 * same input (members and tasks are taken in sorted order).
 */
export function assignTasks(members: readonly MemberClaim[], tasks: readonly number[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  for (const m of sorted) out.set(m.memberId, []);
  const all = [...new Set(tasks)].sort((a, b) => a - b);
  if (sorted.length === 0 || all.length === 0) return out;
  const exists = new Set(all);
  const base = Math.floor(all.length / sorted.length);
  let extra = all.length % sorted.length;
  // The larger quotas go to the members that own the most, so fewer of their tasks have to move.
  const ownedCount = (m: MemberClaim): number => m.owned.filter((t) => exists.has(t)).length;
  const byOwned = [...sorted].sort((a, b) => ownedCount(b) - ownedCount(a));
  const quota = new Map<string, number>();
  for (const m of byOwned) quota.set(m.memberId, base + (extra-- > 0 ? 1 : 0));
  const taken = new Set<number>();
  // Pass 1: keep what each member owns, up to its quota (a task claimed twice goes to the first).
  for (const m of sorted) {
    const mine = out.get(m.memberId)!;
    for (const t of [...new Set(m.owned)].sort((a, b) => a - b)) {
      if (mine.length >= quota.get(m.memberId)! || !exists.has(t) || taken.has(t)) continue;
      mine.push(t);
      taken.add(t);
    }
  }
  // Pass 2: the rest to a member with room that holds the task warm, else the least loaded.
  for (const t of all) {
    if (taken.has(t)) continue;
    const room = sorted.filter((m) => out.get(m.memberId)!.length < quota.get(m.memberId)!);
    const warm = room.filter((m) => m.warm.includes(t));
    const pick = (warm.length > 0 ? warm : room).reduce((best, m) => (out.get(m.memberId)!.length < out.get(best.memberId)!.length ? m : best));
    out.get(pick.memberId)!.push(t);
    taken.add(t);
  }
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/** A member's claim as it travels in its join metadata (JSON; unknown or bad data claims nothing). */
export function encodeClaim(owned: readonly number[], warm: readonly number[]): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, owned: [...owned], warm: [...warm] }));
}

export function decodeClaim(memberId: string, userData: Buffer | null | undefined): MemberClaim {
  const none: MemberClaim = { memberId, owned: [], warm: [] };
  if (!userData || userData.length === 0) return none;
  try {
    const parsed = JSON.parse(userData.toString('utf8')) as { owned?: unknown; warm?: unknown };
    const ints = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => Number.isInteger(x) && x >= 0) : []);
    return { memberId, owned: ints(parsed.owned), warm: ints(parsed.warm) };
  } catch {
    return none;
  }
}

/** The assigner's name in the group protocol: every member of a group must offer it. */
export const STICKY_ASSIGNER_NAME = 'MeguriSticky';

/**
 * kafkajs's assigner around assignTasks. `claim` is read at every join, so the metadata carries what
 * the member owns at that moment.
 */
export function stickyAssigner(claim: () => { owned: readonly number[]; warm: readonly number[] }): PartitionAssigner {
  const { MemberMetadata, MemberAssignment } = kafkajs.AssignerProtocol;
  return ({ cluster }) => ({
    name: STICKY_ASSIGNER_NAME,
    version: 1,
    async assign({ members, topics }) {
      const claims = members.map((m) => decodeClaim(m.memberId, MemberMetadata.decode(m.memberMetadata)?.userData));
      const partitionsOf = new Map(topics.map((t) => [t, new Set(cluster.findTopicPartitionMetadata(t).map((p) => p.partitionId))]));
      const tasks = [...new Set([...partitionsOf.values()].flatMap((s) => [...s]))];
      const plan = assignTasks(claims, tasks);
      return [...plan].map(([memberId, mine]) => {
        const assignment: Record<string, number[]> = {};
        for (const [topic, has] of partitionsOf) {
          const list = mine.filter((p) => has.has(p));
          if (list.length > 0) assignment[topic] = list;
        }
        return { memberId, memberAssignment: MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }) };
      });
    },
    protocol({ topics }) {
      const { owned, warm } = claim();
      return { name: STICKY_ASSIGNER_NAME, metadata: MemberMetadata.encode({ version: 1, topics, userData: encodeClaim(owned, warm) }) };
    },
  });
}
