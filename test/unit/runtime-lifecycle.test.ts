/**
 * The runtime's error classification, the task lifecycle's transitions, dead letters that always
 * fit their topic and pages shrunk to fit theirs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { classifyError, TaskMigratedError, TransientError, RecordTooLargeError, IllegalTaskStateError, isMeguriError } from '../../services/runtime/errors.ts';
import { TaskLifecycle, canTransition } from '../../services/runtime/task-state.ts';
import type { TaskState } from '../../services/runtime/task-state.ts';
import { deadLetterValue, RECORD_OVERHEAD_BYTES } from '../../services/runtime/deadletter.ts';
import { shrinkPage } from '../../topology/catalog.ts';
import { pageRecord, deadletterRecord, decodePageRecord, encodePageRecord, SCHEMA_VERSION } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';

function protocolError(type: string, retriable = false): Error {
  return new kafkajs.KafkaJSProtocolError({ message: type.toLowerCase(), type, code: 0, retriable } as never);
}

describe('error classification', () => {
  it('sends fencing and lost generations to migrated', () => {
    for (const type of ['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'UNKNOWN_MEMBER_ID', 'REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'TRANSACTION_COORDINATOR_FENCED']) {
      assert.equal(classifyError(protocolError(type), 'commit'), 'migrated', type);
    }
    const fenced = Object.assign(new Error('member does not own p'), { name: 'FencedCommitError' });
    assert.equal(classifyError(fenced, 'commit'), 'migrated');
    assert.equal(classifyError(new TaskMigratedError('x'), 'process'), 'migrated');
  });

  it('retries network trouble, moving coordinators and timeouts without dead-lettering', () => {
    for (const type of ['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'REQUEST_TIMED_OUT', 'NETWORK_EXCEPTION', 'NOT_LEADER_FOR_PARTITION', 'CONCURRENT_TRANSACTIONS']) {
      assert.equal(classifyError(protocolError(type, true), 'commit'), 'transient', type);
      assert.equal(classifyError(protocolError(type, true), 'process'), 'transient', type);
    }
    assert.equal(classifyError(new kafkajs.KafkaJSConnectionError('refused'), 'commit'), 'transient');
    assert.equal(classifyError(new (kafkajs.KafkaJSGroupCoordinatorNotFound as unknown as new (message: string) => Error)('Failed to find group coordinator'), 'commit'), 'transient');
    assert.equal(classifyError(Object.assign(new Error('socket'), { code: 'ECONNRESET' }), 'commit'), 'transient');
    assert.equal(classifyError(new TransientError('later'), 'commit'), 'transient');
  });

  it('follows causes through kafkajs retry wrappers', () => {
    const wrapped = new kafkajs.KafkaJSNumberOfRetriesExceeded(protocolError('INVALID_PRODUCER_EPOCH'), { retryCount: 5, retryTime: 100 } as never);
    assert.equal(classifyError(wrapped, 'commit'), 'migrated');
    const outer = new Error('commit failed', { cause: protocolError('REQUEST_TIMED_OUT', true) });
    assert.equal(classifyError(outer, 'commit'), 'transient');
  });

  it('treats an unknown processor failure as a bad record and an unknown commit failure as migrated', () => {
    assert.equal(classifyError(new TypeError('cannot read x of undefined'), 'process'), 'bad-record');
    assert.equal(classifyError(new Error('something odd'), 'commit'), 'migrated');
    assert.equal(classifyError(protocolError('MESSAGE_TOO_LARGE'), 'commit'), 'bad-record');
    assert.equal(classifyError(new RecordTooLargeError('t', 10, 5), 'commit'), 'bad-record');
  });

  it('stops on authorisation failures and bugs', () => {
    assert.equal(classifyError(protocolError('TOPIC_AUTHORIZATION_FAILED'), 'commit'), 'fatal');
    assert.equal(classifyError(new IllegalTaskStateError('bug'), 'process'), 'fatal');
  });

  it('gives every runtime error a name and a stable code', () => {
    const err = new TaskMigratedError('fenced');
    assert.equal(err.name, 'TaskMigratedError');
    assert.equal(err.code, 'MEGURI_ERR_TASK_MIGRATED');
    assert.ok(isMeguriError(err));
    assert.equal(new RecordTooLargeError('pages', 2, 1).code, 'MEGURI_ERR_RECORD_TOO_LARGE');
    assert.ok(!isMeguriError(new Error('plain')));
  });
});

describe('task lifecycle', () => {
  it('walks created → restoring → running → suspended → closed', () => {
    const task = new TaskLifecycle('g-0');
    const seen: TaskState[] = [];
    task.onTransition((_, to) => seen.push(to));
    task.transitionTo('restoring');
    task.transitionTo('running');
    task.transitionTo('suspended');
    task.transitionTo('running');
    task.transitionTo('suspended');
    task.transitionTo('closed');
    assert.deepEqual(seen, ['restoring', 'running', 'suspended', 'running', 'suspended', 'closed']);
  });

  it('throws on an illegal transition (a bug), leaving the state as it was', () => {
    const task = new TaskLifecycle('g-1');
    assert.throws(() => task.transitionTo('running'), (e: unknown) => e instanceof IllegalTaskStateError && /created → running/.test(e.message));
    assert.equal(task.state, 'created');
    task.transitionTo('closed');
    for (const to of ['created', 'restoring', 'running', 'suspended', 'closed'] as const) assert.throws(() => task.transitionTo(to), IllegalTaskStateError);
    assert.equal(canTransition('running', 'closed'), false, 'a running task is suspended before it closes');
    assert.equal(canTransition('restoring', 'closed'), true, 'a failed open closes');
  });
});

describe('dead letters', () => {
  it('always fit the dead-letter topic, saying when the raw value was cut', () => {
    const raw = Buffer.from('"' + 'x\\n'.repeat(400_000) + '"');
    const max = 100_000;
    const value = deadLetterValue({ service: 's', version: SCHEMA_VERSION, origin: { topic: 'pages', partition: 0, offset: 7, timestamp: 1 }, key: 'k', raw, code: 'MEGURI_ERR_SCHEMA', reason: 'bad', at: 2, maxBytes: max });
    assert.ok(Buffer.byteLength(JSON.stringify(value)) + 1 + RECORD_OVERHEAD_BYTES <= max);
    assert.match(value.reason, /^bad \(value cut to its first \d+ of 1200002 bytes/);
    deadletterRecord.parse(value);
    const small = deadLetterValue({ service: 's', version: SCHEMA_VERSION, origin: { topic: 'pages', partition: 0, offset: 7, timestamp: 1 }, key: 'k', raw: Buffer.from('{}'), code: 'C', reason: 'r', at: 2, maxBytes: max });
    assert.equal(small.value, '{}');
    assert.equal(small.reason, 'r');
  });
});

describe('pages shrunk to fit their topic', () => {
  const page: PageRecord = pageRecord.parse({
    v: SCHEMA_VERSION,
    request: { v: SCHEMA_VERSION, requestId: 'r1', url: 'http://a.sim.test/', host: 'a.sim.test', reason: 'seed', score: 0, depth: 0, cgiHops: 0, attempt: 1, issuedAt: 1 },
    finalUrl: 'http://a.sim.test/',
    redirects: [],
    status: 200,
    headers: {},
    body: Buffer.from('<p>"quoted" \\ text\n</p>'.repeat(60_000)),
    bodyTruncated: false,
    bytes: 10,
    decodedBytes: 10,
    timing: { startedAt: 1, totalMs: 1 },
    fetchedAt: 1,
  });

  it('cuts the body until the framed record fits, and says why', () => {
    const max = 300_000;
    assert.ok(encodePageRecord(page).length > max);
    const small = shrinkPage(page, max, 'too big')!;
    const encoded = encodePageRecord(small);
    assert.ok(encoded.length <= max);
    assert.ok(encoded.length > max * 0.99, 'keeps all but a few bytes of what fits');
    assert.equal(small.bodyTruncated, true);
    assert.match(small.bodyTruncatedReason!, /too big/);
    assert.ok(page.body!.subarray(0, small.body!.length).equals(small.body!));
    assert.deepEqual(decodePageRecord(encoded), small);
  });

  it('gives up when even the envelope does not fit', () => {
    assert.equal(shrinkPage(page, 50, 'tiny'), undefined);
  });
});
