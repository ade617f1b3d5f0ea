import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyCounter } from '../../services/cli/replay.ts';

test('KeyCounter counts exactly while the keys fit', () => {
  const c = new KeyCounter(10);
  for (const k of ['a', 'b', 'a', 'c', 'a', 'b']) c.add(k);
  assert.deepEqual(c.top(2), [
    { key: 'a', records: 3 },
    { key: 'b', records: 2 },
  ]);
  assert.equal(c.exact, true);
});

test('KeyCounter keeps the busiest keys in bounded memory when there are too many', () => {
  const c = new KeyCounter(50);
  for (let i = 0; i < 5_000; i++) {
    c.add(`rare-${i}`);
    if (i % 5 === 0) c.add('busy');
    if (i % 10 === 0) c.add('second');
  }
  const top = c.top(2);
  assert.deepEqual(
    top.map((t) => t.key),
    ['busy', 'second'],
  );
  assert.equal(c.exact, false);
  // Lower bounds of the true counts (1,000 and 500).
  assert.ok(top[0]!.records <= 1_000 && top[0]!.records >= 900, `busy: ${top[0]!.records}`);
  assert.ok(top[1]!.records <= 500 && top[1]!.records >= 400, `second: ${top[1]!.records}`);
});
