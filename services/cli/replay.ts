/**
 * `meguri replay <topic>`: re-reads a stretch of a topic (all of it, or from --since to --until) into
 * an analysis, without disturbing the crawl:
 *
 *   records  every record with its position (partition, offset, timestamp, key) as JSON lines;
 *   parse    the current parser run again over stored `pages` records: what today's extraction
 *            makes of old fetches (links, title, hashes), with no request sent to any server;
 *   summary  one JSON object: counts per partition, time range, bytes, and the topic's main field.
 *
 * With `--group G` it instead moves consumer group G's committed offsets to the start of the stretch,
 * so a downstream consumer in that group re-reads from there when it next starts (the group must
 * have no running members, as with Kafka's own offset reset).
 */
import type { LogRecord } from '../runtime/index.ts';
import { stretchOf } from '../common/offset-range.ts';
import { readValue } from './record-json.ts';
import { pageToRecords } from '../parser/outcome.ts';
import { openLog } from './log-location.ts';
import type { LogLocation } from './log-location.ts';
import { parseTime } from './tail.ts';
import { replayAnalyses } from './replay-analyses.ts';
import type { ReplayAnalysis } from './replay-analyses.ts';

export { replayAnalyses };
export type { ReplayAnalysis };

export interface ReplayFlags extends LogLocation {
  /** ISO time or epoch ms: the first record at or after it (default: the beginning). */
  since?: string;
  /** ISO time or epoch ms: stop before the first record at or after it (default: the end as of now). */
  until?: string;
  into?: ReplayAnalysis;
  /** Reset this consumer group to the start of the stretch instead of reading it. */
  group?: string;
  limit?: number;
}

export interface ReplayReport {
  /** Records read (or, with --group, partitions reset). */
  records: number;
  /** Records the analysis could not use (not JSON, or not a valid pages record for `parse`). */
  invalid: number;
}

/** The main field of each topic's records, counted by `summary`. */
const SUMMARY_FIELD: Record<string, string> = {
  frontier: 'reason',
  pages: 'status',
  links: 'type',
  revisits: 'result',
  changes: 'kind',
  deadletter: 'code',
};

/**
 * Counts per key for the busiest keys, in bounded memory: past `capacity` distinct keys, keys seen
 * only rarely are dropped (lossy counting), so a topic keyed by URL with millions of keys still fits.
 * Counts are then lower bounds and `exact` is false.
 */
export class KeyCounter {
  private readonly counts = new Map<string, number>();
  private floor = 0;
  exact = true;

  constructor(private readonly capacity = 200_000) {}

  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    while (this.counts.size > this.capacity) {
      this.floor++;
      this.exact = false;
      for (const [k, n] of this.counts) if (n <= this.floor) this.counts.delete(k);
    }
  }

  top(n: number): { key: string; records: number }[] {
    return [...this.counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, n)
      .map(([key, records]) => ({ key, records }));
  }
}

function valueOf(logical: string, r: LogRecord): ReturnType<typeof readValue> {
  return r.value ? readValue(logical, r.value) : { ok: true, value: null };
}

