// bench:freshness — how fresh meguri keeps a changing web it has never seen, beside known-rate
// policies replayed with the same number of fetches.
//
// A simulated web on 127.0.0.1 (static DNS only): each page's main text changes as a Poisson process
// with a mean interval log-uniform between --min-change and --max-change, a third of the pages also
// change their boilerplate (date line, promo box) every 30 minutes, a few only ever change their
// boilerplate, 5 % disappear during the run; ETags and 304s, no Last-Modified, no sitemaps. The
// whole crawler (embedded log, scheduler, fetcher, parser) runs with its default settings (but for
// politeness' k·e term, which would scale a fetch's wall time by the clock's speed) on a clock
// --speed times faster than wall time. After --warmup-days the server's own log is scored against
// the ground truth (services/revisit/freshness.ts), and the same fetch count is replayed on the same
// change times under: one fixed interval for every page, revisits proportional to the known change
// rates, and the known-rate freshness-optimal allocation (Cho & Garcia-Molina, TODS 2003). Then the
// change-rate estimators' error against known rates after n revisits (pure, no crawl).
//
// Run: npm run bench:freshness -- [--seeds 1,2] [--days 8] [--warmup-days 2.5] [--speed 1800]
//        [--hosts 30] [--pages 40] [--revisit-goal freshness|versions] [--allocation goal|sqrt|proportional]
//        [--revisit-policy '{"pooled":false}'] [--json]
//      npm run bench:freshness -- --estimator-only [--host-spread 3]   (estimator error only; pages within ×3 of their host's rate)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createResolver } from '../services/fetcher/dns.ts';
import { runChangingCrawl, scaledTimers } from '../services/cli/demo-changing.ts';
import type { ChangingCrawl } from '../services/cli/demo-changing.ts';
import { fixedIntervalPages, measureFreshness } from '../services/revisit/freshness.ts';
import type { Freshness, PageTruth } from '../services/revisit/freshness.ts';
import { knownRatePolicy } from '../services/revisit/policies.ts';
import { DEFAULT_REVISIT_OPTIONS, estimateInterval, initialState, nextInterval, update } from '../services/revisit/estimator.ts';
import { logUniformGrid, posteriorMeanInterval } from '../services/revisit/posterior.ts';
import { contribution, movePool, pooledGrid } from '../services/revisit/pooled.ts';
import { mulberry32 } from '../services/revisit/simulate.ts';
import { machineInfo, machineLine } from './machine.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const args = process.argv.slice(2);
const json = args.includes('--json');
const opt = (flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};
const num = (flag: string, dflt: number): number => {
  const v = Number(opt(flag));
  return Number.isFinite(v) && opt(flag) !== undefined ? v : dflt;
};
const seeds = (opt('--seeds') ?? '1,2').split(',').map(Number);
const days = num('--days', 8);
const warmupDays = num('--warmup-days', 2.5);
// ×1800: at ×3600 a request's wall time, × the speed, spaces a host's requests minutes apart in
// simulated time on a loaded machine; the per-host budget then binds and the bench measures the machine.
const speed = num('--speed', 1800);
const hosts = num('--hosts', 30);
const pagesPerHost = num('--pages', 40);
const minChangeH = num('--min-change', 2);
const maxChangeD = num('--max-change', 60);
const hostSpread = num('--host-spread', 0);
const goal = opt('--revisit-goal') as 'freshness' | 'versions' | undefined;
const allocation = opt('--allocation') as 'goal' | 'sqrt' | 'proportional' | undefined;
// Any other revisit rule, as the settings file's revisitPolicy (JSON), e.g. '{"pooled":false,"versionValueS":0}'.
const policyJson = opt('--revisit-policy');
const revisitPolicy = { ...(policyJson ? (JSON.parse(policyJson) as Record<string, unknown>) : {}), ...(allocation ? { allocation } : {}) };

interface Row {
  policy: string;
  fetches: number;
  versionsSeen: number;
  /** share of observed page-time a copy was stale */
  timeStale: number;
  /** mean age of the missed change while a copy is stale (hours) */
  staleAgeH: number;
  versionsPerFetch: number;
}

function row(policy: string, f: Freshness): Row {
  return {
    policy,
    fetches: f.fetches,
    versionsSeen: f.versionsSeen,
    timeStale: f.staleness,
    staleAgeH: f.staleness > 0 ? f.meanStaleAgeMs / f.staleness / HOUR : 0,
    versionsPerFetch: f.fetches > 0 ? f.versionsSeen / f.fetches : 0,
  };
}

