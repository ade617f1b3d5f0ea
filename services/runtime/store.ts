/**
 * State stores. One RocksDB instance per (group, input partition) holds all of that task's stores as
 * key prefixes. Writes made while a batch is processed are buffered; the runtime turns them into
 * changelog records that commit atomically with the batch's outputs and offsets, and only then
 * applies them to RocksDB together with a checkpoint (the changelog offset the store reflects).
 * So a local store is never ahead of what was committed; if it is behind (crash between commit and
 * local write, or a new machine), it is brought forward from the changelog before processing resumes.
 *
 * Committed writes reach RocksDB behind the commits (write-behind): they wait in memory, merged by
 * key, until the state manager flushes them with the checkpoint of the last commit they hold. A key
 * written by many commits in a row (a host's state, a queued URL's score) is then written once, and
 * reads see the waiting writes as if they were in RocksDB.
 */
import type { BatchOp, KeyValueDb } from './rocksdb.ts';

export interface RangeQuery {
  /** Only keys starting with this prefix. */
  readonly prefix?: string;
  readonly gte?: string;
  readonly lt?: string;
  readonly limit?: number;
  readonly reverse?: boolean;
}

/** What `peek` answers for a key that is not in memory (it would take a RocksDB read). */
export const NOT_IN_MEMORY: unique symbol = Symbol('not in memory');

export interface KeyValueStore<V> {
  readonly name: string;
  get(key: string): Promise<V | undefined>;
  /**
   * get() without a promise, for a key written in this batch, cached or prefetched; NOT_IN_MEMORY
   * otherwise (then call get). Hot paths that prefetched their keys stay synchronous with it.
   */
  peek(key: string): V | undefined | typeof NOT_IN_MEMORY;
  /** Buffered until the task commits; visible to this task's reads at once. */
  put(key: string, value: V): void;
  delete(key: string): void;
  /** Keys in byte order, pending writes merged in. */
  range(query?: RangeQuery): AsyncIterable<[string, V]>;
  /**
   * Loads many keys in one RocksDB call into the read cache, so the get() calls that follow are
   * answered from memory. Processors call it with every key a batch will touch.
   */
  prefetch(keys: Iterable<string>): Promise<void>;
  /**
   * True while every key of the store is in memory (a store that was empty when its task opened,
   * until its cache first lets an entry go): prefetch() has nothing to load then, and a caller can
   * skip gathering the keys for it.
   */
  readonly knownCompletely: boolean;
}

/**
 * How a store's values are kept on disk when that differs from how the logic reads them (the
 * scheduler's URL records: readable field names in memory, short keys in RocksDB and changelogs).
 * `encode` gives what is written as JSON; `decode` takes what JSON.parse read back. Without a
 * codec the value itself is the JSON.
 */
export interface StoreCodec<V> {
  encode(value: V, key: string): unknown;
  decode(stored: unknown, key: string): V;
}

/** A store to open: its name, and the codec of its values if they have one. */
export type StoreSpec = string | { readonly name: string; readonly codec?: StoreCodec<unknown> | undefined };

const STORE_PREFIX = 's:';
const CHECKPOINT_PREFIX = 'c:';
const SEP = '\u0000';

/** Smallest string greater than every string with this prefix (for range upper bounds). */
export function prefixEnd(prefix: string): string {
  return prefix + '\uffff';
}

/** Entries kept per store in the read cache (committed values only; absent keys too). */
export const CACHE_ENTRIES = 200_000;

/**
 * A key deleted in this batch or known absent. A sentinel rather than `undefined` lets one Map
 * lookup tell "absent" from "not here"; a crawl reads its stores ~100 times per page.
 */
const ABSENT: unique symbol = Symbol('absent');
type Slot<V> = V | typeof ABSENT;

function valueOf<V>(slot: Slot<V>): V | undefined {
  return slot === ABSENT ? undefined : slot;
}

/** A key in memory: its committed value, or the one the batch in progress wrote. */
interface Entry<V> {
  readonly key: string;
  slot: Slot<V>;
  /** The batch that wrote it (TaskStore.batch), or 0 when it holds committed state. */
  written: number;
}

