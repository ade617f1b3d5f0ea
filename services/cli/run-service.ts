/**
 * `meguri run <service>`: one service against Kafka, as a pod runs it — health/metrics server,
 * JSON logs on stdout, graceful SIGTERM.
 */
import { ConfigError, StreamService, createLogger, createTransport, loadRuntimeConfig, onShutdownSignal, startHealthServer } from '../runtime/index.ts';
import { schedulerService } from '../scheduler/service.ts';
import { readSchedulerConfig } from './scheduler-config.ts';
import { watchHostRules } from './host-rules-file.ts';
import { parseAliasFile } from '../common/aliases.ts';
import { readFileSync } from 'node:fs';
import type { WatchedHostRules } from './host-rules-file.ts';
import type { SchedulerOptionsInput } from '../scheduler/options.ts';
import { fetcherService } from '../fetcher/service.ts';
import { parserService } from '../parser/service.ts';
import { parseLanguageList } from '../parser/language-tags.ts';
import { parseCidr } from '../fetcher/address-policy.ts';
import { createResolver } from '../fetcher/dns.ts';
import { defaultUserAgent, fetchTimeouts } from '../fetcher/fetch.ts';
import { paramFilter } from '../common/url.ts';
import { chooseReplication } from './topics.ts';
import type { Logger, Transport } from '../runtime/index.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

/** An environment variable, with an empty value meaning unset (a ConfigMap key left blank). */
function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The per-IP cap, one setting for the scheduler and every fetcher: --max-per-ip, else
 * MEGURI_MAX_PER_IP, else politeness.maxPerIp of the scheduler settings file (undefined: default).
 */
function maxPerIpSetting(flags: Record<string, unknown>, file: SchedulerOptionsInput): number | undefined {
  if (flags.maxPerIp !== undefined) return flags.maxPerIp as number;
  const raw = env('MEGURI_MAX_PER_IP');
  if (raw !== undefined) {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new ConfigError(`invalid configuration:\n  MEGURI_MAX_PER_IP: must be an integer ≥ 1, got ${JSON.stringify(raw)}`);
    return n;
  }
  return file.politeness?.maxPerIp;
}

/** Crawl scope of a scheduler pod: --scope, else MEGURI_SCOPE, else the settings file, else web. */
function scopeSetting(flags: Record<string, unknown>, file: SchedulerOptionsInput): Pick<SchedulerOptionsInput, 'scope' | 'include' | 'exclude'> {
  const scope = (flags.scope as string | undefined) ?? env('MEGURI_SCOPE') ?? file.scope ?? 'web';
  if (scope !== 'host' && scope !== 'domain' && scope !== 'web') throw new ConfigError(`MEGURI_SCOPE must be host, domain or web, got ${scope}`);
  return {
    scope,
    include: [...(file.include ?? []), ...((flags.include as string[] | undefined) ?? [])],
    exclude: [...(file.exclude ?? []), ...((flags.exclude as string[] | undefined) ?? [])],
  };
}

/** MEGURI_ALLOW_ADDRESS's ranges, each checked: a bad one stops the process with the variable named. */
function allowAddressesFromEnv(): string[] {
  const ranges = env('MEGURI_ALLOW_ADDRESS')?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  for (const range of ranges) {
    try {
      parseCidr(range);
    } catch (err) {
      throw new ConfigError(`MEGURI_ALLOW_ADDRESS: ${(err as Error).message}`);
    }
  }
  return ranges;
}

