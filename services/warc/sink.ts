/**
 * The `warc` sink: a consumer group of its own on `pages` that writes WARC files as the crawl runs.
 *
 * At-least-once with idempotent files: each partition writes one file at a time, named after the
 * partition and the offset of its first record (`<prefix>-p003-o000000012345.warc.gz`), under
 * `.open` until it is closed; a file is closed (fsync, rename) when it reaches the size limit, after
 * `rollAfterMs`, or when the partition is revoked, and only then is the offset after its last record
 * committed. After a crash the group resumes at the committed offset, so the replacement file starts
 * at the same offset, gets the same name and replaces whatever the crashed writer left.
 */
import { join } from 'node:path';
import { Registry, Counter } from 'prom-client';
import type { GroupMember, Transport, TopicPartition, ConsumedBatch, Logger } from '../runtime/index.ts';
import { CaptureIndex } from './capture-index.ts';
import { WarcFile, DEFAULT_MAX_FILE_BYTES } from './files.ts';
import { decodeArchivedFetch } from './page-record.ts';
import { buildFetchRecords } from './records.ts';

export interface WarcSinkOptions {
  transport: Transport;
  topicPrefix: string;
  outDir: string;
  /** Directory of the sink's own state (the last capture per URL, for revisit records). */
  stateDir: string;
  groupId?: string;
  memberName?: string;
  maxFileBytes?: number;
  /** Close and publish a file at the latest this long after it was opened. Default 60 s. */
  rollAfterMs?: number;
  gzip?: boolean;
  userAgent?: string;
  logger?: Logger;
}

interface OpenFile {
  file: WarcFile;
  firstOffset: number;
  lastOffset: number;
  openedAt: number;
}

export const DEFAULT_WARC_GROUP = 'meguri-warc';

export class WarcSink {
  readonly name = 'warc';
  readonly metrics = { registry: new Registry() };
  private readonly written = new Counter({ name: 'meguri_warc_records_total', help: 'WARC response/revisit records written, by type.', labelNames: ['type'], registers: [this.metrics.registry] });
  private readonly published = new Counter({ name: 'meguri_warc_files_total', help: 'WARC files closed and published.', registers: [this.metrics.registry] });
  private member: GroupMember | undefined;
  private index: CaptureIndex | undefined;
  private readonly open = new Map<number, OpenFile>();
  private timer: NodeJS.Timeout | undefined;
  /** One operation at a time on the open files: batches, timed rolls and revocations. */
  private chain: Promise<unknown> = Promise.resolve();
  private ready = false;
  private alive = true;
  readonly files: string[] = [];

  constructor(private readonly o: WarcSinkOptions) {}

  get topic(): string {
    return `${this.o.topicPrefix}pages`;
  }

  isReady(): boolean {
    return this.ready;
  }

  isAlive(): boolean {
    return this.alive;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  async start(): Promise<void> {
    this.index = await CaptureIndex.open(join(this.o.stateDir, 'warc-captures'));
    this.member = await this.o.transport.join({
      groupId: this.o.groupId ?? DEFAULT_WARC_GROUP,
      topics: [this.topic],
      ...(this.o.memberName !== undefined ? { memberName: this.o.memberName } : {}),
      maxBatchRecords: 500,
      onAssigned: async () => {},
      onRevoked: (partitions) => this.serial(() => this.closeAll(partitions, true)),
      onLost: (partitions) => this.serial(() => this.closeAll(partitions, false)),
      onFatal: (err) => {
        this.alive = false;
        this.o.logger?.error({ err: err.message }, 'warc sink stopped');
      },
      eachBatch: (batch) => this.serial(() => this.write(batch)),
    });
    await this.member.ready();
    this.ready = true;
    const every = Math.max(200, Math.min(5000, (this.o.rollAfterMs ?? 60_000) / 4));
    this.timer = setInterval(() => void this.serial(() => this.rollDue()).catch((err: Error) => this.o.logger?.warn({ err: err.message }, 'warc roll failed')), every);
    this.timer.unref();
  }

  private async write(batch: ConsumedBatch): Promise<void> {
    const index = this.index!;
    let open = this.open.get(batch.partition);
    for (const r of batch.records) {
      const decoded = decodeArchivedFetch(r.value, this.o.userAgent);
      if (open === undefined) {
        const name = `${this.o.topicPrefix || 'meguri'}-p${String(batch.partition).padStart(3, '0')}-o${String(r.offset).padStart(12, '0')}.warc${this.o.gzip === false ? '' : '.gz'}`;
        const file = await WarcFile.create(this.o.outDir, name, { software: 'meguri warc sink', format: 'WARC File Format 1.1', description: `${this.topic} partition ${batch.partition} from offset ${r.offset}` }, this.o.gzip !== false);
        open = { file, firstOffset: r.offset, lastOffset: r.offset, openedAt: Date.now() };
        this.open.set(batch.partition, open);
      }
      open.lastOffset = r.offset;
      if (!decoded.ok) {
        this.o.logger?.warn({ partition: r.partition, offset: r.offset, reason: decoded.error }, 'pages record skipped');
        continue;
      }
      if (!decoded.hasResponse) continue;
      const f = decoded.fetch;
      // A capture from this offset or later was written by a run that did not commit: not a predecessor.
      const previous = await index.get(f.url);
      const usable = previous !== undefined && (previous.partition !== r.partition || (previous.offset ?? -1) < r.offset) ? previous : undefined;
      const built = await buildFetchRecords(f, usable, { gzip: this.o.gzip !== false });
      for (const c of built.chunks) open.file.write(c);
      if (built.capture) await index.put(f.url, { ...built.capture, partition: r.partition, offset: r.offset });
      this.written.inc({ type: built.kind });
    }
    if (open !== undefined && open.file.bytes >= (this.o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES)) await this.publish(batch.partition, true);
  }

  private async rollDue(): Promise<void> {
    const now = Date.now();
    for (const [p, open] of this.open) if (now - open.openedAt >= (this.o.rollAfterMs ?? 60_000)) await this.publish(p, true);
  }

  /** Closes a partition's file; with `commit`, publishes it and commits the offset after its last record. */
  private async publish(partition: number, commit: boolean): Promise<void> {
    const open = this.open.get(partition);
    if (open === undefined) return;
    this.open.delete(partition);
    if (!commit) return; // lost partition: leave the .open file to the next writer of that name
    this.files.push(open.file.close());
    this.published.inc();
    await this.member!.commit({ transactional: false, outputs: [], offsets: [{ topic: this.topic, partition, offset: open.lastOffset + 1 }] });
  }

  private async closeAll(partitions: readonly TopicPartition[], commit: boolean): Promise<void> {
    for (const tp of partitions) if (tp.topic === this.topic) await this.publish(tp.partition, commit);
  }

  /** Publishes every open file (for a graceful stop or a test) without leaving the group. */
  flush(): Promise<void> {
    return this.serial(async () => {
      for (const p of [...this.open.keys()]) await this.publish(p, true);
    });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.member?.stop();
    await this.chain;
    await this.index?.close();
    this.ready = false;
  }
}
