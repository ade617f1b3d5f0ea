/**
 * The analysis jobs over a crawl's aggregates (scan.ts): each returns a JSON-able result plus the
 * CSV and SVG files it writes with --out. Duplicates also needs the page store (its clusters are
 * per page, kept on disk).
 */
import { serverPageRank, DAMPING } from './rank.ts';
import type { RankResult } from './rank.ts';
import { log2Bins } from './histogram.ts';
import type { Bin } from './histogram.ts';
import { qualityScore } from './quality.ts';
import { AXIS_LABELS, PROFILE_AXES, axisMeans, profileScores, profileValues } from './profile.ts';
import type { ProfileValues } from './profile.ts';
import type { CountryLookup } from '../common/country.ts';
import { barChart, logLogChart, radarChart } from './charts.ts';
import { csv, csvLine } from './csv.ts';
import type { CrawlAggregate, ScratchStore } from './scan.ts';
import type { RocksDb, BatchOp } from '../runtime/rocksdb.ts';

export const JOBS = ['host-rank', 'distributions', 'duplicates', 'site-profile', 'geo'] as const;
export type JobName = (typeof JOBS)[number];

/** A file the job writes into --out: whole text, or lines streamed from disk. */
export type OutputFile = { name: string; text: string } | { name: string; lines: () => AsyncIterable<string> };

export interface JobOutput<R> {
  result: R;
  files: OutputFile[];
  /** Human-readable lines for the terminal. */
  text: string[];
}

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const pct = (n: number, total: number): number => (total === 0 ? 0 : r4((100 * n) / total));

// ---------------------------------------------------------------- host-rank

export interface HostRankResult {
  servers: number;
  edges: number;
  weighted: boolean;
  damping: number;
  iterations: number;
  top: { rank: number; host: string; score: number; inServers: number; outServers: number }[];
}

export function hostRankJob(agg: CrawlAggregate, o: { weighted?: boolean; top?: number } = {}): JobOutput<HostRankResult> & { rank: RankResult } {
  const rank = serverPageRank(agg.graph.graph, { weighted: o.weighted ?? false });
  const rows = rank.ranks.map((r, i) => ({ rank: i + 1, host: r.host, score: r4(r.score), inServers: r.inServers, outServers: r.outServers }));
  const result: HostRankResult = {
    servers: rank.ranks.length,
    edges: rank.edges,
    weighted: rank.weighted,
    damping: DAMPING,
    iterations: rank.iterations,
    top: rows.slice(0, o.top ?? 20),
  };
  const files: OutputFile[] = [
    { name: 'host-rank.csv', text: csv(['rank', 'host', 'score', 'probability', 'in_servers', 'out_servers'], rank.ranks.map((r, i) => [i + 1, r.host, r.score, r.probability, r.inServers, r.outServers])) },
    {
      name: 'host-rank.svg',
      text: logLogChart(
        rank.ranks.map((r, i) => ({ x: i + 1, y: r.score })),
        { title: `Server PageRank (${rank.weighted ? 'weighted' : 'unweighted'}, d = ${DAMPING}, top = 10): ${rank.ranks.length} servers`, xLabel: 'server rank', yLabel: 'score' },
      ),
    },
  ];
  const text = [
    `server PageRank over ${result.servers} servers, ${result.edges} server links (${result.weighted ? 'weighted by page links' : 'unweighted'}), damping ${DAMPING}, ${result.iterations} iterations`,
    ...result.top.map((r) => `${String(r.rank).padStart(5)}  ${r.score.toFixed(3).padStart(7)}  ${r.host}`),
  ];
  return { result, files, text, rank };
}

// ---------------------------------------------------------------- distributions

export interface DistributionsResult {
  pages: number;
  servers: number;
  tlds: { tld: string; pages: number; share: number; servers: number; meanPagesPerServer: number }[];
  languages: { lang: string; pages: number; share: number }[];
  languagesByTld: Record<string, { lang: string; pages: number; share: number }[]>;
  pagesPerServer: Bin[];
}

