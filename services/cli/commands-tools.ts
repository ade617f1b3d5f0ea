/**
 * The tools and reports: `parse`, `simulate`, `robots check`, `topics`, `config` and `stats`.
 */
import { Command, Option } from 'commander';
import { int } from './flag-parsers.ts';
// Only what builds the commands and checks their flags is imported here; each command imports the
// modules it runs when it runs, so `meguri --help` and a command's help load no crawler.

/** `meguri parse`: what the parser makes of one saved page. */
export function addParseCommand(program: Command): void {
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
}

/** `meguri topics create` and `meguri topics describe`. */
export function addTopicsCommands(program: Command): void {
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
}

/** `meguri simulate`: crawl orders or server discovery over a link graph, offline. */
export function addSimulateCommand(program: Command): void {
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
}

/** `meguri config`: settings with their defaults. */
export function addConfigCommand(program: Command): void {
  program
    .command('config')
    .description('Print the settings of a service with their defaults, as JSON (a starting point for --scheduler-config).')
    .addArgument(new Command().createArgument('<service>', 'the service whose settings are printed').choices(['scheduler']))
    .action(async () => {
      const { schedulerDefaults } = await import('../scheduler/options.ts');
      console.log(JSON.stringify(schedulerDefaults(), null, 2));
    });
}

/** `meguri stats hosts` and `meguri stats crawl`: reports from a crawl's state. */
export function addStatsCommands(program: Command): void {
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
}

/** `meguri robots check`. */
export function addRobotsCommands(program: Command): void {
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
}
