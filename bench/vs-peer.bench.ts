/**
 * meguri against the fastest one-process crawler we know, side by side in one run on one simulated
 * web: node-crawler 2.0.2 (128 connections, frontier in memory, SAX link pass, persists nothing)
 * and `meguri crawl` (embedded log; and on Kafka when a broker is given), one after the other, each
 * in its own process. The web runs in a third process: 200 hosts × 500 pages of 20 KB with about 40
 * links each, every host on its own loopback address (127.0.0.2 …) so the per-IP cap does not stand
 * in for the per-host loop, no politeness delay, 5 seeds, 20,000 pages per crawler. With politeness
 * off meguri lets a host have four requests in flight (politeness.maxPerHost and maxPerIp, set by
 * --max-per-host; they queue on the host's one connection in the fetcher). meguri also reads
 * each host's sitemap (as it does by default: ~87,000 URLs in all on this web), which the peer never
 * does; `--no-sitemaps` leaves them out for a like-for-like link crawl. Names resolve through a
 * static map only: nothing leaves the machine.
 *
 * Prints pages/s (crawl time, after start-up), CPU ms per page and peak RSS of the whole process
 * (start-up and worker threads included), each figure's ratio to the peer, and how fast each crawl
 * got going, read from the web's access log (ramp-up.ts): the rate it reached, the time from its
 * first request to 90 % of that rate, and the time until it had fetched a page of every host it
 * reached. On the broker deploy/local/kafka.sh runs from this clone it also prints the broker's CPU
 * during each Kafka crawl (brokerCpuS): it shares the two cores.
 *
 *   npm run bench:vs-peer -- [--hosts 200] [--pages 500] [--max-pages 20000] [--seeds 5] [--links 38]
 *     [--bytes 20000] [--kafka host:port] [--only peer,embedded,kafka] [--parser-workers N]
 *     [--max-per-host 4] [--max-per-ip N, default max(2, --max-per-host)] [--no-sitemaps] [--runs 1] [--json]
 *
 * With `--runs N` every contender runs N times, in rounds (peer, embedded, Kafka, then again); each
 * ratio is to the peer of the same round, and a summary gives each crawler's mean and range.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { removeRunTopics, requireBroker } from './kafka-topics.ts';
import { machineInfo, machineLine } from './machine.ts';
import { rampUp } from './vs-peer/ramp-up.ts';
import type { ServedRequest } from './vs-peer/ramp-up.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '200' },
    pages: { type: 'string', default: '500' },
    'max-pages': { type: 'string', default: '20000' },
    seeds: { type: 'string', default: '5' },
    // Random links per page; with the tree and navigation links a page has about 40.
    links: { type: 'string', default: '38' },
    bytes: { type: 'string', default: '20000' },
    kafka: { type: 'string', default: '' },
    only: { type: 'string', default: '' },
    'parser-workers': { type: 'string' },
    // Requests in flight per host (politeness.maxPerHost) and per IP (each host has its own here,
    // so the per-IP cap would otherwise hold a host at 2): the peer has no such limits at all.
    'max-per-host': { type: 'string', default: '4' },
    'max-per-ip': { type: 'string' },
    partitions: { type: 'string', default: '4' },
    // meguri without the hosts' sitemaps, finding pages by links only, as the peer does.
    'no-sitemaps': { type: 'boolean', default: false },
    // Rounds of every contender, one after the other in each: the machine's speed drifts, so a
    // ratio is taken within a round and the summary gives their mean and spread.
    runs: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});

const root = fileURLToPath(new URL('..', import.meta.url));
const usagePreload = join(root, 'bench/vs-peer/report-usage.mjs');
const hosts = Number(values.hosts);
const maxPages = Number(values['max-pages']);
if (hosts > 250) throw new RangeError('--hosts: at most 250 (one 127.0.0.x address each)');

interface Usage {
  cpuMs: number;
  maxRssKiB: number;
  uptimeMs: number;
}

function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The process id of the broker at `brokers` when it is the one deploy/local/kafka.sh runs from this
 * clone (its state directory names its address and pid); undefined for any other broker.
 */
