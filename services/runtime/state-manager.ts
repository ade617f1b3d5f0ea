/**
 * State management of one stateful task: opening its RocksDB stores, restoring them from their
 * changelogs to the end, turning a batch's store writes into changelog records, and applying them
 * locally with checkpoints once the commit succeeded (Kafka Streams' ProcessorStateManager and
 * StoreChangelogReader, in one small piece).
 *
 * On a transport that keeps the stores itself (the embedded log, Transport.inlineState) there is one
 * write path instead: the store writes go into the commit's own atomic write, beside the outputs and
 * offsets, so there is no changelog to write, nothing to restore and nothing to apply afterwards.
 * Such a task reads its changelogs only once, to take over stores an older layout kept beside them.
 */
import type { Logger } from './logger.ts';
import type { ServiceMetrics } from './metrics.ts';
import type { StoreDeclaration } from './processor.ts';
import type { KeyValueStore } from './store.ts';
import { TaskStores } from './task-stores.ts';
import type { OutRecord, RecordMetadata, Transport } from './transport.ts';
import type { BatchOp } from './rocksdb.ts';
import { ServiceDefinitionError } from './errors.ts';

export interface StateManagerSettings {
  readonly dataDir: string;
  readonly groupId: string;
  readonly partition: number;
  readonly stores: readonly StoreDeclaration[];
  readonly transport: Transport;
  readonly changelogTopic: (store: string) => string;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  /** Called between restore chunks, so a long restore can keep the group membership alive. */
  readonly onProgress?: () => Promise<void> | void;
}

/**
 * Committed store writes wait in memory at most this long, or until a store holds this many, before
 * they are written to RocksDB (write-behind, store.ts). A crash loses none of them: the changelog
 * has them, and the restore replays what the checkpoint does not cover.
 */
const WRITE_BEHIND_MS = 1_000;
const WRITE_BEHIND_ENTRIES = 50_000;

/** Where, in a commit's outputs, each store's last changelog record is. */
export interface ChangelogSlots {
  readonly ends: readonly { readonly name: string; readonly index: number }[];
}

export class StateManager {
  private stores: TaskStores | undefined;
  /** The stores are the transport's, written in the commits (see the top of this file). */
  private inline = false;
  private flushedAt = Date.now();

  constructor(private readonly s: StateManagerSettings) {}

  get isOpen(): boolean {
    return this.stores !== undefined;
  }

  /** Opens the stores and brings each changelogged one to the end of its changelog partition. */
  async openAndRestore(): Promise<void> {
    const s = this.s;
    const inline = s.transport.inlineState?.(s.groupId, s.partition);
    if (inline === undefined) {
      this.stores = await TaskStores.open(s.dataDir, s.groupId, s.partition, s.stores);
      for (const spec of s.stores) if (spec.changelog) await this.restore(spec.name);
      await this.stores.noteEmptyStores();
      return;
    }
    this.stores = TaskStores.inline(inline.db, inline.keyPrefix, s.stores);
    this.inline = true;
    let adopted = false;
    for (const spec of s.stores) if (spec.changelog) adopted = (await this.adoptChangelog(spec.name)) || adopted;
    // The stores of the older layout are now in the log; their directory would only take disk.
    if (adopted) TaskStores.removeLocal(s.dataDir, s.groupId, s.partition);
    await this.stores.noteEmptyStores();
  }

  /**
   * Inline stores: a store seen for the first time takes over what its changelog holds (a directory
   * written by an older layout; empty otherwise) and is marked with the changelog's end, after which
   * its changelog is never read again. True when this call did the takeover.
   */
  private async adoptChangelog(storeName: string): Promise<boolean> {
    const store = this.stores!.store<unknown>(storeName);
    if ((await store.checkpoint()) !== undefined) return false;
    // The mark is written only once the whole changelog is in: a takeover cut short (a crash, a
    // failed read) leaves none, and the next open wipes what it got and starts again.
    const end = await this.restore(storeName, false);
    await this.stores!.db.batch([store.checkpointOp(end)]);
    return true;
  }

  store<V>(name: string): KeyValueStore<V> {
    if (!this.stores) throw new ServiceDefinitionError('MEGURI_ERR_NO_STORE', `store "${name}" is not open (the service declares no stores, or the task is not running)`);
    return this.stores.store<V>(name);
  }

  hasPending(): boolean {
    return this.stores?.hasPending() ?? false;
  }

  /** Drops uncommitted writes and the read cache (after a failed batch). */
  discardPending(): void {
    this.stores?.discardPending();
  }

