/**
 * Politeness at scale: a crawl with a per-host minimum interval over H hosts, against the bound the
 * policy allows (H ÷ interval pages/s). The simulated web runs in a child process (this file with
 * --serve) on several loopback addresses, so the per-IP cap (2 requests in flight per address) does
 * not stand in for the per-host interval; robots.txt has no Crawl-delay and allows every host.
 *
 * Throughput is measured in the steady state: from one interval plus a warm-up after the last
 * robots.txt was served (the first pages of every host arrive together and need a few cycles to
 * spread out) to the end of the run, counted in the web server's access log. From the same log: the gap
 * each host sees between the end of one request and the start of the next. From the crawler's own
 * topics (read back after the run): where each host's cycle time goes.
 *
 * `--time-scale S` (S < 1) runs crawler and web on one clock that moves S times as fast as wall time:
 * every clock second gets 1/S wall seconds of CPU, as if the machine were 1/S times faster. Where the
 * 2-core machine cannot carry hosts ÷ interval pages per wall second, this still measures whether
 * the policy keeps every host at its interval. Intervals, gaps and pages/s are then in clock time;
 * CPU figures stay in wall time. The fetcher reports download times in clock milliseconds too
 * (`Clock.speed`), so the k × e rule and the dynamic interval read them on the same clock.
 *
 *   npm run bench:politeness -- [--hosts 5000] [--pages N] [--interval-ms 1000] [--window-s 25]
 *     [--warmup-s 5] [--ips 200] [--partitions 4] [--series 250,500,1000,2000,5000]
 *     [--time-scale 1] [--json]
 */
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { runCrawl } from '../services/cli/crawl.ts';
import { createResolver } from '../services/fetcher/dns.ts';
import { SimWeb } from '../services/simweb/server.ts';
import { createTransport, ScaledClock, systemClock } from '../services/runtime/index.ts';
import type { Clock, Transport } from '../services/runtime/index.ts';
import { schedulerOptionsSchema } from '../services/scheduler/options.ts';
import type { SchedulerOptionsInput } from '../services/scheduler/options.ts';
import { afterOutcome, emptyPoliteness, politenessFromSchedulerOptions } from '../services/scheduler/politeness/index.ts';
import type { PolitenessState } from '../services/scheduler/politeness/index.ts';
import type { OutcomeLink, FrontierRecord } from '../schemas/index.ts';
import { tempDir, removeDir } from '../test/support/transports.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '5000' },
    pages: { type: 'string' },
    'interval-ms': { type: 'string', default: '1000' },
    'window-s': { type: 'string', default: '25' },
    'warmup-s': { type: 'string', default: '5' },
    ips: { type: 'string', default: '200' },
    partitions: { type: 'string', default: '4' },
    series: { type: 'string' },
    'time-scale': { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    // Child mode: serve the simulated web and write its access log to --log on SIGTERM.
    serve: { type: 'boolean', default: false },
    log: { type: 'string', default: '' },
    'clock-origin': { type: 'string', default: '0' },
  },
});

const intervalMs = Number(values['interval-ms']);
const windowS = Number(values['window-s']);
const warmupS = Number(values['warmup-s']);
const timeScale = Number(values['time-scale']);
/**
 * A gap shorter than the interval by more than the clock's resolution: times are whole milliseconds
 * of the run's clock (like Date.now()), so a gap measured between two of them can read up to 1 ms
 * short of the real one. With --time-scale S that millisecond is 1/S wall milliseconds.
 */
const tooShort = (gapMs: number): boolean => gapMs < intervalMs - 1;

/**
 * The clock of a run: wall time, or (with --time-scale) a scaled clock that both processes build
 * from the same origin, so the web server's log and the crawler's records share one time line.
 */
function runClock(origin: number): Clock {
  return timeScale === 1 ? systemClock : new ScaledClock(origin, timeScale, origin);
}

