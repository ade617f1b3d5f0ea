/**
 * `meguri crawl`: scheduler, fetcher and parser in one process on one transport (the embedded log by
 * default, Kafka with --kafka). The same services, topics and guarantees as a distributed
 * deployment; only the placement differs.
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { SeedLink, SourceKind } from '../../schemas/index.ts';
import type { MainTextMode } from '../../schemas/text.ts';
import { StreamService, createTransport, silentLogger, systemClock } from '../runtime/index.ts';
import type { Clock, Logger, OutRecord, TopicReplication, Transport } from '../runtime/index.ts';
import { schedulerService, CrawlProgress, hostKey } from '../scheduler/service.ts';
import type { SchedulerOptionsInput, FetchBudget } from '../scheduler/service.ts';
import type { HostRulesSource } from '../scheduler/host-rules.ts';
import { depthRows } from '../common/discovery.ts';
import type { DepthRow } from '../common/discovery.ts';
import { fetcherService } from '../fetcher/service.ts';
import type { FetcherServiceOptions } from '../fetcher/service.ts';
import { parserService } from '../parser/service.ts';
import { normalizeUrl, paramFilter } from '../common/url.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

/** A URL read on a schedule of its own: a feed (--feeds-file) or a daily page (--daily-file). */
export interface SourceSeed {
  readonly url: string;
  readonly kind: SourceKind;
}

export interface CrawlOptions {
  readonly seeds: readonly string[];
  /** Feeds and daily pages to start from (seeded with their kind). */
  readonly sources?: readonly SourceSeed[];
  /** Language focus: links of pages in other languages are not followed. */
  readonly languages?: readonly string[];
  /** Which outcomes carry the main text (parser, `--main-text`; default revisits). */
  readonly mainText?: MainTextMode;
  readonly dataDir: string;
  readonly kafkaBrokers?: readonly string[];
  readonly topicPrefix?: string;
  readonly partitions?: number;
  /** Kafka: replication of the topics the crawl creates (default 1 and 1). */
  readonly replication?: TopicReplication & { readonly capToBrokers?: boolean };
  /** Embedded log: fsync every commit. */
  readonly fsync?: boolean;
  /** Kafka: gzip level of the producers for gzip topics (default 1). */
  readonly gzipLevel?: number;
  /** Fetcher and parser: offsets committed at most this often (MEGURI_COMMIT_INTERVAL_MS). */
  readonly commitIntervalMs?: number;
  /** Kafka: the scheduler's and parser's transactions at most this often per partition (RuntimeConfig). */
  readonly transactionIntervalMs?: number;
  readonly maxPages?: number;
  readonly untilIdle?: boolean;
  readonly scheduler?: SchedulerOptionsInput;
  /** Per-host rules (`--host-rules`), read on every use: a watcher may swap them while the crawl runs. */
  readonly hostRules?: HostRulesSource;
  readonly fetcher?: FetcherServiceOptions;
  /** Worker threads that parse pages (default: one per core beyond the first two, at least 1 and at most 4 on 2+ cores). */
  readonly parserWorkers?: number;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Called about once a second with the live totals. */
  readonly onProgress?: (p: CrawlSnapshot) => void;
  readonly signal?: AbortSignal;
  /**
   * Called once the topics exist, with the crawl's transport (e.g. to follow its topics for the live
   * view); the function it returns is awaited before the transport closes.
   */
  readonly attach?: (transport: Transport, topicPrefix: string) => Promise<() => Promise<void>>;
}

export interface CrawlSnapshot {
  readonly pagesFetched: number;
  readonly uniqueUrlsFetched: number;
  readonly duplicateFetches: number;
  readonly robotsDisallowedSkipped: number;
  readonly errors: number;
  readonly bytes: number;
  readonly hosts: number;
  readonly queued: number;
  /** of the queued URLs, those on parked hosts (robots.txt unreachable, or failing), waiting on a retry */
  readonly waitingOnParkedHosts: number;
  readonly inflight: number;
  readonly urlsKnown: number;
  readonly elapsedS: number;
  readonly pagesPerS: number;
}

