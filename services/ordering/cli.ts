/**
 * `meguri simulate --graph FILE --strategy S [--urls FILE] [--seed URL|node] [--out DIR] [--json]`
 * (commander wiring lives with the CLI; this is the command body).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chartSvg } from './chart.ts';
import { loadGraph, type Graph } from './graph.ts';
import { curvesCsv, prepare, simulate, type SimulationResult } from './simulate.ts';
import { isStrategyName, STRATEGY_NAMES, type StrategyName } from './strategies.ts';

export interface SimulateArgs {
  graph: string;
  urls?: string;
  /** A strategy name or 'all'. */
  strategy: string;
  /** A URL from the URL list or a node id. */
  seed?: string;
  out?: string;
  json?: boolean;
  /** PR recomputation interval (pages). */
  recomputeEvery?: number;
}

/** `X.edges.txt` -> `X.urls.txt` when that file exists. */
export function defaultUrlsPath(graphPath: string): string | undefined {
  if (!graphPath.endsWith('.edges.txt')) return undefined;
  const p = graphPath.slice(0, -'.edges.txt'.length) + '.urls.txt';
  return existsSync(p) ? p : undefined;
}

/** Seed: explicit node id or URL; otherwise the first host root URL ("http://host/"), else node 0. */
export function resolveSeed(g: Graph, seed: string | undefined): number {
  if (seed !== undefined) {
    if (/^\d+$/.test(seed)) return Number(seed);
    const i = g.urls?.indexOf(seed) ?? -1;
    if (i < 0) throw new Error(`seed URL not in the URL list: ${seed}`);
    return i;
  }
  const urls = g.urls;
  if (urls !== undefined) {
    const i = urls.findIndex((u) => /^https?:\/\/[^/]+\/?$/.test(u));
    if (i >= 0) return i;
  }
  return 0;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

export async function simulateCommand(args: SimulateArgs, out: (line: string) => void): Promise<number> {
  let names: StrategyName[];
  if (args.strategy === 'all') names = [...STRATEGY_NAMES];
  else if (isStrategyName(args.strategy)) names = [args.strategy];
  else {
    out(`unknown strategy "${args.strategy}"; use one of: ${STRATEGY_NAMES.join(', ')}, all`);
    return 2;
  }
  let g: Graph;
  let seed: number;
  try {
    g = loadGraph(args.graph, args.urls ?? defaultUrlsPath(args.graph));
    seed = resolveSeed(g, args.seed);
  } catch (e) {
    out(`simulate: ${(e as Error).message}`);
    return 1;
  }
  const t0 = Date.now();
  const p = prepare(g, seed);
  if (!args.json) {
    out(`graph ${args.graph}: ${g.n} nodes, ${g.m} edges; reachable from seed ${seed}${g.urls ? ` (${g.urls[seed]})` : ''}: ${p.graph.n} nodes, ${p.graph.m} edges; true PageRank in ${Date.now() - t0} ms`);
  }
  const results: SimulationResult[] = [];
  for (const name of names) {
    const r = simulate(p, name, args.recomputeEvery === undefined ? {} : { recomputeEvery: args.recomputeEvery });
    results.push(r);
    if (!args.json) {
      const s = r.summary;
      const a = (k: '0.001' | '0.01' | '0.1'): string => `${pct(s.criterionA[k]['0.1'])}/${pct(s.criterionA[k]['0.25'])}/${pct(s.criterionA[k]['0.5'])}`;
      out(
        `${name.padEnd(8)} ${String(s.pagesPerSecond).padStart(10)} pages/s  A0.1% ${a('0.001')}  A1% ${a('0.01')}  A10% ${a('0.1')}  B ${s.criterionB['0.1'].toFixed(3)}/${s.criterionB['0.25'].toFixed(3)}/${s.criterionB['0.5'].toFixed(3)}  C ${s.criterionC.toFixed(4)}`,
      );
    }
    // Let the event loop breathe between long replays.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const summaries = results.map((r) => r.summary);
  const summaryJson = JSON.stringify(summaries.length === 1 ? summaries[0] : summaries, null, 2);
  if (args.out !== undefined) {
    mkdirSync(args.out, { recursive: true });
    writeFileSync(join(args.out, 'curves.csv'), curvesCsv(results));
    writeFileSync(join(args.out, 'chart.svg'), chartSvg(results, `crawl ordering: ${args.graph} (${p.graph.n} pages)`));
    writeFileSync(join(args.out, 'summary.json'), summaryJson + '\n');
    if (!args.json) out(`wrote ${join(args.out, 'curves.csv')}, chart.svg, summary.json`);
  }
  if (args.json) out(summaryJson);
  return 0;
}