function localBrokerPid(brokers: string): number | undefined {
  const stateDir = process.env.MEGURI_KAFKA_STATE_DIR ?? join(root, '.cache/kafka');
  try {
    const address = readFileSync(join(stateDir, 'bootstrap'), 'utf8').trim();
    if (!brokers.split(',').includes(address)) return undefined;
    const pid = Number(readFileSync(join(stateDir, 'kafka.pid'), 'utf8').trim());
    // A pid file left by a broker that is gone may name another process by now.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka') ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The broker's CPU seconds, or undefined once it has gone away (the crawl's row goes without it). */
function brokerCpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return cpuSecondsOf(pid);
  } catch {
    return undefined;
  }
}

const webDir = mkdtempSync(join(tmpdir(), 'meguri-vs-peer-web-'));
const accessLog = join(webDir, 'access.ndjson');

async function startWeb(): Promise<{ pid: number; resolve: Record<string, string>; seeds: string[]; port: number; stop: () => void }> {
  const ips = Array.from({ length: hosts }, (_, i) => `127.0.0.${i + 2}`);
  const args = ['--import', 'tsx', join(root, 'services/simweb/main.ts'), '--hosts', String(hosts), '--pages', values.pages, '--bytes', values.bytes, '--links', values.links, '--seed', '3', '--crawl-delay-share', '0', '--ips', ips.join(','), '--log', accessLog];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  const info = JSON.parse(String(first.value)) as { port: number; resolve: Record<string, string> };
  const seedCount = Number(values.seeds);
  // Seeds spread over the web, so the crawl starts in different corners of it.
  const seeds = Array.from({ length: seedCount }, (_, i) => `http://h${Math.floor((i * hosts) / seedCount)}.sim.test:${info.port}/`);
  return { pid: child.pid!, resolve: info.resolve, seeds, port: info.port, stop: () => child.kill('SIGTERM') };
}

/**
 * Runs one contender as its own process; returns its stdout and its usage as it exited. `command`
 * is what a user runs: node with the peer's script, meguri's own launcher (bin/meguri.js as a
 * program, which picks meguri's Node flags). The usage reporter is preloaded through NODE_OPTIONS.
 */
