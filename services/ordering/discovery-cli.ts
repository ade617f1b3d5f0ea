/**
 * `meguri simulate --mode discovery --graph FILE [--urls FILE] [--seed URL|node] [--max-depth D]
 * [--sample-seed N] [--min-site-pages N] [--out DIR] [--json]`: Hoshino et al.'s grid (sample 30/55/100 %,
 * query restriction off/on) over a link graph; load and yield ratio by depth as CSV, SVG and JSON.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadGraph } from './graph.ts';
import { defaultUrlsPath, resolveSeed } from './cli.ts';
import { SEED_002_SETTINGS, defaultStarts, relativeRows, simulateDiscovery } from './discovery-sim.ts';
import { depthChartSvg, depthCsv } from '../common/discovery-report.ts';

export interface DiscoverySimulateArgs {
  graph: string;
  urls?: string;
  seed?: string;
  maxDepth: number;
  sampleSeed: number;
  minSitePages: number;
  out?: string;
  json: boolean;
}

export function discoverySimulateCommand(args: DiscoverySimulateArgs, out: (line: string) => void): number {
  const urlsPath = args.urls ?? defaultUrlsPath(args.graph);
  if (urlsPath === undefined) throw new Error('discovery simulation needs the URL list: --urls FILE (or X.urls.txt beside X.edges.txt)');
  const g = loadGraph(args.graph, urlsPath);
  const starts = args.seed !== undefined ? [resolveSeed(g, args.seed)] : defaultStarts(g, args.minSitePages);
  if (starts.length === 0) throw new Error(`no start site: no host has ${args.minSitePages} pages (--min-site-pages) and no --seed was given`);
  const runs = SEED_002_SETTINGS.map((s) => simulateDiscovery(g, { ...s, maxDepth: args.maxDepth, sampleSeed: args.sampleSeed, starts }));
  const full = runs[0]!;
  const series = runs.map((r) => ({ name: r.name, rows: relativeRows(r, full, args.maxDepth) }));
  const summary = {
    graph: args.graph,
    nodes: g.n,
    edges: g.m,
    startSites: starts.map((v) => g.urls?.[v] ?? String(v)),
    maxDepth: args.maxDepth,
    runs: runs.map((r, i) => {
      const rows = series[i]!.rows;
      // The depth from which the external-URL yield stays within 1 % of its final value.
      const last = rows[rows.length - 1]!.yieldRatio;
      const saturation = rows.find((row) => row.yieldRatio >= last - 0.01)?.depth ?? args.maxDepth;
      return {
        setting: r.name,
        pagesCrawled: r.pages,
        externalUrls: r.externalUrls,
        servers: r.servers,
        loadRatio: full.pages > 0 ? Math.round((r.pages / full.pages) * 1e4) / 1e4 : 0,
        yieldRatio: full.externalUrls > 0 ? Math.round((r.externalUrls / full.externalUrls) * 1e4) / 1e4 : 0,
        yieldSaturatesAtDepth: saturation,
      };
    }),
  };
  if (args.out !== undefined) {
    mkdirSync(args.out, { recursive: true });
    writeFileSync(join(args.out, 'discovery.csv'), depthCsv(series));
    writeFileSync(join(args.out, 'discovery.svg'), depthChartSvg(series, `Server discovery over ${args.graph.split('/').pop()} (${starts.length} start sites, depth ≤ ${args.maxDepth})`));
    writeFileSync(join(args.out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  }
  if (args.json) out(JSON.stringify(summary, null, 2));
  else {
    out(`graph ${args.graph}: ${g.n} nodes, ${g.m} edges; ${starts.length} start site(s); depth ≤ ${args.maxDepth}`);
    out('setting                                   pages  load   ext.URLs  yield  servers  yield flat from depth');
    for (const r of summary.runs) out(`${r.setting.padEnd(40)} ${String(r.pagesCrawled).padStart(6)}  ${r.loadRatio.toFixed(3)}  ${String(r.externalUrls).padStart(8)}  ${r.yieldRatio.toFixed(3)}  ${String(r.servers).padStart(7)}  ${r.yieldSaturatesAtDepth}`);
  }
  return 0;
}