/** Runs the replay; lines go to `out`, problems with single records to `warn`. */
export async function replayCommand(logical: string, flags: ReplayFlags, out: (line: string) => void, warn: (line: string) => void = () => {}): Promise<ReplayReport> {
  const into = flags.into ?? 'records';
  if (!replayAnalyses.includes(into)) throw new Error(`--into must be one of ${replayAnalyses.join(', ')}; got ${String(into)}`);
  if (into === 'parse' && logical !== 'pages') throw new Error('--into parse reads stored pages: use it with the pages topic');
  const since = flags.since !== undefined ? parseTime(flags.since, '--since') : undefined;
  const until = flags.until !== undefined ? parseTime(flags.until, '--until') : undefined;
  if (since !== undefined && until !== undefined && until <= since) throw new Error('--until must be later than --since');
  const transport = await openLog(flags, { existing: true });
  try {
    const topic = `${flags.topicPrefix}${logical}`;
    const stretches = await stretchOf(transport, topic, since, until);

    if (flags.group !== undefined) {
      const offsets = stretches.map((s) => ({ topic, partition: s.partition, offset: s.from }));
      await transport.setCommittedOffsets(flags.group, offsets);
      for (const o of offsets) out(JSON.stringify({ group: flags.group, topic, partition: o.partition, offset: o.offset }));
      return { records: offsets.length, invalid: 0 };
    }

    const limit = flags.limit ?? Infinity;
    let read = 0;
    let invalid = 0;
    const summary = {
      topic,
      records: 0,
      bytes: 0,
      firstTimestamp: null as number | null,
      lastTimestamp: null as number | null,
      partitions: {} as Record<string, { from: number; to: number; records: number }>,
      field: SUMMARY_FIELD[logical] ?? null,
      byField: {} as Record<string, number>,
      topKeys: new KeyCounter(),
    };
    outer: for (const s of stretches) {
      summary.partitions[String(s.partition)] = { from: s.from, to: s.to, records: 0 };
      if (s.from >= s.to) continue;
      for await (const batch of transport.readPartition(topic, s.partition, s.from, s.to)) {
        for (const r of batch) {
          if (read >= limit) break outer;
          read++;
          const decoded = valueOf(logical, r);
          if (!decoded.ok) {
            invalid++;
            warn(`${topic}/${r.partition}@${r.offset}: ${decoded.reason}`);
            continue;
          }
          const value = decoded.value;
          if (into === 'records') {
            out(JSON.stringify({ partition: r.partition, offset: r.offset, timestamp: r.timestamp, key: r.key, value }));
          } else if (into === 'parse') {
            if (decoded.page === undefined) {
              invalid++;
              warn(`${topic}/${r.partition}@${r.offset}: not a pages record`);
              continue;
            }
            const { outcome, links } = pageToRecords(decoded.page, { topic, partition: r.partition, offset: String(r.offset) });
            out(
              JSON.stringify({
                url: outcome.url,
                reason: outcome.reason,
                fetchedAt: outcome.fetchedAt,
                status: outcome.status,
                result: outcome.result,
                ...(outcome.title !== undefined ? { title: outcome.title } : {}),
                ...(outcome.md5 !== undefined ? { md5: outcome.md5 } : {}),
                ...(outcome.fingerprint !== undefined ? { fingerprint: outcome.fingerprint } : {}),
                ...(outcome.noindex !== undefined ? { noindex: outcome.noindex } : {}),
                outDegree: outcome.outDegree,
                links: links.map((l) => l.url),
                page: outcome.page,
              }),
            );
          } else {
            const ps = summary.partitions[String(s.partition)]!;
            ps.records++;
            summary.records++;
            summary.bytes += r.value?.length ?? 0;
            summary.firstTimestamp = summary.firstTimestamp === null ? r.timestamp : Math.min(summary.firstTimestamp, r.timestamp);
            summary.lastTimestamp = summary.lastTimestamp === null ? r.timestamp : Math.max(summary.lastTimestamp, r.timestamp);
            if (summary.field !== null && value !== null && typeof value === 'object') {
              const v = (value as Record<string, unknown>)[summary.field];
              const label = v === undefined ? '(none)' : String(v);
              summary.byField[label] = (summary.byField[label] ?? 0) + 1;
            }
            if (r.key !== null) summary.topKeys.add(r.key);
          }
        }
      }
    }
    if (into === 'summary') {
      const { topKeys, ...rest } = summary;
      out(
        JSON.stringify({
          ...rest,
          firstTime: rest.firstTimestamp === null ? null : new Date(rest.firstTimestamp).toISOString(),
          lastTime: rest.lastTimestamp === null ? null : new Date(rest.lastTimestamp).toISOString(),
          invalid,
          topKeys: topKeys.top(20),
          topKeysExact: topKeys.exact,
        }),
      );
    }
    return { records: read, invalid };
  } finally {
    await transport.close();
  }
}
