/**
 * The `meguri` command line. Every command has --help; errors print a clear message and a
 * non-zero exit code. Long-running commands log JSON (pino) to stderr and keep stdout for results.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync, writeFileSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// Only what builds the commands and checks their flags is imported here; each command imports the
// modules it runs when it runs (below), so `meguri --help` and a command's help load no crawler.
import type { CrawlOptions, CrawlSummary } from './crawl.ts';
import type { Logger } from '../runtime/index.ts';
import { parseLanguageList } from '../parser/language-tags.ts';
import { parseResolveEntry } from '../fetcher/resolve-entry.ts';
import { parseCidr } from '../fetcher/address-policy.ts';
import { FETCHER_DEFAULTS } from '../fetcher/defaults.ts';
import type { ReplayFlags } from './replay.ts';
import { replayAnalyses } from './replay-analyses.ts';
import { addLogLocation } from './log-location.ts';
import { errorLine } from './error-line.ts';
import type { LogLocation } from './log-location.ts';
import { JOBS } from '../analyze/jobs.ts';
import type { ScanProgress } from '../analyze/scan.ts';

const VERSION = '0.1.0';

function int(name: string, min = 0): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

function share(name: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`${name} must be a share between 0 and 1`);
    return n;
  };
}

function seconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number of seconds ≥ 0');
  return n;
}

/** A duration: seconds, or a number with a unit (`90s`, `30m`, `6h`, `1d`); in ms. */
function duration(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(v);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m?.[2] ?? 's').toLowerCase() as 'ms' | 's' | 'm' | 'h' | 'd'];
  const ms = m ? Math.round(Number(m[1]) * unit) : NaN;
  if (!(ms >= 1)) throw new InvalidArgumentError('must be a duration > 0: seconds, or a number with ms, s, m, h or d (e.g. 24h)');
  return ms;
}

