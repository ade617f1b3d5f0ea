import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IpSlots } from '../../services/scheduler/ip-slots.ts';

const IP = '10.0.0.7';

/** Slots at their cap of 2 and `hosts` waiting, each recording its wake in `woken`. */
function busyAddress(hosts: string[], owner: object = {}): { slots: IpSlots; woken: string[] } {
  const slots = new IpSlots();
  slots.started('r1', IP);
  slots.started('r2', IP);
  const woken: string[] = [];
  for (const h of hosts) slots.waitFor(IP, h, () => woken.push(h), owner);
  return { slots, woken };
}

test('a freed slot wakes one waiting host, the one that asked first', () => {
  const { slots, woken } = busyAddress(['a', 'b', 'c']);
  assert.equal(slots.mayStart(IP, 2), false);
  slots.finished('r1');
  assert.deepEqual(woken, ['a']);
  assert.equal(slots.waiters(IP), 2);
  // a takes the slot; the next freed one goes to b.
  slots.started('r3', IP);
  slots.settled('a', 2);
  assert.deepEqual(woken, ['a']);
  slots.finished('r2');
  assert.deepEqual(woken, ['a', 'b']);
});

test('a woken host that leaves the slot free passes it on when its dispatch settles', () => {
  const { slots, woken } = busyAddress(['a', 'b', 'c']);
  slots.finished('r1');
  assert.deepEqual(woken, ['a']);
  slots.settled('a', 2); // a's gate was closed: nothing started
  assert.deepEqual(woken, ['a', 'b']);
  slots.started('r3', IP);
  slots.settled('b', 2);
  assert.deepEqual(woken, ['a', 'b']);
  // A host settled without having been woken hands nothing out.
  slots.settled('c', 2);
  assert.deepEqual(woken, ['a', 'b']);
  assert.equal(slots.waiters(IP), 1);
});

test('a host that asks again keeps its place; a slot freed with nobody waiting wakes nobody', () => {
  const { slots, woken } = busyAddress(['a', 'b']);
  slots.waitFor(IP, 'a', () => woken.push('a again'), {});
  assert.equal(slots.waiters(IP), 2);
  slots.finished('r1');
  slots.finished('r2');
  assert.deepEqual(woken, ['a', 'b']);
  slots.started('r3', IP);
  slots.finished('r3');
  assert.deepEqual(woken, ['a', 'b']);
  assert.equal(slots.inFlight(IP), 0);
});

test('a closing partition stops waiting, and a slot handed to one of its hosts goes to another partition', () => {
  const closing = {};
  const staying = {};
  const slots = new IpSlots();
  slots.started('r1', IP);
  slots.started('r2', IP);
  const woken: string[] = [];
  slots.waitFor(IP, 'x1', () => woken.push('x1'), closing);
  slots.waitFor(IP, 'y1', () => woken.push('y1'), staying);
  slots.waitFor(IP, 'x2', () => woken.push('x2'), closing);
  slots.waitFor(IP, 'y2', () => woken.push('y2'), staying);
  slots.finished('r1');
  assert.deepEqual(woken, ['x1']);
  slots.release(closing);
  // x1 never dispatches: its slot goes to y1; x2 no longer waits.
  assert.deepEqual(woken, ['x1', 'y1']);
  assert.equal(slots.waiters(IP), 1);
  slots.finished('r2');
  assert.deepEqual(woken, ['x1', 'y1', 'y2']);
});

test('requests without an address are not limited, and a request finishes once', () => {
  const slots = new IpSlots();
  assert.equal(slots.mayStart(undefined, 1), true);
  slots.started('r1', undefined);
  slots.started('r2', IP);
  slots.started('r2', IP);
  assert.equal(slots.inFlight(IP), 1);
  slots.finished('r2');
  slots.finished('r2');
  assert.equal(slots.inFlight(IP), 0);
});
