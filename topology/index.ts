/**
 * The topology: every topic, its key, schema and retention, and which service reads and writes it.
 * Single source of truth for `meguri topics create|describe`, the k8s manifests and the docs.
 */
import type { SchemaName } from '../schemas/index.ts';

export type CleanupPolicy = 'delete' | 'compact';
/**
 * Broker-side compression. 'producer' keeps what the producer sent: kafkajs decodes only gzip
 * natively, so a broker that recompresses to lz4/zstd would make topics unreadable to it. A topic
 * set to 'gzip' is also sent gzip-compressed by meguri's producers (docs/benchmarks.md, compression).
 */
export type Compression = 'producer' | 'gzip';

export interface TopicSpec {
  /** Logical name; the physical name is `prefix + name`. */
  readonly name: string;
  readonly schema: SchemaName | 'changelog';
  readonly partitions: number;
  readonly key: string;
  readonly cleanupPolicy: CleanupPolicy;
  /** -1 = keep forever. */
  readonly retentionMs: number;
  readonly compression: Compression;
  readonly description: string;
}

export interface StoreSpec {
  readonly name: string;
  /** Changelog on unless disabled: without it a moved partition loses its state. */
  readonly changelog: boolean;
  readonly description: string;
}

export interface ServiceSpec {
  readonly name: 'scheduler' | 'fetcher' | 'parser';
  readonly stateful: boolean;
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  readonly stores: readonly StoreSpec[];
  readonly guarantee: 'exactly-once' | 'at-least-once';
  readonly description: string;
}

const DAY = 24 * 60 * 60 * 1000;
export const DEFAULT_PARTITIONS = 8;

export const topics: readonly TopicSpec[] = [
  {
    name: 'frontier',
    schema: 'frontier',
    partitions: DEFAULT_PARTITIONS,
    key: 'host (or the host IP once known, so one fetcher owns each IP)',
    cleanupPolicy: 'delete',
    retentionMs: 1 * DAY,
    compression: 'producer',
    description: 'Fetch requests from the scheduler to the fetchers.',
  },
  {
    name: 'pages',
    schema: 'pages',
    partitions: DEFAULT_PARTITIONS,
    key: 'host',
    cleanupPolicy: 'delete',
    retentionMs: 30 * DAY,
    // Not compressed again: most bodies are stored as the server compressed them (the fetcher's
    // keepCompressed), and gzip over brotli costs the fetcher, the broker (it decompresses a batch to
    // validate it) and the parser's consumer CPU for nothing (docs/benchmarks.md, "Pages stored as
    // the server compressed them"). Set compression.type=gzip on the topic where servers do not compress.
    compression: 'producer',
    description: 'Fetched pages (body size-capped) with status, headers and timing; replayable for reanalysis.',
  },
  {
    name: 'links',
    schema: 'links',
    partitions: DEFAULT_PARTITIONS,
    key: 'target host (discovered links) / own host (outcomes, seeds)',
    cleanupPolicy: 'delete',
    retentionMs: 7 * DAY,
    compression: 'producer',
    description: 'Seeds, discovered links and fetch outcomes: everything the scheduler learns.',
  },
  {
    name: 'revisits',
    schema: 'revisits',
    partitions: DEFAULT_PARTITIONS,
    key: 'URL',
    cleanupPolicy: 'delete',
    retentionMs: 90 * DAY,
    compression: 'producer',
    description: 'One event per re-visit of a known page: result, hashes, estimated change interval, next visit.',
  },
  {
    name: 'changes',
    schema: 'changes',
    partitions: DEFAULT_PARTITIONS,
    key: 'URL',
    cleanupPolicy: 'delete',
    retentionMs: 90 * DAY,
    compression: 'producer',
    description: 'New, changed and gone pages for subscribers, each pointing at its `pages` record.',
  },
  {
    name: 'servers',
    schema: 'servers',
    partitions: DEFAULT_PARTITIONS,
    key: 'host',
    cleanupPolicy: 'delete',
    retentionMs: 90 * DAY,
    compression: 'producer',
    description: 'Servers (hosts) found by a discovery crawl (Hoshino et al.): each host once, with the first URL seen, its start site and depth.',
  },
  {
    name: 'deadletter',
    schema: 'deadletter',
    partitions: 1,
    key: 'original key',
    cleanupPolicy: 'delete',
    retentionMs: 30 * DAY,
    compression: 'producer',
    description: 'Records a service could not accept, with the reason and their origin.',
  },
];