export class TaskStore<V> implements KeyValueStore<V> {
  /**
   * Keys in memory: the committed state of recently read or written keys (ABSENT = known absent),
   * and over it the writes of the batch in progress (ABSENT = delete), each in the entry of its
   * key. The committed part is valid because one task is the only writer of its store; a failed
   * batch drops the whole map (discard). One map rather than a map of the batch's writes beside
   * a cache: a read is one lookup, and the batch's writes build no table of their own (which grew
   * from nothing in every batch, in tables large enough to be allocated among old objects).
   */
  private readonly cache = new Map<string, Entry<V>>();
  /**
   * The entries the batch in progress wrote, each once, in the order of their first write. A key
   * written many times in one batch (a host's state on every link to it) is serialised once, when
   * the batch commits.
   */
  private dirty: Entry<V>[] = [];
  /** Number of the batch in progress (Entry.written); a commit or a discard starts the next. */
  private batch = 1;
  /**
   * The entry of the key last read or written. A processor reads a key and then writes it (a link
   * to a known URL updates its state), and the write finds the entry here instead of in a map of
   * 100,000 keys. Cleared whenever an entry leaves the map.
   */
  private recent: Entry<V> | undefined;
  /** The writes serialised for the changelog and RocksDB; built at commit, dropped on any write. */
  private encoded: Map<string, Buffer | null> | undefined;
  /** Committed writes not yet in RocksDB (null = delete), and the changelog offset they reach. */
  private unapplied = new Map<string, Buffer | null>();
  private unappliedCheckpoint: number | undefined;
  /** The writes of the flush in progress: still read from here until RocksDB has them. */
  private applying: ReadonlyMap<string, Buffer | null> | undefined;
  private flushing: Promise<void> | undefined;
  private readonly keyPrefix: string;
  private readonly checkpointKeyString: string;
  /**
   * Every key of the store is in memory (the cache or this batch's writes), so a key found in
   * neither is absent without asking RocksDB: peek() answers undefined rather than NOT_IN_MEMORY,
   * prefetch() has nothing to load, and absent keys need no cache entry. True from an open that
   * found the store empty (a new crawl, where nearly every link names a new URL) until the cache
   * first lets an entry go.
   */
  private completeInMemory = false;

  /** `basePrefix`: where the task's keys start in a database shared with others ('' in a task's own). */
  constructor(
    readonly name: string,
    private readonly db: KeyValueDb,
    basePrefix = '',
    private readonly cacheEntries = CACHE_ENTRIES,
    private readonly codec?: StoreCodec<V>,
  ) {
    this.keyPrefix = basePrefix + STORE_PREFIX + name + SEP;
    this.checkpointKeyString = basePrefix + CHECKPOINT_PREFIX + name;
  }

  /** A value as its JSON text on disk. */
  private serialize(key: string, value: V): string {
    return JSON.stringify(this.codec === undefined ? value : this.codec.encode(value, key));
  }

  /** A value read from disk. */
  private parse(key: string, raw: Buffer): V {
    const stored: unknown = JSON.parse(raw.toString('utf8'));
    return this.codec === undefined ? (stored as V) : this.codec.decode(stored, key);
  }

  /** Pending writes serialised (null = delete), in write order. */
  get pending(): ReadonlyMap<string, Buffer | null> {
    if (this.encoded === undefined) {
      const encoded = new Map<string, Buffer | null>();
      for (const e of this.dirty) encoded.set(e.key, e.slot === ABSENT ? null : Buffer.from(this.serialize(e.key, e.slot), 'utf8'));
      this.encoded = encoded;
    }
    return this.encoded;
  }

  get pendingCount(): number {
    return this.dirty.length;
  }

  /** Keys held in memory (read cache and this batch's writes), for diagnostics. */
  get keysInMemory(): number {
    return this.cache.size;
  }

  /** Committed writes waiting for a flush. */
  get unappliedCount(): number {
    return this.unapplied.size;
  }

  /** A committed write not yet in RocksDB: its bytes, null for a delete, undefined when there is none. */
  private unappliedRaw(key: string): Buffer | null | undefined {
    const waiting = this.unapplied.get(key);
    return waiting !== undefined ? waiting : this.applying?.get(key);
  }

