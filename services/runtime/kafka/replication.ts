/**
 * Replication of the topics the Kafka transport creates: checked against the cluster before any
 * topic is made, so a production crawl never ends up on topics with fewer copies than it asked for.
 */

export interface TopicReplication {
  /** Copies of each partition. */
  readonly factor: number;
  /** Copies that must have a write before it is acknowledged (producers send with acks=all). */
  readonly minInsyncReplicas: number;
}

/** A clear message for a replication setting that cannot work; undefined when it is valid. */
export function replicationProblem(r: TopicReplication): string | undefined {
  if (!Number.isInteger(r.factor) || r.factor < 1) return `replication factor must be an integer ≥ 1; got ${r.factor}`;
  if (!Number.isInteger(r.minInsyncReplicas) || r.minInsyncReplicas < 1) return `min.insync.replicas must be an integer ≥ 1; got ${r.minInsyncReplicas}`;
  if (r.minInsyncReplicas > r.factor) {
    return `min.insync.replicas ${r.minInsyncReplicas} is above the replication factor ${r.factor}: every write would fail with NOT_ENOUGH_REPLICAS`;
  }
  return undefined;
}

export class ReplicationError extends Error {
  override readonly name = 'ReplicationError';
  readonly code = 'MEGURI_ERR_REPLICATION';
}

/**
 * The replication to create topics with on a cluster of `brokers` brokers. A factor above the broker
 * count is an error, unless `capToBrokers` (the one-process `meguri crawl --kafka` on its defaults):
 * then the factor is lowered to the broker count and min.insync.replicas to one below it (at least
 * 1), and `capped` says so, for a warning.
 */
export function replicationForCluster(
  wanted: TopicReplication,
  brokers: number,
  options: { capToBrokers?: boolean } = {},
): { replication: TopicReplication; capped: boolean } {
  const problem = replicationProblem(wanted);
  if (problem) throw new ReplicationError(problem);
  if (wanted.factor <= brokers) return { replication: wanted, capped: false };
  if (!options.capToBrokers || brokers < 1) {
    const factor = Math.max(1, brokers);
    throw new ReplicationError(
      `replication factor ${wanted.factor} needs at least ${wanted.factor} brokers, but the cluster has ${brokers}: ` +
        `pass --replication-factor ${factor} --min-insync-replicas ${Math.max(1, Math.min(wanted.minInsyncReplicas, factor - 1))} ` +
        `(or set MEGURI_REPLICATION_FACTOR and MEGURI_MIN_INSYNC_REPLICAS), or add brokers`,
    );
  }
  return { replication: { factor: brokers, minInsyncReplicas: Math.max(1, Math.min(wanted.minInsyncReplicas, brokers - 1)) }, capped: true };
}