/** Loopback addresses 127.0.0.1 … 127.0.0.n (Linux routes all of 127/8 to lo). */
function loopbackIps(n: number): string[] {
  return Array.from({ length: Math.max(1, Math.min(250, n)) }, (_, i) => `127.0.0.${i + 1}`);
}

// ---------------------------------------------------------------- the web server (child)

async function serve(): Promise<void> {
  const hosts = Number(values.hosts);
  const clock = runClock(Number(values['clock-origin']));
  const web = await SimWeb.start({
    clock,
    seed: 3,
    hosts,
    pagesPerHost: Number(values.pages),
    ips: loopbackIps(Number(values.ips)),
    // Every host crawlable at the configured interval: no disallow-all hosts, no Crawl-delay.
    robots: { crawlDelayShare: 0, disallowAllShare: 0 },
    accessLog: { maxEntries: 10_000_000 },
  });
  console.log(JSON.stringify({ port: web.port, resolve: web.resolveMap() }));
  // Tell the parent when every host has had its robots.txt served: the end of the ramp-up.
  let scanned = 0;
  let robots = 0;
  let lastRobots = 0;
  const watch = setInterval(() => {
    const log = web.accessLog();
    for (; scanned < log.length; scanned++) {
      const e = log[scanned]!;
      if (e.path === '/robots.txt') {
        robots++;
        lastRobots = Math.max(lastRobots, e.t);
      }
    }
    if (robots >= hosts) {
      clearInterval(watch);
      console.log(JSON.stringify({ event: 'robots-done', wallMs: lastRobots }));
    }
  }, 100);
  const stop = (): void => {
    clearInterval(watch);
    // Arrival on the run's clock (e.t) and the wall-clock serving time converted to that clock.
    const lines = web.accessLog().map((e) => JSON.stringify({ w: e.t, h: e.host, p: e.path, s: e.status, d: e.durationMs * timeScale }));
    writeFileSync(values.log, lines.join('\n') + '\n');
    void web.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

// ---------------------------------------------------------------- measurement helpers

function cpuSecondsOf(pid: number): number {
  // utime + stime from /proc/<pid>/stat, in clock ticks (100 Hz on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Busy CPU seconds of the whole machine (every process), from /proc/stat. */
function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: all but idle and iowait are busy.
  return (f.reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0)) / 100;
}

function crawlerCpuSeconds(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
const r0 = (v: number): number => Math.round(v);
const r1 = (v: number): number => Math.round(v * 10) / 10;
const r2 = (v: number): number => Math.round(v * 100) / 100;
const r3 = (v: number): number => Math.round(v * 1000) / 1000;

interface LogLine {
  w: number;
  h: string;
  p: string;
  s: number;
  d: number;
}

interface Web {
  child: ChildProcess;
  resolve: string[];
  seeds: string[];
  robotsDone: Promise<number>;
  /** SIGTERM, then the access log the child wrote on its way out. */
  stop(): Promise<LogLine[]>;
}

async function startWeb(hosts: number, pages: number, ips: number, logFile: string, clockOrigin: number): Promise<Web> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--serve', '--hosts', String(hosts), '--pages', String(pages), '--ips', String(ips), '--log', logFile, '--time-scale', String(timeScale), '--clock-origin', String(clockOrigin)];
  const child = spawn(process.execPath, ['--import', 'tsx', self, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const info = JSON.parse(String(first.value)) as { port: number; resolve: Record<string, string> };
  const robotsDone = (async () => {
    for (;;) {
      const next = await lines.next();
      if (next.done) return NaN;
      const msg = JSON.parse(String(next.value)) as { event?: string; wallMs?: number };
      if (msg.event === 'robots-done') return msg.wallMs ?? NaN;
    }
  })();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    resolve: Object.entries(info.resolve).map(([k, v]) => `${k}=${v}`),
    seeds: Array.from({ length: hosts }, (_, i) => `http://h${i}.sim.test:${info.port}/`),
    robotsDone,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as LogLine);
    },
  };
}

