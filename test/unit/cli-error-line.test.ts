/**
 * The line `meguri` prints for the error that ended a command: a Kafka broker nobody answers at
 * (the error kafkajs really throws, from a connection to a closed loopback port) gets what to do;
 * other errors keep their message as it is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kafkajs } from '../../services/runtime/kafka/kafkajs.ts';
import { errorLine, isBrokerUnreachable } from '../../services/cli/error-line.ts';
import { freePort } from '../support/ports.ts';

describe('errorLine', () => {
  it("names an unreachable broker and how to start the local one, from kafkajs's own error", async () => {
    const broker = `127.0.0.1:${await freePort()}`;
    const admin = new kafkajs.Kafka({ clientId: 'error-line-test', brokers: [broker], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 50 } }).admin();
    const err = await admin.connect().then(
      () => assert.fail('connected to a closed port'),
      (e: unknown) => e,
    );
    assert.ok(isBrokerUnreachable(err));
    const line = errorLine(err);
    assert.match(line, /^meguri: no Kafka broker answers \(/);
    assert.ok(line.includes(broker), line);
    assert.match(line, /deploy\/local\/kafka\.sh start/);
  });

  it('keeps any other message as it is', () => {
    assert.equal(errorLine(new Error('--max-pages: not a number')), 'meguri: --max-pages: not a number');
    assert.equal(errorLine('plain text'), 'meguri: plain text');
    assert.equal(isBrokerUnreachable(new Error('x', { cause: new Error('y') })), false);
  });
});