export interface CrawlSummary extends CrawlSnapshot {
  readonly transport: 'embedded' | 'kafka';
  readonly stoppedBecause: 'max-pages' | 'idle' | 'signal';
  readonly robotsFetched: number;
  readonly depthSkipped: number;
  /** new URLs not queued: their site was at its page cap, their URL template used its budget, or the query restriction */
  readonly siteCapSkipped: number;
  readonly templateSkipped: number;
  readonly querySkipped: number;
  /** discovered URLs outside the crawl scope (--scope host/domain) or refused by --include/--exclude */
  readonly outOfScopeSkipped: number;
  /** URLs not queued or given up by a per-host rule (--host-rules: block, maxPages, maxDepth) */
  readonly hostRuleSkipped: number;
  /** discovery mode (Hoshino et al.): servers found, internal URLs left out of the sample, and the figures by depth */
  readonly externalServers?: number;
  readonly sampleSkipped?: number;
  readonly perDepth?: DepthRow[];
  /** failed first fetches (429, 5xx, timeouts, resets) queued again, not counted in pagesFetched */
  readonly pageRetries: number;
  /** sitemap and feed reads, new URLs they listed, daily page reads and new links on them, pages outside --languages */
  readonly sitemapsFetched: number;
  readonly sitemapErrors: number;
  readonly sitemapUrls: number;
  readonly feedsFetched: number;
  readonly feedErrors: number;
  readonly feedItemsNew: number;
  readonly dailyFetched: number;
  readonly dailyNewLinks: number;
  readonly offLanguage: number;
  readonly lost: number;
  readonly deadletters: number;
  /** per service: its commits (transactions of the scheduler and parser on Kafka) and their mean time */
  readonly commits: Readonly<Record<string, { readonly count: number; readonly meanMs: number }>>;
}

/** Seeds as `links` seed records, normalised; invalid ones are reported, not sent. */
export function seedRecords(urls: readonly (string | SourceSeed)[], now: number, aliases?: ReadonlyMap<string, string>): { records: { key: string; value: SeedLink }[]; rejected: { url: string; reason: string }[] } {
  const records: { key: string; value: SeedLink }[] = [];
  const rejected: { url: string; reason: string }[] = [];
  for (const entry of urls) {
    const raw = typeof entry === 'string' ? entry : entry.url;
    const n = normalizeUrl(raw.trim(), undefined, aliases && aliases.size > 0 ? { aliases } : undefined);
    if (!n.ok) {
      rejected.push({ url: raw, reason: n.reason });
      continue;
    }
    const value: SeedLink = { v: SCHEMA_VERSION, type: 'seed', url: n.url, addedAt: now };
    if (typeof entry !== 'string') value.kind = entry.kind;
    records.push({ key: hostKey(n.url), value });
  }
  return { records, rejected };
}

/**
 * The `links` records that add seeds to a crawl: each seed keyed by its host (the owning scheduler
 * partition queues it), plus a scope-only copy for every partition, so each partition's crawl
 * scope (host/domain) holds every seed whatever partition owns the links it judges.
 */
export function seedOutRecords(topic: string, records: readonly { key: string; value: SeedLink }[], partitions: number): OutRecord[] {
  const out: OutRecord[] = [];
  for (const r of records) {
    out.push({ topic, key: r.key, value: Buffer.from(JSON.stringify(r.value)) });
    const copy: SeedLink = { ...r.value, scopeOnly: true };
    for (let partition = 0; partition < partitions; partition++) out.push({ topic, key: r.key, value: Buffer.from(JSON.stringify(copy)), partition });
  }
  return out;
}

/** Records of `topic` the group has not committed yet, over all partitions. */
export async function totalLag(transport: Transport, groupId: string, topic: string): Promise<number> {
  const desc = await transport.describeTopic(topic);
  if (!desc) return 0;
  const committed = new Map((await transport.committedOffsets(groupId, topic)).map((o) => [o.partition, o.offset]));
  let lag = 0;
  for (const p of desc.partitions) lag += Math.max(0, p.high - (committed.get(p.partition) ?? p.low));
  return lag;
}

/** Parsing in worker threads pays off only with cores to spare (on 2 cores it measured no gain). */
function defaultParserWorkers(): number {
  const cores = availableParallelism();
  // The event loop moves records and schedules; a worker parses beside it (22-24 % more pages/s
  // on 2 idle cores, docs/benchmarks.md). One core: parsing stays on the event loop.
  return cores >= 2 ? Math.max(1, Math.min(4, cores - 2)) : 0;
}

