/**
 * The live view wired to a crawl: `meguri crawl --ui [PORT]` (in-process, on the crawl's own
 * transport) and `meguri run dashboard` (a pod reading the topics).
 */
import { randomUUID } from 'node:crypto';
import { ConfigError, createLogger, createTransport, loadRuntimeConfig, onShutdownSignal } from '../runtime/index.ts';
import type { Transport } from '../runtime/index.ts';
import { LiveState } from '../dashboard/live-state.ts';
import { followCrawl } from '../dashboard/follow.ts';
import { startDashboard } from '../dashboard/server.ts';
import type { DashboardServer } from '../dashboard/server.ts';
import { databaseLookup, parseTableEntry, tableLookup } from '../common/country.ts';

/** Countries the demo places its loopback addresses in (the simulated web has no real addresses). */
export const DEMO_COUNTRIES = ['JP', 'US', 'DE', 'BR', 'AU', 'IN', 'ZA', 'FR'] as const;

export function demoCountryTable(ips: readonly string[]): string[] {
  return ips.map((ip, i) => `${ip}=${DEMO_COUNTRIES[i % DEMO_COUNTRIES.length]!}`);
}

export interface LiveViewOptions {
  port: number;
  host?: string;
  /** RANGE=CC entries placed before the packaged database. */
  country?: readonly string[];
  title?: string;
  onListening?: (server: DashboardServer) => void;
}

/** Follows the crawl's topics on `transport` and serves the page; returns the function that stops both. */
export async function startLiveView(transport: Transport, topicPrefix: string, o: LiveViewOptions): Promise<() => Promise<void>> {
  const state = new LiveState(tableLookup((o.country ?? []).map(parseTableEntry), databaseLookup()));
  const follower = await followCrawl(transport, { topicPrefix, state, groupId: `${topicPrefix}meguri-dashboard-${randomUUID()}` });
  const server = await startDashboard(state, { port: o.port, ...(o.host !== undefined ? { host: o.host } : {}), ...(o.title !== undefined ? { title: o.title } : {}) });
  o.onListening?.(server);
  return async () => {
    await server.close();
    await follower.stop();
  };
}

/** `meguri run dashboard`: the live view of a crawl on Kafka (or an embedded log no crawl holds), until SIGTERM. */
export async function runDashboardCommand(flags: Record<string, unknown>): Promise<void> {
  const config = loadRuntimeConfig({
    // --data without --kafka: an embedded crawl's log, whatever the environment names.
    ...(flags.kafka ? { kafkaBrokers: flags.kafka, transport: 'kafka' } : flags.data ? { transport: 'embedded' } : {}),
    ...(flags.data ? { dataDir: flags.data } : {}),
    ...(flags.topicPrefix !== undefined ? { topicPrefix: flags.topicPrefix } : {}),
  });
  const envPort = process.env.MEGURI_DASHBOARD_PORT;
  const port = (flags.port as number | undefined) ?? (envPort ? Number(envPort) : 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`invalid configuration:\n  MEGURI_DASHBOARD_PORT: must be a port number, got ${JSON.stringify(envPort)}`);
  const host = (flags.host as string | undefined) ?? (process.env.MEGURI_DASHBOARD_HOST || '127.0.0.1');
  const logger = createLogger({ name: 'meguri-dashboard', level: config.logLevel });
  const transport = await createTransport({ transport: config.transport, kafkaBrokers: config.kafkaBrokers, dataDir: config.dataDir, clientId: `meguri-dashboard-${config.instanceId}`, logger });
  const stop = await startLiveView(transport, config.topicPrefix, {
    port,
    host,
    country: (flags.country as string[] | undefined) ?? [],
    onListening: (s) => logger.info({ url: s.url }, 'live view'),
  });
  onShutdownSignal(
    async () => {
      await stop();
      await transport.close();
    },
    logger,
    config.shutdownTimeoutMs,
  );
}