  /**
   * Called when the task opens, before its first batch: a store with no key at all is known
   * completely from then on (see completeInMemory). Returns whether it was empty.
   */
  async noteIfEmpty(): Promise<boolean> {
    const keys = this.db.range({ gte: Buffer.from(this.keyPrefix, 'utf8'), lt: Buffer.from(prefixEnd(this.keyPrefix), 'utf8') });
    // Any entry answers it; leaving the loop closes the iterator.
    for await (const entry of keys) {
      void entry;
      return false;
    }
    this.completeInMemory = this.dirty.length === 0 && this.unapplied.size === 0 && this.cache.size === 0;
    return this.completeInMemory;
  }

  /** Whether a key found nowhere in memory is absent without a RocksDB read. */
  get knownCompletely(): boolean {
    return this.completeInMemory;
  }

  /** Adds an entry for a key not in memory, making room first when the map is full. */
  private insert(entry: Entry<V>): void {
    this.makeRoom();
    this.cache.set(entry.key, entry);
    this.recent = entry;
  }

  /**
   * Drops the oldest tenth of the committed entries (insertion order; cheap and good enough for a
   * working set) when they fill the budget. The batch's own writes exist nowhere else until it
   * commits: they are never let go, and do not count, so a batch larger than the budget grows the
   * map for its duration rather than rescanning it on every write.
   */
  private makeRoom(): void {
    if (this.cache.size - this.dirty.length < this.cacheEntries) return;
    // From now on a key not in memory may be in RocksDB.
    this.completeInMemory = false;
    this.recent = undefined;
    let n = Math.max(1, Math.floor(this.cacheEntries / 10), this.cache.size - this.dirty.length - this.cacheEntries + 1);
    for (const [k, e] of this.cache) {
      if (e.written === this.batch) continue;
      this.cache.delete(k);
      if (--n <= 0) break;
    }
  }

  /** Committed state read from RocksDB or the write-behind buffer. */
  private remember(key: string, value: Slot<V>): void {
    this.insert({ key, slot: value, written: 0 });
  }

  /** A write of the batch in progress. */
  private write(key: string, slot: Slot<V>): void {
    const recent = this.recent;
    const e = recent !== undefined && recent.key === key ? recent : this.cache.get(key);
    if (e === undefined) {
      const entry: Entry<V> = { key, slot, written: this.batch };
      this.insert(entry);
      this.dirty.push(entry);
    } else {
      e.slot = slot;
      if (e.written !== this.batch) {
        e.written = this.batch;
        this.dirty.push(e);
      }
    }
    this.encoded = undefined;
  }

  async prefetch(keys: Iterable<string>): Promise<void> {
    // Every key is in memory already; peek() and get() answer the absent ones without an entry.
    if (this.completeInMemory) return;
    const missing: string[] = [];
    // Most keys are already in memory; only the others need the duplicate check.
    const seen = new Set<string>();
    for (const k of keys) {
      if (this.cache.has(k) || seen.has(k)) continue;
      seen.add(k);
      const raw = this.unappliedRaw(k);
      if (raw !== undefined) this.remember(k, raw === null ? ABSENT : this.parse(k, raw));
      else missing.push(k);
    }
    if (missing.length === 0) return;
    const raws = await this.db.getMany(missing.map((k) => this.encodeKey(k)));
    for (let i = 0; i < missing.length; i++) {
      const raw = raws[i];
      this.remember(missing[i]!, raw === undefined ? ABSENT : this.parse(missing[i]!, raw));
    }
  }

  /** After a successful commit whose writes the caller put in RocksDB (pendingOps): they become the cached committed state. */
  committed(): void {
    this.recent = undefined;
    for (const e of this.dirty) {
      // Known completely, a deleted key needs no entry to read as absent (a host's dispatched
      // queue entries would otherwise fill the cache with them).
      if (e.slot === ABSENT && this.completeInMemory) this.cache.delete(e.key);
    }
    // The entries hold the committed state now: the next batch's number marks them as such.
    this.dirty = [];
    this.batch++;
    this.encoded = undefined;
    // A batch larger than the budget left the map over it.
    this.makeRoom();
  }

