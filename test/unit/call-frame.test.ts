import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallFrame } from '../../services/runtime/embedded/call-frame.ts';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

test('code is inside a frame synchronously and after awaits, through helpers, Promise.all and then', async () => {
  const frame = new CallFrame('test');
  assert.equal(frame.encloses(), false, 'outside any call');
  assert.equal(await frame.run(async () => frame.encloses()), true, 'synchronous part');
  assert.equal(
    await frame.run(async () => {
      await tick();
      await tick();
      return frame.encloses();
    }),
    true,
    'after awaits',
  );
  const helper = async (): Promise<boolean> => {
    await tick();
    return frame.encloses();
  };
  assert.equal(await frame.run(async () => (await tick(), await helper())), true, 'in an async function the callback awaits');
  assert.equal(await frame.run(async () => (await Promise.all([tick(), helper()]))[1]), true, 'through Promise.all');
  assert.equal(await frame.run(() => tick().then(() => frame.encloses())), true, 'in a then callback the callback returns');
  // A non-async function passing the inner promise through.
  const inner = async (): Promise<boolean> => (await tick(), frame.encloses());
  assert.equal(await frame.run(() => inner()), true, 'through a plain wrapper');
  assert.equal(frame.running, 0);
  assert.equal(frame.encloses(), false, 'after the calls ended');
});

test('frames are told apart; nested frames both enclose', async () => {
  const a = new CallFrame('same');
  const b = new CallFrame('same');
  assert.notEqual(a.functionName, b.functionName);
  const seen = await a.run(async () => {
    await tick();
    const inA = { a: a.encloses(), b: b.encloses() };
    const inBoth = await b.run(async () => (await tick(), { a: a.encloses(), b: b.encloses() }));
    return { inA, inBoth };
  });
  assert.deepEqual(seen, { inA: { a: true, b: false }, inBoth: { a: true, b: true } });
  // b runs (so its check is not skipped) while the caller is inside a only.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const running = b.run(() => gate);
  assert.equal(await a.run(async () => (await tick(), b.encloses())), false);
  release();
  await running;
});

test('code a call started but does not wait for is outside, while the call runs and after', async () => {
  const frame = new CallFrame('detached');
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen: boolean[] = [];
  const later: Promise<void>[] = [];
  const call = frame.run(async () => {
    later.push(tick().then(() => void seen.push(frame.encloses())));
    await gate;
  });
  await later[0];
  assert.equal(frame.running, 1);
  release();
  await call;
  assert.equal(frame.running, 0);
  await new Promise<void>((resolve) => setTimeout(() => (seen.push(frame.encloses()), resolve()), 1));
  assert.deepEqual(seen, [false, false]);
});

test('a synchronous throw becomes a rejection; the error keeps its stack; Error settings are restored', async () => {
  const frame = new CallFrame('errors');
  const ownPrepare = (err: Error): string => `custom: ${err.message}`;
  const before = { limit: Error.stackTraceLimit, prepare: Error.prepareStackTrace };
  Error.stackTraceLimit = 7;
  Error.prepareStackTrace = ownPrepare;
  try {
    const result = frame.run(() => {
      assert.equal(frame.encloses(), true);
      throw new Error('boom');
    });
    await assert.rejects(result, (err: Error) => err.stack === 'custom: boom');
    assert.equal(Error.stackTraceLimit, 7);
    assert.equal(Error.prepareStackTrace, ownPrepare);
  } finally {
    Error.stackTraceLimit = before.limit;
    Error.prepareStackTrace = before.prepare;
  }
  const err = await frame.run(async () => (await tick(), new Error('inside')));
  assert.match(err.stack ?? '', /inside\n\s+at /);
});