export function distributionsJob(agg: CrawlAggregate): JobOutput<DistributionsResult> {
  const serversByTld = new Map<string, number>();
  for (const h of agg.hosts.values()) serversByTld.set(h.tld, (serversByTld.get(h.tld) ?? 0) + 1);
  const tlds = agg.tldPages.sorted().map(({ label, count }) => {
    const servers = serversByTld.get(label) ?? 0;
    return { tld: label, pages: count, share: pct(count, agg.pages), servers, meanPagesPerServer: servers === 0 ? 0 : r4(count / servers) };
  });
  const langs = (t: { sorted(): { label: string; count: number }[]; total: number }): { lang: string; pages: number; share: number }[] =>
    t.sorted().map(({ label, count }) => ({ lang: label, pages: count, share: pct(count, t.total) }));
  const languagesByTld: Record<string, { lang: string; pages: number; share: number }[]> = {};
  for (const [tld, t] of [...agg.languagesByTld].sort((a, b) => (a[0] < b[0] ? -1 : 1))) languagesByTld[tld] = langs(t);
  const pagesPerServer = log2Bins([...agg.hosts.values()].map((h) => h.pages));
  const result: DistributionsResult = { pages: agg.pages, servers: agg.hosts.size, tlds, languages: langs(agg.languages), languagesByTld, pagesPerServer };
  const files: OutputFile[] = [
    { name: 'tld.csv', text: csv(['tld', 'pages', 'share_percent', 'servers', 'mean_pages_per_server'], tlds.map((t) => [t.tld, t.pages, t.share, t.servers, t.meanPagesPerServer])) },
    {
      name: 'languages.csv',
      text: csv(['tld', 'lang', 'pages', 'share_percent'], [
        ...result.languages.map((l) => ['(all)', l.lang, l.pages, l.share] as const),
        ...Object.entries(languagesByTld).flatMap(([tld, ls]) => ls.map((l) => [tld, l.lang, l.pages, l.share] as const)),
      ]),
    },
    { name: 'pages-per-server.csv', text: csv(['from', 'to', 'servers'], pagesPerServer.map((b) => [b.from, b.to, b.count])) },
    { name: 'tld.svg', text: barChart(tlds.map((t) => ({ label: `.${t.tld}`, value: t.pages })), { title: 'Pages per TLD', valueLabel: 'pages' }) },
    { name: 'languages.svg', text: barChart(result.languages.map((l) => ({ label: l.lang, value: l.pages })), { title: 'Pages per language', valueLabel: 'pages' }) },
    { name: 'pages-per-server.svg', text: barChart(pagesPerServer.map((b) => ({ label: b.from === b.to ? String(b.from) : `${b.from}–${b.to}`, value: b.count })), { title: 'Servers by pages per server', valueLabel: 'servers' }) },
  ];
  const text = [
    `${result.pages} pages on ${result.servers} servers`,
    'TLD        pages   share%  servers  mean pages/server',
    ...tlds.map((t) => `.${t.tld.padEnd(8)} ${String(t.pages).padStart(6)}  ${t.share.toFixed(2).padStart(6)}  ${String(t.servers).padStart(7)}  ${t.meanPagesPerServer.toFixed(1).padStart(8)}`),
    'languages: ' + result.languages.map((l) => `${l.lang} ${l.share.toFixed(2)}%`).join(', '),
    'servers by pages per server: ' + pagesPerServer.filter((b) => b.count > 0).map((b) => `${b.from === b.to ? b.from : `${b.from}–${b.to}`}: ${b.count}`).join(', '),
  ];
  return { result, files, text };
}

// ---------------------------------------------------------------- duplicates

const MD5_PREFIX = 'm\u0000';
const RANK_PREFIX = 'q\u0000';
const CLUSTER_PREFIX = 'c\u0000';

interface Scored {
  url: string;
  host: string;
  md5: string;
  score: number;
}

