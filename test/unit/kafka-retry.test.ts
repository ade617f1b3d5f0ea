import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { retryWhileRetriable } from '../../services/runtime/kafka/kafka-transport.ts';

const retriable = (): Error => Object.assign(new Error('This server is not the leader for that topic-partition'), { retriable: true });

describe('retryWhileRetriable', () => {
  it('retries a retriable error until the operation succeeds', async () => {
    let calls = 0;
    const got = await retryWhileRetriable(async () => {
      if (++calls < 3) throw retriable();
      return 'offsets';
    }, 5_000);
    assert.equal(got, 'offsets');
    assert.equal(calls, 3);
  });

  it('throws any other error at once, and a retriable one when the budget is spent', async () => {
    let calls = 0;
    await assert.rejects(
      retryWhileRetriable(async () => {
        calls++;
        throw new Error('unknown topic');
      }, 5_000),
      /unknown topic/,
    );
    assert.equal(calls, 1);
    const t0 = Date.now();
    await assert.rejects(retryWhileRetriable(() => Promise.reject(retriable()), 300), /not the leader/);
    assert.ok(Date.now() - t0 < 2_000);
  });
});
