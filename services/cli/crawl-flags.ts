/**
 * The flags `meguri crawl` and `meguri demo` share, how they become CrawlOptions, and the crawl's
 * run with its display, signals and report. Modules the crawl runs are imported when it runs, so a
 * command's help loads no crawler.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { readFileSync, writeFileSync } from 'node:fs';
import type { CrawlOptions, CrawlSummary } from './crawl.ts';
import type { Logger } from '../runtime/index.ts';
import { FETCHER_DEFAULTS } from '../fetcher/defaults.ts';
import { int, seconds, duration, positiveNumber, languageList, positiveSeconds, collect, collectRegex, queryMode, rate, ALIAS_HELP, readAliases, HOST_RULES_HELP, SCOPE_HELP, INCLUDE_HELP, EXCLUDE_HELP, collectCidr, ALLOW_ADDRESS_HELP, paramNames } from './flag-parsers.ts';

export interface CrawlFlags {
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
  mainText?: 'revisits' | 'all';
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


/** The crawl flags on `cmd`; `defaults` are the command's own (`dataHelp` says what an empty --data means). */
export function addCrawlFlags(cmd: Command, defaults: { minInterval: number; dns: 'static' | 'system'; data?: string; dataHelp?: string }): Command {
  return cmd
    .option('--seeds-file <file>', 'file with one seed URL per line (# comments allowed)')
    .addOption(new Option('--data <dir>', 'data directory: the embedded log (RocksDB, page bodies in segment files beside it) and the state stores; a crawl on a directory used before continues that crawl (seen URLs are not fetched again)').default(defaults.data ?? '.data', defaults.dataHelp))
    .option('--kafka <brokers>', 'run on Apache Kafka (comma-separated host:port) instead of the embedded log')
    .option('--topic-prefix <prefix>', 'prefix of every topic name', '')
    .option('--partitions <n>', 'partitions of the topics this crawl creates', int('--partitions', 1), 4)
    .option('--replication-factor <n>', 'with --kafka: copies of each partition of the topics it creates (or MEGURI_REPLICATION_FACTOR; default 3, lowered with a warning to the broker count). A value given is never lowered: above the broker count the crawl stops with an error saying what would work', int('--replication-factor', 1))
    .option('--min-insync-replicas <n>', 'with --kafka: copies that must have a write before it is acknowledged (or MEGURI_MIN_INSYNC_REPLICAS; default 2, or one below the factor, at least 1, when that is lowered)', int('--min-insync-replicas', 1))
    .option('--fsync', 'embedded log: fsync every commit, durable across power loss (or MEGURI_FSYNC=true)')
    .option('--max-pages <n>', 'stop after this many pages (default: no limit)', int('--max-pages', 0))
    .option('--max-depth <n>', 'hops from a seed beyond which links are not followed (Muraoka et al.)', int('--max-depth', 0), 15)
    .option('--min-interval <s>', 'minimum seconds between requests to one host (a larger robots.txt Crawl-delay wins)', seconds, defaults.minInterval)
    .option('--max-per-ip <n>', 'requests in flight to one server IP across all its hosts, in the scheduler and the fetcher alike (default 2; politeness.maxPerIp)', int('--max-per-ip', 1))
    .option('--max-per-host <n>', 'requests in flight to one host at once; above 1 only while the host asks for no wait between requests, and the per-IP cap still holds (default 1; politeness.maxPerHost)', int('--max-per-host', 1))
    .option('--user-agent <ua>', 'User-Agent header; its product token selects the robots.txt group (default: meguri/<version> (+<contact URL>))')
    .option('--contact <url>', 'contact URL put in the default User-Agent')
    .option('--resolve <pattern=ip>', 'static name resolution, e.g. *.sim.test=127.0.0.1 (repeatable)', collect, [])
    .addOption(new Option('--dns <mode>', 'static: only --resolve entries (an unmapped name fails at once, nothing leaves the machine); system: asynchronous DNS through c-ares, with a TTL cache').choices(['static', 'system']).default(defaults.dns))
    .option('--timeout <s>', `seconds one request may take, body included (the connect and response-header waits, ${FETCHER_DEFAULTS.connectTimeoutMs / 1000} s and ${FETCHER_DEFAULTS.headersTimeoutMs / 1000} s by default, never exceed it)`, positiveSeconds, FETCHER_DEFAULTS.totalTimeoutMs / 1000)
    .option('--allow-address <cidr>', ALLOW_ADDRESS_HELP, collectCidr, [])
    .option('--until-idle', 'stop when nothing is queued or in flight; URLs of hosts parked (robots.txt unreachable, repeated failures) or backing off (Retry-After) with their next try more than 30 s away do not hold the crawl (the summary counts them as waitingOnParkedHosts)')
    .option('--summary-json <file>', 'write the crawl summary as JSON to this file')
    .option('--no-progress', 'no progress display (a bar on a terminal, else a status line every 5 s)')
    .option('--scheduler-config <file>', 'JSON file with any scheduler setting (`meguri config scheduler` prints them all with their defaults); flags given on the command line win')
    .option('--max-pages-per-site <n>', 'distinct pages (new URLs the server answered) per site at most: at the cap no new URL of the site is queued, revisits of its known pages go on (default 1000000)', int('--max-pages-per-site', 0))
    .addOption(new Option('--site-cap-scope <scope>', 'what --max-pages-per-site counts: a host, or a registrable domain (default host)').choices(['host', 'domain']))
    .option('--max-urls-per-template <n>', 'new URLs one URL template of a host (same path shape and parameter names; ids and values ignored) may add, a bound on traps (0: no limit; default 1000)', int('--max-urls-per-template', 0))
    .option('--strip-params <names>', 'comma-separated query and ;path parameters removed from every URL, `name*` for a prefix ("" for none; default: session ids and tracking tags such as jsessionid, phpsessid, sid, sessionid, utm_*, fbclid, gclid)', paramNames)
    .option('--query-restriction [mode]', 'off (without the flag); form (the flag alone): a URL with a query is not followed when its form without the query was seen (Hoshino et al.); all: no URL with a query is followed', queryMode)
    .option('--no-query', 'Hoshino et al.\'s query restriction: same as --query-restriction form')
    .option('--no-sitemaps', "do not read hosts' sitemaps (robots.txt Sitemap: lines, else /sitemap.xml), which are read by default except in --mode discovery")
    .option('--sitemap-interval <duration>', 'base re-read interval D of a sitemap: halved after a change, × 1.5 after none, within D/24 … 7·D (seconds, or with a unit: 30m, 6h, 1d; default 24h)', duration)
    .option('--feeds-file <file>', 'file with one RSS/Atom feed URL per line (# comments), each re-read on its own schedule with a conditional GET; new items are fetched first')
    .option('--feed-interval <duration>', "base re-read interval D of a feed: one new item per read at the feed's observed item rate (item dates at first), within D/24 … 7·D and never more often than the feed's ttl (seconds, or with a unit: 30m, 6h, 1d; default 24h)", duration)
    .option('--daily-file <file>', "file with one top-page URL per line (news, Q&A), re-read every --daily-interval whatever the revisit estimator says; links new on them are fetched at once, ahead of the host's queue (Akamine et al.)")
    .option('--daily-interval <duration>', 're-read interval of --daily-file pages (seconds, or with a unit: 30m, 6h, 1d; default 24h)', duration)
    .option('--languages <codes>', 'language focus, e.g. ja,en: pages in other languages are kept and reported, their links not followed; pages of unknown language are followed (default: all languages)', languageList)
    .addOption(new Option('--main-text <which>', 'outcomes on `links` that carry the page\'s main text: revisits (where changes are quoted; others carry paragraph hashes) or all (about a fifth slower); default revisits').choices(['revisits', 'all']))
    .option('--speed <n>', 'simulated webs only (requires --dns static): the crawl runs on a clock n times faster than wall time; its intervals, estimator and event times are that clock\'s', positiveNumber)
    .addOption(new Option('--scope <mode>', `${SCOPE_HELP} (default domain)`).choices(['host', 'domain', 'web']))
    .addOption(new Option('--revisit-goal <goal>', "what revisits optimise: freshness (share of time copies are up to date) or versions (distinct versions captured per fetch, an archive's aim); default freshness").choices(['freshness', 'versions']))
    .option('--include <regex>', INCLUDE_HELP, collectRegex('--include'), [])
    .option('--exclude <regex>', EXCLUDE_HELP, collectRegex('--exclude'), [])
    .option('--host-rules <file>', HOST_RULES_HELP)
    .option('--alias-file <file>', ALIAS_HELP)
    .addOption(new Option('--mode <mode>', "crawl (the default); discovery: Hoshino et al.'s server-discovery crawl — each seed a start site, its internal URLs (same host or a subdomain) followed, external hosts reported once on `servers` and never fetched (default --max-depth 9)").choices(['crawl', 'discovery']))
    .option('--sample-rate <r>', 'discovery: share of the internal URLs found at depth n crawled at depth n+1, by a seeded draw per URL (0 < r ≤ 1; default 1)', rate)
    .option('--sample-seed <n>', 'discovery: seed of the sampling draw (default 1)', int('--sample-seed', 0))
    .option('--follow-servers', 'discovery: every new server becomes a start site of its own')
    .option('--out <dir>', 'discovery: write the per-depth figures there as discovery.csv and discovery.svg')
    .option('--ui [port]', 'serve the live view (counters, recent changes, world map of servers) on 127.0.0.1:PORT (default 8080)')
    .option('--country <range=CC>', 'live view: place an address or CIDR range in a country before the database is asked (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--parser-workers <n>', 'worker threads that parse pages, a whole batch at a time (0: on the event loop; default: 1 on 2 or 3 cores, cores − 2 up to 4 beyond, 0 on 1 core)', int('--parser-workers', 0))
    .addOption(new Option('--log-level <level>', 'log level (JSON logs on stderr)').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('warn'));
}

