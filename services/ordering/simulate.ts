/**
 * Offline crawl replay: no network, the graph answers "fetch" with the page's out-links. Measures
 * how early a strategy fetches the pages that are important by the graph's true PageRank.
 *
 * Only the part reachable from the seed counts as "all pages" (P): a crawl from that seed can never
 * see the rest, and every strategy fetches exactly P in the end.
 */
import type { Graph } from './graph.ts';
import { pageRank, reachable, subgraph } from './pagerank.ts';
import { createStrategy, type StrategyName, type StrategyOptions } from './strategies.ts';

export const TOP_SHARES = ['0.001', '0.01', '0.1'] as const;
export const CHECKPOINTS = ['0.1', '0.25', '0.5'] as const;
type TopKey = (typeof TOP_SHARES)[number];
type CheckKey = (typeof CHECKPOINTS)[number];

export interface CurvePoint {
  fetched: number;
  fraction: number;
  /** Criterion A per top share. */
  top: Record<TopKey, number>;
  /** Criterion B: sum of true PageRank fetched (true ranks sum to 1 over P). */
  prSum: number;
  /** Criterion C restricted to the pages fetched so far, over the same WorstCase. */
  cPartial: number;
}

export interface Summary {
  strategy: string;
  nodes: number;
  edges: number;
  seed: number;
  seedUrl?: string;
  pagesPerSecond: number;
  criterionA: Record<TopKey, Record<CheckKey, number>>;
  criterionB: Record<CheckKey, number>;
  criterionC: number;
  /** The c in |T - R| / sqrt(T + c). */
  c: number;
}

export interface Evaluation {
  curve: CurvePoint[];
  criterionA: Record<TopKey, Record<CheckKey, number>>;
  criterionB: Record<CheckKey, number>;
  criterionC: number;
  c: number;
}

/** orderR: 1-based rank by true PageRank, descending (ties by node id, for determinism). */
export function importanceRanks(rank: Float64Array): Uint32Array {
  const n = rank.length;
  const idx = new Uint32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort((a, b) => rank[b]! - rank[a]! || a - b);
  const r = new Uint32Array(n);
  for (let i = 0; i < n; i++) r[idx[i]!] = i + 1;
  return r;
}

/** Default c: 0.1 % of the pages (at least 1), so the first few seed-determined fetches do not dominate. */
export function defaultC(n: number): number {
  return Math.max(1, Math.round(n * 0.001));
}

/**
 * Criteria A, B, C for a fetch order over all n pages (`order[i]` = node fetched at time i+1).
 * `rank` is the true PageRank (summing to 1). Curves are sampled at `points` evenly spaced times.
 */
export function evaluateOrder(order: Uint32Array, rank: Float64Array, opts: { c?: number; points?: number } = {}): Evaluation {
  const n = rank.length;
  if (order.length !== n) throw new Error(`order covers ${order.length} of ${n} pages`);
  const c = opts.c ?? defaultC(n);
  const points = Math.min(opts.points ?? 200, n);
  const R = importanceRanks(rank);
  const topCounts = TOP_SHARES.map((s) => Math.max(1, Math.round(Number(s) * n)));
  let worst = 0;
  for (let v = 0; v < n; v++) {
    const r = R[v]!;
    const t = n + 1 - r;
    worst += Math.abs(t - r) / Math.sqrt(t + c);
  }
  if (worst === 0) worst = 1; // n = 1: any order is perfect
  const checkTimes = CHECKPOINTS.map((f) => Math.max(1, Math.round(Number(f) * n)));
  const sampleTimes = new Set<number>();
  for (let k = 1; k <= points; k++) sampleTimes.add(Math.ceil((k * n) / points));
  const curve: CurvePoint[] = [];
  const checks: CurvePoint[] = [];
  const hits = [0, 0, 0];
  let prSum = 0;
  let cSum = 0;
  for (let i = 0; i < n; i++) {
    const v = order[i]!;
    const t = i + 1;
    const r = R[v]!;
    for (let k = 0; k < 3; k++) if (r <= topCounts[k]!) hits[k]!++;
    prSum += rank[v]!;
    cSum += Math.abs(t - r) / Math.sqrt(t + c);
    const sample = sampleTimes.has(t);
    const checkIdx = checkTimes.indexOf(t);
    if (sample || checkIdx >= 0) {
      const p: CurvePoint = {
        fetched: t,
        fraction: t / n,
        top: { '0.001': hits[0]! / topCounts[0]!, '0.01': hits[1]! / topCounts[1]!, '0.1': hits[2]! / topCounts[2]! },
        prSum,
        cPartial: cSum / worst,
      };
      if (sample) curve.push(p);
      for (let k = 0; k < checkTimes.length; k++) if (checkTimes[k] === t) checks[k] = p;
    }
  }
  const at = (k: number): CurvePoint => checks[k]!;
  const byCheck = <T>(f: (p: CurvePoint) => T): Record<CheckKey, T> => ({ '0.1': f(at(0)), '0.25': f(at(1)), '0.5': f(at(2)) });
  return {
    curve,
    criterionA: {
      '0.001': byCheck((p) => p.top['0.001']),
      '0.01': byCheck((p) => p.top['0.01']),
      '0.1': byCheck((p) => p.top['0.1']),
    },
    criterionB: byCheck((p) => p.prSum),
    criterionC: cSum / worst,
    c,
  };
}

