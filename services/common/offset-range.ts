/**
 * The `--since/--until` of the commands that read a stretch of a topic (analyze, replay, export
 * warc): each partition's offsets between two times, found with the transport's time index.
 */
import type { Transport } from '../runtime/index.ts';

/** Offsets [from, to) of one partition. */
export interface Stretch {
  partition: number;
  from: number;
  to: number;
}

/**
 * The part of each partition of `topic` written at or after `since` and before `until` (epoch ms;
 * either bound left out means that end of the partition as of now).
 */
export async function stretchOf(transport: Transport, topic: string, since?: number, until?: number): Promise<Stretch[]> {
  const described = await transport.describeTopic(topic);
  if (!described) throw new Error(`topic ${topic} does not exist (wrong --data, --kafka or --topic-prefix?)`);
  return Promise.all(
    described.partitions.map(async (p) => {
      const from = since !== undefined ? Math.max(p.low, await transport.offsetForTimestamp(topic, p.partition, since)) : p.low;
      const to = until !== undefined ? Math.min(p.high, await transport.offsetForTimestamp(topic, p.partition, until)) : p.high;
      return { partition: p.partition, from, to: Math.max(from, to) };
    }),
  );
}
