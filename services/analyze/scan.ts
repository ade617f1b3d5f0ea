/**
 * The I/O side of the analyses: reads a stretch of a crawl's `pages` topic, summarises each page
 * (page-summary.ts) and keeps the latest summary per URL in a temporary RocksDB, so memory does not
 * grow with the number of pages; then one ordered pass over that store builds the per-server
 * aggregates (hosts, the server graph, TLD and language tallies) that every job starts from. Memory
 * is proportional to the number of servers and server pairs, not pages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RocksDb } from '../runtime/rocksdb.ts';
import type { BatchOp } from '../runtime/rocksdb.ts';
import type { LogRecord, Transport } from '../runtime/index.ts';
import { stretchOf } from '../common/offset-range.ts';
import { decodeStoredPage } from './page-record.ts';
import { summarizePage } from './page-summary.ts';
import type { PageSummary } from './page-summary.ts';
import { ServerGraphBuilder } from './rank.ts';
import { Tally } from './histogram.ts';

export interface ScanProgress {
  phase: 'read' | 'aggregate';
  done: number;
  total: number;
}

export interface HostAggregate {
  host: string;
  tld: string;
  pages: number;
  staticPages: number;
  dynamicPages: number;
  images: number;
  internalLinks: number;
  outboundLinks: number;
  inboundLinks: number;
  /** The address of the host's most recently fetched page. */
  serverIp?: string;
  lastFetch: number;
}

export interface CrawlAggregate {
  records: number;
  /** Records that were not valid pages records (counted, skipped). */
  invalid: number;
  /** Distinct URLs analysed (latest version of each). */
  pages: number;
  hosts: Map<string, HostAggregate>;
  graph: ServerGraphBuilder;
  tldPages: Tally;
  languages: Tally;
  languagesByTld: Map<string, Tally>;
  firstFetch: number;
  lastFetch: number;
}

const URL_PREFIX = 'u\u0000';
/** Pages written in one RocksDB batch (and kept in memory until then). */
const FLUSH_EVERY = 2000;

function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  b[b.length - 1]!++;
  return b;
}

/**
 * A scratch RocksDB for one analysis run, deleted on close. Page summaries are keyed by URL; a later
 * fetch of the same URL replaces an earlier one (the analyses look at the latest version of a page).
 */
export class ScratchStore {
  private pending = new Map<string, PageSummary>();

  private constructor(
    readonly db: RocksDb,
    private readonly dir: string,
  ) {}

  static async open(parent = tmpdir()): Promise<ScratchStore> {
    const dir = mkdtempSync(join(parent, 'meguri-analyze-'));
    const db = await RocksDb.open(join(dir, 'db'), { cacheSizeBytes: 8 * 1024 * 1024, writeBufferSizeBytes: 8 * 1024 * 1024, compression: true });
    return new ScratchStore(db, dir);
  }

  async addPage(s: PageSummary): Promise<void> {
    const prev = this.pending.get(s.url);
    if (prev === undefined || prev.fetchedAt <= s.fetchedAt) this.pending.set(s.url, s);
    if (this.pending.size >= FLUSH_EVERY) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const keys = batch.map((s) => Buffer.from(URL_PREFIX + s.url));
    const stored = await this.db.getMany(keys);
    const ops: BatchOp[] = [];
    batch.forEach((s, i) => {
      const old = stored[i];
      if (old !== undefined && (JSON.parse(old.toString('utf8')) as PageSummary).fetchedAt > s.fetchedAt) return;
      ops.push({ type: 'put', key: keys[i]!, value: Buffer.from(JSON.stringify(s)) });
    });
    await this.db.batch(ops);
  }

  /** Every stored page summary, in URL order. */
  async *pages(): AsyncGenerator<PageSummary> {
    await this.flush();
    for await (const [, v] of this.db.range({ gte: Buffer.from(URL_PREFIX), lt: prefixEnd(URL_PREFIX) })) yield JSON.parse(v.toString('utf8')) as PageSummary;
  }

