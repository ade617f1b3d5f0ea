/**
 * `meguri analyze <job>`: reads a crawl's `pages` (all of it, or --since to --until) from an
 * embedded data directory or Kafka, runs one analysis job and prints it (text, or JSON with --json);
 * with --out DIR it also writes the job's CSV and SVG files there.
 */
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Transport } from '../runtime/index.ts';
import { ScratchStore, aggregate, readPages } from './scan.ts';
import type { CrawlAggregate, ScanProgress } from './scan.ts';
import { JOBS, distributionsJob, duplicatesJob, geoJob, hostRankJob, siteProfileJob } from './jobs.ts';
import type { JobName, JobOutput, OutputFile } from './jobs.ts';
import { GEO_DATABASE, databaseLookup, parseTable, parseTableEntry, tableLookup } from '../common/country.ts';
import type { CountryLookup, TableEntry } from '../common/country.ts';

export interface AnalyzeFlags {
  since?: number;
  until?: number;
  topicPrefix: string;
  json?: boolean;
  out?: string;
  /** host-rank/duplicates: weight server links by their number of page links. */
  weighted?: boolean;
  /** Rows in the printed ranked lists. */
  top?: number;
  /** Parent directory of the scratch store (default: the system's temporary directory). */
  workDir?: string;
  /** geo: `RANGE=CC` entries consulted before the database. */
  country?: string[];
  /** geo: file of `RANGE=CC` lines. */
  countryTable?: string;
  /** geo: a lookup to use instead of table + database (tests, embedding). */
  lookup?: CountryLookup;
}

export interface AnalyzeIo {
  out: (line: string) => void;
  warn?: (line: string) => void;
  progress?: (p: ScanProgress) => void;
}

export interface AnalyzeReport {
  job: JobName;
  records: number;
  invalid: number;
  result: unknown;
  files: string[];
}

export function isJob(name: string): name is JobName {
  return (JOBS as readonly string[]).includes(name);
}

/** The country lookup the geo job uses: --country entries, then --country-table, then the database. */
export function countryLookup(flags: Pick<AnalyzeFlags, 'country' | 'countryTable' | 'lookup'>): { lookup: CountryLookup; database: string } {
  if (flags.lookup) return { lookup: flags.lookup, database: 'custom lookup' };
  const entries: TableEntry[] = [...(flags.country ?? []).map(parseTableEntry), ...(flags.countryTable ? parseTable(readFileSync(flags.countryTable, 'utf8')) : [])];
  const database = `${GEO_DATABASE.name} (${GEO_DATABASE.dataDate}; ${GEO_DATABASE.coverage})${entries.length > 0 ? ` after ${entries.length} table entr${entries.length === 1 ? 'y' : 'ies'}` : ''}`;
  return { lookup: tableLookup(entries, databaseLookup()), database };
}

async function writeFiles(dir: string, files: OutputFile[]): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const f of files) {
    const path = join(dir, f.name);
    if ('text' in f) writeFileSync(path, f.text);
    else {
      const stream = createWriteStream(path);
      for await (const line of f.lines()) if (!stream.write(line)) await once(stream, 'drain');
      stream.end();
      await once(stream, 'finish');
    }
    written.push(path);
  }
  return written;
}

/** Runs one job over an open transport (the caller owns and closes it). */
export async function analyze(transport: Transport, job: JobName, hosts: readonly string[], flags: AnalyzeFlags, io: AnalyzeIo): Promise<AnalyzeReport> {
  if (job !== 'site-profile' && hosts.length > 0) throw new Error(`${job} takes no host arguments (only site-profile does)`);
  const geo = job === 'geo' ? countryLookup(flags) : undefined;
  const store = await ScratchStore.open(flags.workDir);
  try {
    const read = await readPages(transport, store, {
      topic: `${flags.topicPrefix}pages`,
      ...(flags.since !== undefined ? { since: flags.since } : {}),
      ...(flags.until !== undefined ? { until: flags.until } : {}),
      ...(io.progress ? { onProgress: io.progress } : {}),
      ...(io.warn ? { warn: io.warn } : {}),
    });
    const agg: CrawlAggregate = { ...read, ...(await aggregate(store, undefined, io.progress)) };
    let output: JobOutput<unknown>;
    switch (job) {
      case 'host-rank':
        output = hostRankJob(agg, { ...(flags.weighted !== undefined ? { weighted: flags.weighted } : {}), ...(flags.top !== undefined ? { top: flags.top } : {}) });
        break;
      case 'distributions':
        output = distributionsJob(agg);
        break;
      case 'duplicates': {
        const rank = hostRankJob(agg, { weighted: flags.weighted ?? false }).rank;
        const scores = new Map(rank.ranks.map((r) => [r.host, r.score]));
        output = await duplicatesJob(agg, store, scores, flags.top !== undefined ? { top: flags.top } : {});
        break;
      }
      case 'site-profile':
        output = siteProfileJob(agg, hosts);
        break;
      case 'geo':
        output = geoJob(agg, geo!.lookup, geo!.database);
        break;
    }
    const files = flags.out !== undefined ? await writeFiles(flags.out, output.files) : [];
    const header = { job, records: read.records, invalid: read.invalid, pages: agg.pages, servers: agg.hosts.size };
    if (flags.json) io.out(JSON.stringify({ ...header, result: output.result, ...(files.length > 0 ? { files } : {}) }));
    else {
      io.out(`${job}: ${read.records} pages records read${read.invalid > 0 ? `, ${read.invalid} unusable` : ''}; ${agg.pages} distinct pages on ${agg.hosts.size} servers`);
      for (const line of output.text) io.out(line);
      for (const f of files) io.out(`wrote ${f}`);
    }
    return { job, records: read.records, invalid: read.invalid, result: output.result, files };
  } finally {
    await store.close();
  }
}
