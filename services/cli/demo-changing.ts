/**
 * `meguri demo --changing`: the incremental crawler at work, in about a minute. A simulated web
 * whose pages change on Poisson schedules of known rates (mean intervals log-uniform from an hour to
 * a year: some change hourly, some daily, some practically never; some change only their
 * boilerplate; some disappear), served and crawled on one ScaledClock `speed` times faster than
 * wall time, so a minute of wall time is `speed` minutes of crawl time (3600: 2.5 days).
 *
 * At the end the simulated web's ground truth is set beside what the crawl did: versions that
 * existed, versions the crawl saw, and how stale its copies were (services/revisit/freshness.ts),
 * for meguri's adaptive revisits and for a fixed revisit interval spending the same number of
 * fetches — the reason adaptive revisiting matters (Akamine et al. and the incremental archive crawler paper).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimWeb } from '../simweb/index.ts';
import type { ChangeOptions } from '../simweb/index.ts';
import { ScaledClock } from '../runtime/index.ts';
import { measureFreshness, fixedIntervalPages } from '../revisit/freshness.ts';
import type { Freshness, PageTruth } from '../revisit/freshness.ts';
import { runCrawl } from './crawl.ts';
import type { CrawlOptions, CrawlSummary } from './crawl.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface ChangingDemoOptions {
  hosts: number;
  pagesPerHost: number;
  webSeed: number;
  /** Clock speed: crawl ms per wall ms. */
  speed: number;
  /** Wall seconds the crawl runs. */
  durationS: number;
  /** Builds the crawl options for the web's home URLs and resolve entries (the CLI's flags apply). */
  crawlOptions: (seeds: string[], resolve: string[], dataDir: string) => CrawlOptions;
  dataDir?: string;
  onProgress?: CrawlOptions['onProgress'];
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** The web's change model (default: demo --changing's); its epoch is always the crawl's start. */
  change?: ChangeOptions;
  /** Which validators the web's hosts send (default: the simulated web's mix). */
  validators?: { noneShare?: number; etagOnlyShare?: number; lastModifiedOnlyShare?: number };
}

export interface PolicyFigures extends Freshness {
  /** fetches per version seen (lower is better) */
  fetchesPerVersionSeen: number;
  /** share of the versions that existed that were seen */
  versionsSeenShare: number;
}

export interface ChangingDemoReport {
  crawl: CrawlSummary;
  simulatedWeb: {
    hosts: number;
    pagesPerHost: number;
    speed: number;
    simulatedHours: number;
    changeIntervals: string;
    pagesWithBoilerplateOnlyChanges: number;
    pagesThatDisappeared: number;
    /** Pages robots.txt keeps the crawler from: left out of both policies' figures. */
    pagesDisallowedByRobots: number;
  };
  meguri: PolicyFigures;
  fixedInterval: PolicyFigures & { intervalHours: number };
}

function figures(f: Freshness): PolicyFigures {
  return {
    ...f,
    staleness: Math.round(f.staleness * 1e4) / 1e4,
    meanStaleAgeMs: Math.round(f.meanStaleAgeMs),
    fetchesPerVersionSeen: f.versionsSeen > 0 ? Math.round((f.fetches / f.versionsSeen) * 100) / 100 : 0,
    versionsSeenShare: f.versionsExisted > 0 ? Math.round((f.versionsSeen / f.versionsExisted) * 1e4) / 1e4 : 0,
  };
}

/** A page of the changing web with its ground truth: what the crawl did, and its known change rate. */
export interface PageWithRate extends PageTruth {
  /** mean interval of the page's main-text changes (ms); Infinity for boilerplate-only pages */
  meanIntervalMs: number;
}

export interface ChangingCrawl {
  crawl: CrawlSummary;
  start: number;
  stoppedAt: number;
  pages: PageWithRate[];
  pagesWithBoilerplateOnlyChanges: number;
  pagesThatDisappeared: number;
  pagesDisallowedByRobots: number;
}

/** The change model of `demo --changing`, unless a caller (bench:freshness) gives its own. */
function demoChange(start: number, spanMs: number): ChangeOptions {
  return { epochMs: start, minIntervalMs: HOUR, maxIntervalMs: 365 * DAY, boilerplateOnlyShare: 0.15, goneShare: 0.05, goneWithinMs: spanMs };
}

/** Serves the changing web, crawls it on the scaled clock for `durationS` wall seconds, and reads the ground truth. */
export async function runChangingCrawl(o: ChangingDemoOptions): Promise<ChangingCrawl> {
  const start = Date.now();
  const clock = new ScaledClock(start, o.speed);
  const spanMs = o.durationS * 1000 * o.speed;
  const web = await SimWeb.start({
    seed: o.webSeed,
    hosts: o.hosts,
    pagesPerHost: o.pagesPerHost,
    clock,
    change: { ...demoChange(start, spanMs), ...o.change, epochMs: start },
    ...(o.validators ? { validators: o.validators } : {}),
  });
  const stop = new AbortController();
  const end = start + spanMs;
  const watch = setInterval(() => {
    if (clock.now() >= end) stop.abort();
  }, 50);
  const onAbort = (): void => stop.abort();
  o.signal?.addEventListener('abort', onAbort);
  try {
    const resolve = Object.entries(web.resolveMap()).map(([pattern, ip]) => `${pattern}=${ip}`);
    const dataDir = o.dataDir || mkdtempSync(join(tmpdir(), 'meguri-demo-'));
    o.log?.(`simulated web: ${o.hosts} hosts × ${o.pagesPerHost} pages on 127.0.0.1:${web.port}, changing pages, clock ×${o.speed} (${((spanMs / HOUR) | 0)} h in ${o.durationS} s); data in ${dataDir}`);
    const base = o.crawlOptions(web.homeUrls(), resolve, dataDir);
    const crawl = await runCrawl({ ...base, clock, signal: stop.signal, untilIdle: false, ...(o.onProgress ? { onProgress: o.onProgress } : {}) });
    const stoppedAt = Math.min(end, clock.now());
    return { crawl, start, stoppedAt, ...groundTruth(web, o.hosts, start, stoppedAt) };
  } finally {
    clearInterval(watch);
    o.signal?.removeEventListener('abort', onAbort);
    await web.close();
  }
}