export interface DuplicatesResult {
  pages: number;
  /** Distinct bodies. */
  distinct: number;
  /** MD5 values shared by more than one page. */
  clusters: number;
  /** Pages dropped as copies (cluster size − 1, summed). */
  duplicatePages: number;
  largest: { md5: string; size: number; representative: string; members: string[] }[];
  /** Representatives and unique pages by quality score, best first. */
  top: { rank: number; url: string; score: number }[];
  scoring: string;
}

function end(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  b[b.length - 1]!++;
  return b;
}

/** Score key part that sorts best first: 100 − score, fixed width. */
function rankKey(score: number): string {
  return (100 - score).toFixed(6).padStart(11, '0');
}

async function* rangeValues(db: RocksDb, prefix: string): AsyncGenerator<[string, string]> {
  for await (const [k, v] of db.range({ gte: Buffer.from(prefix), lt: end(prefix) })) yield [k.toString('utf8').slice(prefix.length), v.toString('utf8')];
}

/**
 * Writes the per-page index (md5 → page with its quality score) into the store, then walks it in
 * MD5 order: each run of equal MD5s is a cluster whose representative is its best-scoring page
 * (ties: shorter URL, then URL order). Representatives and unique pages are ranked by score.
 */
export async function duplicatesJob(agg: CrawlAggregate, store: ScratchStore, hostScores: Map<string, number>, o: { top?: number; largest?: number } = {}): Promise<JobOutput<DuplicatesResult>> {
  const db = store.db;
  const ctx = { firstFetch: agg.firstFetch, lastFetch: agg.lastFetch };
  let ops: BatchOp[] = [];
  for await (const p of store.pages()) {
    const score = qualityScore({ hostScore: hostScores.get(p.host) ?? 0, pathDepth: p.pathDepth, queryLength: p.queryLength, fetchedAt: p.fetchedAt, sentences: p.sentences }, ctx);
    const value: Scored = { url: p.url, host: p.host, md5: p.md5, score };
    ops.push({ type: 'put', key: Buffer.from(`${MD5_PREFIX}${p.md5}\u0000${p.url}`), value: Buffer.from(JSON.stringify(value)) });
    if (ops.length >= 2000) {
      await db.batch(ops);
      ops = [];
    }
  }
  await db.batch(ops);
  ops = [];

  const largestN = o.largest ?? 10;
  const largest: DuplicatesResult['largest'] = [];
  let distinct = 0;
  let clusters = 0;
  let duplicatePages = 0;
  let pages = 0;
  let run: Scored[] = [];
  const better = (a: Scored, b: Scored): boolean => a.score > b.score || (a.score === b.score && (a.url.length < b.url.length || (a.url.length === b.url.length && a.url < b.url)));
  /** Members of a cluster kept in memory at most (the rest are counted, listed in the CSV). */
  const MEMBERS_KEPT = 1000;
  let runSize = 0;
  let runBest: Scored | undefined;
  const closeRun = async (): Promise<void> => {
    if (runBest === undefined) return;
    distinct++;
    if (runSize > 1) {
      clusters++;
      duplicatePages += runSize - 1;
      const entry = { md5: runBest.md5, size: runSize, representative: runBest.url, members: run.map((s) => s.url).sort() };
      largest.push(entry);
      largest.sort((a, b) => b.size - a.size || (a.md5 < b.md5 ? -1 : 1));
      if (largest.length > largestN) largest.pop();
      ops.push({ type: 'put', key: Buffer.from(`${CLUSTER_PREFIX}${runBest.md5}`), value: Buffer.from(JSON.stringify({ size: runSize, representative: runBest.url })) });
    }
    ops.push({ type: 'put', key: Buffer.from(`${RANK_PREFIX}${rankKey(runBest.score)}\u0000${runBest.url}`), value: Buffer.from(JSON.stringify(runBest)) });
    if (ops.length >= 2000) {
      await db.batch(ops);
      ops = [];
    }
    run = [];
    runSize = 0;
    runBest = undefined;
  };
  for await (const [, v] of rangeValues(db, MD5_PREFIX)) {
    const s = JSON.parse(v) as Scored;
    pages++;
    if (runBest !== undefined && s.md5 !== runBest.md5) await closeRun();
    runSize++;
    if (run.length < MEMBERS_KEPT) run.push(s);
    if (runBest === undefined || better(s, runBest)) runBest = s;
  }
  await closeRun();
  await db.batch(ops);

  const topN = o.top ?? 20;
  const top: DuplicatesResult['top'] = [];
  for await (const [, v] of rangeValues(db, RANK_PREFIX)) {
    const s = JSON.parse(v) as Scored;
    top.push({ rank: top.length + 1, url: s.url, score: r4(s.score) });
    if (top.length >= topN) break;
  }
  const result: DuplicatesResult = {
    pages,
    distinct,
    clusters,
    duplicatePages,
    largest,
    top,
    scoring: 'mean of five factors in 0–1, ×100: server rank/10, 1/(1+URL depth), 1/(1+query chars/32), crawl date within the crawl (newest 1), s/(s+5) for s sentences of ≥ 40 characters',
  };
  const files: OutputFile[] = [
    {
      name: 'duplicate-clusters.csv',
      lines: async function* () {
        yield csvLine(['md5', 'cluster_size', 'url', 'representative', 'quality']);
        let md5 = '';
        let cluster: { size: number; representative: string } | undefined;
        for await (const [, v] of rangeValues(db, MD5_PREFIX)) {
          const s = JSON.parse(v) as Scored;
          if (s.md5 !== md5) {
            md5 = s.md5;
            const stored = await db.get(Buffer.from(`${CLUSTER_PREFIX}${md5}`));
            cluster = stored === undefined ? undefined : (JSON.parse(stored.toString('utf8')) as { size: number; representative: string });
          }
          if (cluster !== undefined) yield csvLine([s.md5, cluster.size, s.url, s.url === cluster.representative, s.score]);
        }
      },
    },
    {
      name: 'quality-ranked.csv',
      lines: async function* () {
        yield csvLine(['rank', 'url', 'host', 'md5', 'quality']);
        let i = 0;
        for await (const [, v] of rangeValues(db, RANK_PREFIX)) {
          const s = JSON.parse(v) as Scored;
          yield csvLine([++i, s.url, s.host, s.md5, s.score]);
        }
      },
    },
  ];
  const text = [
    `${pages} pages, ${distinct} distinct bodies: ${clusters} duplicate clusters, ${duplicatePages} copies dropped`,
    ...largest.map((c) => `  ${c.size} × ${c.md5}  kept ${c.representative}`),
    'best pages by quality (Akamine et al.):',
    ...top.map((t) => `${String(t.rank).padStart(5)}  ${t.score.toFixed(2).padStart(6)}  ${t.url}`),
  ];
  return { result, files, text };
}

