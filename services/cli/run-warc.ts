/**
 * `meguri run warc`: the WARC sink as a pod runs it — its own consumer group on `pages`, health and
 * metrics server, JSON logs, graceful SIGTERM (open files are published and committed on the way out).
 */
import { ConfigError, createLogger, createTransport, loadRuntimeConfig, onShutdownSignal, startHealthServer } from '../runtime/index.ts';
import { WarcSink, DEFAULT_WARC_GROUP } from '../warc/sink.ts';
import { requireTopics } from './run-service.ts';

function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}

function positive(name: string, raw: string | number | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`invalid configuration:\n  ${name}: must be a number > 0, got ${JSON.stringify(raw)}`);
  return n;
}

export async function runWarcSinkCommand(flags: Record<string, unknown>): Promise<void> {
  const config = loadRuntimeConfig({
    ...(flags.kafka ? { kafkaBrokers: flags.kafka, transport: 'kafka' } : {}),
    ...(flags.data ? { dataDir: flags.data } : {}),
    ...(flags.topicPrefix !== undefined ? { topicPrefix: flags.topicPrefix } : {}),
    ...(flags.httpPort !== undefined ? { httpPort: flags.httpPort } : { httpPort: env('MEGURI_HTTP_PORT') ?? 9464 }),
  });
  const outDir = (flags.out as string | undefined) ?? env('MEGURI_WARC_DIR');
  if (outDir === undefined) throw new ConfigError('invalid configuration:\n  --out / MEGURI_WARC_DIR: the directory for WARC files is required');
  const maxFileBytes = positive('MEGURI_WARC_MAX_FILE_BYTES', (flags.maxFileBytes as number | undefined) ?? env('MEGURI_WARC_MAX_FILE_BYTES'));
  const rollAfterS = positive('MEGURI_WARC_ROLL_S', (flags.rollAfter as number | undefined) ?? env('MEGURI_WARC_ROLL_S'));
  const logger = createLogger({ name: 'meguri-warc', level: config.logLevel });
  const transport = await createTransport({ transport: config.transport, kafkaBrokers: config.kafkaBrokers, dataDir: config.dataDir, clientId: `meguri-warc-${config.instanceId}`, logger });
  try {
    await requireTopics(transport, [`${config.topicPrefix}pages`], config.topicPrefix, config.partitions);
  } catch (err) {
    await transport.close();
    throw err;
  }
  const sink = new WarcSink({
    transport,
    topicPrefix: config.topicPrefix,
    outDir,
    stateDir: config.dataDir,
    groupId: (flags.group as string | undefined) ?? env('MEGURI_WARC_GROUP') ?? DEFAULT_WARC_GROUP,
    memberName: config.instanceId,
    ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
    ...(rollAfterS !== undefined ? { rollAfterMs: rollAfterS * 1000 } : {}),
    ...((flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT') ? { userAgent: (flags.userAgent as string | undefined) ?? env('MEGURI_USER_AGENT')! } : {}),
    logger,
  });
  const health = config.httpPort >= 0 ? await startHealthServer([sink], config.httpPort, config.httpHost, logger) : undefined;
  onShutdownSignal(
    async () => {
      await sink.stop();
      await transport.close();
      await health?.close();
    },
    logger,
    config.shutdownTimeoutMs,
  );
  await sink.start();
  logger.info({ service: 'warc', outDir, httpPort: health?.port }, 'running');
}
