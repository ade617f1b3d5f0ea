import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pageRank } from '../../services/common/pagerank.ts';
import type { LinkGraph } from '../../services/common/pagerank.ts';

/** CSR form of an edge list (edges grouped by source, in the order given). */
function linkGraph(n: number, edges: [number, number, number?][]): LinkGraph {
  const sorted = [...edges].sort((a, b) => a[0] - b[0]);
  const offsets = new Uint32Array(n + 1);
  for (const [from] of sorted) offsets[from + 1]!++;
  for (let v = 0; v < n; v++) offsets[v + 1]! += offsets[v]!;
  const targets = Uint32Array.from(sorted, (e) => e[1]);
  const g: LinkGraph = { n, offsets, targets };
  if (edges.some((e) => e[2] !== undefined)) g.weights = Float64Array.from(sorted, (e) => e[2] ?? 1);
  return g;
}

function sum(rank: Float64Array): number {
  return rank.reduce((a, b) => a + b, 0);
}

describe('PageRank power iteration', () => {
  test('a tiny graph matches the hand computation', () => {
    // 0 <-> 1, 2 -> 0: r2 = 0.05, r0 = 0.135 / 0.2775, r1 = 0.05 + 0.85 r0.
    const { rank } = pageRank(linkGraph(3, [[0, 1], [1, 0], [2, 0]]));
    assert.ok(Math.abs(rank[2]! - 0.05) < 1e-9);
    assert.ok(Math.abs(rank[0]! - 0.135 / 0.2775) < 1e-9);
    assert.ok(Math.abs(rank[1]! - (0.05 + 0.85 * (0.135 / 0.2775))) < 1e-9);
  });

  test('the rank of a node without out-links is spread over all nodes', () => {
    // 0 -> 1, 1 dangling: r0 = 0.5 / 1.425.
    const { rank } = pageRank(linkGraph(2, [[0, 1]]));
    assert.ok(Math.abs(rank[0]! - 0.5 / 1.425) < 1e-9);
    assert.ok(Math.abs(sum(rank) - 1) < 1e-12);
  });

  test('a repeated target counts once more; a weight does the same', () => {
    const repeated = pageRank(linkGraph(3, [[0, 1], [0, 1], [0, 2], [1, 0], [2, 0]])).rank;
    const weighted = pageRank(linkGraph(3, [[0, 1, 2], [0, 2, 1], [1, 0, 1], [2, 0, 1]])).rank;
    for (let v = 0; v < 3; v++) assert.ok(Math.abs(repeated[v]! - weighted[v]!) < 1e-12, `node ${v}`);
    assert.ok(repeated[1]! > repeated[2]!, 'the doubly linked node ranks higher');
  });

  test('weights of 1 give exactly the unweighted ranks', () => {
    const edges: [number, number][] = [[0, 1], [0, 2], [1, 2], [2, 0], [3, 2], [3, 0]];
    const plain = pageRank(linkGraph(5, edges));
    const ones = pageRank(linkGraph(5, edges.map(([a, b]): [number, number, number] => [a, b, 1])));
    assert.deepEqual(ones, plain);
  });

  test('a node whose out-edges all weigh 0 is dangling', () => {
    const zero = pageRank(linkGraph(2, [[0, 1, 0], [1, 0, 1]])).rank;
    const none = pageRank(linkGraph(2, [[1, 0, 1]])).rank;
    assert.deepEqual(zero, none);
    assert.ok(Math.abs(sum(zero) - 1) < 1e-12);
  });

  test('damping, tolerance and the iteration cap are honoured', () => {
    const g = linkGraph(4, [[0, 1], [1, 2], [2, 0], [3, 0]]);
    assert.deepEqual(Array.from(pageRank(g, { damping: 0 }).rank), [0.25, 0.25, 0.25, 0.25]);
    assert.equal(pageRank(g, { maxIterations: 3, tolerance: 0 }).iterations, 3);
    const loose = pageRank(g, { tolerance: 1e-3 });
    const tight = pageRank(g, { tolerance: 1e-14 });
    assert.ok(loose.iterations < tight.iterations, `${loose.iterations} < ${tight.iterations}`);
    assert.ok(Math.abs(sum(tight.rank) - 1) < 1e-12);
  });

  test('an empty graph has no ranks', () => {
    assert.deepEqual(pageRank(linkGraph(0, [])), { rank: new Float64Array(0), iterations: 0 });
  });
});