async function crawlOnce(seed: number): Promise<ChangingCrawl> {
  const userAgent = 'meguri-bench/0.1 (+http://meguri.invalid/bot)';
  const dataDir = mkdtempSync(join(tmpdir(), 'meguri-bench-freshness-'));
  try {
    return await crawlIn(seed, userAgent, dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function crawlIn(seed: number, userAgent: string, dataDir: string): Promise<ChangingCrawl> {
  return runChangingCrawl({
    dataDir,
    hosts,
    pagesPerHost,
    webSeed: seed,
    speed,
    durationS: (days * DAY) / speed / 1000,
    change: { minIntervalMs: minChangeH * HOUR, maxIntervalMs: maxChangeD * DAY, boilerplateOnlyShare: 0.05, boilerplateTickShare: 1 / 3, boilerplateTickMs: 30 * 60_000, goneShare: 0.05, goneWithinMs: days * DAY },
    validators: { noneShare: 0, etagOnlyShare: 1, lastModifiedOnlyShare: 0 },
    crawlOptions: (seedUrls, resolve, dir) => ({
      seeds: seedUrls,
      dataDir: dir,
      scheduler: {
        ...scaledTimers(speed),
        userAgent,
        sitemaps: false,
        // The k·e term of politeness multiplies a fetch's *wall* time by the clock's speed: on this
        // clock a 20 ms fetch would space a host's requests 20 simulated minutes apart and the
        // machine's load, not the revisit policy, would set the budget. Off here; every revisit
        // setting is the default.
        politeness: { kFactor: 0 },
        ...(goal ? { revisitGoal: goal } : {}),
        ...(Object.keys(revisitPolicy).length > 0 ? { revisitPolicy } : {}),
      },
      fetcher: { userAgent, resolver: createResolver({ mode: 'static', resolve }) },
    }),
    log: (line) => process.stderr.write(`${line}\n`),
  });
}

function score(r: ChangingCrawl): Row[] {
  const from = r.start + warmupDays * DAY;
  const end = r.stoppedAt;
  const meguri = measureFreshness(r.pages, from, end);
  const fixed = fixedIntervalPages(r.pages, from, end);
  const prop = knownRatePolicy('versions', r.pages, from, end, meguri.fetches);
  const optimal = knownRatePolicy('freshness', r.pages, from, end, meguri.fetches);
  const m = (pages: PageTruth[]): Freshness => measureFreshness(pages, from, end);
  return [
    row('one fixed interval', m(fixed.pages)),
    // The settings the crawl ran with: the defaults but for the goal or allocation given.
    row(`meguri, ${goal || allocation ? [goal && `revisit goal ${goal}`, allocation && `allocation ${allocation}`].filter(Boolean).join(', ') : 'default settings'}`, meguri),
    row('proportional, rates known', m(prop.pages)),
    row('freshness-optimal, rates known', m(optimal.pages)),
  ];
}

function table(seed: number, r: ChangingCrawl, rows: Row[]): string {
  const fixed = rows[0]!;
  const head = `web seed ${seed}: ${hosts} hosts × ${pagesPerHost} pages (${r.pages.length} allowed, ${r.pagesThatDisappeared} disappeared), ${((r.stoppedAt - r.start) / DAY).toFixed(1)} simulated days, scored after day ${warmupDays}`;
  const lines = [head, '| policy | fetches | time stale | × fixed | stale copy’s age (h) | versions seen | × fixed | versions/fetch |', '|---|---|---|---|---|---|---|---|'];
  for (const x of rows) {
    lines.push(
      `| ${x.policy} | ${x.fetches} | ${x.timeStale.toFixed(3)} | ${(x.timeStale / fixed.timeStale).toFixed(2)}× | ${x.staleAgeH.toFixed(1)} | ${x.versionsSeen} | ${(x.versionsSeen / fixed.versionsSeen).toFixed(2)}× | ${x.versionsPerFetch.toFixed(3)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The estimators' error against known rates as observations accrue: hosts of --pages pages with
 * mean change intervals log-uniform in the bench's range, each page revisited on meguri's default
 * schedule; after n revisits, the median |τ̂ − τ|/τ of equation (4) (over the pages it can
 * estimate at all: it is undefined until a page has both changed and stayed unchanged) and of the
 * posterior's geometric mean — on the log-uniform base prior alone, and with the host's pooled
 * prior (services/revisit/pooled.ts), which the schedule then also uses, as the scheduler does.
 */
function estimatorError(seed: number): { n: number; eq4Estimable: number; eq4MedianError: number; posteriorMedianError: number; pooledMedianError: number }[] {
  const base = logUniformGrid(DEFAULT_REVISIT_OPTIONS.priorMinS, DEFAULT_REVISIT_OPTIONS.priorMaxS);
  const checkpoints = [2, 3, 4, 8, 16, 32];
  const eq4: number[][] = checkpoints.map(() => []);
  const post: number[][] = checkpoints.map(() => []);
  const pooled: number[][] = checkpoints.map(() => []);
  const hostCount = Math.ceil(2000 / pagesPerHost);
  for (const pool of [false, true]) {
    const rng = mulberry32(seed);
    for (let h = 0; h < hostCount; h++) {
      const logRange = Math.log((maxChangeD * 24) / minChangeH);
      const hostAt = rng();
      // Pages of a host independent of each other, as on the crawled web, or (--host-spread F) within ×F of their host's rate.
      const at = (): number => (hostSpread > 1 ? Math.min(1, Math.max(0, hostAt + ((2 * rng() - 1) * Math.log(hostSpread)) / logRange)) : rng());
      const taus = Array.from({ length: pagesPerHost }, () => minChangeH * 3600 * Math.exp(at() * logRange));
      // First fetches spread over the first 6 hours, then each page at its own schedule, in time order.
      const states = taus.map(() => initialState(rng() * 6 * 3600));
      const due = states.map((s) => s.l);
      const visits = taus.map(() => 0);
      let hist: number[] | undefined;
      for (;;) {
        let i = -1;
        for (let k = 0; k < due.length; k++) if (visits[k]! <= checkpoints.at(-1)! && (i < 0 || due[k]! < due[i]!)) i = k;
        if (i < 0) break;
        const before = states[i]!;
        if (visits[i]! > 0) {
          const dt = due[i]! - before.l;
          states[i] = update(before, { at: due[i]!, changed: rng() < -Math.expm1(-dt / taus[i]!) });
        }
        const s = states[i]!;
        const own = pool ? contribution(s, base) : null;
        if (pool) hist = movePool(hist, contribution(before, base), own);
        const prior = pool ? pooledGrid(hist, base, own) : undefined;
        const n = visits[i]!;
        const c = checkpoints.indexOf(n);
        if (c >= 0) {
          const err = (e: number): number => Math.abs(e - taus[i]!) / taus[i]!;
          if (pool) pooled[c]!.push(err(posteriorMeanInterval(s, prior ?? base)));
          else {
            const e = estimateInterval(s);
            if (e !== null) eq4[c]!.push(err(e));
            post[c]!.push(err(posteriorMeanInterval(s, base)));
          }
        }
        visits[i] = n + 1;
        due[i] = s.l + nextInterval(s, rng, DEFAULT_REVISIT_OPTIONS, prior ? { prior } : {}).interval;
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
  const pages = hostCount * pagesPerHost;
  return checkpoints.map((n, c) => ({
    n,
    eq4Estimable: eq4[c]!.length / pages,
    eq4MedianError: median(eq4[c]!),
    posteriorMedianError: median(post[c]!),
    pooledMedianError: median(pooled[c]!),
  }));
}

const results: { seed: number; crawl: { pagesFetched: number; stoppedBecause: string }; rows: Row[] }[] = [];
for (const seed of args.includes('--estimator-only') ? [] : seeds) {
  const r = await crawlOnce(seed);
  const rows = score(r);
  results.push({ seed, crawl: { pagesFetched: r.crawl.pagesFetched, stoppedBecause: r.crawl.stoppedBecause }, rows });
  if (!json) console.log(`${table(seed, r, rows)}\n`);
}
const errors = estimatorError(seeds[0] ?? 1);
if (!json) {
  const lines = [
    'estimator error vs known rates (median |τ̂ − τ|/τ), revisits on the default schedule:',
    '| revisits | eq. (4) defined for | eq. (4) error | posterior mean error, base prior | posterior mean error, host-pooled prior |',
    '|---|---|---|---|---|',
  ];
  for (const e of errors) {
    lines.push(`| ${e.n} | ${(e.eq4Estimable * 100).toFixed(0)} % | ${e.eq4MedianError.toFixed(2)} | ${e.posteriorMedianError.toFixed(2)} | ${e.pooledMedianError.toFixed(2)} |`);
  }
  console.log(`${lines.join('\n')}\n`);
}
const settings = { days, warmupDays, speed, hosts, pagesPerHost, minChangeH, maxChangeD, hostSpread, revisitGoal: goal ?? 'default', revisitPolicy };
if (json) console.log(JSON.stringify({ settings, machine: machineInfo(), results, estimatorError: errors }, null, 2));
else console.log(machineLine(machineInfo()));