async function runProcess(command: string, args: string[]): Promise<{ stdout: string; usage: Usage; wallMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-vs-peer-'));
  const usageFile = join(dir, 'usage.json');
  const t0 = performance.now();
  const nodeOptions = [process.env.NODE_OPTIONS, `--import=${pathToFileURL(usagePreload).href}`].filter(Boolean).join(' ');
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: nodeOptions, MEGURI_BENCH_USAGE_FILE: usageFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const wallMs = performance.now() - t0;
  if (code !== 0) throw new Error(`${args.slice(0, 3).join(' ')} exited with ${code}`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as Usage;
  rmSync(dir, { recursive: true, force: true });
  return { stdout, usage, wallMs };
}

interface Row {
  crawler: string;
  pages: number;
  elapsedS: number;
  pagesPerS: number;
  cpuMsPerPage: number;
  peakRssMiB: number;
  startupS: number;
  webServerCpuS: number;
  /** CPU the local broker (deploy/local) used during a crawl on Kafka. */
  brokerCpuS?: number;
  duplicates: number | string;
  errors: number;
  fullSpeedPagesPerS?: number;
  toFullSpeedS?: number;
  toAllHostsS?: number;
  /** meguri: the scheduler's commits (transactions on Kafka) and their mean time. */
  schedulerCommits?: number;
  schedulerCommitMs?: number;
}

function logSize(): number {
  try {
    return statSync(accessLog).size;
  } catch {
    return 0;
  }
}

/** The requests the web logged since `from` (a byte offset of its access log). */
async function servedSince(from: number): Promise<ServedRequest[]> {
  // The web writes its log through a stream: give the last lines a moment to land.
  await new Promise((r) => setTimeout(r, 500));
  const text = readFileSync(accessLog).subarray(from).toString('utf8');
  const out: ServedRequest[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as ServedRequest;
    out.push({ wallMs: e.wallMs, host: e.host, path: e.path, status: e.status });
  }
  return out;
}

/** A row with the ramp-up figures of the requests its crawl made. */
function withRampUp(row: Row, served: readonly ServedRequest[]): Row {
  const r = rampUp(served);
  return r ? { ...row, fullSpeedPagesPerS: r.fullSpeedPagesPerS, toFullSpeedS: r.timeToFullSpeedS, toAllHostsS: r.timeToAllHostsS } : row;
}

/** A contender's row from what it reported (pages, crawl time) and how its process ran. */
function rowOf(crawler: string, run: { usage: Usage }, out: { pages: number; elapsedS: number; pagesPerS: number; duplicates: number | string; errors: number }, webCpuS: number): Row {
  return {
    crawler,
    pages: out.pages,
    elapsedS: out.elapsedS,
    pagesPerS: out.pagesPerS,
    cpuMsPerPage: round(run.usage.cpuMs / out.pages, 3),
    peakRssMiB: Math.round(run.usage.maxRssKiB / 1024),
    startupS: round(run.usage.uptimeMs / 1000 - out.elapsedS, 2),
    webServerCpuS: round(webCpuS, 1),
    duplicates: out.duplicates,
    errors: out.errors,
  };
}

async function peer(web: Awaited<ReturnType<typeof startWeb>>): Promise<Row> {
  const cpu0 = cpuSecondsOf(web.pid);
  const cfg = JSON.stringify({ seeds: web.seeds, resolve: web.resolve, maxPages, connections: 128 });
  const r = await runProcess(process.execPath, [join(root, 'bench/vs-peer/node-crawler-peer.mjs'), cfg]);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { pages: number; errors: number; elapsedS: number; pagesPerS: number };
  return rowOf('node-crawler 2.0.2', r, { ...out, duplicates: 'n/a' }, cpuSecondsOf(web.pid) - cpu0);
}

async function meguri(web: Awaited<ReturnType<typeof startWeb>>, kind: 'embedded' | 'kafka'): Promise<Row> {
  const cpu0 = cpuSecondsOf(web.pid);
  const dir = mkdtempSync(join(tmpdir(), 'meguri-vs-peer-data-'));
  const config = join(dir, 'scheduler.json');
  // No politeness delay at all: interval 0, no k × download time, no suspend windows; a host may
  // have --max-per-host requests in flight (they queue on its one connection in the fetcher).
  const maxPerHost = Number(values['max-per-host']);
  const maxPerIp = Number(values['max-per-ip'] ?? Math.max(2, maxPerHost));
  writeFileSync(config, JSON.stringify({ minIntervalMs: 0, politeness: { kFactor: 0, suspendEnabled: false, maxPerHost, maxPerIp } }));
  const args = ['crawl', ...web.seeds, '--data', join(dir, 'data'), '--max-pages', String(maxPages), '--min-interval', '0', '--scheduler-config', config];
  args.push('--dns', 'static', ...Object.entries(web.resolve).flatMap(([name, ip]) => ['--resolve', `${name}=${ip}`]), '--no-progress', '--partitions', values.partitions);
  if (values['parser-workers'] !== undefined) args.push('--parser-workers', values['parser-workers']);
  if (values['no-sitemaps']) args.push('--no-sitemaps');
  const topicPrefix = `vs-peer-${Date.now()}.`;
  if (kind === 'kafka') args.push('--kafka', values.kafka, '--topic-prefix', topicPrefix, '--replication-factor', '1', '--min-insync-replicas', '1');
  try {
    const broker = kind === 'kafka' ? localBrokerPid(values.kafka) : undefined;
    const brokerCpu0 = brokerCpuSecondsOf(broker);
    const r = await runProcess(join(root, 'bin/meguri.js'), args);
    const s = JSON.parse(r.stdout) as { pagesFetched: number; elapsedS: number; pagesPerS: number; duplicateFetches: number; errors: number; commits?: Record<string, { count: number; meanMs: number }> };
    const commits = s.commits?.scheduler;
    const row = {
      ...rowOf(`meguri crawl (${kind})`, r, { pages: s.pagesFetched, elapsedS: s.elapsedS, pagesPerS: s.pagesPerS, duplicates: s.duplicateFetches, errors: s.errors }, cpuSecondsOf(web.pid) - cpu0),
      ...(commits ? { schedulerCommits: commits.count, schedulerCommitMs: commits.meanMs } : {}),
    };
    const brokerCpu1 = brokerCpuSecondsOf(broker);
    return brokerCpu0 === undefined || brokerCpu1 === undefined ? row : { ...row, brokerCpuS: round(brokerCpu1 - brokerCpu0, 1) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (kind === 'kafka') await removeRunTopics(values.kafka.split(','), topicPrefix);
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

const wanted = values.only ? values.only.split(',') : ['peer', 'embedded', ...(values.kafka ? ['kafka'] : [])];
if (wanted.includes('kafka') && !values.kafka) throw new Error('--only kafka needs --kafka host:port');
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new RangeError('--runs: a whole number ≥ 1');
if (wanted.includes('kafka')) await requireBroker(values.kafka.split(','), 'bench:vs-peer');
const rounds: Row[][] = [];
const web = await startWeb();
try {
  // A fresh web per contender would differ only in its caches; the same one keeps the run short.
  const measured = async (run: () => Promise<Row>): Promise<Row> => {
    const from = logSize();
    const row = await run();
    return withRampUp(row, await servedSince(from));
  };
  for (let r = 0; r < runs; r++) {
    const rows: Row[] = [];
    if (wanted.includes('peer')) rows.push(await measured(() => peer(web)));
    if (wanted.includes('embedded')) rows.push(await measured(() => meguri(web, 'embedded')));
    if (wanted.includes('kafka')) rows.push(await measured(() => meguri(web, 'kafka')));
    rounds.push(rows);
  }
} finally {
  web.stop();
  rmSync(webDir, { recursive: true, force: true });
}

type Ratios = { 'pages/s ÷ peer'?: number; 'CPU/page ÷ peer'?: number; 'RSS ÷ peer'?: number };
const table: (Row & Ratios & { run?: number })[] = rounds.flatMap((rows, r) => {
  const base = rows.find((row) => row.crawler.startsWith('node-crawler'));
  return rows.map((row) => ({
    ...(runs > 1 ? { run: r + 1 } : {}),
    ...row,
    ...(base ? { 'pages/s ÷ peer': round(row.pagesPerS / base.pagesPerS, 2), 'CPU/page ÷ peer': round(row.cpuMsPerPage / base.cpuMsPerPage, 2), 'RSS ÷ peer': round(row.peakRssMiB / base.peakRssMiB, 2) } : {}),
  }));
});

/** Mean and range of one figure over a crawler's runs. */
function spread(xs: readonly number[], digits: number): string {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return `${round(mean, digits)} (${round(Math.min(...xs), digits)}–${round(Math.max(...xs), digits)})`;
}
const summary = runs > 1
  ? [...new Set(table.map((r) => r.crawler))].map((crawler) => {
      const mine = table.filter((r) => r.crawler === crawler);
      const ratios = mine.flatMap((r) => (r['pages/s ÷ peer'] !== undefined ? [r['pages/s ÷ peer']] : []));
      const cpuRatios = mine.flatMap((r) => (r['CPU/page ÷ peer'] !== undefined ? [r['CPU/page ÷ peer']] : []));
      return {
        crawler,
        runs: mine.length,
        pagesPerS: spread(mine.map((r) => r.pagesPerS), 1),
        cpuMsPerPage: spread(mine.map((r) => r.cpuMsPerPage), 3),
        peakRssMiB: spread(mine.map((r) => r.peakRssMiB), 0),
        ...(ratios.length > 0 ? { 'pages/s ÷ peer': spread(ratios, 2), 'CPU/page ÷ peer': spread(cpuRatios, 2) } : {}),
      };
    })
  : undefined;
const machine = machineInfo();
const setup = { hosts, pagesPerHost: Number(values.pages), pageBytes: Number(values.bytes), randomLinksPerPage: Number(values.links), seeds: Number(values.seeds), maxPages, meguriReadsSitemaps: !values['no-sitemaps'], runs, date: new Date().toISOString() };
if (values.json) console.log(JSON.stringify({ machine, setup, results: table, ...(summary ? { summary } : {}) }, null, 2));
else {
  console.log(machineLine(machine));
  console.log(`web: ${hosts} hosts × ${values.pages} pages, ${values.bytes} B, ~${Number(values.links) + 2} links/page, ${values.seeds} seeds, each host on its own 127.0.0.x; ${maxPages} pages per crawler; meguri ${setup.meguriReadsSitemaps ? 'reads' : 'does not read'} the sitemaps; ${setup.date}`);
  console.table(table);
  if (summary) {
    console.log(`over ${runs} runs: mean (min–max); each ratio is to the peer of the same run`);
    console.table(summary);
  }
}
process.exit(0);