  async close(): Promise<void> {
    if (this.db.isOpen) await this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface ScanOptions {
  topic: string;
  since?: number;
  until?: number;
  onProgress?: (p: ScanProgress) => void;
  /** Told about each record that is not a usable pages record. */
  warn?: (line: string) => void;
}

/** Reads the stretch of `pages` into the store; returns records read and invalid records. */
export async function readPages(transport: Transport, store: ScratchStore, o: ScanOptions): Promise<{ records: number; invalid: number }> {
  const stretches = await stretchOf(transport, o.topic, o.since, o.until);
  const total = stretches.reduce((a, s) => a + (s.to - s.from), 0);
  let records = 0;
  let invalid = 0;
  for (const s of stretches) {
    if (s.from >= s.to) continue;
    for await (const batch of transport.readPartition(o.topic, s.partition, s.from, s.to)) {
      for (const r of batch) {
        records++;
        const summary = summaryOf(r, o.warn);
        if (summary === null) invalid++;
        else if (summary !== undefined) await store.addPage(summary);
      }
      o.onProgress?.({ phase: 'read', done: records, total });
    }
  }
  await store.flush();
  return { records, invalid };
}

/** null: not a valid pages record; undefined: valid, but not a page the analyses count. */
function summaryOf(r: LogRecord, warn?: (line: string) => void): PageSummary | null | undefined {
  const decoded = decodeStoredPage(r.value);
  if (!decoded.ok) {
    warn?.(`${r.topic}/${r.partition}@${r.offset}: ${decoded.error}`);
    return null;
  }
  const p = decoded.page;
  if (p.reason === 'robots') return undefined;
  try {
    return summarizePage(p);
  } catch (err) {
    warn?.(`${r.topic}/${r.partition}@${r.offset}: page could not be analysed: ${(err as Error).message}`);
    return null;
  }
}

/** One pass over the stored pages: per-server aggregates, the server graph and the tallies. */
export async function aggregate(store: ScratchStore, onPage?: (p: PageSummary) => Promise<void> | void, onProgress?: (p: ScanProgress) => void): Promise<Omit<CrawlAggregate, 'records' | 'invalid'>> {
  const hosts = new Map<string, HostAggregate>();
  const graph = new ServerGraphBuilder();
  const tldPages = new Tally();
  const languages = new Tally();
  const languagesByTld = new Map<string, Tally>();
  const inbound = new Map<string, number>();
  let pages = 0;
  let firstFetch = Infinity;
  let lastFetch = -Infinity;
  for await (const p of store.pages()) {
    pages++;
    let h = hosts.get(p.host);
    if (h === undefined) {
      h = { host: p.host, tld: p.tld, pages: 0, staticPages: 0, dynamicPages: 0, images: 0, internalLinks: 0, outboundLinks: 0, inboundLinks: 0, lastFetch: -Infinity };
      hosts.set(p.host, h);
      graph.node(p.host);
    }
    h.pages++;
    if (p.dynamic) h.dynamicPages++;
    else h.staticPages++;
    h.images += p.images;
    h.internalLinks += p.internal;
    for (const [target, n] of Object.entries(p.outbound)) {
      h.outboundLinks += n;
      inbound.set(target, (inbound.get(target) ?? 0) + n);
      graph.link(p.host, target, n);
    }
    if (p.fetchedAt >= h.lastFetch) {
      h.lastFetch = p.fetchedAt;
      if (p.serverIp !== undefined) h.serverIp = p.serverIp;
    }
    tldPages.add(p.tld);
    languages.add(p.lang);
    let t = languagesByTld.get(p.tld);
    if (t === undefined) languagesByTld.set(p.tld, (t = new Tally()));
    t.add(p.lang);
    firstFetch = Math.min(firstFetch, p.fetchedAt);
    lastFetch = Math.max(lastFetch, p.fetchedAt);
    if (onPage) await onPage(p);
    if (pages % 5000 === 0) onProgress?.({ phase: 'aggregate', done: pages, total: 0 });
  }
  for (const [host, n] of inbound) {
    const h = hosts.get(host);
    if (h) h.inboundLinks = n;
  }
  return { pages, hosts, graph, tldPages, languages, languagesByTld, firstFetch: pages > 0 ? firstFetch : 0, lastFetch: pages > 0 ? lastFetch : 0 };
}