/**
 * Pages per host cycle that fall inside [w0, w1): each pair of consecutive page requests of a host
 * adds the share of its cycle that overlaps the window. Counting requests in the window instead is
 * off by up to one request per host when the hosts run in step (they start together), which at a
 * 1 s interval in a 10 s window is ±10 %. A host's last cycle, with no request after it in the log,
 * counts only up to that request, so the figure errs low.
 */
function cyclesInWindow(log: readonly LogLine[], w0: number, w1: number): number {
  const starts = new Map<string, number[]>();
  for (const e of log) {
    if (e.s === 0 || e.p === '/robots.txt') continue;
    let list = starts.get(e.h);
    if (!list) starts.set(e.h, (list = []));
    list.push(e.w);
  }
  let cycles = 0;
  for (const list of starts.values()) {
    list.sort((a, b) => a - b);
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1]!;
      const b = list[i]!;
      const overlap = Math.min(b, w1) - Math.max(a, w0);
      if (overlap > 0 && b > a) cycles += overlap / (b - a);
    }
  }
  return cycles;
}

/** Server view: pages served in the window, and per host the gaps between consecutive requests. */
function serverFigures(log: readonly LogLine[], w0: number, w1: number) {
  const byHost = new Map<string, LogLine[]>();
  let pages = 0;
  const active = new Set<string>();
  for (const e of log) {
    if (e.w < w0 || e.w >= w1 || e.s === 0) continue;
    if (e.p !== '/robots.txt') {
      pages++;
      active.add(e.h);
    }
    let list = byHost.get(e.h);
    if (!list) byHost.set(e.h, (list = []));
    list.push(e);
  }
  const startToStart: number[] = [];
  const endToStart: number[] = [];
  const serveMs: number[] = [];
  for (const list of byHost.values()) {
    list.sort((a, b) => a.w - b.w);
    for (let i = 0; i < list.length; i++) {
      serveMs.push(list[i]!.d);
      if (i === 0) continue;
      const a = list[i - 1]!;
      const b = list[i]!;
      startToStart.push(b.w - a.w);
      endToStart.push(b.w - (a.w + a.d));
    }
  }
  return {
    pages,
    cycles: cyclesInWindow(log, w0, w1),
    activeHosts: active.size,
    meanStartToStartMs: mean(startToStart),
    meanEndToStartMs: mean(endToStart),
    p50EndToStartMs: quantile(endToStart, 0.5),
    p99EndToStartMs: quantile(endToStart, 0.99),
    minEndToStartMs: endToStart.length > 0 ? Math.min(...endToStart) : NaN,
    /**
     * Gaps shorter than the interval as the server saw them. Its end of a response is stamped when
     * the close event runs, a few ms late on a busy server, so this can read a little short; the
     * crawler-side gap (cycle.minGapMs) is a strict lower bound.
     */
    gapsBelowInterval: endToStart.filter(tooShort).length,
    meanServeMs: mean(serveMs),
  };
}

async function readTopic(transport: Transport, topic: string, keep: (value: Buffer) => boolean, each: (value: Buffer, timestamp: number) => void): Promise<void> {
  const desc = await transport.describeTopic(topic);
  if (!desc) return;
  for (const p of desc.partitions) {
    for await (const batch of transport.readPartition(topic, p.partition, p.low, p.high)) {
      for (const r of batch) if (r.value && keep(r.value)) each(r.value, r.timestamp);
    }
  }
}

const OUTCOME_MARK = Buffer.from('"type":"outcome"');

/**
 * Crawler view, from the `frontier` and `links` topics: each host's cycle, request start to the next
 * request's start, split into
 *   fetch       fetch.totalMs: from holding a connection slot to the end of the response
 *   parse       end → outcome emitted by the parser (pages topic hop + parse)
 *   toSchedule  outcome emitted → next request emitted, less the host interval (links topic hop,
 *               scheduler batch, waiting for the next dispatch tick)
 *   interval    the host interval the policy chose (replayed from the outcomes with the same config)
 *   toFetcher   request emitted → fetch start (frontier topic hop, fetcher queue, per-IP slot)
 */
