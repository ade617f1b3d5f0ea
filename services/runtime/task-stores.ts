/**
 * The named stores of one task, opened together over one RocksDB (store.ts has one store).
 */
import { join } from 'node:path';
import { readdirSync, rmSync } from 'node:fs';
import { RocksDb } from './rocksdb.ts';
import type { KeyValueDb } from './rocksdb.ts';
import { CACHE_ENTRIES, TaskStore } from './store.ts';
import type { StoreSpec } from './store.ts';

/**
 * The named stores of one task, in the task's own RocksDB (`open`) or under a key prefix of a
 * database the transport keeps (`inline`: the embedded log's, written in the commits themselves).
 */
export class TaskStores {
  private constructor(
    readonly db: KeyValueDb,
    readonly stores: Map<string, TaskStore<unknown>>,
    /** The task's own database, closed with the stores; undefined when the transport owns it. */
    readonly ownDb: RocksDb | undefined,
  ) {}

  static directory(dataDir: string, group: string, partition: number): string {
    return join(dataDir, 'state', group, `p${partition}`);
  }

  static async open(dataDir: string, group: string, partition: number, specs: readonly StoreSpec[]): Promise<TaskStores> {
    const db = await RocksDb.open(TaskStores.directory(dataDir, group, partition), { cacheSizeBytes: 32 * 1024 * 1024 });
    return new TaskStores(db, TaskStores.create(db, '', specs), db);
  }

  /** Stores under `keyPrefix` of a database someone else opened and closes. */
  static inline(db: KeyValueDb, keyPrefix: string, specs: readonly StoreSpec[]): TaskStores {
    return new TaskStores(db, TaskStores.create(db, keyPrefix, specs), undefined);
  }

  private static create(db: KeyValueDb, keyPrefix: string, specs: readonly StoreSpec[]): Map<string, TaskStore<unknown>> {
    const stores = new Map<string, TaskStore<unknown>>();
    for (const spec of specs) {
      const { name, codec } = typeof spec === 'string' ? { name: spec, codec: undefined } : spec;
      stores.set(name, new TaskStore<unknown>(name, db, keyPrefix, CACHE_ENTRIES, codec));
    }
    return stores;
  }

  /** Partitions of a group whose state directories exist under dataDir (warm for a restore). */
  static localPartitions(dataDir: string, group: string): number[] {
    let names: string[];
    try {
      names = readdirSync(join(dataDir, 'state', group));
    } catch {
      return [];
    }
    return names.filter((n) => /^p\d+$/.test(n)).map((n) => Number(n.slice(1)));
  }

  /** Removes a task's local state directory (it will be restored from the changelog). */
  static removeLocal(dataDir: string, group: string, partition: number): void {
    rmSync(TaskStores.directory(dataDir, group, partition), { recursive: true, force: true });
  }

  store<V>(name: string): TaskStore<V> {
    const s = this.stores.get(name);
    if (!s) throw new Error(`store "${name}" is not declared for this service`);
    return s as TaskStore<V>;
  }

  hasPending(): boolean {
    for (const s of this.stores.values()) if (s.pendingCount > 0) return true;
    return false;
  }

  discardPending(): void {
    for (const s of this.stores.values()) s.discard();
  }

  /** Marks every store's pending writes as committed (the caller wrote them to RocksDB). */
  committed(): void {
    for (const s of this.stores.values()) s.committed();
  }

  /** At open, before the first batch: stores found empty answer misses from memory (TaskStore.noteIfEmpty). */
  async noteEmptyStores(): Promise<void> {
    for (const s of this.stores.values()) await s.noteIfEmpty();
  }

  /** Writes every store's committed writes still in memory to RocksDB. */
  async flush(): Promise<void> {
    for (const s of this.stores.values()) await s.flush();
  }

  /** Writes what the commits left in memory, then closes the task's own RocksDB (if it has one). */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.ownDb?.close();
    }
  }
}
