/**
 * The commands of a deployment: `run` (one service, what a pod runs) and `seed`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { addLogLocation } from './log-location.ts';
import type { LogLocation } from './log-location.ts';
import { int, seconds, positiveSeconds, collect, collectRegex, ALIAS_HELP, readAliases, HOST_RULES_HELP, SCOPE_HELP, INCLUDE_HELP, EXCLUDE_HELP, collectCidr, ALLOW_ADDRESS_HELP } from './flag-parsers.ts';
// Only what builds the commands and checks their flags is imported here; each command imports the
// modules it runs when it runs, so `meguri --help` and a command's help load no crawler.

/** `meguri run <service>` and `meguri seed`. */
export function addServiceCommands(program: Command): void {
  program
    .command('run')
    .description('Run one service against Kafka (what a pod runs). Configuration from MEGURI_* environment variables and flags.')
    .addArgument(new Command().createArgument('<service>', 'the service this process runs').choices(['scheduler', 'fetcher', 'parser', 'warc', 'dashboard']))
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
}