export function readSeedsFile(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Names of the options given on the command line (not defaults). */
export function explicitOptions(cmd: Command): Set<string> {
  return new Set(Object.keys(cmd.opts()).filter((k) => cmd.getOptionValueSource(k) === 'cli'));
}

/** The modules that turn crawl flags into a running crawl, loaded when `crawl` or `demo` starts. */
export async function loadCrawlModules() {
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
export type CrawlModules = Awaited<ReturnType<typeof loadCrawlModules>>;

export function crawlOptions(m: CrawlModules, urls: string[], flags: CrawlFlags, explicit: Set<string>, extraResolve: string[] = []): CrawlOptions {
  const { readSchedulerConfig } = m.schedulerConfig;
  const { defaultUserAgent, fetchTimeouts } = m.fetch;
  const { createLogger, loadRuntimeConfig } = m.runtime;
  const seeds = [...urls, ...(flags.seedsFile ? readSeedsFile(flags.seedsFile) : [])];
  const file = readSchedulerConfig(flags.schedulerConfig);
  const userAgent = flags.userAgent ?? file.userAgent ?? defaultUserAgent(flags.contact);
  // A setting comes from its flag when the file leaves it out or the flag was given: a flag's default never overrides the file.
  const flagOf = { maxDepth: 'maxDepth', minIntervalMs: 'minInterval', sitemaps: 'sitemaps' } as const;
  const fromFlag = (name: keyof typeof flagOf): boolean => file[name] === undefined || explicit.has(flagOf[name]);
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
    // On unless --no-sitemaps or the settings file says false. A discovery crawl looks for servers at
    // the least load (Hoshino et al.): it reads pages, not sitemaps.
    sitemaps: (fromFlag('sitemaps') ? flags.sitemaps : file.sitemaps === true) && !discovery,
    ...(flags.sitemapInterval !== undefined ? { sitemapIntervalMs: flags.sitemapInterval } : {}),
    ...(flags.feedInterval !== undefined ? { feedIntervalMs: flags.feedInterval } : {}),
    ...(flags.dailyInterval !== undefined ? { dailyIntervalMs: flags.dailyInterval } : {}),
  };
  return {
    seeds,
    ...(sources.length > 0 ? { sources } : {}),
    ...(flags.languages !== undefined ? { languages: flags.languages } : {}),
    ...(flags.mainText !== undefined ? { mainText: flags.mainText } : {}),
    dataDir: flags.data,
    replication: { ...chosen.replication, capToBrokers: !chosen.explicit },
    fsync: flags.fsync === true || env.fsync,
    gzipLevel: env.kafkaGzipLevel,
    commitIntervalMs: env.commitIntervalMs,
    transactionIntervalMs: env.transactionIntervalMs,
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
export function scaledClockSettings(flags: CrawlFlags, ScaledClock: CrawlModules['runtime']['ScaledClock']): Pick<CrawlOptions, 'clock'> {
  if (flags.speed === undefined || flags.speed === 1) return {};
  if (flags.dns !== 'static') throw new InvalidArgumentError('--speed is only for simulated webs: give --dns static (and --resolve) as well');
  return { clock: new ScaledClock(Date.now(), flags.speed) };
}

export async function withSpeed(options: CrawlOptions, speed: number | undefined): Promise<CrawlOptions> {
  if (speed === undefined || speed === 1) return options;
  const { scaledTimers } = await import('./demo-changing.ts');
  return { ...options, scheduler: { ...scaledTimers(speed), ...options.scheduler } };
}

export function uiPort(ui: string | boolean | undefined): number | undefined {
  if (ui === undefined || ui === false) return undefined;
  if (ui === true) return 8080;
  const n = Number(ui);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`--ui takes a port number, got ${ui}`);
  return n;
}

export async function crawlWithDisplay(m: CrawlModules, options: CrawlOptions, flags: CrawlFlags, liveCountries: readonly string[] = []): Promise<CrawlSummary> {
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

export async function watchHostRulesFile(file: string, logger: Logger): Promise<ReturnType<typeof import('./host-rules-file.ts').watchHostRules>> {
  const { watchHostRules } = await import('./host-rules-file.ts');
  return watchHostRules(file, logger);
}

export async function crawlWithSignals(m: CrawlModules, options: CrawlOptions, flags: CrawlFlags): Promise<CrawlSummary> {
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

export function report(summary: CrawlSummary, file: string | undefined, extra: Record<string, unknown> = {}): void {
  const out = { ...summary, ...extra };
  if (file) writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(JSON.stringify(out, null, 2));
}