  /**
   * After a successful commit: pending writes become the cached committed state, and wait for the
   * next flush to reach RocksDB. `checkpoint`: the changelog offset after this commit's records.
   */
  committedBehind(checkpoint: number | undefined): void {
    for (const [k, b] of this.pending) this.unapplied.set(k, b);
    if (checkpoint !== undefined) this.unappliedCheckpoint = checkpoint;
    this.committed();
  }

  /** Writes the committed writes waiting in memory to RocksDB, with their checkpoint. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.unapplied.size === 0 && this.unappliedCheckpoint === undefined) return;
    const writes = this.unapplied;
    const checkpoint = this.unappliedCheckpoint;
    this.unapplied = new Map();
    this.unappliedCheckpoint = undefined;
    this.applying = writes;
    const ops = this.opsOf(writes);
    if (checkpoint !== undefined) ops.push(this.checkpointOp(checkpoint));
    this.flushing = this.db.batch(ops).then(
      () => undefined,
      (err: unknown) => {
        // Nothing was written: the writes wait again (newer ones of the same keys win).
        for (const [k, v] of writes) if (!this.unapplied.has(k)) this.unapplied.set(k, v);
        this.unappliedCheckpoint ??= checkpoint;
        throw err;
      },
    );
    try {
      await this.flushing;
    } finally {
      this.applying = undefined;
      this.flushing = undefined;
    }
  }

  /**
   * Forgets uncommitted writes after a failed batch. The read cache goes too: a processor may have
   * mutated cached objects in place before the batch failed, and the cache must only ever hold
   * committed state (the next reads come from RocksDB, which holds only committed writes).
   */
  discard(): void {
    // Committed writes waiting for a flush stay: they are committed state.
    this.dirty = [];
    this.batch++;
    this.encoded = undefined;
    this.cache.clear();
    this.recent = undefined;
    this.completeInMemory = false;
  }

  private encodeKey(key: string): Buffer {
    return Buffer.from(this.keyPrefix + key, 'utf8');
  }

  peek(key: string): V | undefined | typeof NOT_IN_MEMORY {
    const e = this.cache.get(key);
    if (e !== undefined) {
      this.recent = e;
      return valueOf(e.slot);
    }
    return this.completeInMemory ? undefined : NOT_IN_MEMORY;
  }

  async get(key: string): Promise<V | undefined> {
    const e = this.cache.get(key);
    if (e !== undefined) {
      this.recent = e;
      return valueOf(e.slot);
    }
    if (this.completeInMemory) return undefined;
    const waiting = this.unappliedRaw(key);
    const raw = waiting !== undefined ? (waiting ?? undefined) : await this.db.get(this.encodeKey(key));
    const value = raw === undefined ? undefined : this.parse(key, raw);
    this.remember(key, value === undefined ? ABSENT : value);
    return value;
  }

  put(key: string, value: V): void {
    this.write(key, value);
  }

  delete(key: string): void {
    this.write(key, ABSENT);
  }

  /** The slot the batch in progress wrote for `key`, or undefined when it wrote none. */
  private written(key: string): Slot<V> | undefined {
    const e = this.cache.get(key);
    return e !== undefined && e.written === this.batch ? e.slot : undefined;
  }

