/**
 * Server-level PageRank (seed 000): nodes are hosts, an edge u→v means some page of u links to some
 * page of v (links within a host are left out). Unweighted by default — each server pair counts
 * once, however many page links join them; `weighted` splits a server's rank over its targets in
 * proportion to the number of page links instead. Damping 0.85; the rank of servers without
 * out-links to other servers is spread over all servers. Scores are scaled so the top server has 10.
 */

export const DAMPING = 0.85;
export const TOP_SCORE = 10;

export interface ServerGraph {
  /** Host names; index = node id. */
  hosts: string[];
  /** Out-edges per node: target node id → number of page links. */
  out: Map<number, number>[];
}

export interface RankOptions {
  damping?: number;
  weighted?: boolean;
  tolerance?: number;
  maxIterations?: number;
}

export interface ServerRank {
  host: string;
  /** Scaled so the top server has 10. */
  score: number;
  /** Stationary probability (sums to 1 over all servers). */
  probability: number;
  inServers: number;
  outServers: number;
}

export interface RankResult {
  ranks: ServerRank[];
  iterations: number;
  weighted: boolean;
  edges: number;
}

/** Builds the server graph incrementally; hosts get ids in order of appearance. */
export class ServerGraphBuilder {
  private readonly ids = new Map<string, number>();
  readonly graph: ServerGraph = { hosts: [], out: [] };

  node(host: string): number {
    let id = this.ids.get(host);
    if (id === undefined) {
      id = this.graph.hosts.length;
      this.ids.set(host, id);
      this.graph.hosts.push(host);
      this.graph.out.push(new Map());
    }
    return id;
  }

  /** Adds `count` page links from `from` to `to`; links within one host are not server edges. */
  link(from: string, to: string, count = 1): void {
    const a = this.node(from);
    const b = this.node(to);
    if (a === b) return;
    const m = this.graph.out[a]!;
    m.set(b, (m.get(b) ?? 0) + count);
  }
}

export function serverPageRank(g: ServerGraph, opts: RankOptions = {}): RankResult {
  const d = opts.damping ?? DAMPING;
  const weighted = opts.weighted ?? false;
  const tol = opts.tolerance ?? 1e-12;
  const maxIt = opts.maxIterations ?? 1000;
  const n = g.hosts.length;
  if (n === 0) return { ranks: [], iterations: 0, weighted, edges: 0 };
  const totals = g.out.map((m) => (weighted ? [...m.values()].reduce((a, b) => a + b, 0) : m.size));
  const inServers = new Array<number>(n).fill(0);
  let edges = 0;
  for (const m of g.out) for (const t of m.keys()) {
    inServers[t]!++;
    edges++;
  }
  let r = new Float64Array(n).fill(1 / n);
  let next = new Float64Array(n);
  let it = 0;
  while (it < maxIt) {
    it++;
    next.fill(0);
    let dangling = 0;
    for (let v = 0; v < n; v++) {
      const total = totals[v]!;
      if (total === 0) {
        dangling += r[v]!;
        continue;
      }
      for (const [t, w] of g.out[v]!) next[t]! += (r[v]! * (weighted ? w : 1)) / total;
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
  let max = 0;
  for (let v = 0; v < n; v++) max = Math.max(max, r[v]!);
  const ranks: ServerRank[] = g.hosts.map((host, v) => ({
    host,
    score: (TOP_SCORE * r[v]!) / max,
    probability: r[v]!,
    inServers: inServers[v]!,
    outServers: g.out[v]!.size,
  }));
  ranks.sort((a, b) => b.score - a.score || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  return { ranks, iterations: it, weighted, edges };
}
