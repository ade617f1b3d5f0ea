/**
 * PageRank by power iteration over a directed graph in CSR form (node ids 0..n-1), for any service
 * that ranks a link graph: the ordering simulator's page graph and the analyzer's server graph.
 *
 * One step: r'(v) = (1-d)/n + d * (sum over in-edges u→v of r(u) * share(u→v) + dangling/n), where
 * share is 1/out-degree, or the edge's weight over u's total out-weight when weights are given, and
 * `dangling` is the rank of the nodes with nothing to pass on (no out-edges, or a total weight of
 * 0), spread over all nodes. The ranks sum to 1. Iteration stops when the L1 change of one step is
 * below the tolerance, or after `maxIterations` steps.
 */

export const DEFAULT_DAMPING = 0.85;

export interface LinkGraph {
  /** Number of nodes (ids 0..n-1). */
  n: number;
  /** Out-edges of v are targets[offsets[v] .. offsets[v+1]); a repeated target counts once more. */
  offsets: Uint32Array;
  targets: Uint32Array;
  /** Weight per edge, aligned with `targets`; absent = every edge weighs the same. */
  weights?: Float64Array;
}

export interface PageRankOptions {
  /** Probability of following a link rather than jumping to a random node. Default 0.85. */
  damping?: number;
  /** Stop when the L1 change of one iteration is below this. Default 1e-10. */
  tolerance?: number;
  /** Default 1000. */
  maxIterations?: number;
}

export interface PageRankResult {
  /** Stationary probability per node id, summing to 1. */
  rank: Float64Array;
  iterations: number;
}

export function pageRank(g: LinkGraph, opts: PageRankOptions = {}): PageRankResult {
  const d = opts.damping ?? DEFAULT_DAMPING;
  const tol = opts.tolerance ?? 1e-10;
  const maxIt = opts.maxIterations ?? 1000;
  const n = g.n;
  if (n === 0) return { rank: new Float64Array(0), iterations: 0 };
  const { offsets, targets, weights } = g;
  const totals = weights ? outWeights(offsets, weights, n) : undefined;
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
      if (totals && weights) {
        const total = totals[v]!;
        if (total === 0) {
          dangling += r[v]!;
          continue;
        }
        for (let i = s; i < e; i++) next[targets[i]!]! += (r[v]! * weights[i]!) / total;
      } else {
        if (s === e) {
          dangling += r[v]!;
          continue;
        }
        const share = r[v]! / (e - s);
        for (let i = s; i < e; i++) next[targets[i]!]! += share;
      }
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

/** Sum of out-edge weights per node, added in edge order. */
function outWeights(offsets: Uint32Array, weights: Float64Array, n: number): Float64Array {
  const totals = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    let sum = 0;
    for (let i = offsets[v]!, e = offsets[v + 1]!; i < e; i++) sum += weights[i]!;
    totals[v] = sum;
  }
  return totals;
}
