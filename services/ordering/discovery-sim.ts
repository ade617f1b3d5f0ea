/**
 * Hoshino et al.'s experiment replayed over a link graph with its URL list, no network: from each start
 * site, a breadth-first crawl by depth that fetches internal URLs only (Table 4), with the
 * query restriction (a URL counts as visited by its form without the query) and variable sampling
 * (of the internal URLs found at depth n, the share R is crawled at depth n+1; the same per-URL
 * seeded draw as the live crawl). External URLs are found, never crawled.
 *
 * Figures per depth n, as in the paper: load ratio = pages crawled by depth n / pages a full survey
 * crawls (rate 1, no restriction, depth D); yield ratio = external URLs found by depth n / external
 * URLs the full survey finds. Servers (distinct external hosts) are counted too.
 */
import { classify, sampled } from '../common/discovery.ts';
import type { DepthRow } from '../common/discovery.ts';
import { outLinks } from './graph.ts';
import type { Graph } from './graph.ts';
import { hostOf } from '../common/url.ts';

export interface DiscoverySetting {
  readonly sampleRate: number;
  readonly queryRestriction: boolean;
}

export interface DiscoverySimOptions extends DiscoverySetting {
  readonly maxDepth: number;
  readonly sampleSeed: number;
  /** Start pages (node ids), one per start site. */
  readonly starts: readonly number[];
}

export interface DiscoveryRun {
  readonly name: string;
  readonly setting: DiscoverySetting;
  readonly pagesByDepth: number[];
  readonly externalUrlsByDepth: number[];
  readonly serversByDepth: number[];
  readonly pages: number;
  readonly externalUrls: number;
  readonly servers: number;
}

function withoutQuery(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function add(list: number[], depth: number, n = 1): void {
  while (list.length <= depth) list.push(0);
  list[depth] = list[depth]! + n;
}

export function settingName(s: DiscoverySetting): string {
  return `sample ${Math.round(s.sampleRate * 100)} %, query restriction ${s.queryRestriction ? 'on' : 'off'}`;
}

/** One survey over every start site. External URLs and servers are counted once over all sites. */
export function simulateDiscovery(g: Graph, opts: DiscoverySimOptions): DiscoveryRun {
  const urls = g.urls;
  if (!urls) throw new Error('discovery simulation needs the graph\'s URL list (--urls)');
  const pagesByDepth: number[] = [];
  const externalUrlsByDepth: number[] = [];
  const serversByDepth: number[] = [];
  const externalSeen = new Set<number>();
  const serversSeen = new Set<string>();
  for (const start of opts.starts) {
    const startSite = hostOf(urls[start] ?? '');
    if (startSite === '') continue;
    const visited = new Set<string>();
    const key = (v: number): string => (opts.queryRestriction ? withoutQuery(urls[v]!) : String(v));
    visited.add(key(start));
    let level = [start];
    for (let depth = 0; depth <= opts.maxDepth && level.length > 0; depth++) {
      const next: number[] = [];
      for (const v of level) {
        add(pagesByDepth, depth);
        for (const t of outLinks(g, v)) {
          const url = urls[t] ?? '';
          const host = hostOf(url);
          if (host === '') continue;
          if (classify(startSite, host) === 'external') {
            if (!externalSeen.has(t)) {
              externalSeen.add(t);
              add(externalUrlsByDepth, depth + 1);
            }
            if (!serversSeen.has(host)) {
              serversSeen.add(host);
              add(serversByDepth, depth + 1);
            }
            continue;
          }
          const k = key(t);
          if (visited.has(k)) continue;
          visited.add(k);
          if (depth + 1 <= opts.maxDepth && sampled(url, startSite, opts.sampleRate, opts.sampleSeed)) next.push(t);
        }
      }
      level = next;
    }
  }
  const sum = (l: number[]): number => l.reduce((a, b) => a + b, 0);
  return {
    name: settingName(opts),
    setting: { sampleRate: opts.sampleRate, queryRestriction: opts.queryRestriction },
    pagesByDepth,
    externalUrlsByDepth,
    serversByDepth,
    pages: sum(pagesByDepth),
    externalUrls: externalSeen.size,
    servers: serversSeen.size,
  };
}

/** A run's rows relative to the full survey (the paper's denominators). */
export function relativeRows(run: DiscoveryRun, full: DiscoveryRun, maxDepth: number): DepthRow[] {
  const rows: DepthRow[] = [];
  let pages = 0;
  let found = 0;
  for (let depth = 0; depth <= maxDepth; depth++) {
    pages += run.pagesByDepth[depth] ?? 0;
    found += run.externalUrlsByDepth[depth] ?? 0;
    rows.push({
      depth,
      pagesCrawled: run.pagesByDepth[depth] ?? 0,
      externalServersFound: run.serversByDepth[depth] ?? 0,
      loadRatio: full.pages > 0 ? Math.round((pages / full.pages) * 1e4) / 1e4 : 0,
      yieldRatio: full.externalUrls > 0 ? Math.round((found / full.externalUrls) * 1e4) / 1e4 : 0,
    });
  }
  return rows;
}

/** Default start sites: the first page (lowest id) of every host with at least `minPages` pages. */
export function defaultStarts(g: Graph, minPages: number): number[] {
  const urls = g.urls ?? [];
  const first = new Map<string, number>();
  const count = new Map<string, number>();
  for (let v = 0; v < urls.length; v++) {
    const host = hostOf(urls[v] ?? '');
    if (host === '' || !/^[a-z0-9.-]+(:\d+)?$/.test(host)) continue;
    if (!first.has(host)) first.set(host, v);
    count.set(host, (count.get(host) ?? 0) + 1);
  }
  return [...first.entries()].filter(([h]) => (count.get(h) ?? 0) >= minPages).map(([, v]) => v).sort((a, b) => a - b);
}

/** Hoshino et al.'s grid: sample rates 30 %, 55 %, 100 %, query restriction off and on; the full survey first. */
export const SEED_002_SETTINGS: readonly DiscoverySetting[] = [
  { sampleRate: 1, queryRestriction: false },
  { sampleRate: 1, queryRestriction: true },
  { sampleRate: 0.55, queryRestriction: false },
  { sampleRate: 0.55, queryRestriction: true },
  { sampleRate: 0.3, queryRestriction: false },
  { sampleRate: 0.3, queryRestriction: true },
];
