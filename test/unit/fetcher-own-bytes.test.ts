// A body that is one network chunk is kept as the socket read's own view only when the rest of that
// read is a response's headers; a view into a read that holds much more is copied, so the record
// does not keep the rest alive.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ownBytes } from '../../services/fetcher/fetch.ts';

describe('ownBytes', () => {
  it('keeps a view whose read holds only a few headers beside it', () => {
    const read = Buffer.allocUnsafeSlow(6150).fill(1);
    const body = read.subarray(150);
    assert.equal(ownBytes(body), body);
    const exact = Buffer.allocUnsafeSlow(20_000);
    assert.equal(ownBytes(exact), exact);
  });

  it('copies a view that is a small part of a larger read', () => {
    const read = Buffer.allocUnsafeSlow(64 * 1024);
    for (let i = 0; i < read.length; i++) read[i] = i & 0xff;
    const body = read.subarray(1000, 7000);
    const kept = ownBytes(body);
    assert.notEqual(kept.buffer, read.buffer);
    assert.ok(kept.equals(body));
    assert.ok(kept.buffer.byteLength < read.buffer.byteLength);
  });
});
