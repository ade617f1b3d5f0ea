import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { isRoutineRetry, levelOfKafkajsError, retryWhileRetriable } from '../../services/runtime/kafka/client.ts';
import { isMembershipLost } from '../../services/runtime/errors.ts';

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

describe('isRoutineRetry (kafkajs ERROR entries logged at debug)', () => {
  // The texts come from the installed kafkajs, so a kafkajs that words them differently fails here.
  const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { createErrorFromCode: (code: number) => Error };
  const concurrent = createErrorFromCode(51).message; // CONCURRENT_TRANSACTIONS
  const loading = createErrorFromCode(14).message; // GROUP_LOAD_IN_PROGRESS
  const notLeader = createErrorFromCode(6).message; // NOT_LEADER_FOR_PARTITION
  const noCoordinator = createErrorFromCode(15).message; // GROUP_COORDINATOR_NOT_AVAILABLE
  const notCoordinator = createErrorFromCode(16).message; // NOT_COORDINATOR_FOR_GROUP

  it('recognises the broker answers kafkajs retries in normal operation, as kafkajs logs them', () => {
    assert.equal(isRoutineRetry({ message: 'Response AddPartitionsToTxn(key: 24, version: 1)', error: concurrent }), true);
    assert.equal(isRoutineRetry({ message: `Failed to send messages: ${concurrent}` }), true);
    assert.equal(isRoutineRetry({ message: 'Response FindCoordinator(key: 10, version: 2)', error: loading }), true);
    assert.equal(isRoutineRetry({ message: 'Response Produce(key: 0, version: 7)', error: notLeader }), true);
    assert.equal(isRoutineRetry({ message: `Failed to send messages: ${notLeader}` }), true);
    // A broker just started: the coordinators' partitions have no leader yet.
    assert.equal(isRoutineRetry({ message: 'Response GroupCoordinator(key: 10, version: 2)', error: noCoordinator }), true);
    assert.equal(isRoutineRetry({ message: 'Response InitProducerId(key: 22, version: 1)', error: notCoordinator }), true);
  });

  it('keeps every other error an error', () => {
    assert.equal(isRoutineRetry({ message: 'Response Produce(key: 0, version: 7)', error: createErrorFromCode(47).message }), false); // INVALID_PRODUCER_EPOCH
    assert.equal(isRoutineRetry({ message: 'Connection error: connect ECONNREFUSED 127.0.0.1:9092' }), false);
    assert.equal(isRoutineRetry({ message: 'Crash: KafkaJSNumberOfRetriesExceeded' }), false);
  });

  it('logs an unreachable broker and a membership the runtime restores as warnings, routine retries at debug, the rest as errors', () => {
    assert.equal(levelOfKafkajsError({ message: 'Connection error: connect ECONNREFUSED 127.0.0.1:9092' }), 'warn');
    assert.equal(levelOfKafkajsError({ message: 'Failed to send messages: Connection error: connect ECONNREFUSED 127.0.0.1:9092' }), 'warn');
    assert.equal(levelOfKafkajsError({ message: 'Response OffsetCommit(key: 8, version: 5)', error: createErrorFromCode(25).message }), 'warn'); // UNKNOWN_MEMBER_ID
    assert.equal(levelOfKafkajsError({ message: 'Response Heartbeat(key: 12, version: 3)', error: createErrorFromCode(27).message }), 'warn'); // REBALANCE_IN_PROGRESS
    assert.equal(levelOfKafkajsError({ message: `Failed to send messages: ${concurrent}` }), 'debug');
    assert.equal(levelOfKafkajsError({ message: 'Response Produce(key: 0, version: 7)', error: createErrorFromCode(47).message }), 'error'); // INVALID_PRODUCER_EPOCH
    assert.equal(levelOfKafkajsError({ message: 'Crash: KafkaJSNumberOfRetriesExceeded: something else' }), 'error');
  });
});

describe('isMembershipLost', () => {
  const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error & { type: string } };
  it('finds a refused membership however kafkajs wrapped it, and nothing else', () => {
    const unknown = createErrorFromCode(25); // UNKNOWN_MEMBER_ID
    assert.equal(isMembershipLost(unknown), true);
    assert.equal(isMembershipLost(Object.assign(new Error('The coordinator is not aware of this member'), { name: 'KafkaJSNonRetriableError' })), true);
    assert.equal(isMembershipLost(Object.assign(new Error('retries exceeded'), { originalError: createErrorFromCode(22) })), true); // ILLEGAL_GENERATION
    assert.equal(isMembershipLost(new Error('wrapped', { cause: createErrorFromCode(82) })), true); // FENCED_INSTANCE_ID
    assert.equal(isMembershipLost(createErrorFromCode(27)), false, 'a rebalance in progress ends by itself'); // REBALANCE_IN_PROGRESS
    assert.equal(isMembershipLost(createErrorFromCode(16)), false); // NOT_COORDINATOR
    assert.equal(isMembershipLost(new Error('Connection error: connect ECONNREFUSED')), false);
    assert.equal(isMembershipLost(undefined), false);
  });
});