  async *range(query: RangeQuery = {}): AsyncIterable<[string, V]> {
    // RocksDB first catches up with the commits, so the iterator below sees all committed state.
    await this.flush();
    const lowKey = maxString(query.gte, query.prefix);
    const highKey = minString(query.lt, query.prefix !== undefined ? prefixEnd(query.prefix) : undefined);
    const inRange = (k: string): boolean =>
      (lowKey === undefined || k >= lowKey) && (highKey === undefined || k < highKey);
    const reverse = query.reverse ?? false;
    const pendingKeys = this.dirty.map((e) => e.key).filter(inRange).sort();
    if (reverse) pendingKeys.reverse();
    const limit = query.limit ?? Infinity;
    let emitted = 0;
    let pi = 0;
    const before = (a: string, b: string): boolean => (reverse ? a > b : a < b);
    const iter = this.db.range({
      gte: Buffer.from(this.keyPrefix + (lowKey ?? ''), 'utf8'),
      lt: Buffer.from(highKey === undefined ? prefixEnd(this.keyPrefix) : this.keyPrefix + highKey, 'utf8'),
      reverse,
    });
    for await (const [rawKey, rawValue] of iter) {
      const key = rawKey.toString('utf8').slice(this.keyPrefix.length);
      // Pending keys that sort before this one come first.
      while (pi < pendingKeys.length && before(pendingKeys[pi]!, key)) {
        const pk = pendingKeys[pi++]!;
        const pv = this.written(pk);
        if (pv !== undefined && pv !== ABSENT) {
          yield [pk, pv];
          if (++emitted >= limit) return;
        }
      }
      if (pi < pendingKeys.length && pendingKeys[pi] === key) {
        const pv = this.written(key);
        pi++;
        if (pv !== undefined && pv !== ABSENT) {
          yield [key, pv];
          if (++emitted >= limit) return;
        }
        continue;
      }
      if (this.written(key) !== undefined) continue;
      yield [key, this.parse(key, rawValue)];
      if (++emitted >= limit) return;
    }
    while (pi < pendingKeys.length) {
      const pk = pendingKeys[pi++]!;
      const pv = this.written(pk);
      if (pv !== undefined && pv !== ABSENT) {
        yield [pk, pv];
        if (++emitted >= limit) return;
      }
    }
  }

  /**
   * RocksDB operations for the pending writes, for a commit that writes them itself (inline state,
   * tests). Keys and values go as strings: the binding converts them to UTF-8, so a commit makes no
   * Buffer per write (a crawl writes ~100 per page).
   */
  pendingOps(): BatchOp[] {
    const ops: BatchOp[] = [];
    for (const e of this.dirty) {
      const key = this.keyPrefix + e.key;
      ops.push(e.slot === ABSENT ? { type: 'del', key } : { type: 'put', key, value: this.serialize(e.key, e.slot) });
    }
    return ops;
  }

  /** RocksDB operations for serialised writes (null = delete). */
  private opsOf(writes: ReadonlyMap<string, Buffer | null>): BatchOp[] {
    const ops: BatchOp[] = [];
    for (const [k, v] of writes) ops.push(v === null ? { type: 'del', key: this.encodeKey(k) } : { type: 'put', key: this.encodeKey(k), value: v });
    return ops;
  }

  /** Operation for a restored changelog record. */
  restoreOp(key: string, value: Buffer | null): BatchOp {
    return value === null ? { type: 'del', key: this.encodeKey(key) } : { type: 'put', key: this.encodeKey(key), value };
  }

  checkpointKey(): Buffer {
    return Buffer.from(this.checkpointKeyString, 'utf8');
  }

  async checkpoint(): Promise<number | undefined> {
    const raw = await this.db.get(this.checkpointKey());
    return raw === undefined ? undefined : Number(raw.toString('utf8'));
  }

  checkpointOp(nextOffset: number): BatchOp {
    return { type: 'put', key: this.checkpointKey(), value: Buffer.from(String(nextOffset), 'utf8') };
  }

  /** Deletes every key of this store and its checkpoint (before a full restore). */
  async wipe(): Promise<void> {
    this.completeInMemory = false;
    this.cache.clear();
    this.recent = undefined;
    // The batch's writes stay readable, as they stay to be committed.
    for (const e of this.dirty) this.cache.set(e.key, e);
    this.unapplied.clear();
    this.unappliedCheckpoint = undefined;
    const ops: BatchOp[] = [{ type: 'del', key: this.checkpointKey() }];
    for await (const [k] of this.db.range({
      gte: Buffer.from(this.keyPrefix, 'utf8'),
      lt: Buffer.from(prefixEnd(this.keyPrefix), 'utf8'),
    })) {
      ops.push({ type: 'del', key: k });
      if (ops.length >= 10000) await this.db.batch(ops.splice(0));
    }
    await this.db.batch(ops);
  }
}

function maxString(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

function minString(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}
