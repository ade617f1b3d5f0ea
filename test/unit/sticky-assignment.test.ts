import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assignTasks, decodeClaim, encodeClaim } from '../../services/runtime/kafka/sticky-assignment.ts';
import type { MemberClaim } from '../../services/runtime/kafka/sticky-assignment.ts';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const claim = (memberId: string, owned: number[] = [], warm: number[] = []): MemberClaim => ({ memberId, owned, warm });

/** Every task exactly once, and sizes within one of each other. */
function assertBalanced(plan: Map<string, number[]>, tasks: number[]): void {
  const all = [...plan.values()].flat().sort((a, b) => a - b);
  assert.deepEqual(all, tasks);
  const sizes = [...plan.values()].map((l) => l.length);
  assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `sizes ${sizes.join(',')}`);
}

describe('sticky assignment', () => {
  it('gives every task to exactly one member, balanced, from nothing owned', () => {
    for (const members of [1, 2, 3, 5]) {
      for (const n of [0, 1, 7, 8, 64]) {
        const plan = assignTasks(range(members).map((i) => claim(`m${i}`)), range(n));
        assertBalanced(plan, range(n));
      }
    }
  });

  it('keeps each member what it owns when the balance allows: a rejoin with a new member id moves nothing', () => {
    const first = assignTasks([claim('a-1'), claim('b-1')], range(8));
    // Both members rejoin with new ids (a broker restart); b now sorts first.
    const again = assignTasks([claim('z-2', first.get('a-1')), claim('c-2', first.get('b-1'))], range(8));
    assert.deepEqual(again.get('z-2'), first.get('a-1'));
    assert.deepEqual(again.get('c-2'), first.get('b-1'));
  });

  it('moves only what must move when a member joins or leaves', () => {
    const two = assignTasks([claim('a'), claim('b')], range(8));
    const three = assignTasks([claim('a', two.get('a')), claim('b', two.get('b')), claim('c')], range(8));
    assertBalanced(three, range(8));
    const moved = (before: Map<string, number[]>, after: Map<string, number[]>): number =>
      [...after].reduce((n, [m, list]) => n + list.filter((t) => !(before.get(m) ?? []).includes(t)).length, 0);
    assert.equal(moved(two, three), three.get('c')!.length, 'only the new member’s tasks changed hands');
    const back = assignTasks([claim('a', three.get('a')), claim('b', three.get('b'))], range(8));
    assertBalanced(back, range(8));
    assert.equal(moved(three, back), 8 - three.get('a')!.length - three.get('b')!.length);
  });

  it('gives a task that must move to a member holding its store warm', () => {
    // a held 0-3 and left; b and c share them: the warm one gets what it has on disk.
    const plan = assignTasks([claim('b', [4, 5], [0, 1]), claim('c', [6, 7], [2])], range(8));
    assertBalanced(plan, range(8));
    assert.deepEqual(plan.get('b'), [0, 1, 4, 5]);
    assert.deepEqual(plan.get('c'), [2, 3, 6, 7]);
  });

  it('a task claimed by two members goes to one; claims of tasks that do not exist are ignored', () => {
    const plan = assignTasks([claim('a', [0, 1, 2, 99]), claim('b', [1, 2, 3])], range(4));
    assertBalanced(plan, range(4));
    assert.deepEqual(plan.get('a'), [0, 1]);
    assert.deepEqual(plan.get('b'), [2, 3]);
  });

  it('a member owning more than its share keeps a share and hands the rest on', () => {
    const plan = assignTasks([claim('a', range(8)), claim('b'), claim('c')], range(8));
    assertBalanced(plan, range(8));
    assert.deepEqual(plan.get('a'), [0, 1, 2]);
  });

  it('reads back what it wrote, and claims nothing from metadata it cannot read', () => {
    assert.deepEqual(decodeClaim('m', encodeClaim([1, 2], [3])), { memberId: 'm', owned: [1, 2], warm: [3] });
    assert.deepEqual(decodeClaim('m', Buffer.from('not json')), { memberId: 'm', owned: [], warm: [] });
    assert.deepEqual(decodeClaim('m', Buffer.from('{"owned":[-1,"x",2.5,4]}')), { memberId: 'm', owned: [4], warm: [] });
    assert.deepEqual(decodeClaim('m', null), { memberId: 'm', owned: [], warm: [] });
  });
});
