/**
 * The `meguri` commands and their flags (main.ts runs them). Every command has --help; errors print
 * a clear message and a non-zero exit code. Long-running commands log JSON (pino) to stderr and keep
 * stdout for results. docs/cli.md mentions every flag defined here (test/unit/reference-docs.test.ts).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { writeFileSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// Only what builds the commands and checks their flags is imported here; each command imports the
// modules it runs when it runs (below), so `meguri --help` and a command's help load no crawler.
import type { ReplayFlags } from './replay.ts';
import { replayAnalyses } from './replay-analyses.ts';
import { addLogLocation } from './log-location.ts';
import type { LogLocation } from './log-location.ts';
import { JOBS } from '../analyze/jobs.ts';
import type { ScanProgress } from '../analyze/scan.ts';
import { int, share, seconds, positiveSeconds, collect, collectRegex, ALIAS_HELP, readAliases, HOST_RULES_HELP, SCOPE_HELP, INCLUDE_HELP, EXCLUDE_HELP, collectCidr, ALLOW_ADDRESS_HELP, paramNames } from './flag-parsers.ts';
import { addCrawlFlags, explicitOptions, loadCrawlModules, crawlOptions, withSpeed, uiPort, crawlWithDisplay, report } from './crawl-flags.ts';
import type { CrawlFlags } from './crawl-flags.ts';

const VERSION = '0.1.0';

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
    .option('--diff', 'changes only: print each record for reading, a changed page with its paragraphs added (quoted) and removed (by position)')
    .option('--limit <n>', 'stop after n records', int('--limit', 1))
    .action(async (topic: string, flags: { kafka?: string; data: string; topicPrefix: string; since?: string; follow?: boolean; withPage?: boolean; diff?: boolean; limit?: number }) => {
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
      const { schedulerDefaults } = await import('../scheduler/options.ts');
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
