/**
 * Every environment variable meguri reads, as one list: the runtime's (services/runtime/config.ts,
 * with their zod descriptions) and the ones the CLI, the services and the launcher read themselves.
 * docs/configuration.md's table is generated from it (`npm run docs:generate`), and a test fails
 * when a `MEGURI_…` name in the sources is missing here or the table is stale.
 */
import { z } from 'zod';
import { describeConfig, runtimeConfigSchema } from '../runtime/config.ts';
import type { RuntimeConfig } from '../runtime/config.ts';

export interface EnvironmentVariable {
  /** One name, or several read together (shown as one row). */
  readonly names: readonly string[];
  /** The default as the docs show it ('' for none). */
  readonly default: string;
  readonly meaning: string;
}

/** Defaults that are not the zod default's plain value (computed at start, or set by the command). */
const RUNTIME_DEFAULTS: Partial<Record<keyof RuntimeConfig, string>> = {
  transport: '`kafka` if brokers are set, else `embedded`',
  kafkaBrokers: '',
  instanceId: 'host name',
  httpPort: '9464 for `run`, else -1',
  topicPrefix: '`""`',
  replicationFactor: '3',
  minInsyncReplicas: '2',
};

/** Extra names a runtime field is also read under. */
const RUNTIME_ALIASES: Partial<Record<keyof RuntimeConfig, string>> = { kafkaBrokers: 'KAFKA_BROKERS' };

/** What the CLI, the services and the launcher read beside the runtime's configuration. */
export const SERVICE_ENVIRONMENT: readonly EnvironmentVariable[] = [
  { names: ['MEGURI_USER_AGENT', 'MEGURI_CONTACT_URL'], default: '', meaning: 'fetcher: the User-Agent and the contact URL the default one carries (`--user-agent`, `--contact`); set both before crawling anything real' },
  { names: ['MEGURI_DNS', 'MEGURI_RESOLVE'], default: '`system`, none', meaning: 'fetcher: name resolution (`static` or `system`) and the static map `PATTERN=IP,…` (`--dns`, `--resolve`)' },
  { names: ['MEGURI_ALLOW_ADDRESS'], default: 'none', meaning: 'fetcher: `CIDR,…` the address policy lets through (added to `--allow-address`)' },
  { names: ['MEGURI_FETCH_TIMEOUT_S'], default: '30', meaning: 'fetcher: seconds one request may take (`--timeout`)' },
  { names: ['MEGURI_MIN_INTERVAL_MS'], default: '10000', meaning: 'scheduler: minimum per-host interval' },
  { names: ['MEGURI_SCOPE'], default: '`web`', meaning: 'scheduler: crawl scope `host`, `domain` or `web` (`--scope`)' },
  { names: ['MEGURI_HOST_RULES'], default: '', meaning: 'scheduler: per-host rules file (`--host-rules`), watched while it runs' },
  { names: ['MEGURI_ALIAS_FILE'], default: '', meaning: 'scheduler, parser and `meguri seed`: server alias file (`--alias-file`)' },
  { names: ['MEGURI_MAX_PER_IP'], default: '2', meaning: 'scheduler and fetcher: requests in flight per server IP (else `politeness.maxPerIp` of the settings file)' },
  { names: ['MEGURI_SCHEDULER_CONFIG'], default: '', meaning: 'scheduler: JSON settings file (see `meguri config scheduler`); flags and the variables above win' },
  { names: ['MEGURI_PARSER_WORKERS'], default: '0', meaning: 'parser: worker threads that parse pages (0 = on the event loop)' },
  { names: ['MEGURI_LANGUAGES'], default: 'all', meaning: 'parser: language focus, e.g. `ja,en` (`--languages`)' },
  { names: ['MEGURI_MAIN_TEXT'], default: '`revisits`', meaning: 'parser: outcomes on `links` that carry the page\'s main text (`--main-text`): `revisits` (where a change is quoted; the others carry its paragraph hashes) or `all` (a 20,000-page crawl ~22 % slower, ~100 MiB more)' },
  { names: ['MEGURI_WARC_DIR'], default: '', meaning: '`run warc`: directory of the WARC files (`--out`; required)' },
  { names: ['MEGURI_WARC_ROLL_S'], default: '60', meaning: '`run warc`: a file is published at the latest this many seconds after it was opened (`--roll-after`)' },
  { names: ['MEGURI_WARC_MAX_FILE_BYTES'], default: '1000000000', meaning: '`run warc`: a file is closed once it holds this many bytes (`--max-file-bytes`)' },
  { names: ['MEGURI_WARC_GROUP'], default: '`meguri-warc`', meaning: '`run warc`: its consumer group (`--group`)' },
  { names: ['MEGURI_DASHBOARD_PORT', 'MEGURI_DASHBOARD_HOST'], default: '8080, `127.0.0.1`', meaning: '`run dashboard`: port and bind address of the live view (`--port`, `--host`; `0.0.0.0` in a pod)' },
  { names: ['MEGURI_TX_RETRY_MS'], default: '20', meaning: 'Kafka: first back-off (ms) of a transactional send or commit the broker asks to retry (it doubles on each retry)' },
  { names: ['MEGURI_NO_DIST'], default: '', meaning: 'any value: `meguri` runs the TypeScript sources through tsx even when the compiled `dist/` matches them' },
  { names: ['MEGURI_DEBUG'], default: '', meaning: 'any value: errors print their stack, and `meguri` says on stderr whether it runs `dist/` or the sources (and why), with its process id and Node flags' },
];

function plainDefault(schema: z.ZodType): string {
  const parsed = schema.safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return '';
  const value: unknown = parsed.data;
  if (typeof value === 'boolean' || typeof value === 'string') return `\`${String(value)}\``;
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** The runtime's variables, then the others: one row per entry. */
export function environmentVariables(): EnvironmentVariable[] {
  const shape = runtimeConfigSchema.shape as Record<string, z.ZodType>;
  const runtime = describeConfig().map((row): EnvironmentVariable => {
    const field = row.field as keyof RuntimeConfig;
    const alias = RUNTIME_ALIASES[field];
    return { names: alias ? [row.env, alias] : [row.env], default: RUNTIME_DEFAULTS[field] ?? plainDefault(shape[field]!), meaning: row.description };
  });
  return [...runtime, ...SERVICE_ENVIRONMENT];
}

/** The markdown table of docs/configuration.md. */
export function environmentTable(): string[] {
  const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    '| variable | default | meaning |',
    '|---|---|---|',
    ...environmentVariables().map((v) => `| ${v.names.map((n) => `\`${n}\``).join(', ')} | ${cell(v.default)} | ${cell(v.meaning)} |`),
  ];
}
