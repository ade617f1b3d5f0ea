/**
 * The `meguri` command line. Every command has --help; errors print a clear message and a
 * non-zero exit code. Long-running commands log JSON (pino) to stderr and keep stdout for results.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCrawl, seedRecords } from './crawl.ts';
import type { CrawlOptions, CrawlSummary } from './crawl.ts';
import { startProgress } from './progress-display.ts';
import { runServiceCommand } from './run-service.ts';
import { chooseReplication, topicsCreate, topicsDescribe } from './topics.ts';
import { createLogger, loadRuntimeConfig } from '../runtime/index.ts';
import { robotsCheckCommand } from '../scheduler/robots/cli.ts';
import { parseCommand } from '../parser/cli.ts';
import { createResolver, parseResolveEntry } from '../fetcher/dns.ts';
import { parseCidr } from '../fetcher/address-policy.ts';
import { defaultUserAgent, fetchTimeouts, FETCHER_DEFAULTS } from '../fetcher/fetch.ts';
import { SimWeb } from '../simweb/index.ts';
import { simulateCommand } from '../ordering/cli.ts';
import { statsCrawlCommand, statsHostsCommand } from './stats.ts';
import { readSchedulerConfig, schedulerDefaults } from './scheduler-config.ts';
import { tailCommand } from './tail.ts';
import { replayAnalyses, replayCommand } from './replay.ts';
import type { ReplayFlags } from './replay.ts';
import { addLogLocation, openLog } from './log-location.ts';
import type { LogLocation } from './log-location.ts';

const VERSION = '0.1.0';

function int(name: string, min = 0): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

function seconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number of seconds ≥ 0');
  return n;
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
  queryRestriction?: 'off' | 'form' | 'all';
  query: boolean;
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
    .addOption(new Option('--query-restriction <mode>', 'off; form: a URL is not followed when its form without the query was seen (seed 002); all: no URL with a query is followed').choices(['off', 'form', 'all']))
    .option('--no-query', 'seed 002\'s query restriction: same as --query-restriction form')
    .option('--parser-workers <n>', 'worker threads that parse pages (0: on the event loop; default: cores − 2, at most 4, none on 2 cores)', int('--parser-workers', 0))
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

function crawlOptions(urls: string[], flags: CrawlFlags, explicit: Set<string>, extraResolve: string[] = []): CrawlOptions {
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
    ...(flags.queryRestriction !== undefined ? { queryRestriction: flags.queryRestriction } : flags.query === false ? { queryRestriction: 'form' as const } : {}),
  };
  const politenessFlags = {
    ...(flags.maxPagesPerSite !== undefined ? { maxPagesPerSite: flags.maxPagesPerSite } : {}),
    ...(flags.siteCapScope !== undefined ? { siteCapScope: flags.siteCapScope } : {}),
    ...(maxPerIp !== undefined ? { maxPerIp } : {}),
  };
  const env = loadRuntimeConfig({ transport: 'embedded' });
  // Explicit replication is honoured or fails; the defaults fit themselves to a small cluster.
  const chosen = chooseReplication(flags, env);
  return {
    seeds,
    dataDir: flags.data,
    replication: { ...chosen.replication, capToBrokers: !chosen.explicit },
    fsync: flags.fsync === true || env.fsync,
    ...(flags.kafka ? { kafkaBrokers: flags.kafka.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
    topicPrefix: flags.topicPrefix,
    partitions: flags.partitions,
    ...(flags.maxPages !== undefined ? { maxPages: flags.maxPages } : {}),
    untilIdle: flags.untilIdle ?? false,
    ...(flags.parserWorkers !== undefined ? { parserWorkers: flags.parserWorkers } : {}),
    scheduler: {
      ...file,
      ...(fromFlag('maxDepth') ? { maxDepth: flags.maxDepth } : {}),
      ...(fromFlag('minIntervalMs') ? { minIntervalMs: Math.round(flags.minInterval * 1000) } : {}),
      ...trapBounds,
      ...(Object.keys(politenessFlags).length > 0 ? { politeness: { ...file.politeness, ...politenessFlags } } : {}),
      userAgent,
    },
    fetcher: {
      userAgent,
      ...fetchTimeouts(flags.timeout),
      ...(maxPerIp !== undefined ? { perIpConcurrency: maxPerIp } : {}),
      resolver: createResolver({ mode: flags.dns, resolve: [...extraResolve, ...flags.resolve] }),
      allowAddresses: flags.allowAddress,
    },
    logger,
  };
}

async function crawlWithDisplay(options: CrawlOptions, flags: CrawlFlags): Promise<CrawlSummary> {
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const display = startProgress(flags.progress, options.maxPages);
  try {
    return await runCrawl({ ...options, signal: abort.signal, onProgress: (p) => display.update(p) });
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
    const options = crawlOptions(urls, flags, explicitOptions(cmd));
    if (options.seeds.length === 0) throw new InvalidArgumentError('give seed URLs or --seeds-file (or add seeds to a running crawl with `meguri seed`)');
    const summary = await crawlWithDisplay(options, flags);
    report(summary, flags.summaryJson);
  });

  addCrawlFlags(
    program
      .command('demo')
      .description('Start a simulated web on 127.0.0.1 and crawl it live, fully offline.')
      .option('--hosts <n>', 'simulated hosts', int('--hosts', 1), 20)
      .option('--pages <n>', 'pages per host', int('--pages', 1), 40)
      .option('--web-seed <n>', 'seed of the simulated web graph', int('--web-seed', 0), 1),
    { minInterval: 0.1, dns: 'static', data: '' },
  ).action(async (flags: CrawlFlags & { hosts: number; pages: number; webSeed: number }, cmd: Command) => {
    const web = await SimWeb.start({ seed: flags.webSeed, hosts: flags.hosts, pagesPerHost: flags.pages });
    try {
      const resolve = Object.entries(web.resolveMap()).map(([pattern, ip]) => `${pattern}=${ip}`);
      const data = flags.data || mkdtempSync(join(tmpdir(), 'meguri-demo-'));
      const options = crawlOptions(web.homeUrls(), { ...flags, data, dns: 'static', untilIdle: flags.untilIdle ?? (flags.maxPages === undefined) }, explicitOptions(cmd), resolve);
      console.error(`simulated web: ${flags.hosts} hosts × ${flags.pages} pages on 127.0.0.1:${web.port}; data in ${data}`);
      const summary = await crawlWithDisplay(options, flags);
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
    .addArgument(new Command().createArgument('<service>', 'scheduler | fetcher | parser').choices(['scheduler', 'fetcher', 'parser']))
    .option('--kafka <brokers>', 'Kafka bootstrap servers (or MEGURI_KAFKA_BROKERS)')
    .option('--data <dir>', 'state directory (or MEGURI_DATA_DIR)')
    .option('--topic-prefix <prefix>', 'topic prefix (or MEGURI_TOPIC_PREFIX)')
    .option('--http-port <port>', 'health/metrics port (or MEGURI_HTTP_PORT; default 9464)', int('--http-port', 0))
    .option('--min-interval <s>', 'scheduler: minimum seconds between requests to one host', seconds)
    .option('--max-depth <n>', 'scheduler: maximum hops from a seed', int('--max-depth', 0))
    .option('--max-per-ip <n>', 'scheduler and fetcher: requests in flight to one server IP (or MEGURI_MAX_PER_IP; default: politeness.maxPerIp of the scheduler config, else 2)', int('--max-per-ip', 1))
    .option('--scheduler-config <file>', 'scheduler: JSON settings file (or MEGURI_SCHEDULER_CONFIG); see `meguri config scheduler`')
    .option('--user-agent <ua>', 'User-Agent (or MEGURI_USER_AGENT)')
    .option('--contact <url>', 'contact URL for the default User-Agent (or MEGURI_CONTACT_URL)')
    .option('--resolve <pattern=ip>', 'fetcher: static name resolution (repeatable)', collect, [])
    .option('--timeout <s>', 'fetcher: seconds one request may take (or MEGURI_FETCH_TIMEOUT_S; default 30)', positiveSeconds)
    .addOption(new Option('--dns <mode>', 'fetcher: static or system DNS').choices(['static', 'system']))
    .option('--allow-address <cidr>', `fetcher: ${ALLOW_ADDRESS_HELP} (or MEGURI_ALLOW_ADDRESS, comma-separated)`, collectCidr, [])
    .option('--create-topics', 'create missing topics at start (or MEGURI_CREATE_TOPICS=true); otherwise a missing topic stops the service')
    .option('--fsync', 'embedded log: fsync every commit (or MEGURI_FSYNC=true)')
    .action(async (service: 'scheduler' | 'fetcher' | 'parser', flags: Record<string, unknown>) => {
      await runServiceCommand(service, flags);
    });

  addLogLocation(
    program
      .command('seed')
      .description('Add seed URLs to a crawl (Kafka, or an embedded log that no process has open).')
      .argument('<urls...>', 'seed URLs'),
  ).action(async (urls: string[], flags: LogLocation) => {
    const transport = await openLog(flags);
    try {
      const topic = `${flags.topicPrefix}links`;
      if (!(await transport.describeTopic(topic))) throw new InvalidArgumentError(`topic ${topic} does not exist: start a crawl or run \`meguri topics create\` first`);
      const { records, rejected } = seedRecords(urls, Date.now());
      for (const r of rejected) console.error(`rejected ${r.url}: ${r.reason}`);
      await transport.send(records.map((r) => ({ topic, key: r.key, value: Buffer.from(JSON.stringify(r.value)) })));
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
      .argument('<topic>', 'logical topic name: changes, revisits, pages, links, frontier, deadletter'),
  )
    .option('--since <time>', 'start at the first record at or after this time (ISO 8601 or epoch ms)')
    .option('--follow', 'keep printing new records until interrupted')
    .option('--with-page', 'print each record with the pages record its `page` pointer names')
    .option('--limit <n>', 'stop after n records', int('--limit', 1))
    .action(async (topic: string, flags: { kafka?: string; data: string; topicPrefix: string; since?: string; follow?: boolean; withPage?: boolean; limit?: number }) => {
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
      const report = await replayCommand(topic, flags, (line) => process.stdout.write(line + '\n'), (line) => console.error(line));
      if (report.invalid > 0) {
        console.error(`${report.invalid} record(s) could not be used`);
        process.exitCode = 1;
      }
    });

  program
    .command('parse')
    .description('Show what the parser makes of one saved page: links (normalised, nofollow flagged), title, hashes.')
    .argument('<file>', 'saved HTML file')
    .requiredOption('--url <url>', 'URL the page was fetched from (base for relative links)')
    .option('--json', 'print JSON')
    .option('--content-type <type>', 'Content-Type to assume, e.g. "text/html; charset=shift_jis"')
    .action(async (file: string, flags: { url: string; json?: boolean; contentType?: string }) => {
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
    .action(async (flags: { kafka?: string; topicPrefix: string; partitions: number; replicationFactor?: number; minInsyncReplicas?: number }) => topicsCreate(flags));
  topics
    .command('describe')
    .description('Print the topology (topics, keys, retention, readers/writers) and, with Kafka, the live partitions and offsets.')
    .option('--kafka <brokers>', 'Kafka bootstrap servers (or MEGURI_KAFKA_BROKERS)')
    .option('--topic-prefix <prefix>', 'topic prefix', '')
    .option('--json', 'print JSON')
    .action(async (flags: { kafka?: string; topicPrefix: string; json?: boolean }) => topicsDescribe(flags));

  program
    .command('simulate')
    .description('Replay a crawl over a link graph with no network and compare crawl orders (criteria A, B, C of seed 003; CSV, SVG chart, summary.json).')
    .requiredOption('--graph <file>', 'edge list: one "src dst" pair of integer ids per line, # comments')
    .option('--urls <file>', 'node list: "id url" per line (default: <graph>.urls.txt beside an .edges.txt file)')
    .option('--strategy <name>', 'bf | blc | pr | ipr-dl1 | ipr-pl | ipr-vr | ipr-ar | opic | all', 'ipr-dl1')
    .option('--seed <url|node>', 'start page (default: the first host root)')
    .option('--out <dir>', 'write curves.csv, chart.svg and summary.json here')
    .option('--recompute-every <pages>', 'PR: pages between PageRank recomputations (default 1 % of the graph)', int('--recompute-every', 1))
    .option('--json', 'print the summary as JSON')
    .action(async (flags: { graph: string; urls?: string; strategy: string; seed?: string; out?: string; recomputeEvery?: number; json?: boolean }) => {
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
    .action(() => {
      console.log(JSON.stringify(schedulerDefaults(), null, 2));
    });

  const stats = program.command('stats').description('Reports from a crawl\'s state.');
  stats
    .command('hosts')
    .description('Top hosts by server load (seed 004): load index L, 1/L, mean/max fetch time, R, overloaded, fetched and queued pages, current interval and state.')
    .option('--data <dir>', 'data directory of the crawl (or a scheduler pod volume)', '.data')
    .option('--topic-prefix <prefix>', 'topic prefix of the crawl', '')
    .option('--top <n>', 'rows to show', int('--top', 1), 20)
    .option('--json', 'print JSON')
    .action(async (flags: { data: string; topicPrefix: string; top: number; json?: boolean }) => statsHostsCommand(flags, (l) => console.log(l)));
  stats
    .command('crawl')
    .description('How far a crawl got, per scheduler partition and in total: pages fetched, URLs known and queued, revisits, changes, errors, skips, and hosts in flight, parked, suspended or overloaded.')
    .option('--data <dir>', 'data directory of the crawl (or a scheduler pod volume)', '.data')
    .option('--topic-prefix <prefix>', 'topic prefix of the crawl', '')
    .option('--json', 'print JSON')
    .action(async (flags: { data: string; topicPrefix: string; json?: boolean }) => statsCrawlCommand(flags, (l) => console.log(l)));

  const robots = program.command('robots').description('robots.txt tools.');
  robots
    .command('check')
    .description('For each URL: allowed or not, and the rule that decided — with exactly the matcher the scheduler uses.')
    .argument('<urls...>', 'URLs or paths to check')
    .requiredOption('--robots-file <file>', 'robots.txt to test')
    .requiredOption('--agent <ua>', 'crawler User-Agent (its product token selects the group)')
    .option('--json', 'print [{"url","allowed","rule"}] in input order')
    .action((urls: string[], flags: { robotsFile: string; agent: string; json?: boolean }) => {
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
    console.error(`meguri: ${e.message}`);
    if (process.env.MEGURI_DEBUG) console.error(e.stack);
    process.exitCode = e.code === 'MEGURI_ERR_CONFIG' ? 2 : 1;
  });
