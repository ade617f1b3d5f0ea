/** True PageRank and reachability on CSR graphs (the simulator's ground truth). */
import type { Graph } from './graph.ts';

export interface PageRankOptions {
  damping?: number;
  /** Stop when the L1 change of one iteration is below this. Default 1e-10. */
  tolerance?: number;
  maxIterations?: number;
}

/**
 * Power iteration: r' = (1-d)/n + d * (sum over in-links r(u)/out(u) + dangling/n), dangling mass
 * (pages without out-links) redistributed uniformly. Returns ranks summing to 1.
 */
export function pageRank(g: Graph, opts: PageRankOptions = {}): { rank: Float64Array; iterations: number } {
  const d = opts.damping ?? 0.85;
  const tol = opts.tolerance ?? 1e-10;
  const maxIt = opts.maxIterations ?? 1000;
  const n = g.n;
  if (n === 0) return { rank: new Float64Array(0), iterations: 0 };
  const { offsets, targets } = g;
  let r = new Float64Array(n).fill(1 / n);
  let next = new Float64Array(n);
  let it = 0;
  while (it < maxIt) {
    it++;
    next.fill(0);
    let dangling = 0;
    for (let v = 0; v < n; v++) {
      const s = offsets[v]!;
      const e = offsets[v + 1]!;
      if (s === e) {
        dangling += r[v]!;
        continue;
      }
      const share = r[v]! / (e - s);
      for (let i = s; i < e; i++) next[targets[i]!]! += share;
    }
    const base = (1 - d) / n + (d * dangling) / n;
    let diff = 0;
    for (let v = 0; v < n; v++) {
      const x = base + d * next[v]!;
      diff += Math.abs(x - r[v]!);
      next[v] = x;
    }
    [r, next] = [next, r];
    if (diff < tol) break;
  }
  return { rank: r, iterations: it };
}

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