  /** Appends the pending writes as changelog records to `outputs` (none for inline stores). */
  appendChangelog(outputs: OutRecord[]): ChangelogSlots {
    const ends: { name: string; index: number }[] = [];
    if (!this.stores || this.inline) return { ends };
    for (const spec of this.s.stores) {
      const store = this.stores.store<unknown>(spec.name);
      if (!spec.changelog || store.pendingCount === 0) continue;
      const topic = this.s.changelogTopic(spec.name);
      for (const [key, value] of store.pending) outputs.push({ topic, key, value, partition: this.s.partition });
      ends.push({ name: spec.name, index: outputs.length - 1 });
    }
    return { ends };
  }

  /**
   * After a successful commit: the writes become committed state, and go to RocksDB with the
   * changelog offsets they reflect — at once for a store without a changelog, else behind the
   * commits (WRITE_BEHIND_MS, WRITE_BEHIND_ENTRIES).
   */
  async applyCommitted(slots: ChangelogSlots, meta: readonly RecordMetadata[]): Promise<void> {
    if (!this.stores) return;
    if (this.inline) {
      // The commit wrote them: they are the committed state now.
      this.stores.committed();
      return;
    }
    const checkpoints = new Map<string, number>();
    for (const end of slots.ends) {
      const m = meta[end.index];
      if (m && m.offset >= 0) checkpoints.set(end.name, m.offset + 1);
    }
    const due = Date.now() - this.flushedAt >= WRITE_BEHIND_MS;
    if (due) this.flushedAt = Date.now();
    for (const spec of this.s.stores) {
      const store = this.stores.store<unknown>(spec.name);
      store.committedBehind(checkpoints.get(spec.name));
      if (due || !spec.changelog || store.unappliedCount >= WRITE_BEHIND_ENTRIES) await store.flush();
    }
  }

  /**
   * Inline stores: the pending writes as operations for the commit's atomic write
   * (AtomicCommit.stateWrites); undefined for stores that go through changelogs.
   */
  inlineWrites(): BatchOp[] | undefined {
    if (!this.stores || !this.inline) return undefined;
    const ops: BatchOp[] = [];
    for (const store of this.stores.stores.values()) if (store.pendingCount > 0) for (const op of store.pendingOps()) ops.push(op);
    return ops;
  }

  /**
   * Brings a store up to the end of its changelog partition; returns that end. `checkpoints`: mark
   * the progress after every chunk and at the end (a restore cut short resumes where it stopped).
   */
  private async restore(storeName: string, checkpoints = true): Promise<number> {
    const s = this.s;
    const stores = this.stores!;
    const store = stores.store<unknown>(storeName);
    const topic = s.changelogTopic(storeName);
    const desc = await s.transport.describeTopic(topic);
    const info = desc?.partitions.find((p) => p.partition === s.partition);
    if (!info) throw new Error(`changelog ${topic} has no partition ${s.partition}; were topics created with matching partition counts?`);
    let checkpoint = await store.checkpoint();
    if (checkpoint === undefined || checkpoint > info.high) {
      if (checkpoint !== undefined) s.logger.warn({ store: storeName, checkpoint, high: info.high }, 'store is ahead of its changelog; rebuilding');
      await store.wipe();
      checkpoint = info.low;
    }
    const from = Math.max(checkpoint, info.low);
    if (from >= info.high) return info.high;
    const started = Date.now();
    let count = 0;
    // Every offset below the end must be read before the store may be checkpointed at the end.
    for await (const chunk of s.transport.readPartition(topic, s.partition, from, info.high, { complete: true })) {
      const ops = chunk.filter((r) => r.key !== null).map((r) => store.restoreOp(r.key!, r.value));
      const last = chunk[chunk.length - 1];
      if (last && checkpoints) ops.push(store.checkpointOp(last.offset + 1));
      await stores.db.batch(ops);
      count += chunk.length;
      await s.onProgress?.();
    }
    // Transaction markers have offsets too: the store reflects the changelog up to its end.
    if (checkpoints) await stores.db.batch([store.checkpointOp(info.high)]);
    s.metrics.restoredRecords.inc({ store: storeName }, count);
    s.logger.info({ store: storeName, from, to: info.high, records: count, ms: Date.now() - started }, 'store restored from changelog');
    return info.high;
  }

  /** Closes the stores; uncommitted writes are dropped (they were never committed), committed ones written. */
  async close(): Promise<void> {
    if (!this.stores) return;
    this.stores.discardPending();
    const stores = this.stores;
    this.stores = undefined;
    await stores.close();
  }
}