// ---------------------------------------------------------------- site-profile

const SHORT_LABELS: Record<(typeof PROFILE_AXES)[number], string> = {
  staticPages: 'static',
  dynamicPages: 'dynamic',
  inboundLinks: 'inbound',
  outboundLinks: 'outbound',
  internalLinks: 'internal',
  allLinks: 'all',
  images: 'images',
};

export interface SiteProfile {
  host: string;
  values: ProfileValues;
  scores: ProfileValues;
}

export interface SiteProfileResult {
  sites: number;
  means: ProfileValues;
  profiles: SiteProfile[];
  missing: string[];
}

export function siteProfileJob(agg: CrawlAggregate, hosts: readonly string[], o: { defaultCount?: number } = {}): JobOutput<SiteProfileResult> {
  const all = new Map<string, ProfileValues>();
  for (const h of agg.hosts.values()) {
    all.set(h.host, profileValues({ staticPages: h.staticPages, dynamicPages: h.dynamicPages, inboundLinks: h.inboundLinks, outboundLinks: h.outboundLinks, internalLinks: h.internalLinks, images: h.images }));
  }
  const means = axisMeans(all.values());
  const wanted = hosts.length > 0 ? hosts.map((h) => h.toLowerCase()) : [...agg.hosts.values()].sort((a, b) => b.pages - a.pages || (a.host < b.host ? -1 : 1)).slice(0, o.defaultCount ?? 5).map((h) => h.host);
  const profiles: SiteProfile[] = [];
  const missing: string[] = [];
  for (const host of wanted) {
    const values = all.get(host);
    if (values === undefined) missing.push(host);
    else profiles.push({ host, values, scores: profileScores(values, means) });
  }
  const result: SiteProfileResult = { sites: all.size, means, profiles, missing };
  const files: OutputFile[] = [
    {
      name: 'site-profile.csv',
      text: csv(['host', ...PROFILE_AXES.flatMap((a) => [a, `${a}_score`])], [
        ['(mean)', ...PROFILE_AXES.flatMap((a) => [means[a], 50])],
        ...profiles.map((p) => [p.host, ...PROFILE_AXES.flatMap((a) => [p.values[a], r4(p.scores[a])])]),
      ]),
    },
    ...profiles.map((p) => ({
      name: `site-profile-${p.host.replace(/[^a-z0-9.-]/gi, '_')}.svg`,
      text: radarChart(PROFILE_AXES.map((a) => ({ label: AXIS_LABELS[a], score: p.scores[a], value: p.values[a] })), { title: `Site profile: ${p.host}` }),
    })),
  ];
  const text = [
    `${all.size} sites; scores 0–100, 50 = mean of all sites`,
    `${'host'.padEnd(28)} ${PROFILE_AXES.map((a) => SHORT_LABELS[a].padStart(8)).join(' ')}`,
    ...profiles.map((p) => `${p.host.padEnd(28)} ${PROFILE_AXES.map((a) => Math.round(p.scores[a]).toString().padStart(8)).join(' ')}`),
    ...missing.map((h) => `${h}: no pages of this host in the crawl`),
  ];
  return { result, files, text };
}

