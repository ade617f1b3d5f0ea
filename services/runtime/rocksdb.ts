/**
 * A small typed, promise-based wrapper over the `rocksdb` binding (leveldown API). Everything in
 * meguri that touches RocksDB goes through here: the embedded log and the per-partition state stores.
 * Keys and values are Buffers; callers own their encodings.
 */
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';

type Callback<T = void> = (err: Error | null | undefined, value?: T) => void;

interface NativeIterator {
  next(cb: (err: Error | null | undefined, key?: Buffer, value?: Buffer) => void): void;
  end(cb: Callback): void;
  seek(target: Buffer): void;
}

/**
 * A key or value as the binding takes it. A string is written as its UTF-8 bytes, converted by the
 * binding itself: no Buffer is made on the JavaScript heap for it (state writes are strings).
 */
export type Bytes = Buffer | string;

export interface NativeBatchOp {
  readonly type: 'put' | 'del';
  readonly key: Bytes;
  readonly value?: Bytes;
}

/** The binding's chained batch: operations added one native call each, then written at once. */
export interface NativeChainedBatch {
  put(key: Bytes, value: Bytes): unknown;
  del(key: Bytes): unknown;
  write(options: Record<string, unknown>, cb: Callback): void;
}

/** The part of a binding handle writeBatch needs. */
export interface BatchingDb {
  batch(): NativeChainedBatch;
  batch(ops: readonly NativeBatchOp[], options: Record<string, unknown>, cb: Callback): void;
}

/**
 * Writes `ops` atomically through a chained batch: one native call per operation with its key and
 * value as arguments costs the event loop ~1 µs, where the array form reads each operation object's
 * three properties through N-API (~2.5 µs; a crawl writes ~100 operations per page).
 */
export function writeBatch(db: BatchingDb, ops: readonly NativeBatchOp[], options: Record<string, unknown>, cb: Callback): void {
  if (ops.length === 0) {
    db.batch(ops, options, cb);
    return;
  }
  let batch: NativeChainedBatch;
  try {
    batch = db.batch();
    for (const op of ops) {
      if (op.type === 'put') batch.put(op.key, op.value!);
      else batch.del(op.key);
    }
  } catch (err) {
    process.nextTick(cb, err as Error);
    return;
  }
  batch.write(options, cb);
}

interface NativeDb extends BatchingDb {
  open(options: Record<string, unknown>, cb: Callback): void;
  close(cb: Callback): void;
  get(key: Buffer, options: Record<string, unknown>, cb: Callback<Buffer>): void;
  getMany(keys: Buffer[], options: Record<string, unknown>, cb: Callback<(Buffer | undefined)[]>): void;
  put(key: Buffer, value: Buffer, options: Record<string, unknown>, cb: Callback): void;
  del(key: Buffer, options: Record<string, unknown>, cb: Callback): void;
  iterator(options: Record<string, unknown>): NativeIterator;
  compactRange(start: Buffer, end: Buffer, cb: Callback): void;
  getProperty(name: string): string;
}

type NativeFactory = ((location: string) => NativeDb) & { destroy(location: string, cb: Callback): void };

const require = createRequire(import.meta.url);
const rocksdb = require('rocksdb') as NativeFactory;

export interface OpenOptions {
  /** LRU block cache in bytes (RocksDB default 8 MiB). */
  cacheSizeBytes?: number;
  writeBufferSizeBytes?: number;
  /** Snappy by default; off keeps CPU for the crawler. */
  compression?: boolean;
}

export interface RangeOptions {
  gt?: Buffer;
  gte?: Buffer;
  lt?: Buffer;
  lte?: Buffer;
  reverse?: boolean;
  limit?: number;
}

export type BatchOp = { type: 'put'; key: Bytes; value: Bytes } | { type: 'del'; key: Bytes };

/**
 * What a task's state stores need of a database: RocksDb (a task's own directory) and the embedded
 * log's database (stores kept beside the log, services/runtime/embedded) both provide it.
 */
