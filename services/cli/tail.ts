/**
 * `meguri tail <topic>`: prints a topic's records as JSON lines, from Kafka or from an embedded
 * crawl's data directory — the quickest way to watch `changes` or `revisits`, or to look at what a
 * crawl produced. With `--with-page`, a `changes` record is printed with the `pages` record its
 * pointer names; with `--diff`, `changes` records are printed for reading, with what changed
 * (change-lines.ts).
 */
import type { Transport } from '../runtime/index.ts';
import { openLog } from './log-location.ts';
import type { LogLocation } from './log-location.ts';
import { readValue } from './record-json.ts';
import { changeLines } from './change-lines.ts';

export interface TailFlags extends LogLocation {
  /** ISO time or epoch ms: start at the first record at or after it (default: the beginning) */
  since?: string;
  follow?: boolean;
  withPage?: boolean;
  /** `changes` only: each record as lines for reading, with its diff */
  diff?: boolean;
  limit?: number;
}

interface Pointer {
  topic: string;
  partition: number;
  offset: string;
}

/** A time given on the command line: ISO 8601 or epoch milliseconds. */
export function parseTime(value: string, flag: string): number {
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(t)) throw new Error(`${flag}: not a time: ${value}`);
  return t;
}

async function readOne(transport: Transport, p: Pointer): Promise<unknown> {
  const offset = Number(p.offset);
  for await (const batch of transport.readPartition(p.topic, p.partition, offset, offset + 1)) {
    for (const r of batch) {
      if (r.offset !== offset || !r.value) continue;
      const read = readValue('pages', r.value);
      return read.ok ? read.value : { unreadable: read.reason };
    }
  }
  return null;
}

/** Prints records until the topic is read (or, with follow, until the signal); returns the count. */
export async function tailCommand(logical: string, flags: TailFlags, out: (line: string) => void, signal?: AbortSignal): Promise<number> {
  const transport = await openLog(flags, { existing: true });
  try {
    const topic = `${flags.topicPrefix}${logical}`;
    if (flags.diff && logical !== 'changes') throw new Error('--diff: only for the changes topic');
    const described = await transport.describeTopic(topic);
    if (!described) throw new Error(`topic ${topic} does not exist (wrong --data, --kafka or --topic-prefix?)`);
    const next = new Map<number, number>();
    const since = flags.since !== undefined ? parseTime(flags.since, '--since') : undefined;
    for (const p of described.partitions) next.set(p.partition, since !== undefined ? await transport.offsetForTimestamp(topic, p.partition, since) : p.low);
    const limit = flags.limit ?? Infinity;
    let printed = 0;
    for (;;) {
      const now = await transport.describeTopic(topic);
      for (const p of now?.partitions ?? []) {
        const from = Math.max(next.get(p.partition) ?? p.low, p.low);
        if (from >= p.high) continue;
        for await (const batch of transport.readPartition(topic, p.partition, from, p.high)) {
          for (const r of batch) {
            next.set(p.partition, r.offset + 1);
            if (!r.value) continue;
            const read = readValue(logical, r.value);
            const value = (read.ok ? read.value : { partition: r.partition, offset: r.offset, unreadable: read.reason }) as Record<string, unknown>;
            const pointer = value.page as Pointer | undefined;
            const record = flags.withPage && pointer ? { ...value, pageRecord: await readOne(transport, pointer) } : value;
            if (flags.diff) for (const line of changeLines(value)) out(line);
            else out(JSON.stringify(record));
            if (++printed >= limit) return printed;
          }
        }
      }
      if (!flags.follow || signal?.aborted) return printed;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (signal?.aborted) return printed;
    }
  } finally {
    await transport.close();
  }
}
