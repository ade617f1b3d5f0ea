/** True PageRank and reachability on CSR graphs (the simulator's ground truth). */
import type { Graph } from './graph.ts';

// The power iteration itself is shared with the analyzer's server ranking; a Graph is a LinkGraph.
export { pageRank } from '../common/pagerank.ts';
export type { PageRankOptions } from '../common/pagerank.ts';

/** Nodes reachable from `seed` following out-links, in BFS order. */
export function reachable(g: Graph, seed: number): Uint32Array {
  const seen = new Uint8Array(g.n);
  const order = new Uint32Array(g.n);
  let head = 0;
  let tail = 0;
  order[tail++] = seed;
  seen[seed] = 1;
  while (head < tail) {
    const v = order[head++]!;
    for (let i = g.offsets[v]!, e = g.offsets[v + 1]!; i < e; i++) {
      const t = g.targets[i]!;
      if (seen[t] === 0) {
        seen[t] = 1;
        order[tail++] = t;
      }
    }
  }
  return order.slice(0, tail);
}

/**
 * Induced subgraph on `nodes` (new id = index in `nodes`); every out-link of a reachable node is
 * reachable, so no link is lost when `nodes` is a reachable set. Keeps per-node info.
 */
export function subgraph(g: Graph, nodes: Uint32Array): { graph: Graph; original: Uint32Array } {
  const map = new Int32Array(g.n).fill(-1);
  for (let i = 0; i < nodes.length; i++) map[nodes[i]!] = i;
  const k = nodes.length;
  const offsets = new Uint32Array(k + 1);
  let m = 0;
  for (let i = 0; i < k; i++) {
    const v = nodes[i]!;
    for (let j = g.offsets[v]!, e = g.offsets[v + 1]!; j < e; j++) if (map[g.targets[j]!]! >= 0) m++;
  }
  const targets = new Uint32Array(m);
  let w = 0;
  for (let i = 0; i < k; i++) {
    offsets[i] = w;
    const v = nodes[i]!;
    for (let j = g.offsets[v]!, e = g.offsets[v + 1]!; j < e; j++) {
      const t = map[g.targets[j]!]!;
      if (t >= 0) targets[w++] = t;
    }
  }
  offsets[k] = w;
  const graph: Graph = { n: k, m: w, offsets, targets };
  if (g.host !== undefined) graph.host = Int32Array.from(nodes, (v) => g.host![v]!);
  if (g.slashes !== undefined) graph.slashes = Uint8Array.from(nodes, (v) => g.slashes![v]!);
  if (g.urlLength !== undefined) graph.urlLength = Uint16Array.from(nodes, (v) => g.urlLength![v]!);
  if (g.urls !== undefined) graph.urls = Array.from(nodes, (v) => g.urls![v]!);
  return { graph, original: nodes };
}
