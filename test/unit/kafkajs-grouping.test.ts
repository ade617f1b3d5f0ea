// meguri's replacement for kafkajs 2.2.4's per-partition grouping of a send (services/runtime/kafka/group-messages.cjs).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import groupMessagesPerPartition from '../../services/runtime/kafka/group-messages.cjs';
import '../../services/runtime/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
const groupPath = path.join(kafkajsDir, 'src', 'producer', 'groupMessagesPerPartition.js');

/** kafkajs's own grouping, as it ships: the reference the replacement must agree with. */
function kafkajsGrouping(): typeof groupMessagesPerPartition {
  const saved = require.cache[groupPath];
  delete require.cache[groupPath];
  try {
    return require(groupPath) as typeof groupMessagesPerPartition;
  } finally {
    if (saved) require.cache[groupPath] = saved;
  }
}

interface Msg {
  key: string;
  partition?: number;
}

describe('kafkajs message grouping', () => {
  const partitionMetadata = [0, 1, 2, 3, 4].map((partitionId) => ({ partitionId, leader: 1 }));
  const partitioner = ({ message }: { message: Msg }): number => message.partition ?? message.key.length % 5;

  it('gives the same groups, in send order, as kafkajs', () => {
    const reference = kafkajsGrouping();
    assert.notEqual(reference, groupMessagesPerPartition);
    const messages: Msg[] = Array.from({ length: 500 }, (_, i) => (i % 7 === 0 ? { key: `m${i}`, partition: i % 3 } : { key: 'x'.repeat(i % 11) }));
    const args = { topic: 't', partitionMetadata, messages, partitioner };
    const mine = groupMessagesPerPartition(args);
    assert.deepEqual(mine, reference(args));
    assert.deepEqual(Object.keys(mine), ['0', '1', '2', '3', '4']);
    for (const group of Object.values(mine) as Msg[][]) {
      const order = group.map((m) => messages.indexOf(m));
      assert.deepEqual(order, [...order].sort((a, b) => a - b), 'send order kept within a partition');
    }
    assert.deepEqual(groupMessagesPerPartition({ ...args, partitionMetadata: [] }), {});
    assert.deepEqual(groupMessagesPerPartition({ ...args, messages: [] }), reference({ ...args, messages: [] }));
  });

  it('is the grouping kafkajs loaded through meguri uses', () => {
    assert.equal(require(groupPath), groupMessagesPerPartition);
  });
});