export interface KeyValueDb {
  get(key: Buffer): Promise<Buffer | undefined>;
  getMany(keys: Buffer[]): Promise<(Buffer | undefined)[]>;
  /** Applies all operations atomically. */
  batch(ops: readonly BatchOp[]): Promise<void>;
  /** A key range in order (or reversed). */
  range(options: { gte?: Buffer; lt?: Buffer; reverse?: boolean }): AsyncIterable<[Buffer, Buffer]>;
}

function promisify<T>(fn: (cb: Callback<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    fn((err, value) => (err ? reject(err) : resolve(value as T)));
  });
}

function isNotFound(err: Error): boolean {
  return /NotFound/i.test(err.message);
}

export class RocksDb implements KeyValueDb {
  private closed = false;
  private constructor(
    readonly location: string,
    private readonly db: NativeDb,
  ) {}

  static async open(location: string, options: OpenOptions = {}): Promise<RocksDb> {
    mkdirSync(location, { recursive: true });
    const db = rocksdb(location);
    await promisify<void>((cb) =>
      db.open(
        {
          createIfMissing: true,
          errorIfExists: false,
          compression: options.compression ?? true,
          cacheSize: options.cacheSizeBytes ?? 8 * 1024 * 1024,
          writeBufferSize: options.writeBufferSizeBytes ?? 4 * 1024 * 1024,
          infoLogLevel: 'error',
        },
        cb,
      ),
    );
    return new RocksDb(location, db);
  }

  /** Deletes a database directory's contents (the store must be closed). */
  static destroy(location: string): Promise<void> {
    return promisify<void>((cb) => rocksdb.destroy(location, cb));
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  async get(key: Buffer): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      this.db.get(key, { asBuffer: true, fillCache: true }, (err, value) => {
        if (err) return isNotFound(err) ? resolve(undefined) : reject(err);
        resolve(value);
      });
    });
  }

  getMany(keys: Buffer[]): Promise<(Buffer | undefined)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return promisify((cb) => this.db.getMany(keys, { asBuffer: true, fillCache: true }, cb));
  }

  put(key: Buffer, value: Buffer, sync = false): Promise<void> {
    return promisify((cb) => this.db.put(key, value, { sync }, cb));
  }

  del(key: Buffer, sync = false): Promise<void> {
    return promisify((cb) => this.db.del(key, { sync }, cb));
  }

  /** Applies all operations atomically (one RocksDB WriteBatch). */
  batch(ops: readonly BatchOp[], sync = false): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    return promisify((cb) => writeBatch(this.db, ops, { sync }, cb));
  }

  /** Iterates a key range in order; stop early by breaking out of the loop. */
  async *range(options: RangeOptions = {}): AsyncGenerator<[Buffer, Buffer]> {
    const nativeOptions: Record<string, unknown> = {
      keyAsBuffer: true,
      valueAsBuffer: true,
      reverse: options.reverse ?? false,
      limit: options.limit ?? -1,
      highWaterMark: 64 * 1024,
    };
    for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
      if (options[bound] !== undefined) nativeOptions[bound] = options[bound];
    }
    const it = this.db.iterator(nativeOptions);
    try {
      while (true) {
        const entry = await new Promise<[Buffer, Buffer] | undefined>((resolve, reject) => {
          it.next((err, key, value) => {
            if (err) return reject(err);
            resolve(key === undefined || value === undefined ? undefined : [key, value]);
          });
        });
        if (!entry) return;
        yield entry;
      }
    } finally {
      await promisify<void>((cb) => it.end(cb));
    }
  }

  /** Last entry with a key < `lt` and >= `gte`, or undefined. */
  async last(gte: Buffer, lt: Buffer): Promise<[Buffer, Buffer] | undefined> {
    for await (const entry of this.range({ gte, lt, reverse: true, limit: 1 })) return entry;
    return undefined;
  }

  compactRange(start: Buffer, end: Buffer): Promise<void> {
    return promisify((cb) => this.db.compactRange(start, end, cb));
  }

  property(name: string): string {
    return this.db.getProperty(name);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await promisify<void>((cb) => this.db.close(cb));
  }
}