/** The replay loop; returns the fetch order and the time spent in the strategy (ms). */
export function replay(g: Graph, strategy: StrategyName, seed: number, opts: StrategyOptions = {}): { order: Uint32Array; ms: number } {
  const { offsets, targets } = g;
  const outLinksOf = (v: number): Uint32Array => targets.subarray(offsets[v]!, offsets[v + 1]!);
  const s = createStrategy(strategy, g.n, g, outLinksOf, opts);
  const order = new Uint32Array(g.n);
  let k = 0;
  const t0 = process.hrtime.bigint();
  s.addSeed(seed);
  for (let p = s.next(); p !== undefined; p = s.next()) {
    order[k++] = p;
    s.onFetched(p, targets.subarray(offsets[p]!, offsets[p + 1]!));
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { order: order.subarray(0, k), ms };
}

export interface Prepared {
  /** Reachable subgraph, seed = node 0 of it. */
  graph: Graph;
  rank: Float64Array;
  /** Original id of each subgraph node. */
  original: Uint32Array;
  seed: number;
}

/** Restrict to the part reachable from `seed` and compute its true PageRank. */
export function prepare(g: Graph, seed: number): Prepared {
  if (!Number.isInteger(seed) || seed < 0 || seed >= g.n) throw new Error(`seed ${seed} is not a node`);
  const nodes = reachable(g, seed);
  const { graph, original } = subgraph(g, nodes);
  const { rank } = pageRank(graph);
  return { graph, rank, original, seed };
}

export interface SimulationResult {
  summary: Summary;
  curve: CurvePoint[];
  order: Uint32Array;
}

export function simulate(p: Prepared, strategy: StrategyName, opts: StrategyOptions & { c?: number; points?: number } = {}): SimulationResult {
  const { order, ms } = replay(p.graph, strategy, 0, opts);
  const ev = evaluateOrder(order, p.rank, opts);
  const seedUrl = p.graph.urls?.[0];
  return {
    order,
    curve: ev.curve,
    summary: {
      strategy,
      nodes: p.graph.n,
      edges: p.graph.m,
      seed: p.seed,
      ...(seedUrl === undefined ? {} : { seedUrl }),
      pagesPerSecond: Math.round(order.length / (Math.max(ms, 1e-3) / 1000)),
      criterionA: ev.criterionA,
      criterionB: ev.criterionB,
      criterionC: ev.criterionC,
      c: ev.c,
    },
  };
}

export function curvesCsv(results: SimulationResult[]): string {
  const lines = ['strategy,fetched,fraction,top0.001,top0.01,top0.1,prSum,cPartial'];
  for (const r of results) {
    for (const p of r.curve) {
      lines.push(
        [r.summary.strategy, p.fetched, p.fraction.toFixed(5), p.top['0.001'].toFixed(5), p.top['0.01'].toFixed(5), p.top['0.1'].toFixed(5), p.prSum.toFixed(6), p.cPartial.toFixed(6)].join(','),
      );
    }
  }
  return lines.join('\n') + '\n';
}
