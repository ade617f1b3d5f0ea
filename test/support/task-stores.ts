/**
 * Task stores on a temporary RocksDB for store-level tests, and the runtime's commit step done by
 * hand (pending writes to RocksDB, then the read cache).
 */
import { TaskStores } from '../../services/runtime/task-stores.ts';
import type { StoreSpec } from '../../services/runtime/store.ts';
import { tempDir, removeDir } from './transports.ts';

/** Opens stores `names` of one task in a fresh directory, runs `fn`, closes and removes them. */
export async function withTaskStores(names: readonly StoreSpec[], fn: (stores: TaskStores) => Promise<void>, prefix = 'meguri-store-'): Promise<void> {
  const dir = tempDir(prefix);
  const stores = await TaskStores.open(dir, 'g', 0, [...names]);
  try {
    await fn(stores);
  } finally {
    await stores.close();
    removeDir(dir);
  }
}

/** What the runtime does after a successful commit: the pending writes go to RocksDB, then the cache. */
export async function commitStores(stores: TaskStores): Promise<void> {
  await stores.db.batch([...stores.stores.values()].flatMap((s) => s.pendingOps()));
  stores.committed();
}