class SharedBudget implements FetchBudget {
  constructor(private remaining: number) {}
  tryTake(): boolean {
    if (this.remaining <= 0) return false;
    this.remaining--;
    return true;
  }
}

/** The crawl's figures so far, from the scheduler's progress. */
function snapshotOf(progress: CrawlProgress, started: number): CrawlSnapshot {
  const t = progress.totals();
  const elapsedS = (Date.now() - started) / 1000;
  return {
    pagesFetched: t.pagesFetched,
    uniqueUrlsFetched: t.uniqueUrlsFetched,
    duplicateFetches: t.duplicateFetches,
    robotsDisallowedSkipped: t.robotsDisallowedSkipped,
    errors: t.errors,
    bytes: t.bytes,
    hosts: t.hosts,
    queued: t.queued,
    waitingOnParkedHosts: t.parked,
    inflight: t.inflight,
    urlsKnown: t.urlsKnown,
    elapsedS: Math.round(elapsedS * 1000) / 1000,
    pagesPerS: elapsedS > 0 ? Math.round((t.pagesFetched / elapsedS) * 10) / 10 : 0,
  };
}

/** Records the services dead-lettered, and each service's commits with their mean time. */
async function serviceCounts(services: readonly Pick<StreamService<unknown>, 'name' | 'metrics'>[]): Promise<{ deadletters: number; commits: Record<string, { count: number; meanMs: number }> }> {
  let deadletters = 0;
  for (const s of services) for (const v of (await s.metrics.deadletters.get()).values) deadletters += v.value;
  // Each service's commits (a transaction each for the scheduler and parser on Kafka) and their mean time.
  const commits: Record<string, { count: number; meanMs: number }> = {};
  for (const s of services) {
    let count = 0;
    let sum = 0;
    for (const v of (await s.metrics.commitSeconds.get()).values) {
      if (v.metricName?.endsWith('_count')) count += v.value;
      else if (v.metricName?.endsWith('_sum')) sum += v.value;
    }
    commits[s.name] = { count, meanMs: count > 0 ? Math.round((sum / count) * 10_000) / 10 : 0 };
  }
  return { deadletters, commits };
}

