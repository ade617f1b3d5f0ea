import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoalescingSender } from '../../services/runtime/kafka/coalescing-sender.ts';

/** A request function whose requests finish when the test says so; it records what each held. */
function gatedRequests(): { sendAll: (items: readonly string[]) => Promise<string[]>; requests: string[][]; finish: (err?: Error) => void; inFlight: () => number } {
  const requests: string[][] = [];
  const gates: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    requests,
    sendAll: async (items) => {
      requests.push([...items]);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await new Promise<void>((resolve, reject) => gates.push({ resolve, reject }));
      } finally {
        inFlight--;
      }
      return items.map((i) => `ack:${i}`);
    },
    finish: (err) => {
      const g = gates.shift();
      if (!g) throw new Error('no request in flight');
      if (err) g.reject(err);
      else g.resolve();
    },
    inFlight: () => maxInFlight,
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('the first send goes out at once; sends made while it is out go together in the next request, in order', async () => {
  const r = gatedRequests();
  const sender = new CoalescingSender<string, string>(r.sendAll, (s) => s.length, 1000);
  const a = sender.send(['a1', 'a2']);
  await tick();
  assert.deepEqual(r.requests, [['a1', 'a2']], 'no waiting when nothing is in flight');
  const b = sender.send(['b1']);
  const c = sender.send(['c1', 'c2']);
  await tick();
  assert.equal(r.requests.length, 1, 'one request in flight at a time');
  r.finish();
  assert.deepEqual(await a, ['ack:a1', 'ack:a2']);
  await tick();
  assert.deepEqual(r.requests[1], ['b1', 'c1', 'c2']);
  r.finish();
  assert.deepEqual(await b, ['ack:b1'], 'each caller gets the results of its own items');
  assert.deepEqual(await c, ['ack:c1', 'ack:c2']);
  assert.equal(r.inFlight(), 1);
  assert.deepEqual(await sender.send([]), []);
});

test('a merged request holds at most maxBytes; one larger send goes alone, whole', async () => {
  const r = gatedRequests();
  const sender = new CoalescingSender<string, string>(r.sendAll, (s) => s.length, 6);
  const first = sender.send(['x']);
  await tick();
  const sends = [sender.send(['aaa']), sender.send(['bbb']), sender.send(['cccc']), sender.send(['dddddddddd'])];
  r.finish();
  await first;
  await tick();
  assert.deepEqual(r.requests[1], ['aaa', 'bbb']);
  r.finish();
  await tick();
  assert.deepEqual(r.requests[2], ['cccc']);
  r.finish();
  await tick();
  assert.deepEqual(r.requests[3], ['dddddddddd']);
  r.finish();
  assert.deepEqual(await Promise.all(sends), [['ack:aaa'], ['ack:bbb'], ['ack:cccc'], ['ack:dddddddddd']]);
});

test('a failed request fails every send merged into it; later sends go out in the next request', async () => {
  const r = gatedRequests();
  const sender = new CoalescingSender<string, string>(r.sendAll, () => 1, 100);
  const first = sender.send(['a']);
  await tick();
  const b = sender.send(['b']);
  const c = sender.send(['c']);
  r.finish();
  await first;
  await tick();
  const d = sender.send(['d']);
  r.finish(new Error('broker went away'));
  await assert.rejects(b, /broker went away/);
  await assert.rejects(c, /broker went away/);
  await tick();
  assert.deepEqual(r.requests[2], ['d']);
  r.finish();
  assert.deepEqual(await d, ['ack:d']);
});