/** Per-host rules, watched while the scheduler runs; a bad file stops it here with the key named. */
function hostRulesOf(flags: Record<string, unknown>, logger: Logger): WatchedHostRules | undefined {
  const hostRulesFile = (flags.hostRules as string | undefined) ?? env('MEGURI_HOST_RULES');
  try {
    return hostRulesFile ? watchHostRules(hostRulesFile, logger) : undefined;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** Server aliases, one file for the scheduler and the parsers (--alias-file or MEGURI_ALIAS_FILE). */
function aliasesOf(flags: Record<string, unknown>): Record<string, string> {
  const aliasFile = (flags.aliasFile as string | undefined) ?? env('MEGURI_ALIAS_FILE');
  try {
    return aliasFile ? Object.fromEntries(parseAliasFile(readFileSync(aliasFile, 'utf8'), `alias file ${aliasFile}`)) : {};
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** The scheduler of a pod. Precedence: flags, then MEGURI_* variables, then the settings file, then defaults. */
function schedulerDefinition(
  flags: Record<string, unknown>,
  file: SchedulerOptionsInput,
  o: { userAgent: string; aliases: Record<string, string>; maxPerIp: number | undefined; hostRules: WatchedHostRules | undefined },
): ReturnType<typeof schedulerService> {
  const { userAgent, aliases, maxPerIp, hostRules } = o;
  const explicitAgent = (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT');
  return schedulerService(
    {
      ...file,
      userAgent: explicitAgent ?? file.userAgent ?? userAgent,
      ...(flags.minInterval !== undefined ? { minIntervalMs: Math.round((flags.minInterval as number) * 1000) } : env('MEGURI_MIN_INTERVAL_MS') ? { minIntervalMs: Number(env('MEGURI_MIN_INTERVAL_MS')) } : {}),
      ...(flags.maxDepth !== undefined ? { maxDepth: flags.maxDepth as number } : {}),
      ...scopeSetting(flags, file),
      ...(Object.keys(aliases).length > 0 ? { aliases: { ...file.aliases, ...aliases } } : {}),
      ...(maxPerIp !== undefined || flags.maxPerHost !== undefined
        ? { politeness: { ...file.politeness, ...(maxPerIp !== undefined ? { maxPerIp } : {}), ...(flags.maxPerHost !== undefined ? { maxPerHost: flags.maxPerHost as number } : {}) } }
        : {}),
      // Fetchers run as separate processes here: learn each host's IP before its first request so
      // the per-IP cap sees every request (a settings file may turn it off).
      learnAddressFirst: file.learnAddressFirst ?? true,
      // Sitemaps are read unless the settings file says `"sitemaps": false` (as `meguri crawl --no-sitemaps`).
      sitemaps: flags.sitemaps === false ? false : (file.sitemaps ?? true),
    },
    hostRules ? { hostRules } : {},
  );
}

export async function runServiceCommand(name: 'scheduler' | 'fetcher' | 'parser', flags: Record<string, unknown>): Promise<void> {
  const config = loadRuntimeConfig({
    ...(flags.kafka ? { kafkaBrokers: flags.kafka, transport: 'kafka' } : {}),
    ...(flags.data ? { dataDir: flags.data } : {}),
    ...(flags.topicPrefix !== undefined ? { topicPrefix: flags.topicPrefix } : {}),
    ...(flags.httpPort !== undefined ? { httpPort: flags.httpPort } : { httpPort: env('MEGURI_HTTP_PORT') ?? 9464 }),
    ...(flags.createTopics ? { createTopics: true } : {}),
    ...(flags.fsync ? { fsync: true } : {}),
  });
  // Checked before anything is opened: a bad value stops the process with the variable named.
  const allowFromEnv = allowAddressesFromEnv();
  const logger = createLogger({ name: `meguri-${name}`, level: config.logLevel });
  const hostRules = name === 'scheduler' ? hostRulesOf(flags, logger) : undefined;
  // Pods leave topics to the operator (`meguri topics create`, Strimzi KafkaTopics) unless told
  // otherwise; then with the cluster's replication (default 3 copies, 2 in sync), never fewer.
  const createTopics = config.transport === 'embedded' || config.createTopics;
  const { replication } = chooseReplication({}, config);
  const transport = await createTransport({
    transport: config.transport,
    kafkaBrokers: config.kafkaBrokers,
    dataDir: config.dataDir,
    clientId: `meguri-${name}-${config.instanceId}`,
    logger,
    replication,
    fsync: config.fsync,
    gzipLevel: config.kafkaGzipLevel,
  });
  const userAgent = (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT') ?? defaultUserAgent((flags.contact as string | undefined) ?? env('MEGURI_CONTACT_URL'));
  const resolve = [...((flags.resolve as string[] | undefined) ?? []), ...(env('MEGURI_RESOLVE')?.split(',') ?? [])];
  const dns = ((flags.dns as string | undefined) ?? env('MEGURI_DNS') ?? 'system') as 'static' | 'system';
  const allowAddresses = [...((flags.allowAddress as string[] | undefined) ?? []), ...allowFromEnv];
  // A service stopped by a fatal error (e.g. its consumer crashed for good) ends the process with a
  // non-zero code, so the orchestrator restarts it; nothing stays up doing nothing.
  const onFatal = (): void => {
    setTimeout(() => process.exit(70), 10_000).unref();
    void transport.close().finally(() => process.exit(70));
  };
  const common = { transport, catalog: crawlCatalog, dataDir: config.dataDir, topicPrefix: config.topicPrefix, partitions: config.partitions, memberName: config.instanceId, ...(config.staticMembership ? { groupInstanceId: config.instanceId } : {}), logger, createTopics, onFatal, commitIntervalMs: config.commitIntervalMs, transactionIntervalMs: config.transactionIntervalMs };
  let service: StreamService<unknown>;
  let closeExtra = async (): Promise<void> => {};
  const file = name === 'parser' ? {} : readSchedulerConfig((flags.schedulerConfig as string | undefined) ?? env('MEGURI_SCHEDULER_CONFIG'));
  const maxPerIp = maxPerIpSetting(flags, file);
  const aliases = aliasesOf(flags);
  const parserAliases = new Map(Object.entries({ ...file.aliases, ...aliases }));
  if (name === 'scheduler') {
    service = new StreamService(schedulerDefinition(flags, file, { userAgent, aliases, maxPerIp, hostRules }), common) as StreamService<unknown>;
  } else if (name === 'fetcher') {
    const timeoutS = (flags.timeout as number | undefined) ?? (env('MEGURI_FETCH_TIMEOUT_S') ? Number(env('MEGURI_FETCH_TIMEOUT_S')) : undefined);
    if (timeoutS !== undefined && !(timeoutS > 0)) throw new ConfigError(`fetch timeout must be a number of seconds > 0, got ${timeoutS}`);
    const definition = fetcherService({
      userAgent,
      resolver: createResolver({ mode: dns, resolve }),
      allowAddresses,
      ...(timeoutS !== undefined ? fetchTimeouts(timeoutS) : {}),
      ...(maxPerIp !== undefined ? { perIpConcurrency: maxPerIp } : {}),
    });
    service = new StreamService(definition, common) as StreamService<unknown>;
    closeExtra = () => definition.fetcher.close();
  } else {
    // The parser removes the session/tracking parameters of the scheduler's settings file, if given.
    const stripParams = readSchedulerConfig((flags.schedulerConfig as string | undefined) ?? env('MEGURI_SCHEDULER_CONFIG')).stripParams;
    // Language focus (as `meguri crawl --languages`): MEGURI_LANGUAGES=ja,en.
    const languagesEnv = env('MEGURI_LANGUAGES');
    const languages = languagesEnv !== undefined && languagesEnv.trim() !== '' ? [...parseLanguageList(languagesEnv)] : undefined;
    const mainText = env('MEGURI_MAIN_TEXT');
    if (mainText !== undefined && mainText !== 'revisits' && mainText !== 'all') throw new ConfigError(`invalid configuration:\n  MEGURI_MAIN_TEXT: must be revisits or all, got ${JSON.stringify(mainText)}`);
    const definition = parserService({
      workers: Number(env('MEGURI_PARSER_WORKERS') ?? 0),
      ...(stripParams !== undefined ? { stripParams: paramFilter(stripParams) } : {}),
      ...(parserAliases.size > 0 ? { aliases: parserAliases } : {}),
      ...(languages !== undefined ? { languages } : {}),
      ...(mainText !== undefined ? { mainText } : {}),
    });
    service = new StreamService(definition, common) as StreamService<unknown>;
    closeExtra = () => definition.close();
  }
  if (!createTopics) {
    try {
      await requireTopics(transport, service.topicDefinitions().map((t) => t.name), config.topicPrefix, config.partitions);
    } catch (err) {
      await closeExtra();
      await transport.close();
      throw err;
    }
  }
  const health = config.httpPort >= 0 ? await startHealthServer([service], config.httpPort, config.httpHost, logger) : undefined;
  onShutdownSignal(
    async () => {
      await service.stop();
      await closeExtra();
      await transport.close();
      await health?.close();
    },
    logger,
    config.shutdownTimeoutMs,
  );
  await service.start();
  logger.info({ service: name, transport: config.transport, httpPort: health?.port }, 'running');
}

export class MissingTopicsError extends Error {
  override readonly name = 'MissingTopicsError';
  readonly code = 'MEGURI_ERR_MISSING_TOPIC';
}

/** Stops a service whose topics were never created, naming them and the command that creates them. */
export async function requireTopics(transport: Transport, names: readonly string[], prefix: string, partitions: number): Promise<void> {
  const existing = new Set(await transport.listTopics());
  const missing = names.filter((n) => !existing.has(n));
  if (missing.length === 0) return;
  const create = `meguri topics create --kafka <brokers>${prefix ? ` --topic-prefix ${prefix}` : ''} --partitions ${partitions}`;
  throw new MissingTopicsError(
    `topic${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'do' : 'does'} not exist. ` +
      `Create the topology's topics first with \`${create}\` (or the Strimzi KafkaTopics of deploy/k8s), ` +
      'or set MEGURI_CREATE_TOPICS=true to let this service create them (replication from MEGURI_REPLICATION_FACTOR, default 3).',
  );
}