function positiveNumber(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

function languageList(v: string): string[] {
  try {
    return [...parseLanguageList(v)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function positiveSeconds(v: string): number {
  const n = seconds(v);
  if (n <= 0) throw new InvalidArgumentError('must be a number of seconds > 0');
  return n;
}

function collect(v: string, prev: string[]): string[] {
  parseResolveEntry(v); // fail fast on a malformed entry
  return [...prev, v];
}

/** Repeatable regular-expression flag (--include/--exclude), refused at once when it does not compile. */
function collectRegex(flag: string): (v: string, prev: string[]) => string[] {
  return (v, prev) => {
    try {
      new RegExp(v);
    } catch (err) {
      throw new InvalidArgumentError(`${flag} ${JSON.stringify(v)}: ${(err as Error).message}`);
    }
    return [...prev, v];
  };
}

function queryMode(v: string): 'off' | 'form' | 'all' {
  if (v !== 'off' && v !== 'form' && v !== 'all') throw new InvalidArgumentError(`--query-restriction must be off, form or all, got ${v} (alone it means form: put it after the seed URLs or before another flag)`);
  return v;
}

function rate(v: string): number {
  const n = Number(v);
  if (!(n > 0 && n <= 1)) throw new InvalidArgumentError(`--sample-rate must be a number in (0, 1], got ${v}`);
  return n;
}

const ALIAS_HELP = 'server aliases: one "alias canonical" pair of host names per line (# comments); URLs on an alias are crawled on the canonical host (seeds, links, scheduler state)';

/** Reads --alias-file (or MEGURI_ALIAS_FILE) into alias → canonical; a bad file stops the command with the line named. */
function readAliases(file: string | undefined, { parseAliasFile }: typeof import('../common/aliases.ts')): Record<string, string> {
  if (file === undefined || file === '') return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`cannot read alias file ${file}: ${(err as Error).message}`);
  }
  return Object.fromEntries(parseAliasFile(text, `alias file ${file}`));
}

const HOST_RULES_HELP = 'JSON per-host rules ({"example.org": {"block": true}, "*.shop.example": {"maxPages": 1000}}: block, minIntervalS, maxPages, maxDepth, userAgent), read again when the file changes or on SIGHUP';
const SCOPE_HELP = "which links are followed: host: the seeds' host names; domain: the seeds' registrable domains and their subdomains; web: every link within --max-depth";
const INCLUDE_HELP = 'queue only discovered URLs matching this regular expression (on the normalised URL; repeatable: any may match)';
const EXCLUDE_HELP = 'never queue discovered URLs matching this regular expression (repeatable; exclude wins over include)';

function collectCidr(v: string, prev: string[]): string[] {
  try {
    parseCidr(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return [...prev, v.trim()];
}

const ALLOW_ADDRESS_HELP = 'let the fetcher dial this address or CIDR range although the address policy refuses it (loopback, private, link-local, ...; under --dns static anything not reached through --resolve); repeatable';

interface CrawlFlags {
  seedsFile?: string;
  replicationFactor?: number;
  minInsyncReplicas?: number;
  fsync?: boolean;
  data: string;
  kafka?: string;
  topicPrefix: string;
  partitions: number;
  maxPages?: number;
  maxDepth: number;
  minInterval: number;
  maxPerIp?: number;
  maxPerHost?: number;
  userAgent?: string;
  contact?: string;
  resolve: string[];
  allowAddress: string[];
  dns: 'static' | 'system';
  timeout: number;
  untilIdle?: boolean;
  summaryJson?: string;
  progress: boolean;
  logLevel: string;
  schedulerConfig?: string;
  maxPagesPerSite?: number;
  siteCapScope?: 'host' | 'domain';
  maxUrlsPerTemplate?: number;
  stripParams?: string[];
  /** true: given without a mode (form) */
  queryRestriction?: 'off' | 'form' | 'all' | true;
  query: boolean;
  sitemaps: boolean;
  feedsFile?: string;
  dailyFile?: string;
  dailyInterval?: number;
  feedInterval?: number;
  sitemapInterval?: number;
  languages?: string[];
  speed?: number;
  scope?: 'host' | 'domain' | 'web';
  hostRules?: string;
  aliasFile?: string;
  mode?: 'crawl' | 'discovery';
  sampleRate?: number;
  revisitGoal?: 'freshness' | 'versions';
  sampleSeed?: number;
  followServers?: boolean;
  out?: string;
  include: string[];
  exclude: string[];
  /** --ui [PORT]: true for the default port. */
  ui?: string | boolean;
  country: string[];
  parserWorkers?: number;
}

function paramNames(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function addCrawlFlags(cmd: Command, defaults: { minInterval: number; dns: 'static' | 'system'; data?: string }): Command {
  return cmd
    .option('--seeds-file <file>', 'file with one seed URL per line (# comments allowed)')
    .option('--data <dir>', 'data directory: embedded log and state stores', defaults.data ?? '.data')
    .option('--kafka <brokers>', 'run on Apache Kafka (comma-separated host:port) instead of the embedded log')
    .option('--topic-prefix <prefix>', 'prefix of every topic name', '')
    .option('--partitions <n>', 'partitions of the topics this crawl creates', int('--partitions', 1), 4)
    .option('--replication-factor <n>', 'with --kafka: copies of each partition of the topics it creates (or MEGURI_REPLICATION_FACTOR; default 3, lowered to the broker count)', int('--replication-factor', 1))
    .option('--min-insync-replicas <n>', 'with --kafka: copies that must have a write (or MEGURI_MIN_INSYNC_REPLICAS; default 2, at most one below the factor when lowered)', int('--min-insync-replicas', 1))
    .option('--fsync', 'embedded log: fsync every commit, durable across power loss (or MEGURI_FSYNC=true)')
    .option('--max-pages <n>', 'stop after this many pages', int('--max-pages', 0))
    .option('--max-depth <n>', 'hops from a seed beyond which links are not followed', int('--max-depth', 0), 15)
    .option('--min-interval <s>', 'minimum seconds between requests to one host', seconds, defaults.minInterval)
    .option('--max-per-ip <n>', 'requests in flight to one server IP, across all its hosts (default 2; politeness.maxPerIp)', int('--max-per-ip', 1))
    .option('--max-per-host <n>', 'requests in flight to one host at once, only while it asks for no wait between requests (default 1; politeness.maxPerHost)', int('--max-per-host', 1))
    .option('--user-agent <ua>', 'User-Agent header (default names meguri and the contact URL)')
    .option('--contact <url>', 'contact URL put in the default User-Agent')
    .option('--resolve <pattern=ip>', 'static name resolution, e.g. *.sim.test=127.0.0.1 (repeatable)', collect, [])
    .addOption(new Option('--dns <mode>', 'static: only --resolve entries (unmapped names fail at once, nothing leaves the machine); system: asynchronous c-ares DNS').choices(['static', 'system']).default(defaults.dns))
    .option('--timeout <s>', 'seconds one request may take, body included (connect and response-header waits are capped by it too)', positiveSeconds, FETCHER_DEFAULTS.totalTimeoutMs / 1000)
    .option('--allow-address <cidr>', ALLOW_ADDRESS_HELP, collectCidr, [])
    .option('--until-idle', 'stop when nothing is queued or in flight')
    .option('--summary-json <file>', 'write the crawl summary as JSON to this file')
    .option('--no-progress', 'no progress display')
    .option('--scheduler-config <file>', 'JSON file with scheduler settings (see `meguri config scheduler`); flags given here win')
    .option('--max-pages-per-site <n>', 'distinct pages (new URLs fetched) per site at most; revisits go on (default 1000000)', int('--max-pages-per-site', 0))
    .addOption(new Option('--site-cap-scope <scope>', 'what --max-pages-per-site counts: a host, or a registrable domain').choices(['host', 'domain']))
    .option('--max-urls-per-template <n>', 'new URLs one URL template of a host may add (trap bound; 0: no limit; default 1000)', int('--max-urls-per-template', 0))
    .option('--strip-params <names>', 'comma-separated query/path parameters removed from URLs, `name*` for a prefix ("" for none; default: session ids and tracking tags)', paramNames)
    .option('--query-restriction [mode]', 'off; form (the default when no mode is given): a URL is not followed when its form without the query was seen (Hoshino et al.); all: no URL with a query is followed', queryMode)
    .option('--no-query', 'Hoshino et al.\'s query restriction: same as --query-restriction form')
    .option('--no-sitemaps', "do not read hosts' sitemaps (robots.txt Sitemap: lines, else /sitemap.xml)")
    .option('--sitemap-interval <duration>', 'base re-read interval of a sitemap, adapted to how often it changes (default 24h)', duration)
    .option('--feeds-file <file>', 'file with one RSS/Atom feed URL per line, re-read on their own schedule; new items are fetched first')
    .option('--feed-interval <duration>', 'base re-read interval of a feed, adapted to its rate of new items (default 24h)', duration)
    .option('--daily-file <file>', 'file with one top-page URL per line, re-read every --daily-interval; links new on them are fetched first')
    .option('--daily-interval <duration>', 're-read interval of --daily-file pages (default 24h)', duration)
    .option('--languages <codes>', 'language focus, e.g. ja,en: pages in other languages are kept and reported, their links not followed', languageList)
    .option('--speed <n>', 'simulated webs only (requires --dns static): the crawl runs on a clock n times faster than wall time; its intervals, estimator and event times are that clock\'s', positiveNumber)
    .addOption(new Option('--scope <mode>', `${SCOPE_HELP} (default domain)`).choices(['host', 'domain', 'web']))
    .addOption(new Option('--revisit-goal <goal>', 'what revisits optimise: freshness (share of time copies are up to date) or versions (distinct versions per fetch); default freshness').choices(['freshness', 'versions']))
    .option('--include <regex>', INCLUDE_HELP, collectRegex('--include'), [])
    .option('--exclude <regex>', EXCLUDE_HELP, collectRegex('--exclude'), [])
    .option('--host-rules <file>', HOST_RULES_HELP)
    .option('--alias-file <file>', ALIAS_HELP)
    .addOption(new Option('--mode <mode>', "crawl; discovery: Hoshino et al.'s server-discovery crawl — each seed a start site, its internal URLs (same host or a subdomain) followed, external hosts reported once on `servers` (default --max-depth 9)").choices(['crawl', 'discovery']))
    .option('--sample-rate <r>', 'discovery: share of the internal URLs found at depth n crawled at depth n+1 (0 < r ≤ 1; default 1)', rate)
    .option('--sample-seed <n>', 'discovery: seed of the sampling draw (default 1)', int('--sample-seed', 0))
    .option('--follow-servers', 'discovery: every new server becomes a start site of its own')
    .option('--out <dir>', 'discovery: write the per-depth figures there as discovery.csv and discovery.svg')
    .option('--ui [port]', 'serve the live view (counters, recent changes, world map of servers) on 127.0.0.1:PORT (default 8080)')
    .option('--country <range=CC>', 'live view: place an address or CIDR range in a country before the database is asked (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--parser-workers <n>', 'worker threads that parse pages (0: on the event loop; default: 1 on 2 or 3 cores, cores − 2 up to 4 beyond, 0 on 1 core)', int('--parser-workers', 0))
    .addOption(new Option('--log-level <level>', 'log level (JSON logs on stderr)').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('warn'));
}

function readSeedsFile(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Names of the options given on the command line (not defaults). */
function explicitOptions(cmd: Command): Set<string> {
  return new Set(Object.keys(cmd.opts()).filter((k) => cmd.getOptionValueSource(k) === 'cli'));
}

/** The modules that turn crawl flags into a running crawl, loaded when `crawl` or `demo` starts. */
async function loadCrawlModules() {
  const [crawl, fetch, dns, runtime, topics, schedulerConfig, aliases] = await Promise.all([
    import('./crawl.ts'),
    import('../fetcher/fetch.ts'),
    import('../fetcher/dns.ts'),
    import('../runtime/index.ts'),
    import('./topics.ts'),
    import('./scheduler-config.ts'),
    import('../common/aliases.ts'),
  ]);
  return { crawl, fetch, dns, runtime, topics, schedulerConfig, aliases };
}
type CrawlModules = Awaited<ReturnType<typeof loadCrawlModules>>;

function crawlOptions(m: CrawlModules, urls: string[], flags: CrawlFlags, explicit: Set<string>, extraResolve: string[] = []): CrawlOptions {
  const { readSchedulerConfig } = m.schedulerConfig;
  const { defaultUserAgent, fetchTimeouts } = m.fetch;
  const { createLogger, loadRuntimeConfig } = m.runtime;
  const seeds = [...urls, ...(flags.seedsFile ? readSeedsFile(flags.seedsFile) : [])];
  const file = readSchedulerConfig(flags.schedulerConfig);
  const userAgent = flags.userAgent ?? file.userAgent ?? defaultUserAgent(flags.contact);
  const fromFlag = (name: 'maxDepth' | 'minIntervalMs'): boolean => file[name] === undefined || explicit.has(name === 'maxDepth' ? 'maxDepth' : 'minInterval');
  const logger = createLogger({ name: 'meguri', level: flags.logLevel as 'warn', destination: 2 });
  // One per-IP cap for the scheduler and the fetcher's own limiter (a flag wins over the file).
  const maxPerIp = flags.maxPerIp ?? file.politeness?.maxPerIp;
  const trapBounds = {
    ...(flags.maxUrlsPerTemplate !== undefined ? { maxUrlsPerTemplate: flags.maxUrlsPerTemplate } : {}),
    ...(flags.stripParams !== undefined ? { stripParams: flags.stripParams } : {}),
    ...(flags.queryRestriction !== undefined ? { queryRestriction: flags.queryRestriction === true ? ('form' as const) : flags.queryRestriction } : flags.query === false ? { queryRestriction: 'form' as const } : {}),
  };
  // Discovery mode (Hoshino et al.): its own depth default (9), sampling and server following.
  const discovery = flags.mode === 'discovery' || file.mode === 'discovery';
  const discoveryFlags = {
    ...(flags.mode !== undefined ? { mode: flags.mode } : {}),
    ...(flags.sampleRate !== undefined ? { sampleRate: flags.sampleRate } : {}),
    ...(flags.sampleSeed !== undefined ? { sampleSeed: flags.sampleSeed } : {}),
    ...(flags.followServers ? { followServers: true } : {}),
  };
  const maxDepth = discovery && !explicit.has('maxDepth') ? (file.maxDepth ?? 9) : flags.maxDepth;
  // `meguri crawl` stays on the seeds' domains unless told otherwise (pods default to the web).
  const scope = {
    scope: flags.scope ?? file.scope ?? ('domain' as const),
    include: [...(file.include ?? []), ...flags.include],
    exclude: [...(file.exclude ?? []), ...flags.exclude],
  };
  const politenessFlags = {
    ...(flags.maxPagesPerSite !== undefined ? { maxPagesPerSite: flags.maxPagesPerSite } : {}),
    ...(flags.siteCapScope !== undefined ? { siteCapScope: flags.siteCapScope } : {}),
    ...(maxPerIp !== undefined ? { maxPerIp } : {}),
    ...(flags.maxPerHost !== undefined ? { maxPerHost: flags.maxPerHost } : {}),
  };
  const env = loadRuntimeConfig({ transport: 'embedded' });
  // Explicit replication is honoured or fails; the defaults fit themselves to a small cluster.
  const chosen = m.topics.chooseReplication(flags, env);
  const sources = [
    ...(flags.feedsFile ? readSeedsFile(flags.feedsFile).map((url) => ({ url, kind: 'feed' as const })) : []),
    ...(flags.dailyFile ? readSeedsFile(flags.dailyFile).map((url) => ({ url, kind: 'daily' as const })) : []),
  ];
  const sourceSettings = {
    // A discovery crawl looks for servers at the least load (Hoshino et al.): it reads pages, not sitemaps.
    sitemaps: flags.sitemaps && !discovery,
    ...(flags.sitemapInterval !== undefined ? { sitemapIntervalMs: flags.sitemapInterval } : {}),
    ...(flags.feedInterval !== undefined ? { feedIntervalMs: flags.feedInterval } : {}),
    ...(flags.dailyInterval !== undefined ? { dailyIntervalMs: flags.dailyInterval } : {}),
  };
  return {
    seeds,
    ...(sources.length > 0 ? { sources } : {}),
    ...(flags.languages !== undefined ? { languages: flags.languages } : {}),
    dataDir: flags.data,
    replication: { ...chosen.replication, capToBrokers: !chosen.explicit },
    fsync: flags.fsync === true || env.fsync,
    gzipLevel: env.kafkaGzipLevel,
    commitIntervalMs: env.commitIntervalMs,
    ...(flags.kafka ? { kafkaBrokers: flags.kafka.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
    topicPrefix: flags.topicPrefix,
    partitions: flags.partitions,
    ...(flags.maxPages !== undefined ? { maxPages: flags.maxPages } : {}),
    untilIdle: flags.untilIdle ?? false,
    ...(flags.parserWorkers !== undefined ? { parserWorkers: flags.parserWorkers } : {}),
    scheduler: {
      ...file,
      ...(fromFlag('maxDepth') ? { maxDepth } : {}),
      ...discoveryFlags,
      ...(fromFlag('minIntervalMs') ? { minIntervalMs: Math.round(flags.minInterval * 1000) } : {}),
      ...trapBounds,
      ...sourceSettings,
      ...(flags.revisitGoal !== undefined ? { revisitGoal: flags.revisitGoal } : {}),
      ...scope,
      ...(flags.aliasFile !== undefined ? { aliases: { ...file.aliases, ...readAliases(flags.aliasFile, m.aliases) } } : {}),
      ...(Object.keys(politenessFlags).length > 0 ? { politeness: { ...file.politeness, ...politenessFlags } } : {}),
      userAgent,
    },
    fetcher: {
      userAgent,
      ...fetchTimeouts(flags.timeout),
      ...(maxPerIp !== undefined ? { perIpConcurrency: maxPerIp } : {}),
      resolver: m.dns.createResolver({ mode: flags.dns, resolve: [...extraResolve, ...flags.resolve] }),
      allowAddresses: flags.allowAddress,
    },
    logger,
    ...scaledClockSettings(flags, m.runtime.ScaledClock),
  };
}

/**
 * --speed: a clock n times faster than wall time, for simulated webs only: on the real web it would
 * shorten every politeness interval n times, so it is refused unless names resolve only through
 * --resolve (--dns static). Scheduler timers keep their wall cadence.
 */
function scaledClockSettings(flags: CrawlFlags, ScaledClock: CrawlModules['runtime']['ScaledClock']): Pick<CrawlOptions, 'clock'> {
  if (flags.speed === undefined || flags.speed === 1) return {};
  if (flags.dns !== 'static') throw new InvalidArgumentError('--speed is only for simulated webs: give --dns static (and --resolve) as well');
  return { clock: new ScaledClock(Date.now(), flags.speed) };
}

async function withSpeed(options: CrawlOptions, speed: number | undefined): Promise<CrawlOptions> {
  if (speed === undefined || speed === 1) return options;
  const { scaledTimers } = await import('./demo-changing.ts');
  return { ...options, scheduler: { ...scaledTimers(speed), ...options.scheduler } };
}

function uiPort(ui: string | boolean | undefined): number | undefined {
  if (ui === undefined || ui === false) return undefined;
  if (ui === true) return 8080;
  const n = Number(ui);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`--ui takes a port number, got ${ui}`);
  return n;
}

async function crawlWithDisplay(m: CrawlModules, options: CrawlOptions, flags: CrawlFlags, liveCountries: readonly string[] = []): Promise<CrawlSummary> {
  const port = uiPort(flags.ui);
  if (port !== undefined) {
    const { startLiveView } = await import('./live-view.ts');
    const country = [...flags.country, ...liveCountries];
    options = {
      ...options,
      attach: (transport, prefix) => startLiveView(transport, prefix, { port, country, onListening: (s) => console.error(`live view: ${s.url}`) }),
    };
  }
  // A bad rules file stops the command here, before anything starts, with the key named.
  const hostRules = flags.hostRules !== undefined ? await watchHostRulesFile(flags.hostRules, options.logger ?? m.runtime.silentLogger) : undefined;
  try {
    return await crawlWithSignals(m, { ...options, ...(hostRules ? { hostRules } : {}) }, flags);
  } finally {
    hostRules?.close();
  }
}

async function watchHostRulesFile(file: string, logger: Logger): Promise<ReturnType<typeof import('./host-rules-file.ts').watchHostRules>> {
  const { watchHostRules } = await import('./host-rules-file.ts');
  return watchHostRules(file, logger);
}

async function crawlWithSignals(m: CrawlModules, options: CrawlOptions, flags: CrawlFlags): Promise<CrawlSummary> {
  const { startProgress } = await import('./progress-display.ts');
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const display = startProgress(flags.progress, options.maxPages);
  try {
    return await m.crawl.runCrawl({ ...options, signal: abort.signal, onProgress: (p) => display.update(p) });
  } finally {
    display.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function report(summary: CrawlSummary, file: string | undefined, extra: Record<string, unknown> = {}): void {
  const out = { ...summary, ...extra };
  if (file) writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(JSON.stringify(out, null, 2));
}

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('meguri')
    .description('An incremental, polite web crawler built as a stream-processing system on Apache Kafka (or an embedded log).')
    .version(VERSION)
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });

  addCrawlFlags(
    program
      .command('crawl')
      .description('Crawl from seed URLs with every service in this process (embedded log by default).')
      .argument('[urls...]', 'seed URLs'),
    { minInterval: 10, dns: 'system' },
  ).action(async (urls: string[], flags: CrawlFlags, cmd: Command) => {
    const m = await loadCrawlModules();
    const options = await withSpeed(crawlOptions(m, urls, flags, explicitOptions(cmd)), flags.speed);
    if (options.seeds.length === 0 && (options.sources ?? []).length === 0) throw new InvalidArgumentError('give seed URLs, --seeds-file, --feeds-file or --daily-file (or add seeds to a running crawl with `meguri seed`)');
    const summary = await crawlWithDisplay(m, options, flags);
    report(summary, flags.summaryJson);
    if (flags.out !== undefined && summary.perDepth) {
      const { depthCsv, depthChartSvg } = await import('../common/discovery-report.ts');
      mkdirSync(flags.out, { recursive: true });
      const series = [{ name: 'crawl', rows: summary.perDepth }];
      writeFileSync(join(flags.out, 'discovery.csv'), depthCsv(series));
      writeFileSync(join(flags.out, 'discovery.svg'), depthChartSvg(series, `Server discovery: ${summary.externalServers ?? 0} servers, ${summary.uniqueUrlsFetched} pages`));
    }
  });

  addCrawlFlags(
    program
      .command('demo')
      .description('Start a simulated web on 127.0.0.1 and crawl it live, fully offline.')
      .option('--hosts <n>', 'simulated hosts', int('--hosts', 1), 20)
      .option('--pages <n>', 'pages per host', int('--pages', 1), 40)
      .option('--web-seed <n>', 'seed of the simulated web graph', int('--web-seed', 0), 1)
      .option('--changing', 'pages change on Poisson schedules (hourly to yearly, some boilerplate-only, some disappear) on a fast clock (--speed, default 3600); reports versions seen and staleness beside a fixed revisit interval with the same fetches')
      .option('--duration <s>', 'with --changing: wall seconds the crawl runs (default 60)', positiveSeconds)
      .option('--ips <list>', 'loopback addresses the simulated hosts are spread over, comma-separated (default 127.0.0.1)', paramNames)
      .option('--duplicates <share>', 'share of leaf pages that are exact copies of one notice page (default 0)', share('--duplicates'))
      .option('--shift-jis <share>', 'share of leaf pages in Japanese, Shift_JIS encoded (default 0)', share('--shift-jis')),
    { minInterval: 0.1, dns: 'static', data: '' },
  ).action(async (flags: CrawlFlags & { hosts: number; pages: number; webSeed: number; changing?: boolean; duration?: number; ips?: string[]; duplicates?: number; shiftJis?: number }, cmd: Command) => {
    const m = await loadCrawlModules();
    if (flags.changing) {
      const { changingDemoTable, runChangingDemo, scaledTimers } = await import('./demo-changing.ts');
      const { startProgress } = await import('./progress-display.ts');
      const speed = flags.speed ?? 3600;
      const display = startProgress(flags.progress, undefined);
      try {
        const report = await runChangingDemo({
          hosts: flags.hosts,
          pagesPerHost: flags.pages,
          webSeed: flags.webSeed,
          speed,
          durationS: flags.duration ?? 60,
          dataDir: flags.data,
          crawlOptions: (seeds, resolve, data) => {
            const o = crawlOptions(m, seeds, { ...flags, data, dns: 'static', speed: undefined }, explicitOptions(cmd), resolve);
            return { ...o, scheduler: { ...scaledTimers(speed), ...o.scheduler } };
          },
          onProgress: (p) => display.update(p),
          log: (line) => console.error(line),
        });
        display.stop();
        if (flags.summaryJson) writeFileSync(flags.summaryJson, JSON.stringify(report, null, 2) + '\n');
        console.log(JSON.stringify(report, null, 2));
        console.error(changingDemoTable(report));
      } finally {
        display.stop();
      }
      return;
    }
    const special = { ...(flags.duplicates !== undefined ? { duplicate: flags.duplicates } : {}), ...(flags.shiftJis !== undefined ? { shiftJis: flags.shiftJis } : {}) };
    const { SimWeb } = await import('../simweb/index.ts');
    const web = await SimWeb.start({
      seed: flags.webSeed,
      hosts: flags.hosts,
      pagesPerHost: flags.pages,
      ...(flags.ips !== undefined && flags.ips.length > 0 ? { ips: flags.ips } : {}),
      ...(Object.keys(special).length > 0 ? { hostile: { pages: special } } : {}),
    });
    try {
      const resolve = Object.entries(web.resolveMap()).map(([pattern, ip]) => `${pattern}=${ip}`);
      const data = flags.data || mkdtempSync(join(tmpdir(), 'meguri-demo-'));
      const options = await withSpeed(crawlOptions(m, web.homeUrls(), { ...flags, data, dns: 'static', untilIdle: flags.untilIdle ?? (flags.maxPages === undefined) }, explicitOptions(cmd), resolve), flags.speed);
      console.error(`simulated web: ${flags.hosts} hosts × ${flags.pages} pages on ${web.ips.join(',')}:${web.port}; data in ${data}`);
      // The live view (--ui) places the simulated web's addresses in countries of its own.
      const liveCountries = uiPort(flags.ui) !== undefined ? (await import('./live-view.ts')).demoCountryTable(web.ips) : [];
      const summary = await crawlWithDisplay(m, options, flags, liveCountries);
      const agent = (flags.userAgent ?? 'meguri').split(/[/ ]/)[0] ?? 'meguri';
      const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: flags.maxDepth, userAgent: agent });
      report(summary, flags.summaryJson, { simulatedWeb: { hosts: flags.hosts, pagesPerHost: flags.pages, reachableAllowedPages: plan.urls.size, requestsServed: web.accessLog().length } });
    } finally {
      await web.close();
    }
  });

  program
    .command('run')
    .description('Run one service against Kafka (what a pod runs). Configuration from MEGURI_* environment variables and flags.')
    .addArgument(new Command().createArgument('<service>', 'scheduler | fetcher | parser | warc | dashboard').choices(['scheduler', 'fetcher', 'parser', 'warc', 'dashboard']))
    .option('--kafka <brokers>', 'Kafka bootstrap servers (or MEGURI_KAFKA_BROKERS)')
    .option('--data <dir>', 'state directory (or MEGURI_DATA_DIR)')
    .option('--topic-prefix <prefix>', 'topic prefix (or MEGURI_TOPIC_PREFIX)')
    .option('--http-port <port>', 'health/metrics port (or MEGURI_HTTP_PORT; default 9464)', int('--http-port', 0))
    .option('--min-interval <s>', 'scheduler: minimum seconds between requests to one host', seconds)
    .option('--max-depth <n>', 'scheduler: maximum hops from a seed', int('--max-depth', 0))
    .option('--max-per-ip <n>', 'scheduler and fetcher: requests in flight to one server IP (or MEGURI_MAX_PER_IP; default: politeness.maxPerIp of the scheduler config, else 2)', int('--max-per-ip', 1))
    .option('--max-per-host <n>', 'scheduler: requests in flight to one host, only while it asks for no wait between requests (default: politeness.maxPerHost of the scheduler config, else 1)', int('--max-per-host', 1))
    .option('--scheduler-config <file>', 'scheduler: JSON settings file (or MEGURI_SCHEDULER_CONFIG); see `meguri config scheduler`')
    .addOption(new Option('--scope <mode>', `scheduler: ${SCOPE_HELP} (or MEGURI_SCOPE; default web)`).choices(['host', 'domain', 'web']))
    .option('--host-rules <file>', `scheduler: ${HOST_RULES_HELP} (or MEGURI_HOST_RULES)`)
    .option('--alias-file <file>', `scheduler and parser: ${ALIAS_HELP} (or MEGURI_ALIAS_FILE)`)
    .option('--include <regex>', `scheduler: ${INCLUDE_HELP}`, collectRegex('--include'), [])
    .option('--exclude <regex>', `scheduler: ${EXCLUDE_HELP}`, collectRegex('--exclude'), [])
    .option('--user-agent <ua>', 'User-Agent (or MEGURI_USER_AGENT)')
    .option('--contact <url>', 'contact URL for the default User-Agent (or MEGURI_CONTACT_URL)')
    .option('--resolve <pattern=ip>', 'fetcher: static name resolution (repeatable)', collect, [])
    .option('--timeout <s>', 'fetcher: seconds one request may take (or MEGURI_FETCH_TIMEOUT_S; default 30)', positiveSeconds)
    .addOption(new Option('--dns <mode>', 'fetcher: static or system DNS').choices(['static', 'system']))
    .option('--allow-address <cidr>', `fetcher: ${ALLOW_ADDRESS_HELP} (or MEGURI_ALLOW_ADDRESS, comma-separated)`, collectCidr, [])
    .option('--no-sitemaps', "scheduler: do not read hosts' sitemaps (on unless this flag or \"sitemaps\": false in the settings file)")
    .option('--create-topics', 'create missing topics at start (or MEGURI_CREATE_TOPICS=true); otherwise a missing topic stops the service')
    .option('--fsync', 'embedded log: fsync every commit (or MEGURI_FSYNC=true)')
    .option('--out <dir>', 'warc: directory of the WARC files (or MEGURI_WARC_DIR)')
    .option('--roll-after <s>', 'warc: publish a file at the latest this many seconds after it was opened (or MEGURI_WARC_ROLL_S; default 60)', positiveSeconds)
    .option('--max-file-bytes <n>', 'warc: start a new file at this size (or MEGURI_WARC_MAX_FILE_BYTES; default 1e9)', int('--max-file-bytes', 1))
    .option('--group <id>', 'warc: consumer group (or MEGURI_WARC_GROUP; default meguri-warc)')
    .option('--port <n>', 'dashboard: port of the live view (or MEGURI_DASHBOARD_PORT; default 8080)', int('--port', 0))
    .option('--host <addr>', 'dashboard: address the live view binds (or MEGURI_DASHBOARD_HOST; default 127.0.0.1, 0.0.0.0 in a pod)')
    .option('--country <range=CC>', 'dashboard: place an address or CIDR range in a country (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .action(async (service: 'scheduler' | 'fetcher' | 'parser' | 'warc' | 'dashboard', flags: Record<string, unknown>) => {
      if (service === 'warc') return (await import('./run-warc.ts')).runWarcSinkCommand(flags);
      if (service === 'dashboard') return (await import('./live-view.ts')).runDashboardCommand(flags);
      await (await import('./run-service.ts')).runServiceCommand(service, flags);
    });

  addLogLocation(
    program
      .command('seed')
      .description('Add seed URLs to a crawl (Kafka, or an embedded log that no process has open).')
      .argument('<urls...>', 'seed URLs')
      .option('--alias-file <file>', ALIAS_HELP)
      .addOption(new Option('--kind <kind>', 'add them as feeds or daily pages, re-read on their own schedule (as --feeds-file / --daily-file)').choices(['feed', 'daily'])),
  ).action(async (urls: string[], flags: LogLocation & { aliasFile?: string; kind?: 'feed' | 'daily' }) => {
    const [{ openLog }, { seedOutRecords, seedRecords }, aliasModule] = await Promise.all([import('./log-location.ts'), import('./crawl.ts'), import('../common/aliases.ts')]);
    const transport = await openLog(flags);
    try {
      const topic = `${flags.topicPrefix}links`;
      const described = await transport.describeTopic(topic);
      if (!described) throw new InvalidArgumentError(`topic ${topic} does not exist: start a crawl or run \`meguri topics create\` first`);
      const kind = flags.kind;
      const aliases = new Map(Object.entries(readAliases(flags.aliasFile ?? process.env.MEGURI_ALIAS_FILE, aliasModule)));
      const { records, rejected } = seedRecords(kind ? urls.map((url) => ({ url, kind })) : urls, Date.now(), aliases);
      for (const r of rejected) console.error(`rejected ${r.url}: ${r.reason}`);
      // Every partition learns the new seeds' hosts/domains: they extend a host/domain scope.
      await transport.send(seedOutRecords(topic, records, described.partitions.length));
      console.log(`added ${records.length} seed(s) to ${topic}`);
      if (rejected.length > 0) process.exitCode = 1;
    } finally {
      await transport.close();
    }
  });

  addLogLocation(
    program
      .command('tail')
      .description('Print a topic\'s records as JSON lines (e.g. changes, revisits), from Kafka or an embedded crawl that is not running.')
      .argument('<topic>', 'logical topic name: changes, revisits, pages, links, frontier, servers, deadletter'),
  )
    .option('--since <time>', 'start at the first record at or after this time (ISO 8601 or epoch ms)')
    .option('--follow', 'keep printing new records until interrupted')
    .option('--with-page', 'print each record with the pages record its `page` pointer names')
    .option('--limit <n>', 'stop after n records', int('--limit', 1))
    .action(async (topic: string, flags: { kafka?: string; data: string; topicPrefix: string; since?: string; follow?: boolean; withPage?: boolean; limit?: number }) => {
      const { tailCommand } = await import('./tail.ts');
      const abort = new AbortController();
      const onSignal = (): void => abort.abort();
      process.once('SIGINT', onSignal);
      try {
        await tailCommand(topic, flags, (line) => process.stdout.write(line + '\n'), abort.signal);
      } finally {
        process.off('SIGINT', onSignal);
      }
    });

  addLogLocation(
    program
      .command('replay')
      .description('Re-read a stretch of a topic into an analysis (records with positions, the current parser over stored pages, or a summary), or reset a consumer group to it.')
      .argument('<topic>', 'logical topic name: pages, changes, revisits, links, frontier, deadletter'),
  )
    .option('--since <time>', 'from the first record at or after this time (ISO 8601 or epoch ms; default: the beginning)')
    .option('--until <time>', 'up to the first record at or after this time (default: the end as of now)')
    .addOption(new Option('--into <analysis>', 'records: JSON lines with positions; parse: run the current parser over stored pages; summary: one JSON object').choices([...replayAnalyses]).default('records'))
    .option('--group <id>', 'instead of reading, set this consumer group\'s committed offsets to the start of the stretch (the group must not be running)')
    .option('--limit <n>', 'stop after n records', int('--limit', 1))
    .action(async (topic: string, flags: ReplayFlags) => {
      const { replayCommand } = await import('./replay.ts');
      const report = await replayCommand(topic, flags, (line) => process.stdout.write(line + '\n'), (line) => console.error(line));
      if (report.invalid > 0) {
        console.error(`${report.invalid} record(s) could not be used`);
        process.exitCode = 1;
      }
    });

  // ---- meguri analyze (re-analysis jobs over a crawl's pages)
  addLogLocation(
    program
      .command('analyze')
      .description("Re-analyse a crawl's pages (Muraoka et al., Akamine et al.): host-rank, distributions, duplicates, site-profile HOST..., geo. Bounded memory (a scratch RocksDB); text, --json, --out DIR for CSV + SVG.")
      .addArgument(new Command().createArgument('<job>', JOBS.join(' | ')).choices([...JOBS]))
      .argument('[hosts...]', 'site-profile: the sites to profile (default: the 5 with most pages)'),
  )
    .option('--since <time>', 'pages fetched at or after this time (ISO 8601 or epoch ms; default: the beginning)')
    .option('--until <time>', 'pages fetched before this time (default: the end as of now)')
    .option('--json', 'print one JSON object')
    .option('--out <dir>', 'write the CSV and SVG files of the job here')
    .option('--weighted', 'host-rank, duplicates: weight server links by their number of page links (default: each server pair once)')
    .option('--top <n>', 'rows of ranked lists to print', int('--top', 1))
    .option('--work-dir <dir>', 'where the scratch store goes (default: the system temporary directory)')
    .option('--country <range=CC>', 'geo: place an address or CIDR range in a country before the database is asked, e.g. 127.0.0.2=JP (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--country-table <file>', 'geo: file of RANGE=CC lines, consulted after --country, before the database')
    .option('--no-progress', 'no progress lines on stderr')
    .action(async (job: string, hosts: string[], flags: LogLocation & { since?: string; until?: string; json?: boolean; out?: string; weighted?: boolean; top?: number; workDir?: string; country: string[]; countryTable?: string; progress: boolean }) => {
      const [{ analyze, isJob }, { parseTime }, { openLog }] = await Promise.all([import('../analyze/command.ts'), import('./tail.ts'), import('./log-location.ts')]);
      if (!isJob(job)) throw new InvalidArgumentError(`unknown job ${job}`);
      const since = flags.since !== undefined ? parseTime(flags.since, '--since') : undefined;
      const until = flags.until !== undefined ? parseTime(flags.until, '--until') : undefined;
      if (since !== undefined && until !== undefined && until <= since) throw new InvalidArgumentError('--until must be later than --since');
      let last = 0;
      const progress = (p: ScanProgress): void => {
        const now = Date.now();
        if (now - last < 1000) return;
        last = now;
        console.error(p.phase === 'read' ? `analyze ${job}: read ${p.done}/${p.total} pages records (${p.total === 0 ? 100 : Math.floor((100 * p.done) / p.total)} %)` : `analyze ${job}: aggregated ${p.done} pages`);
      };
      const transport = await openLog(flags, { existing: true });
      try {
        await analyze(
          transport,
          job,
          hosts,
          {
            topicPrefix: flags.topicPrefix,
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
            ...(flags.json ? { json: true } : {}),
            ...(flags.out !== undefined ? { out: flags.out } : {}),
            ...(flags.weighted ? { weighted: true } : {}),
            ...(flags.top !== undefined ? { top: flags.top } : {}),
            ...(flags.workDir !== undefined ? { workDir: flags.workDir } : {}),
            country: flags.country,
            ...(flags.countryTable !== undefined ? { countryTable: flags.countryTable } : {}),
          },
          { out: (line) => process.stdout.write(line + '\n'), warn: (line) => console.error(line), ...(flags.progress ? { progress } : {}) },
        );
      } finally {
        await transport.close();
      }
    });
  // ---- end meguri analyze

  // ---- meguri export warc
  const exportCmd = program.command('export').description("Write a crawl's pages in an archive format.");
  addLogLocation(
    exportCmd
      .command('warc')
      .description("A crawl's pages as WARC/1.1 files: request + response (or revisit for 304s and unchanged payloads) per fetch, gzip per record, files of ~1 GB."),
  )
    .requiredOption('--out <dir>', 'directory for the .warc.gz files')
    .option('--since <time>', 'pages fetched at or after this time (ISO 8601 or epoch ms)')
    .option('--until <time>', 'pages fetched before this time')
    .option('--max-file-bytes <n>', 'start a new file once one reaches this size', int('--max-file-bytes', 1), 1_000_000_000)
    .option('--prefix <name>', 'file name prefix (default meguri-<time of the export>)')
    .option('--user-agent <ua>', 'User-Agent written in the request records (the crawl\'s own; not stored in pages records)')
    .option('--no-gzip', 'plain .warc files')
    .option('--json', 'print the report as JSON')
    .action(async (flags: LogLocation & { out: string; since?: string; until?: string; maxFileBytes: number; prefix?: string; userAgent?: string; gzip: boolean; json?: boolean }) => {
      const [{ exportWarc }, { parseTime }, { openLog }] = await Promise.all([import('../warc/export.ts'), import('./tail.ts'), import('./log-location.ts')]);
      const since = flags.since !== undefined ? parseTime(flags.since, '--since') : undefined;
      const until = flags.until !== undefined ? parseTime(flags.until, '--until') : undefined;
      const transport = await openLog(flags, { existing: true });
      try {
        const report = await exportWarc(
          transport,
          {
            topicPrefix: flags.topicPrefix,
            out: flags.out,
            maxFileBytes: flags.maxFileBytes,
            gzip: flags.gzip,
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
            ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
            ...(flags.userAgent !== undefined ? { userAgent: flags.userAgent } : {}),
          },
          { warn: (line) => console.error(line) },
        );
        if (flags.json) console.log(JSON.stringify(report));
        else {
          console.log(`${report.records} pages records: ${report.responses} responses, ${report.revisits} revisits, ${report.noResponse} without a response, ${report.invalid} unusable`);
          for (const f of report.files) console.log(`wrote ${f}`);
        }
        if (report.invalid > 0) process.exitCode = 1;
      } finally {
        await transport.close();
      }
    });
  // ---- end meguri export warc

  program
    .command('parse')
    .description('Show what the parser makes of one saved page: links (normalised, nofollow flagged), title, hashes.')
    .argument('<file>', 'saved HTML file')
    .requiredOption('--url <url>', 'URL the page was fetched from (base for relative links)')
    .option('--json', 'print JSON')
    .option('--content-type <type>', 'Content-Type to assume, e.g. "text/html; charset=shift_jis"')
    .action(async (file: string, flags: { url: string; json?: boolean; contentType?: string }) => {
      const { parseCommand } = await import('../parser/cli.ts');
      process.exitCode = await parseCommand({ file, url: flags.url, json: flags.json ?? false, ...(flags.contentType ? { contentType: flags.contentType } : {}) }, (l) => console.log(l));
    });

  const topics = program.command('topics').description('Create or describe the topics of the topology on Kafka.');
  topics
    .command('create')
    .description('Create every topic of the topology (and the scheduler changelogs) that is missing.')
    .option('--kafka <brokers>', 'Kafka bootstrap servers (or MEGURI_KAFKA_BROKERS)')
    .option('--topic-prefix <prefix>', 'topic prefix', '')
    .option('--partitions <n>', 'partitions of the data topics', int('--partitions', 1), 8)
    .option('--replication-factor <n>', 'copies of each partition (or MEGURI_REPLICATION_FACTOR; default 3)', int('--replication-factor', 1))
    .option('--min-insync-replicas <n>', 'copies that must have a write before it is acknowledged (or MEGURI_MIN_INSYNC_REPLICAS; default 2)', int('--min-insync-replicas', 1))
    .action(async (flags: { kafka?: string; topicPrefix: string; partitions: number; replicationFactor?: number; minInsyncReplicas?: number }) => (await import('./topics.ts')).topicsCreate(flags));
  topics
    .command('describe')
    .description('Print the topology (topics, keys, retention, readers/writers) and, with Kafka, the live partitions and offsets.')
    .option('--kafka <brokers>', 'Kafka bootstrap servers (or MEGURI_KAFKA_BROKERS)')
    .option('--topic-prefix <prefix>', 'topic prefix', '')
    .option('--json', 'print JSON')
    .action(async (flags: { kafka?: string; topicPrefix: string; json?: boolean }) => (await import('./topics.ts')).topicsDescribe(flags));

  program
    .command('simulate')
    .description('Replay a crawl over a link graph with no network: compare crawl orders (criteria A, B, C of Yamada et al.), or with --mode discovery Hoshino et al.\'s server-discovery grid (load and yield ratio by depth); CSV, SVG chart, summary.json.')
    .addOption(new Option('--mode <mode>', 'ordering: crawl orders (Yamada et al.); discovery: sample 30/55/100 % × query restriction off/on (Hoshino et al.)').choices(['ordering', 'discovery']).default('ordering'))
    .option('--max-depth <n>', 'discovery: depth of the survey (Hoshino et al.: D = 16)', int('--max-depth', 0), 16)
    .option('--sample-seed <n>', 'discovery: seed of the sampling draw', int('--sample-seed', 0), 1)
    .option('--min-site-pages <n>', 'discovery: without --seed, every host with at least this many pages is a start site (its first page)', int('--min-site-pages', 1), 10)
    .requiredOption('--graph <file>', 'edge list: one "src dst" pair of integer ids per line, # comments')
    .option('--urls <file>', 'node list: "id url" per line (default: <graph>.urls.txt beside an .edges.txt file)')
    .option('--strategy <name>', 'bf | blc | pr | ipr-dl1 | ipr-pl | ipr-vr | ipr-ar | opic | all', 'ipr-dl1')
    .option('--seed <url|node>', 'start page (default: the first host root)')
    .option('--out <dir>', 'write curves.csv, chart.svg and summary.json here')
    .option('--recompute-every <pages>', 'PR: pages between PageRank recomputations (default 1 % of the graph)', int('--recompute-every', 1))
    .option('--json', 'print the summary as JSON')
    .action(async (flags: { graph: string; urls?: string; strategy: string; seed?: string; out?: string; recomputeEvery?: number; json?: boolean; mode: 'ordering' | 'discovery'; maxDepth: number; sampleSeed: number; minSitePages: number }) => {
      if (flags.mode === 'discovery') {
        const { discoverySimulateCommand } = await import('../ordering/discovery-cli.ts');
        process.exitCode = discoverySimulateCommand(
          {
            graph: flags.graph,
            ...(flags.urls ? { urls: flags.urls } : {}),
            ...(flags.seed ? { seed: flags.seed } : {}),
            ...(flags.out ? { out: flags.out } : {}),
            maxDepth: flags.maxDepth,
            sampleSeed: flags.sampleSeed,
            minSitePages: flags.minSitePages,
            json: flags.json ?? false,
          },
          (l) => console.log(l),
        );
        return;
      }
      const { simulateCommand } = await import('../ordering/cli.ts');
      process.exitCode = await simulateCommand(
        {
          graph: flags.graph,
          strategy: flags.strategy,
          ...(flags.urls ? { urls: flags.urls } : {}),
          ...(flags.seed ? { seed: flags.seed } : {}),
          ...(flags.out ? { out: flags.out } : {}),
          ...(flags.recomputeEvery ? { recomputeEvery: flags.recomputeEvery } : {}),
          json: flags.json ?? false,
        },
        (l) => console.log(l),
      );
    });

  program
    .command('config')
    .description('Print the settings of a service with their defaults, as JSON (a starting point for --scheduler-config).')
    .addArgument(new Command().createArgument('<service>', 'scheduler').choices(['scheduler']))
    .action(async () => {
      const { schedulerDefaults } = await import('./scheduler-config.ts');
      console.log(JSON.stringify(schedulerDefaults(), null, 2));
    });

  const stats = program.command('stats').description('Reports from a crawl\'s state.');
  stats
    .command('hosts')
    .description('Top hosts by server load (the incremental archive crawler paper): load index L, 1/L, mean/max fetch time, R, overloaded, fetched and queued pages, URLs skipped as a trap template (templateSkipped), current interval and state.')
    .option('--data <dir>', 'data directory of the crawl (or a scheduler pod volume)', '.data')
    .option('--topic-prefix <prefix>', 'topic prefix of the crawl', '')
    .option('--top <n>', 'rows to show', int('--top', 1), 20)
    .option('--json', 'print JSON')
    .action(async (flags: { data: string; topicPrefix: string; top: number; json?: boolean }) => (await import('./stats.ts')).statsHostsCommand(flags, (l) => console.log(l)));
  stats
    .command('crawl')
    .description('How far a crawl got, per scheduler partition and in total: pages fetched, URLs known and queued, revisits, changes, errors, skips, and hosts in flight, parked, suspended or overloaded.')
    .option('--data <dir>', 'data directory of the crawl (or a scheduler pod volume)', '.data')
    .option('--topic-prefix <prefix>', 'topic prefix of the crawl', '')
    .option('--json', 'print JSON')
    .action(async (flags: { data: string; topicPrefix: string; json?: boolean }) => (await import('./stats.ts')).statsCrawlCommand(flags, (l) => console.log(l)));

  const robots = program.command('robots').description('robots.txt tools.');
  robots
    .command('check')
    .description('For each URL: allowed or not, and the rule that decided — with exactly the matcher the scheduler uses.')
    .argument('<urls...>', 'URLs or paths to check')
    .requiredOption('--robots-file <file>', 'robots.txt to test')
    .requiredOption('--agent <ua>', 'crawler User-Agent (its product token selects the group)')
    .option('--json', 'print [{"url","allowed","rule"}] in input order')
    .action(async (urls: string[], flags: { robotsFile: string; agent: string; json?: boolean }) => {
      const { robotsCheckCommand } = await import('../scheduler/robots/cli.ts');
      process.exitCode = robotsCheckCommand({ robotsFile: flags.robotsFile, agent: flags.agent, json: flags.json ?? false, urls }, (l) => console.log(l), (l) => console.error(l));
    });

  return program;
}

// Output piped into `head` or a pager that quits early: stop quietly, as other command-line tools do.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    const e = err as Error & { code?: string };
    console.error(errorLine(err));
    if (process.env.MEGURI_DEBUG) console.error(e.stack);
    process.exitCode = e.code === 'MEGURI_ERR_CONFIG' ? 2 : 1;
  });