export const services: readonly ServiceSpec[] = [
  {
    name: 'scheduler',
    stateful: true,
    reads: ['links'],
    // links: score passed on from fetched pages to other partitions (IPR VR/AR cut-offs)
    // servers: hosts found by a discovery crawl (Hoshino et al.)
    writes: ['frontier', 'links', 'revisits', 'changes', 'servers', 'deadletter'],
    stores: [
      { name: 'urls', changelog: true, description: 'Per-URL state: seen, depth, score, estimator, hashes, validators.' },
      { name: 'hosts', changelog: true, description: 'Per-host state: robots, politeness clock, in-flight request, load.' },
      { name: 'queues', changelog: true, description: 'Per-host priority queues of URLs to fetch and the revisit index.' },
    ],
    guarantee: 'exactly-once',
    description: 'Owns all crawl state for the hosts of its partitions; decides what to fetch and when.',
  },
  {
    name: 'fetcher',
    stateful: false,
    reads: ['frontier'],
    writes: ['pages', 'deadletter'],
    stores: [],
    guarantee: 'at-least-once',
    description: 'Fetches pages politely over HTTP (keep-alive pools, static/async DNS, caps and time limits).',
  },
  {
    name: 'parser',
    stateful: false,
    reads: ['pages'],
    writes: ['links', 'deadletter'],
    stores: [],
    guarantee: 'at-least-once',
    description: 'Extracts links, hashes and fingerprints from pages; reports each outcome to the scheduler.',
  },
];

export function topicSpec(name: string): TopicSpec {
  const spec = topics.find((t) => t.name === name);
  if (!spec) throw new Error(`unknown topic "${name}"; known: ${topics.map((t) => t.name).join(', ')}`);
  return spec;
}

export function serviceSpec(name: string): ServiceSpec {
  const spec = services.find((s) => s.name === name);
  if (!spec) throw new Error(`unknown service "${name}"; known: ${services.map((s) => s.name).join(', ')}`);
  return spec;
}

/** Kafka Streams' naming: one compacted changelog per (consumer group, store). */
export function changelogTopicName(group: string, store: string): string {
  return `${group}.${store}.changelog`;
}

export function changelogSpec(group: string, store: string, partitions: number): TopicSpec {
  return {
    name: changelogTopicName(group, store),
    schema: 'changelog',
    partitions,
    key: 'store key',
    cleanupPolicy: 'compact',
    retentionMs: -1,
    compression: 'producer',
    description: `Changelog of the ${store} store of ${group}; restores the store when a partition moves.`,
  };
}

/**
 * How many copies of each partition a cluster keeps, and how many must have a write before it is
 * acknowledged (producers send with acks=all). With 3 and 2 one broker can be down without stopping
 * writes or losing an acknowledged record.
 */
export interface Replication {
  readonly factor: number;
  readonly minInsyncReplicas: number;
}

/** What `meguri topics create`, `meguri run` (with MEGURI_CREATE_TOPICS=true) and the Strimzi KafkaTopics use. */
export const CLUSTER_REPLICATION: Replication = { factor: 3, minInsyncReplicas: 2 };
/** A single broker (deploy/local, the tests): one copy. */
export const SINGLE_BROKER_REPLICATION: Replication = { factor: 1, minInsyncReplicas: 1 };

/**
 * Kafka topic configs for a spec (what `meguri topics create` and the Strimzi KafkaTopics set);
 * with a replication, its `min.insync.replicas` too.
 */
export function kafkaTopicConfig(spec: TopicSpec, replication?: Replication): Record<string, string> {
  const config: Record<string, string> = {
    'cleanup.policy': spec.cleanupPolicy,
    'retention.ms': String(spec.retentionMs),
    'compression.type': spec.compression,
  };
  if (spec.name === 'pages') config['max.message.bytes'] = String(8 * 1024 * 1024);
  if (replication) config['min.insync.replicas'] = String(replication.minInsyncReplicas);
  return config;
}