export async function runCrawl(options: CrawlOptions): Promise<CrawlSummary> {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const kind = options.kafkaBrokers && options.kafkaBrokers.length > 0 ? 'kafka' : 'embedded';
  mkdirSync(options.dataDir, { recursive: true });
  const transport = await createTransport({
    transport: kind,
    kafkaBrokers: options.kafkaBrokers ?? [],
    dataDir: options.dataDir,
    logger,
    clock,
    ...(options.replication ? { replication: options.replication } : {}),
    ...(options.fsync ? { fsync: true } : {}),
    ...(options.gzipLevel !== undefined ? { gzipLevel: options.gzipLevel } : {}),
  });
  const prefix = options.topicPrefix ?? '';
  const partitions = options.partitions ?? 4;
  const progress = new CrawlProgress();
  const budget = options.maxPages !== undefined ? new SharedBudget(options.maxPages) : undefined;
  const common = { transport, catalog: crawlCatalog, dataDir: options.dataDir, topicPrefix: prefix, partitions, logger, clock, ...(options.commitIntervalMs !== undefined ? { commitIntervalMs: options.commitIntervalMs } : {}), ...(options.transactionIntervalMs ? { transactionIntervalMs: options.transactionIntervalMs } : {}) };
  const fetcherDef = fetcherService({ ...options.fetcher, clock });
  // The parser removes the same session/tracking parameters the scheduler does.
  const stripParams = options.scheduler?.stripParams !== undefined ? { stripParams: paramFilter(options.scheduler.stripParams) } : {};
  // ... and rewrites links on alias hosts to their canonical host, as the scheduler does.
  const aliases = new Map(Object.entries(options.scheduler?.aliases ?? {}));
  const parserDef = parserService({
    workers: options.parserWorkers ?? defaultParserWorkers(),
    ...stripParams,
    ...(aliases.size > 0 ? { aliases } : {}),
    ...(options.languages && options.languages.length > 0 ? { languages: options.languages } : {}),
    ...(options.mainText !== undefined ? { mainText: options.mainText } : {}),
  });
  const services = [
    new StreamService(schedulerService(options.scheduler ?? {}, { progress, ...(budget ? { budget } : {}), ...(options.hostRules ? { hostRules: options.hostRules } : {}) }), common),
    new StreamService(fetcherDef, common),
    new StreamService(parserDef, common),
  ];
  const started = Date.now();
  const snapshot = (): CrawlSnapshot => snapshotOf(progress, started);
  let stoppedBecause: CrawlSummary['stoppedBecause'] = 'signal';
  let detach: (() => Promise<void>) | undefined;
  try {
    // Topics first (all services' topics and changelogs), so seeds can be sent before anyone joins.
    await transport.ensureTopics(services.flatMap((s) => s.topicDefinitions(partitions)));
    const { records, rejected } = seedRecords([...options.seeds, ...(options.sources ?? [])], clock.now(), aliases);
    for (const r of rejected) logger.warn({ url: r.url, reason: r.reason }, 'seed rejected');
    if (records.length > 0) {
      await transport.send(seedOutRecords(`${prefix}links`, records, partitions));
    }
    if (options.attach) detach = await options.attach(transport, prefix);
    for (const s of services) await s.start();
    await Promise.all(services.map((s) => s.ready()));
    let idleChecks = 0;
    let lastProgress = 0;
    for (;;) {
      if (options.signal?.aborted) break;
      const failed = services.find((s) => s.failed);
      if (failed) throw failed.failed!;
      await new Promise((r) => setTimeout(r, 100));
      const snap = snapshot();
      if (options.onProgress && Date.now() - lastProgress >= 1000) {
        lastProgress = Date.now();
        options.onProgress(snap);
      }
      if (options.maxPages !== undefined && snap.pagesFetched >= options.maxPages) {
        stoppedBecause = 'max-pages';
        break;
      }
      if (options.untilIdle) {
        // URLs of parked hosts wait on a retry hours away (an unreachable robots.txt, a failing
        // server): they do not keep an --until-idle crawl running; the summary counts them.
        if (snap.queued - snap.waitingOnParkedHosts === 0 && snap.inflight === 0) {
          // Nothing else queued and no request without its outcome: the only work left could be
          // unread `links` records (written without transactions, so their lag is exact; frontier
          // lag would never reach 0 on Kafka because of transaction markers).
          const lag = await totalLag(transport, `${prefix}scheduler`, `${prefix}links`);
          idleChecks = lag === 0 ? idleChecks + 1 : 0;
          if (idleChecks >= 3) {
            stoppedBecause = 'idle';
            break;
          }
        } else idleChecks = 0;
      }
    }
  } finally {
    for (const s of services) await s.stop().catch((err: unknown) => logger.error({ err }, 'stop failed'));
    await fetcherDef.fetcher.close();
    await parserDef.close();
    await detach?.().catch((err: unknown) => logger.error({ err }, 'detach failed'));
    await transport.close();
  }
  const t = progress.totals();
  const { deadletters, commits } = await serviceCounts(services);
  const discovery =
    options.scheduler?.mode === 'discovery'
      ? { externalServers: t.externalServers ?? 0, sampleSkipped: t.sampleSkipped ?? 0, perDepth: depthRows(t.pagesByDepth ?? [], t.serversByDepth ?? []) }
      : {};
  return { ...snapshot(), transport: kind, stoppedBecause, robotsFetched: t.robotsFetched, depthSkipped: t.depthSkipped, siteCapSkipped: t.siteCapSkipped, templateSkipped: t.templateSkipped, querySkipped: t.querySkipped, outOfScopeSkipped: t.outOfScopeSkipped ?? 0, hostRuleSkipped: t.hostRuleSkipped ?? 0, pageRetries: t.pageRetries ?? 0, lost: t.lost, deadletters, commits, sitemapsFetched: t.sitemapsFetched ?? 0, sitemapErrors: t.sitemapErrors ?? 0, feedErrors: t.feedErrors ?? 0, sitemapUrls: t.sitemapUrls ?? 0, feedsFetched: t.feedsFetched ?? 0, feedItemsNew: t.feedItemsNew ?? 0, dailyFetched: t.dailyFetched ?? 0, dailyNewLinks: t.dailyNewLinks ?? 0, offLanguage: t.offLanguage ?? 0, ...discovery };
}
