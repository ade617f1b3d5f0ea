/**
 * Both transports for contract tests: every pipeline test runs once on the embedded log and once on
 * the real Kafka broker started by the test runner (KAFKA_BROKERS).
 */
import { afterEach } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTransport } from '../../services/runtime/index.ts';
import type { Clock, Transport } from '../../services/runtime/index.ts';

export type TransportKind = 'embedded' | 'kafka';
export const transportKinds: readonly TransportKind[] = ['embedded', 'kafka'];

export function kafkaBrokers(): string[] {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) throw new Error('KAFKA_BROKERS is not set: run the suite with `npm test`, which starts a local Kafka broker');
  return brokers.split(',');
}

export function tempDir(prefix = 'meguri-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * For a test file: a function that makes a temporary directory, each removed after the test that
 * made it (registers an afterEach hook of node:test).
 */
export function dirsRemovedAfterEach(prefix?: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) removeDir(d);
  });
  return () => {
    const dir = tempDir(prefix);
    dirs.push(dir);
    return dir;
  };
}

/** A unique topic prefix, so tests sharing one broker never see each other's records. */
export function uniquePrefix(): string {
  return `t${randomUUID().slice(0, 8)}.`;
}

/**
 * Opens a transport on `dataDir`. A crawl run on a simulated clock must be read back on that clock:
 * the embedded log applies retention at open, and on the wall clock records stamped with simulated
 * dates months ago would expire while the test reads them.
 */
export async function openTransport(kind: TransportKind, dataDir: string, clock?: Clock): Promise<Transport> {
  const common = { dataDir, ...(clock ? { clock } : {}) };
  return createTransport(kind === 'kafka' ? { transport: 'kafka', kafkaBrokers: kafkaBrokers(), ...common } : { transport: 'embedded', kafkaBrokers: [], ...common });
}

/** Polls `fn` until it returns true or the time is up. */
export async function waitFor(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 30000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** All records of a topic with their values as bytes (for `pages`: decode with decodePageRecord). */
export async function readAllBytes(transport: Transport, topic: string): Promise<{ partition: number; offset: number; key: string | null; value: Buffer | null; timestamp: number }[]> {
  const desc = await transport.describeTopic(topic);
  if (!desc) return [];
  const out: { partition: number; offset: number; key: string | null; value: Buffer | null; timestamp: number }[] = [];
  for (const p of desc.partitions) {
    for await (const chunk of transport.readPartition(topic, p.partition, p.low, p.high)) {
      for (const r of chunk) out.push({ partition: r.partition, offset: r.offset, key: r.key, value: r.value, timestamp: r.timestamp });
    }
  }
  return out;
}

/** All records of a topic, every partition, in offset order per partition (values as UTF-8 text). */
export async function readAll(transport: Transport, topic: string): Promise<{ partition: number; offset: number; key: string | null; value: string | null; timestamp: number }[]> {
  const desc = await transport.describeTopic(topic);
  if (!desc) return [];
  const out: { partition: number; offset: number; key: string | null; value: string | null; timestamp: number }[] = [];
  for (const p of desc.partitions) {
    for await (const chunk of transport.readPartition(topic, p.partition, p.low, p.high)) {
      for (const r of chunk) out.push({ partition: r.partition, offset: r.offset, key: r.key, value: r.value === null ? null : r.value.toString('utf8'), timestamp: r.timestamp });
    }
  }
  return out;
}