async function crawlerFigures(dataDir: string, scheduler: SchedulerOptionsInput, w0: number, w1: number, clock: Clock) {
  const transport = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir, clock });
  const requests = new Map<string, { host: string; issuedAt: number; reason: string }>();
  const outcomes = new Map<string, { o: OutcomeLink; ts: number }>();
  try {
    await readTopic(
      transport,
      'frontier',
      () => true,
      (v) => {
        const f = JSON.parse(v.toString('utf8')) as FrontierRecord;
        requests.set(f.requestId, { host: f.host, issuedAt: f.issuedAt, reason: f.reason });
      },
    );
    await readTopic(
      transport,
      'links',
      (v) => v.includes(OUTCOME_MARK),
      (v, ts) => {
        const o = JSON.parse(v.toString('utf8')) as OutcomeLink;
        if (!outcomes.has(o.requestId)) outcomes.set(o.requestId, { o, ts });
      },
    );
  } finally {
    await transport.close();
  }
  const config = politenessFromSchedulerOptions(schedulerOptionsSchema.parse(scheduler), schedulerOptionsSchema.parse(scheduler).politeness);
  type Req = { issuedAt: number; start: number; end: number; ts: number; intervalMs: number; rule: string; o: OutcomeLink };
  const byHost = new Map<string, Req[]>();
  for (const [id, req] of requests) {
    const out = outcomes.get(id);
    if (!out) continue;
    let list = byHost.get(req.host);
    if (!list) byHost.set(req.host, (list = []));
    list.push({ issuedAt: req.issuedAt, start: out.o.fetchedAt - out.o.fetch.totalMs, end: out.o.fetchedAt, ts: out.ts, intervalMs: 0, rule: '', o: out.o });
  }
  const parts = { fetch: [] as number[], parse: [] as number[], toSchedule: [] as number[], interval: [] as number[], toFetcher: [] as number[], period: [] as number[] };
  const rules: Record<string, number> = {};
  // End of one fetch to the start of the next as the crawler saw them: a lower bound of the gap at
  // the server (the request is sent after the fetch starts, the answer ends before it is read).
  const gaps: number[] = [];
  let outcomesInWindow = 0;
  for (const list of byHost.values()) {
    list.sort((a, b) => a.issuedAt - b.issuedAt);
    // Replay the host's outcomes through the policy to learn the interval each one set.
    let state: PolitenessState = emptyPoliteness();
    for (const r of list) {
      const next = afterOutcome(state, r.o, r.ts, config);
      state = next.state;
      r.intervalMs = next.intervalMs;
      r.rule = next.reason;
    }
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1]!;
      const b = list[i]!;
      if (a.start < w0 || b.start >= w1) continue;
      parts.fetch.push(a.end - a.start);
      parts.parse.push(a.ts - a.end);
      parts.toSchedule.push(b.issuedAt - a.ts - a.intervalMs);
      parts.interval.push(a.intervalMs);
      parts.toFetcher.push(b.start - b.issuedAt);
      parts.period.push(b.start - a.start);
      gaps.push(b.start - a.end);
      rules[a.rule] = (rules[a.rule] ?? 0) + 1;
    }
    for (const r of list) if (r.o.reason !== 'robots' && r.ts >= w0 && r.ts < w1) outcomesInWindow++;
  }
  const total = parts.period.length;
  return {
    cycles: total,
    outcomesInWindow,
    minGapMs: r1(gaps.length > 0 ? Math.min(...gaps) : NaN),
    gapsBelowInterval: gaps.filter(tooShort).length,
    meanMs: {
      fetch: r1(mean(parts.fetch)),
      parse: r1(mean(parts.parse)),
      toSchedule: r1(mean(parts.toSchedule)),
      interval: r1(mean(parts.interval)),
      toFetcher: r1(mean(parts.toFetcher)),
      period: r1(mean(parts.period)),
    },
    p95Ms: {
      fetch: r1(quantile(parts.fetch, 0.95)),
      parse: r1(quantile(parts.parse, 0.95)),
      toSchedule: r1(quantile(parts.toSchedule, 0.95)),
      interval: r1(quantile(parts.interval, 0.95)),
      toFetcher: r1(quantile(parts.toFetcher, 0.95)),
      period: r1(quantile(parts.period, 0.95)),
    },
    /** Which rule set the host interval, as shares of the cycles. */
    intervalRule: Object.fromEntries(Object.entries(rules).map(([k, v]) => [k, r3(v / Math.max(1, total))])),
  };
}

