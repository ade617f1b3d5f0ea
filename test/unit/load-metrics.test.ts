// The per-partition load board behind the scheduler's Prometheus gauges: running totals and a
// bounded set of the most loaded hosts.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import client from 'prom-client';
import { HostLoadBoard, registerHostLoadMetrics } from '../../services/scheduler/load-metrics.ts';
import type { HostLoad } from '../../services/scheduler/load-metrics.ts';

const row = (host: string, L: number, overloaded = false): HostLoad => ({
  host,
  L,
  accessIntervalS: L > 0 ? 1 / L : null,
  meanFetchS: 0.2,
  maxFetchS: 0.5,
  R: L > 0 ? 1 / L / 0.5 : null,
  overloaded,
  stretch: 1,
});

test('the board keeps totals over every host and rows for the most loaded ones', () => {
  const board = new HostLoadBoard(3);
  const L = new Map<string, number>();
  for (let i = 0; i < 50; i++) {
    const host = `h${i}.test`;
    board.update(row(host, i / 1000), { L: 0, overloaded: false }, { overloaded: i >= 45 });
    L.set(host, i / 1000);
  }
  assert.ok(Math.abs(board.totalLoad - [...L.values()].reduce((a, b) => a + b, 0)) < 1e-12);
  assert.equal(board.overloadedHosts, 5);
  assert.deepEqual(board.top().map((r) => r.host), ['h49.test', 'h48.test', 'h47.test']);
  // A host's load falls: the totals follow, and it drops out of the top.
  board.update(row('h49.test', 0.001), { L: 0.049, overloaded: true }, { overloaded: false });
  assert.equal(board.overloadedHosts, 4);
  assert.ok(Math.abs(board.totalLoad - ([...L.values()].reduce((a, b) => a + b, 0) - 0.048)) < 1e-12);
  assert.deepEqual(board.top().map((r) => r.host), ['h48.test', 'h47.test', 'h46.test']);
});

test('gauges read the boards at scrape time, one series per top host and partition', async () => {
  const registry = new client.Registry();
  const boards = new Map<number, HostLoadBoard>();
  registerHostLoadMetrics(registry, boards);
  const b0 = new HostLoadBoard(2);
  boards.set(0, b0);
  b0.update({ ...row('busy.test', 0.5, true), stretch: 4 }, { L: 0, overloaded: false }, { overloaded: true });
  b0.update(row('calm.test', 0.001), { L: 0, overloaded: false }, { overloaded: false });
  const text = await registry.metrics();
  assert.match(text, /^meguri_scheduler_host_load_index\{partition="0",host="busy\.test"\} 0\.5$/m);
  assert.match(text, /^meguri_scheduler_host_overloaded\{partition="0",host="busy\.test"\} 1$/m);
  assert.match(text, /^meguri_scheduler_host_overloaded\{partition="0",host="calm\.test"\} 0$/m);
  assert.match(text, /^meguri_scheduler_host_interval_stretch\{partition="0",host="busy\.test"\} 4$/m);
  assert.match(text, /^meguri_scheduler_overloaded_hosts\{partition="0"\} 1$/m);
  // A partition handed to another instance disappears from the scrape.
  boards.delete(0);
  assert.doesNotMatch(await registry.metrics(), /host="busy\.test"/);
});
