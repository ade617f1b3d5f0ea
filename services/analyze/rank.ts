/**
 * Server-level PageRank (Muraoka et al.): nodes are hosts, an edge u→v means some page of u links to some
 * page of v (links within a host are left out). Unweighted by default — each server pair counts
 * once, however many page links join them; `weighted` splits a server's rank over its targets in
 * proportion to the number of page links instead. Damping 0.85; the rank of servers without
 * out-links to other servers is spread over all servers. Scores are scaled so the top server has 10.
 */
import { pageRank, DEFAULT_DAMPING } from '../common/pagerank.ts';
import type { LinkGraph } from '../common/pagerank.ts';

export const DAMPING = DEFAULT_DAMPING;
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
  const inServers = new Array<number>(n).fill(0);
  let edges = 0;
  for (const m of g.out) for (const t of m.keys()) {
    inServers[t]!++;
    edges++;
  }
  const { rank: r, iterations: it } = pageRank(toLinkGraph(g, edges, weighted), { damping: d, tolerance: tol, maxIterations: maxIt });
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

/** The server graph in CSR form, each node's edges in the order they were first seen. */
function toLinkGraph(g: ServerGraph, edges: number, weighted: boolean): LinkGraph {
  const n = g.hosts.length;
  const offsets = new Uint32Array(n + 1);
  const targets = new Uint32Array(edges);
  const weights = weighted ? new Float64Array(edges) : undefined;
  let i = 0;
  for (let v = 0; v < n; v++) {
    offsets[v] = i;
    for (const [t, w] of g.out[v]!) {
      targets[i] = t;
      if (weights) weights[i] = w;
      i++;
    }
  }
  offsets[n] = i;
  return weights ? { n, offsets, targets, weights } : { n, offsets, targets };
}
