/**
 * The benchmarks' broker helpers: a broker address nothing answers at is refused at once with what
 * to do (before a benchmark runs its other contenders), the local broker passes, and a run's topic
 * clean-up reports a failure instead of throwing it over the run's own outcome.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerUnreachableError, assertBrokerReachable, removeRunTopics } from '../../bench/kafka-topics.ts';
import { kafkaBrokers } from '../support/transports.ts';
import { freePort } from '../support/ports.ts';

describe('benchmark broker helpers', () => {
  it('refuses an address nothing answers at, quickly, saying how to start the local broker', async () => {
    const brokers = [`127.0.0.1:${await freePort()}`];
    const started = performance.now();
    await assert.rejects(assertBrokerReachable(brokers), (err: unknown) => {
      assert.ok(err instanceof BrokerUnreachableError);
      assert.match(err.message, new RegExp(`no Kafka broker answers at ${brokers[0]}`));
      assert.match(err.message, /deploy\/local\/kafka\.sh start/);
      return true;
    });
    assert.ok(performance.now() - started < 10_000, 'refused within seconds, not after kafkajs retried for long');
  });

  it('passes the local broker', async () => {
    await assertBrokerReachable(kafkaBrokers());
  });

  it("reports a failed clean-up of a run's topics on stderr instead of throwing", async () => {
    const brokers = [`127.0.0.1:${await freePort()}`];
    const written: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void written.push(args.join(' '));
    try {
      await removeRunTopics(brokers, 'bench-test-run.');
    } finally {
      console.error = original;
    }
    assert.equal(written.length, 1);
    assert.match(written[0]!, /could not delete the run's topics \(bench-test-run\.\*\)/);
  });
});