/** Each page's content changes (a disappearance counts as one) and the crawl's answered fetches, from the server's log. */
function groundTruth(web: SimWeb, hosts: number, start: number, stoppedAt: number): Omit<ChangingCrawl, 'crawl' | 'start' | 'stoppedAt'> {
  const fetchesOf = new Map<string, number[]>();
  for (const e of web.accessLog()) {
    if (e.path === '/robots.txt' || e.path === '/sitemap.xml' || e.status === 0) continue;
    const url = `${web.origin(e.host)}${e.path}`;
    const list = fetchesOf.get(url) ?? [];
    list.push(e.t);
    fetchesOf.set(url, list);
  }
  const pages: PageWithRate[] = [];
  let boilerplateOnly = 0;
  let disappeared = 0;
  let disallowed = 0;
  for (let h = 0; h < hosts; h++) {
    for (const url of web.pageUrls(h)) {
      // A page robots.txt forbids is never fetched by the crawler, and the fixed-interval policy
      // must not fetch it either: it is out of the comparison.
      if (!web.isAllowed(url)) {
        disallowed++;
        continue;
      }
      const state = web.stateAt(url, stoppedAt);
      if (state.boilerplateOnly) boilerplateOnly++;
      const changes = web
        .changeTimes(url, start, stoppedAt)
        .filter((c) => c.kind === 'content')
        .map((c) => c.t);
      if (state.gone !== undefined && state.gone.at <= stoppedAt) {
        disappeared++;
        changes.push(state.gone.at);
        changes.sort((a, b) => a - b);
      }
      pages.push({ changes, fetches: (fetchesOf.get(url) ?? []).sort((a, b) => a - b), meanIntervalMs: state.boilerplateOnly ? Infinity : state.meanIntervalMs });
    }
  }
  return { pages, pagesWithBoilerplateOnlyChanges: boilerplateOnly, pagesThatDisappeared: disappeared, pagesDisallowedByRobots: disallowed };
}

export async function runChangingDemo(o: ChangingDemoOptions): Promise<ChangingDemoReport> {
  const r = await runChangingCrawl(o);
  const meguri = measureFreshness(r.pages, r.start, r.stoppedAt);
  const fixed = fixedIntervalPages(r.pages, r.start, r.stoppedAt);
  const fixedFigures = measureFreshness(fixed.pages, r.start, r.stoppedAt);
  return {
    crawl: r.crawl,
    simulatedWeb: {
      hosts: o.hosts,
      pagesPerHost: o.pagesPerHost,
      speed: o.speed,
      simulatedHours: Math.round(((r.stoppedAt - r.start) / HOUR) * 10) / 10,
      changeIntervals: 'Poisson, mean interval log-uniform from 1 hour to 365 days per page',
      pagesWithBoilerplateOnlyChanges: r.pagesWithBoilerplateOnlyChanges,
      pagesThatDisappeared: r.pagesThatDisappeared,
      pagesDisallowedByRobots: r.pagesDisallowedByRobots,
    },
    meguri: figures(meguri),
    fixedInterval: { ...figures(fixedFigures), intervalHours: Math.round((fixed.intervalMs / HOUR) * 100) / 100 },
  };
}

/** Scheduler timers for a crawl on a clock `speed` times faster than wall time: the same wall cadence. */
export function scaledTimers(speed: number): { dispatchIntervalMs: number; revisitSweepMs: number; requestTimeoutMs: number } {
  return {
    dispatchIntervalMs: Math.max(20, Math.round(20 * speed)),
    revisitSweepMs: Math.max(1000, Math.round(250 * speed)),
    requestTimeoutMs: Math.max(120_000, Math.round(120_000 * speed)),
  };
}

/** The two policies side by side, for a terminal. */
export function changingDemoTable(r: ChangingDemoReport): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
  const hours = (ms: number): string => `${(ms / HOUR).toFixed(2)} h`;
  const row = (name: string, a: string, b: string): string => `  ${name.padEnd(28)}${a.padStart(14)}${b.padStart(18)}`;
  const m = r.meguri;
  const f = r.fixedInterval;
  return [
    `${r.simulatedWeb.simulatedHours} simulated hours, ${m.pages} pages (${r.simulatedWeb.pagesWithBoilerplateOnlyChanges} with boilerplate-only changes, ${r.simulatedWeb.pagesThatDisappeared} disappeared; ${r.simulatedWeb.pagesDisallowedByRobots} more that robots.txt disallows left out)`,
    row('', 'meguri', `fixed ${f.intervalHours} h`),
    row('page fetches', String(m.fetches), String(f.fetches)),
    row('versions that existed', String(m.versionsExisted), String(f.versionsExisted)),
    row('versions seen', String(m.versionsSeen), String(f.versionsSeen)),
    row('fetches per version seen', String(m.fetchesPerVersionSeen), String(f.fetchesPerVersionSeen)),
    row('time stale', pct(m.staleness), pct(f.staleness)),
    row('mean stale age', hours(m.meanStaleAgeMs), hours(f.meanStaleAgeMs)),
  ].join('\n');
}