// ---------------------------------------------------------------- geo

export interface GeoResult {
  servers: number;
  pages: number;
  countries: { country: string; servers: number; pages: number }[];
  unknown: { servers: number; pages: number; withoutAddress: number };
  database: string;
}

export function geoJob(agg: CrawlAggregate, lookup: CountryLookup, database: string): JobOutput<GeoResult> {
  const by = new Map<string, { servers: number; pages: number }>();
  const unknown = { servers: 0, pages: 0, withoutAddress: 0 };
  for (const h of agg.hosts.values()) {
    const country = h.serverIp === undefined ? undefined : lookup(h.serverIp);
    if (country === undefined) {
      unknown.servers++;
      unknown.pages += h.pages;
      if (h.serverIp === undefined) unknown.withoutAddress++;
      continue;
    }
    const c = by.get(country) ?? { servers: 0, pages: 0 };
    c.servers++;
    c.pages += h.pages;
    by.set(country, c);
  }
  const countries = [...by].map(([country, c]) => ({ country, ...c })).sort((a, b) => b.pages - a.pages || (a.country < b.country ? -1 : 1));
  const result: GeoResult = { servers: agg.hosts.size, pages: agg.pages, countries, unknown, database };
  const files: OutputFile[] = [
    { name: 'geo.csv', text: csv(['country', 'servers', 'pages'], [...countries.map((c) => [c.country, c.servers, c.pages] as const), ['(unknown)', unknown.servers, unknown.pages] as const]) },
    { name: 'geo.svg', text: barChart([...countries.map((c) => ({ label: c.country, value: c.pages })), { label: 'unknown', value: unknown.pages }], { title: 'Pages by server country', valueLabel: 'pages' }) },
  ];
  const text = [
    `${result.servers} servers, ${result.pages} pages; country database: ${database}`,
    ...countries.map((c) => `${c.country}  ${String(c.servers).padStart(6)} servers  ${String(c.pages).padStart(8)} pages`),
    `??  ${String(unknown.servers).padStart(6)} servers  ${String(unknown.pages).padStart(8)} pages (unknown${unknown.withoutAddress > 0 ? `; ${unknown.withoutAddress} without an address` : ''})`,
  ];
  return { result, files, text };
}
