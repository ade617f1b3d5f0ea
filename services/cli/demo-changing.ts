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
 * fetches — the reason adaptive revisiting matters (seeds 001 and 004).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimWeb } from '../simweb/index.ts';
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

export async function runChangingDemo(o: ChangingDemoOptions): Promise<ChangingDemoReport> {
  const start = Date.now();
  const clock = new ScaledClock(start, o.speed);
  const spanMs = o.durationS * 1000 * o.speed;
  const web = await SimWeb.start({
    seed: o.webSeed,
    hosts: o.hosts,
    pagesPerHost: o.pagesPerHost,
    clock,
    change: { epochMs: start, minIntervalMs: HOUR, maxIntervalMs: 365 * DAY, boilerplateOnlyShare: 0.15, goneShare: 0.05, goneWithinMs: spanMs },
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

    // Ground truth: each page's content changes (a disappearance counts as one) and the crawl's
    // answered page fetches, from the server's log.
    const fetchesOf = new Map<string, number[]>();
    for (const e of web.accessLog()) {
      if (e.path === '/robots.txt' || e.path === '/sitemap.xml' || e.status === 0) continue;
      const url = `${web.origin(e.host)}${e.path}`;
      const list = fetchesOf.get(url) ?? [];
      list.push(e.t);
      fetchesOf.set(url, list);
    }
    const truths: PageTruth[] = [];
    let boilerplateOnly = 0;
    let disappeared = 0;
    let disallowed = 0;
    for (let h = 0; h < o.hosts; h++) {
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
        truths.push({ changes, fetches: (fetchesOf.get(url) ?? []).sort((a, b) => a - b) });
      }
    }
    const meguri = measureFreshness(truths, start, stoppedAt);
    const fixed = fixedIntervalPages(truths, start, stoppedAt);
    const fixedFigures = measureFreshness(fixed.pages, start, stoppedAt);
    return {
      crawl,
      simulatedWeb: {
        hosts: o.hosts,
        pagesPerHost: o.pagesPerHost,
        speed: o.speed,
        simulatedHours: Math.round(((stoppedAt - start) / HOUR) * 10) / 10,
        changeIntervals: 'Poisson, mean interval log-uniform from 1 hour to 365 days per page',
        pagesWithBoilerplateOnlyChanges: boilerplateOnly,
        pagesThatDisappeared: disappeared,
        pagesDisallowedByRobots: disallowed,
      },
      meguri: figures(meguri),
      fixedInterval: { ...figures(fixedFigures), intervalHours: Math.round((fixed.intervalMs / HOUR) * 100) / 100 },
    };
  } finally {
    clearInterval(watch);
    o.signal?.removeEventListener('abort', onAbort);
    await web.close();
  }
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
