/**
 * `meguri run <service>`: one service against Kafka, as a pod runs it — health/metrics server,
 * JSON logs on stdout, graceful SIGTERM.
 */
import { ConfigError, StreamService, createLogger, createTransport, loadRuntimeConfig, onShutdownSignal, startHealthServer } from '../runtime/index.ts';
import { schedulerService } from '../scheduler/service.ts';
import { readSchedulerConfig } from './scheduler-config.ts';
import type { SchedulerOptionsInput } from '../scheduler/options.ts';
import { fetcherService } from '../fetcher/service.ts';
import { parserService } from '../parser/service.ts';
import { parseCidr } from '../fetcher/address-policy.ts';
import { createResolver } from '../fetcher/dns.ts';
import { defaultUserAgent, fetchTimeouts } from '../fetcher/fetch.ts';
import { paramFilter } from '../parser/url.ts';

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

export async function runServiceCommand(name: 'scheduler' | 'fetcher' | 'parser', flags: Record<string, unknown>): Promise<void> {
  const config = loadRuntimeConfig({
    ...(flags.kafka ? { kafkaBrokers: flags.kafka, transport: 'kafka' } : {}),
    ...(flags.data ? { dataDir: flags.data } : {}),
    ...(flags.topicPrefix !== undefined ? { topicPrefix: flags.topicPrefix } : {}),
    ...(flags.httpPort !== undefined ? { httpPort: flags.httpPort } : { httpPort: env('MEGURI_HTTP_PORT') ?? 9464 }),
  });
  // Checked before anything is opened: a bad value stops the process with the variable named.
  const allowFromEnv = env('MEGURI_ALLOW_ADDRESS')?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  for (const range of allowFromEnv) {
    try {
      parseCidr(range);
    } catch (err) {
      throw new ConfigError(`MEGURI_ALLOW_ADDRESS: ${(err as Error).message}`);
    }
  }
  const logger = createLogger({ name: `meguri-${name}`, level: config.logLevel });
  const transport = await createTransport({ transport: config.transport, kafkaBrokers: config.kafkaBrokers, dataDir: config.dataDir, clientId: `meguri-${name}-${config.instanceId}`, logger });
  const userAgent = (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT') ?? defaultUserAgent((flags.contact as string | undefined) ?? env('MEGURI_CONTACT_URL'));
  const resolve = [...((flags.resolve as string[] | undefined) ?? []), ...(env('MEGURI_RESOLVE')?.split(',') ?? [])];
  const dns = ((flags.dns as string | undefined) ?? env('MEGURI_DNS') ?? 'system') as 'static' | 'system';
  const allowAddresses = [...((flags.allowAddress as string[] | undefined) ?? []), ...allowFromEnv];
  const common = { transport, dataDir: config.dataDir, topicPrefix: config.topicPrefix, partitions: config.partitions, memberName: config.instanceId, logger };
  let service: StreamService<unknown>;
  let closeExtra = async (): Promise<void> => {};
  const file = name === 'parser' ? {} : readSchedulerConfig((flags.schedulerConfig as string | undefined) ?? env('MEGURI_SCHEDULER_CONFIG'));
  const maxPerIp = maxPerIpSetting(flags, file);
  if (name === 'scheduler') {
    // Precedence: flags, then MEGURI_* variables, then the settings file, then defaults.
    const explicitAgent = (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT');
    service = new StreamService(
      schedulerService({
        ...file,
        userAgent: explicitAgent ?? file.userAgent ?? userAgent,
        ...(flags.minInterval !== undefined ? { minIntervalMs: Math.round((flags.minInterval as number) * 1000) } : env('MEGURI_MIN_INTERVAL_MS') ? { minIntervalMs: Number(env('MEGURI_MIN_INTERVAL_MS')) } : {}),
        ...(flags.maxDepth !== undefined ? { maxDepth: flags.maxDepth as number } : {}),
        ...(maxPerIp !== undefined ? { politeness: { ...file.politeness, maxPerIp } } : {}),
        // Fetchers run as separate processes here: learn each host's IP before its first request so
        // the per-IP cap sees every request (a settings file may turn it off).
        learnAddressFirst: file.learnAddressFirst ?? true,
      }),
      common,
    ) as StreamService<unknown>;
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
    const definition = parserService({ workers: Number(env('MEGURI_PARSER_WORKERS') ?? 0), ...(stripParams !== undefined ? { stripParams: paramFilter(stripParams) } : {}) });
    service = new StreamService(definition, common) as StreamService<unknown>;
    closeExtra = () => definition.close();
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