// ---------------------------------------------------------------- one run

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function run(hosts: number) {
  // Enough pages that no host runs dry before the window ends, even if the ramp-up is slow.
  const pages = values.pages !== undefined ? Number(values.pages) : Math.ceil(((windowS + 20) * 1000) / intervalMs) + 20;
  const dir = tempDir('meguri-bench-politeness-');
  const origin = Date.now();
  const clock = runClock(origin);
  const web = await startWeb(hosts, pages, Number(values.ips), join(dir, 'access.ndjson'), origin);
  // Politeness defaults except the interval; suspend windows stay on (T = 60 min is never reached here).
  const scheduler: SchedulerOptionsInput = { minIntervalMs: intervalMs, userAgent: 'meguri' };
  const abort = new AbortController();
  let peakRss = 0;
  const rssSampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
  const started = clock.now();
  let logLines: LogLine[] = [];
  try {
    const crawl = runCrawl({
      seeds: web.seeds,
      dataDir: join(dir, 'crawl'),
      partitions: Number(values.partitions),
      clock,
      signal: abort.signal,
      scheduler,
      fetcher: { resolver: createResolver({ mode: 'static', resolve: web.resolve }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
    });
    const crawlFailed = crawl.then(
      () => new Error('crawl ended before the window'),
      (err: unknown) => err,
    );
    // Ramp-up: every host has had robots.txt, then one interval (the first page of the last host).
    const robotsAt = await Promise.race([web.robotsDone, sleep(120_000).then(() => NaN), crawlFailed.then((e) => Promise.reject(e))]);
    const rampS = (robotsAt - started) / 1000;
    const w0 = (Number.isFinite(robotsAt) ? robotsAt : clock.now()) + intervalMs + warmupS * 1000;
    await clock.sleep(w0 - clock.now());
    const wall0 = Date.now();
    const cpu0 = { crawler: crawlerCpuSeconds(), web: cpuSecondsOf(web.child.pid!), machine: machineBusySeconds() };
    // The crawler's event-loop delay: every fetch in flight waits for it, and it is counted in the
    // download time the k × e rule reads.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    await clock.sleep(windowS * 1000);
    loop.disable();
    const w1 = clock.now();
    const wallSpanS = (Date.now() - wall0) / 1000;
    const cpu1 = { crawler: crawlerCpuSeconds(), web: cpuSecondsOf(web.child.pid!), machine: machineBusySeconds() };
    // A little more crawl after the window, so each host's cycle across its end is complete.
    await clock.sleep(Math.max(3 * intervalMs, 5_000));
    abort.abort();
    await crawl;
    clearInterval(rssSampler);
    logLines = await web.stop();
    const server = serverFigures(logLines, w0, w1);
    const crawler = await crawlerFigures(join(dir, 'crawl'), scheduler, w0, w1, clock);
    const spanS = (w1 - w0) / 1000;
    const bound = hosts / (intervalMs / 1000);
    const achieved = server.cycles / spanS;
    const crawlerCpuS = cpu1.crawler - cpu0.crawler;
    const webCpuS = cpu1.web - cpu0.web;
    const otherCpuS = Math.max(0, cpu1.machine - cpu0.machine - crawlerCpuS - webCpuS);
    return {
      hosts,
      ips: loopbackIps(Number(values.ips)).length,
      intervalMs,
      pagesPerHost: pages,
      robotsRampS: r1(rampS),
      windowS: r1(spanS),
      boundPagesPerS: r1(bound),
      achievedPagesPerS: r1(achieved),
      achievedOverBound: r3(achieved / bound),
      pagesInWindow: server.pages,
      activeHosts: server.activeHosts,
      meanGapMs: r0(server.meanEndToStartMs),
      p99GapMs: r0(server.p99EndToStartMs),
      minGapMs: r0(server.minEndToStartMs),
      gapsBelowInterval: server.gapsBelowInterval,
      meanPeriodMs: r0(server.meanStartToStartMs),
      meanServeMs: r1(server.meanServeMs),
      timeScale,
      crawlerCores: r2(crawlerCpuS / wallSpanS),
      webServerCores: r2(webCpuS / wallSpanS),
      otherProcessesCores: r2(otherCpuS / wallSpanS),
      eventLoopDelayP99Ms: r0(loop.percentile(99) / 1e6),
      eventLoopDelayMaxMs: r0(loop.max / 1e6),
      peakRssMiB: Math.round(peakRss / 2 ** 20),
      cycle: crawler,
    };
  } finally {
    clearInterval(rssSampler);
    abort.abort();
    if (web.child.exitCode === null) await web.stop().catch(() => undefined);
    removeDir(dir);
  }
}

// ---------------------------------------------------------------- main

if (values.serve) {
  await serve();
} else {
  if (!(intervalMs > 0)) throw new RangeError('--interval-ms must be > 0 (the bound is hosts ÷ interval)');
  if (!(timeScale > 0 && timeScale <= 1)) throw new RangeError('--time-scale must be in (0, 1]');
  const sizes = values.series ? values.series.split(',').map(Number) : [Number(values.hosts)];
  const results = [];
  for (const h of sizes) {
    const row = await run(h);
    results.push(row);
    if (!values.json) console.error(`hosts ${h}: ${row.achievedPagesPerS} of ${row.boundPagesPerS} pages/s (${row.achievedOverBound})`);
  }
  const machine = machineInfo();
  const dilation = timeScale === 1 ? '' : `; time scale ${timeScale} (the run's clock moves ${timeScale}× as fast as wall time: pages/s, intervals and gaps in clock time, cores in wall time)`;
  const setup = `interval ${intervalMs} ms; other politeness defaults (k = 10, dynamic interval, back-off; suspend windows on, T = 60 min is never reached in a run); window ${windowS} s from ${warmupS} s after the robots.txt ramp-up; hosts on ${loopbackIps(Number(values.ips)).length} loopback IPs${dilation}`;
  if (values.json) console.log(JSON.stringify({ machine, setup, results }, null, 2));
  else {
    console.log(machineLine(machine));
    console.log(setup);
    console.table(
      results.map((r) => ({
        hosts: r.hosts,
        'bound p/s': r.boundPagesPerS,
        'achieved p/s': r.achievedPagesPerS,
        'ach/bound': r.achievedOverBound,
        'mean gap ms': r.meanGapMs,
        'p99 gap ms': r.p99GapMs,
        'min gap ms (server)': r.minGapMs,
        'min gap ms (crawler)': r.cycle.minGapMs,
        'crawler cores': r.crawlerCores,
        'web cores': r.webServerCores,
        'other cores': r.otherProcessesCores,
        'loop p99 ms': r.eventLoopDelayP99Ms,
        'peak RSS MiB': r.peakRssMiB,
      })),
    );
    console.log('cycle per host, mean ms (request start to next request start):');
    console.table(results.map((r) => ({ hosts: r.hosts, ...r.cycle.meanMs, ...Object.fromEntries(Object.entries(r.cycle.intervalRule).map(([k, v]) => [`rule ${k}`, v])) })));
  }
  process.exit(0);
}
