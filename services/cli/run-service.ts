/**
 * `meguri run <service>`: one service against Kafka, as a pod runs it — health/metrics server,
 * JSON logs on stdout, graceful SIGTERM.
 */
import { StreamService, createLogger, createTransport, loadRuntimeConfig, onShutdownSignal, startHealthServer } from '../runtime/index.ts';
import { schedulerService } from '../scheduler/service.ts';
import { readSchedulerConfig } from './scheduler-config.ts';
import { fetcherService } from '../fetcher/service.ts';
import { parserService } from '../parser/service.ts';
import { createResolver } from '../fetcher/dns.ts';
import { defaultUserAgent } from '../fetcher/fetch.ts';
import { crawlCatalog } from '../../topology/catalog.ts';

/** An environment variable, with an empty value meaning unset (a ConfigMap key left blank). */
function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}

export async function runServiceCommand(name: 'scheduler' | 'fetcher' | 'parser', flags: Record<string, unknown>): Promise<void> {
  const config = loadRuntimeConfig({
    ...(flags.kafka ? { kafkaBrokers: flags.kafka, transport: 'kafka' } : {}),
    ...(flags.data ? { dataDir: flags.data } : {}),
    ...(flags.topicPrefix !== undefined ? { topicPrefix: flags.topicPrefix } : {}),
    ...(flags.httpPort !== undefined ? { httpPort: flags.httpPort } : { httpPort: env('MEGURI_HTTP_PORT') ?? 9464 }),
  });
  const logger = createLogger({ name: `meguri-${name}`, level: config.logLevel });
  const transport = await createTransport({ transport: config.transport, kafkaBrokers: config.kafkaBrokers, dataDir: config.dataDir, clientId: `meguri-${name}-${config.instanceId}`, logger });
  const userAgent = (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT') ?? defaultUserAgent((flags.contact as string | undefined) ?? env('MEGURI_CONTACT_URL'));
  const resolve = [...((flags.resolve as string[] | undefined) ?? []), ...(env('MEGURI_RESOLVE')?.split(',') ?? [])];
  const dns = ((flags.dns as string | undefined) ?? env('MEGURI_DNS') ?? 'system') as 'static' | 'system';
  // A service stopped by a fatal error (e.g. its consumer crashed for good) ends the process with a
  // non-zero code, so the orchestrator restarts it; nothing stays up doing nothing.
  const onFatal = (): void => {
    setTimeout(() => process.exit(70), 10_000).unref();
    void transport.close().finally(() => process.exit(70));
  };
  const common = { transport, catalog: crawlCatalog, dataDir: config.dataDir, topicPrefix: config.topicPrefix, partitions: config.partitions, memberName: config.instanceId, logger, onFatal };
  let service: StreamService<unknown>;
  let closeExtra = async (): Promise<void> => {};
  if (name === 'scheduler') {
    // Precedence: flags, then MEGURI_* variables, then the settings file, then defaults.
    const file = readSchedulerConfig((flags.schedulerConfig as string | undefined) ?? env('MEGURI_SCHEDULER_CONFIG'));
    const explicitAgent = (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT');
    service = new StreamService(
      schedulerService({
        ...file,
        userAgent: explicitAgent ?? file.userAgent ?? userAgent,
        ...(flags.minInterval !== undefined ? { minIntervalMs: Math.round((flags.minInterval as number) * 1000) } : env('MEGURI_MIN_INTERVAL_MS') ? { minIntervalMs: Number(env('MEGURI_MIN_INTERVAL_MS')) } : {}),
        ...(flags.maxDepth !== undefined ? { maxDepth: flags.maxDepth as number } : {}),
      }),
      common,
    ) as StreamService<unknown>;
  } else if (name === 'fetcher') {
    const definition = fetcherService({ userAgent, resolver: createResolver({ mode: dns, resolve }) });
    service = new StreamService(definition, common) as StreamService<unknown>;
    closeExtra = () => definition.fetcher.close();
  } else {
    const definition = parserService({ workers: Number(env('MEGURI_PARSER_WORKERS') ?? 0) });
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
