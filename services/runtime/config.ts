/**
 * The runtime's configuration: one strict zod schema, each field with its environment variable,
 * unit in its name and default. Bad values fail at start with the field named — never a silent
 * fallback. `describeConfig()` feeds the configuration table of docs/configuration.md.
 */
import { z } from 'zod';
import { hostname } from 'node:os';

const csv = z.preprocess((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v), z.array(z.string().min(1)));
const int = (min: number, max = Number.MAX_SAFE_INTEGER): z.ZodType<number> =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number().int().min(min).max(max)) as z.ZodType<number>;

const bool = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const t = v.trim().toLowerCase();
  return ['true', '1', 'yes'].includes(t) ? true : ['false', '0', 'no'].includes(t) ? false : v;
}, z.boolean());

export const runtimeConfigSchema = z.strictObject({
  transport: z.enum(['embedded', 'kafka']).describe('Where topics live: the embedded RocksDB log or Apache Kafka.'),
  kafkaBrokers: csv.default([]).describe('Kafka bootstrap servers, comma-separated (host:port).'),
  dataDir: z.string().min(1).default('.data').describe('Directory for the embedded log and the per-partition state stores.'),
  topicPrefix: z.string().regex(/^[A-Za-z0-9._-]*$/).default('').describe('Prefix of every topic name, e.g. "crawl.".'),
  partitions: int(1, 1024).default(8).describe('Partitions of the data topics when this process creates them.'),
  httpPort: int(-1, 65535).default(-1).describe('Port of /healthz, /readyz and /metrics; -1 disables, 0 picks a free port.'),
  httpHost: z.string().default('127.0.0.1').describe('Address the health/metrics server binds to (0.0.0.0 in pods).'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level.'),
  instanceId: z.string().min(1).default(hostname()).describe('Stable member name (the pod name in Kubernetes).'),
  staticMembership: bool.default(false).describe('Kafka: join consumer groups as a static member (group.instance.id = the instance id): a process restarted within the session timeout gets its partitions back with no rebalance, and a stop does not leave the group. Every instance id must be unique per service (the pod name of a StatefulSet).'),
  shutdownTimeoutMs: int(0).default(30000).describe('Graceful shutdown budget after SIGTERM before exiting anyway.'),
  createTopics: bool.default(false).describe('`meguri run`: create missing topics at start (else a missing topic stops the service; create them with `meguri topics create`).'),
  replicationFactor: int(1, 32).optional().describe('Replication factor of topics this process creates on Kafka (default 3; `meguri crawl --kafka`: 3, lowered to the broker count).'),
  minInsyncReplicas: int(1, 32).optional().describe('min.insync.replicas of topics this process creates on Kafka (default 2, at most the replication factor).'),
  fsync: bool.default(false).describe('Embedded log: fsync every commit (durable across power loss, not just a killed process).'),
  commitIntervalMs: int(0, 600_000).default(0).describe('Fetcher: its consumed offsets are committed at most this often (0: after every 20 ms flush of its pages; a clean stop commits at once). On Kafka each commit is a request to the broker (500 ms: +5 % pages/s on one machine), but after a crash the next owner fetches again up to this long of pages, not only the requests that were out.'),
  transactionIntervalMs: int(0, 60_000).default(0).describe('Kafka, exactly-once services (scheduler, parser): a partition\'s next batch starts no sooner than this after its previous one started, so what arrives meanwhile goes in one transaction (as Kafka Streams\' commit.interval.ms); fewer broker requests and changelog records, for up to this much more latency. 0: a batch starts as soon as the previous one committed.'),
  kafkaGzipLevel: int(1, 9).default(1).describe('Kafka: gzip level (1–9) of what this process sends to topics with `compression.type=gzip` (none by default; `pages` where servers do not compress); 1 costs about a quarter of the CPU of zlib\'s default 6 for ~15 % more bytes; consumers read any level.'),
});

export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;

/** Environment variable of each field. */
export const runtimeConfigEnv: Record<keyof RuntimeConfig, string> = {
  transport: 'MEGURI_TRANSPORT',
  kafkaBrokers: 'MEGURI_KAFKA_BROKERS',
  dataDir: 'MEGURI_DATA_DIR',
  topicPrefix: 'MEGURI_TOPIC_PREFIX',
  partitions: 'MEGURI_PARTITIONS',
  httpPort: 'MEGURI_HTTP_PORT',
  httpHost: 'MEGURI_HTTP_HOST',
  logLevel: 'MEGURI_LOG_LEVEL',
  instanceId: 'MEGURI_INSTANCE_ID',
  staticMembership: 'MEGURI_STATIC_MEMBERSHIP',
  shutdownTimeoutMs: 'MEGURI_SHUTDOWN_TIMEOUT_MS',
  createTopics: 'MEGURI_CREATE_TOPICS',
  replicationFactor: 'MEGURI_REPLICATION_FACTOR',
  minInsyncReplicas: 'MEGURI_MIN_INSYNC_REPLICAS',
  fsync: 'MEGURI_FSYNC',
  commitIntervalMs: 'MEGURI_COMMIT_INTERVAL_MS',
  transactionIntervalMs: 'MEGURI_TRANSACTION_INTERVAL_MS',
  kafkaGzipLevel: 'MEGURI_KAFKA_GZIP_LEVEL',
};

export class ConfigError extends Error {
  readonly code = 'MEGURI_ERR_CONFIG';
}

/**
 * Builds the config from environment variables overlaid by explicit values (CLI flags win).
 * The transport defaults to kafka when brokers are given, else embedded.
 */
export function loadRuntimeConfig(overrides: Partial<Record<keyof RuntimeConfig, unknown>> = {}, env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const raw: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(runtimeConfigEnv)) {
    const v = env[name];
    if (v !== undefined && v !== '') raw[field] = v;
  }
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) raw[k] = v;
  if (raw.kafkaBrokers === undefined && env.KAFKA_BROKERS) raw.kafkaBrokers = env.KAFKA_BROKERS;
  if (raw.transport === undefined) {
    const brokers = raw.kafkaBrokers;
    raw.transport = (typeof brokers === 'string' && brokers) || (Array.isArray(brokers) && brokers.length > 0) ? 'kafka' : 'embedded';
  }
  const parsed = runtimeConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const field = String(i.path[0] ?? '');
      const envName = runtimeConfigEnv[field as keyof RuntimeConfig];
      return `  ${field}${envName ? ` (${envName})` : ''}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.transport === 'kafka' && parsed.data.kafkaBrokers.length === 0) {
    throw new ConfigError('invalid configuration:\n  kafkaBrokers (MEGURI_KAFKA_BROKERS): required when transport is kafka');
  }
  return parsed.data;
}

/** Rows for the docs: field, env var, default, description. */
export function describeConfig(): { field: string; env: string; description: string }[] {
  return Object.entries(runtimeConfigSchema.shape).map(([field, schema]) => ({
    field,
    env: runtimeConfigEnv[field as keyof RuntimeConfig],
    description: (schema as z.ZodType).description ?? '',
  }));
}
