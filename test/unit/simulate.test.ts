import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { simulateCommand } from '../../services/ordering/cli.ts';

const graphs = fileURLToPath(new URL('../fixtures/graphs/', import.meta.url));

test('meguri simulate --strategy all writes curves.csv, chart.svg and summary.json', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'simulate-'));
  try {
    const lines: string[] = [];
    const code = await simulateCommand({ graph: join(graphs, 'hollins.edges.txt'), strategy: 'all', seed: 'http://www1.hollins.edu/', out: dir }, (l) => lines.push(l));
    assert.equal(code, 0);
    assert.match(lines[0]!, /reachable from seed 0/);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Array<Record<string, unknown>>;
    assert.equal(summary.length, 8);
    const s = summary.find((x) => x.strategy === 'ipr-dl1')!;
    assert.equal(s.nodes, 6011);
    assert.ok((s.pagesPerSecond as number) > 0);
    const a = s.criterionA as Record<string, Record<string, number>>;
    for (const k of ['0.001', '0.01', '0.1']) for (const f of ['0.1', '0.25', '0.5']) assert.ok(a[k]![f]! >= 0 && a[k]![f]! <= 1);
    assert.deepEqual(Object.keys(s.criterionB as object), ['0.1', '0.25', '0.5']);
    assert.equal(typeof s.criterionC, 'number');
    const csv = readFileSync(join(dir, 'curves.csv'), 'utf8').trim().split('\n');
    assert.equal(csv[0], 'strategy,fetched,fraction,top0.001,top0.01,top0.1,prSum,cPartial');
    assert.equal(csv.length, 1 + 8 * 200);
    const svg = readFileSync(join(dir, 'chart.svg'), 'utf8');
    assert.match(svg, /^<svg/);
    assert.equal((svg.match(/<polyline/g) ?? []).length, 5 * 8);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('single strategy with --json prints one summary object; bad input gives a non-zero code', async () => {
  const lines: string[] = [];
  assert.equal(await simulateCommand({ graph: join(graphs, 'cs-stanford.edges.txt'), strategy: 'bf', json: true }, (l) => lines.push(l)), 0);
  const s = JSON.parse(lines.join('\n')) as { strategy: string; seedUrl: string; nodes: number };
  assert.equal(s.strategy, 'bf');
  assert.equal(s.seedUrl, 'http://cs.stanford.edu/');
  assert.equal(s.nodes, 7137);
  assert.equal(await simulateCommand({ graph: join(graphs, 'hollins.edges.txt'), strategy: 'nope' }, () => {}), 2);
  assert.equal(await simulateCommand({ graph: join(graphs, 'hollins.edges.txt'), strategy: 'bf', seed: 'http://absent/' }, () => {}), 1);
});
