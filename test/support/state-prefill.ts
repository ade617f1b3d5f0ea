/**
 * Scheduler state at a realistic size for fault tests: URLs a long crawl would know, written to the
 * scheduler's changelogs before its processes start, so every partition restores them at its first
 * open and again after every fault that moves it. The URLs are fetched pages on hosts of their own
 * (`*.prefill.test`, never resolved), revisits due a year from now: they take state, restore time
 * and RocksDB work like real ones, and make no request during the crawl.
 */
import { partitionForKey } from '../../services/runtime/partitioner.ts';
import type { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import type { OutRecord } from '../../services/runtime/transport.ts';
import { changelogTopicName } from '../../topology/index.ts';
import { emptyStats, packRevisit, revisitKey, STATS_KEY } from '../../services/scheduler/state.ts';
import { encodeHostState, encodeUrlState } from '../../services/scheduler/state-codec.ts';
import type { HostState, UrlState } from '../../services/scheduler/state.ts';
import { initialState } from '../../services/revisit/estimator.ts';
import { emptyPoliteness } from '../../services/scheduler/politeness/index.ts';
import { rulesForFetchResult, toJSON } from '../../services/scheduler/robots/index.ts';

export interface PrefillOptions {
  /** Topic prefix of the crawl (MEGURI_TOPIC_PREFIX). */
  readonly prefix: string;
  readonly partitions: number;
  /** Known URLs per scheduler partition. */
  readonly urlsPerPartition: number;
  /** URLs per prefill host. Default 200. */
  readonly urlsPerHost?: number;
  /** The crawl's clock (ms). Default now. */
  readonly nowMs?: number;
}

export interface PrefillResult {
  readonly records: number;
  readonly bytes: number;
  readonly ms: number;
}

const YEAR_MS = 365 * 86_400_000;
const SEND_CHUNK = 20_000;

/** Host names that the scheduler's partitioner puts on partition `p`. */
function hostsOf(p: number, partitions: number, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const host = `pf${i}.prefill.test`;
    if (partitionForKey(host, partitions) === p) out.push(host);
  }
  return out;
}

/** Writes the state through the transport's plain producer (acks=all), partition by partition. */
export async function prefillSchedulerState(transport: KafkaTransport, o: PrefillOptions): Promise<PrefillResult> {
  const started = Date.now();
  const now = o.nowMs ?? Date.now();
  const perHost = o.urlsPerHost ?? 200;
  const group = `${o.prefix}scheduler`;
  const topic = (store: string): string => changelogTopicName(group, store);
  const robots = toJSON(rulesForFetchResult({ status: 404, nowMs: now, unreachableSinceMs: null }).rules);
  const revisit = packRevisit(initialState(now / 1000 - 30 * 86_400));
  const empty = Buffer.from(JSON.stringify(''), 'utf8');
  let records = 0;
  let bytes = 0;
  let batch: OutRecord[] = [];
  const push = async (r: OutRecord, force = false): Promise<void> => {
    batch.push(r);
    records++;
    bytes += (r.key?.length ?? 0) + (r.value?.length ?? 0);
    if (batch.length >= SEND_CHUNK || force) {
      const out = batch;
      batch = [];
      await transport.send(out);
    }
  };
  for (let p = 0; p < o.partitions; p++) {
    const hosts = hostsOf(p, o.partitions, Math.ceil(o.urlsPerPartition / perHost));
    for (let i = 0; i < o.urlsPerPartition; i++) {
      const host = hosts[i % hosts.length]!;
      const url = `http://${host}/archive/${Math.floor(i / hosts.length) % 50}/item-${i}.html`;
      const due = now + YEAR_MS + (i % 86_400) * 1000;
      const state: UrlState = { status: 'done', depth: 2, cgiHops: 0, score: 1, lastFetchAt: now - 86_400_000, httpStatus: 200, etag: `"${i.toString(16)}"`, estimator: revisit, nextRevisitAt: due, revisitIntervalMs: YEAR_MS };
      await push({ topic: topic('urls'), partition: p, key: url, value: Buffer.from(JSON.stringify(encodeUrlState(state)), 'utf8') });
      await push({ topic: topic('queues'), partition: p, key: revisitKey(due, url), value: empty });
    }
    for (const host of hosts) {
      const state: HostState = { queued: 0, fetched: perHost, nextAt: 0, scheme: 'http', robots, robotsDueAt: now + YEAR_MS, politeness: emptyPoliteness() };
      await push({ topic: topic('hosts'), partition: p, key: host, value: Buffer.from(JSON.stringify(encodeHostState(state)), 'utf8') });
    }
    const stats = { ...emptyStats(), seq: 1, urlsKnown: o.urlsPerPartition, hosts: hosts.length };
    await push({ topic: topic('hosts'), partition: p, key: STATS_KEY, value: Buffer.from(JSON.stringify(stats), 'utf8') }, true);
  }
  return { records, bytes, ms: Date.now() - started };
}
