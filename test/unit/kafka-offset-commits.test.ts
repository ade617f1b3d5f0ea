/**
 * Offset commits of at-least-once tasks on Kafka: commits that arrive while one is out go together
 * in the next OffsetCommit request, each caller returning once its own offsets are committed. The
 * consumer here records the requests instead of sending them (no broker is contacted: a commit
 * without outputs needs no producer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import type { AtomicCommit } from '../../services/runtime/transport.ts';

type Offsets = { topic: string; partition: number; offset: string }[];

/** A consumer whose commitOffsets waits until released, and remembers what each request held. */
function recordingConsumer(): { consumer: never; requests: Offsets[]; release: (err?: Error) => void } {
  const requests: Offsets[] = [];
  const waiting: ((err?: Error) => void)[] = [];
  const consumer = {
    commitOffsets(offsets: Offsets): Promise<void> {
      requests.push(offsets);
      return new Promise<void>((resolve, reject) => waiting.push((err) => (err ? reject(err) : resolve())));
    },
  };
  return { consumer: consumer as never, requests, release: (err) => waiting.shift()?.(err) };
}

const commit = (partition: number, offset: number): AtomicCommit => ({ transactional: false, scope: `fetcher.${partition}`, outputs: [], offsets: [{ topic: 'frontier', partition, offset }] });
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('commits that arrive while one is out go out together next; each caller waits for its own', async () => {
  const transport = new KafkaTransport({ brokers: ['127.0.0.1:9'] });
  const { consumer, requests, release } = recordingConsumer();
  const done: number[] = [];
  const calls = [0, 1, 2, 3].map((p) => transport.commitFor('fetcher', consumer, commit(p, 100 + p)).then(() => done.push(p)));
  // a second flush of partition 1 before the merged request leaves: its later offset is the one sent
  const again = transport.commitFor('fetcher', consumer, commit(1, 150)).then(() => done.push(10));
  await tick();
  assert.deepEqual(requests, [[{ topic: 'frontier', partition: 0, offset: '100' }]], 'the first goes at once, alone');
  assert.deepEqual(done, [], 'nobody returns before the broker answered');
  release();
  await tick();
  assert.deepEqual(done, [0]);
  assert.equal(requests.length, 2, 'the four that waited make one request');
  assert.deepEqual(
    requests[1]!.map((o) => `${o.partition}:${o.offset}`).sort(),
    ['1:150', '2:102', '3:103'],
  );
  release();
  await Promise.all([...calls, again]);
  assert.deepEqual(done.sort((a, b) => a - b), [0, 1, 2, 3, 10]);
});

test('a failed request fails every commit merged into it; later ones go in the next request', async () => {
  const transport = new KafkaTransport({ brokers: ['127.0.0.1:9'] });
  const { consumer, requests, release } = recordingConsumer();
  const first = transport.commitFor('parser', consumer, commit(0, 10));
  const merged = [1, 2].map((p) => transport.commitFor('parser', consumer, commit(p, 20)));
  await tick();
  release();
  await first;
  await tick();
  release(new Error('NOT_COORDINATOR'));
  for (const m of merged) await assert.rejects(m, /NOT_COORDINATOR/);
  const later = transport.commitFor('parser', consumer, commit(1, 30));
  await tick();
  assert.deepEqual(requests.at(-1), [{ topic: 'frontier', partition: 1, offset: '30' }]);
  release();
  await later;
});

test('commits of different consumers are never merged', async () => {
  const transport = new KafkaTransport({ brokers: ['127.0.0.1:9'] });
  const a = recordingConsumer();
  const b = recordingConsumer();
  const calls = [transport.commitFor('fetcher', a.consumer, commit(0, 1)), transport.commitFor('parser', b.consumer, commit(0, 2))];
  await tick();
  assert.equal(a.requests.length, 1);
  assert.equal(b.requests.length, 1);
  a.release();
  b.release();
  await Promise.all(calls);
});
