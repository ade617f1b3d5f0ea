/**
 * A small typed, promise-based wrapper around the `rocksdb` package (abstract-leveldown 7 API). The
 * package ships no types, so the surface used by the embedded log is declared here and loaded through
 * createRequire; nothing else in the embedded log touches the callback API.
 */
import { createRequire } from 'node:module';
import { writeBatch } from '../rocksdb.ts';
import type { BatchingDb, Bytes } from '../rocksdb.ts';

type Callback = (err: Error | null | undefined) => void;

export interface BatchOp {
  readonly type: 'put' | 'del';
  readonly key: Bytes;
  readonly value?: Bytes;
}

export interface RangeOptions {
  readonly gt?: Buffer;
  readonly gte?: Buffer;
  readonly lt?: Buffer;
  readonly lte?: Buffer;
}

export interface IteratorOptions extends RangeOptions {
  readonly reverse?: boolean;
  readonly limit?: number;
  readonly keys?: boolean;
  readonly values?: boolean;
  readonly fillCache?: boolean;
  /** Bytes the native side reads ahead per round trip. */
  readonly highWaterMark?: number;
}

interface RawIterator {
  next(cb: (err: Error | null | undefined, key?: Buffer, value?: Buffer) => void): unknown;
  end(cb: Callback): void;
}

interface RawDb extends BatchingDb {
  open(options: Record<string, unknown>, cb: Callback): void;
  close(cb: Callback): void;
  getMany(keys: readonly Buffer[], options: { asBuffer: true }, cb: (err: Error | null | undefined, values?: (Buffer | undefined)[]) => void): void;
  clear(options: RangeOptions, cb: Callback): void;
  iterator(options: Record<string, unknown>): RawIterator;
}

type RawFactory = (location: string) => RawDb;

const requireCjs = createRequire(import.meta.url);
const factory = requireCjs('rocksdb') as RawFactory;

function settle(resolve: () => void, reject: (e: Error) => void): Callback {
  return (err) => (err ? reject(err) : resolve());
}

export interface OpenOptions {
  readonly writeBufferSize?: number;
  readonly cacheSize?: number;
}

/**
 * Memtable size. The log is written at tens of MB/s (page bodies) across many partitions at once, so
 * every level-0 file overlaps the whole of level 1 and each level-0 compaction rewrites it: larger
 * memtables mean fewer, larger level-0 files and fewer rewrites. Measured (docs/benchmarks.md):
 * 32 MiB → 64 MiB cut compaction CPU over a 20,000-page crawl from 12.0 s to 5.1 s for ~50 MiB more
 * RSS; 64 MiB → 128 MiB cut it over 60,000 and 80,000 pages from 14.6–15.9 s to 8.0–8.6 s and from
 * 22.1 s to 10.6 s (3–7 % more pages/s) for 70–115 MiB more RSS. The cost of compaction grows with
 * the crawl, so the size is chosen for long crawls; a 20,000-page crawl gains nothing from it.
 * Those figures are from before page bodies and then `links` records moved to segment files
 * (segments.ts); since, 64 and 128 MiB measure alike over 60,000 pages (1,321–1,331 against
 * 1,294–1,331 pages/s, peak RSS 869–891 against 896–902 MiB, compaction 0.5 against 0.1–0.2 s).
 */
const DEFAULT_WRITE_BUFFER = 128 << 20;

/** One open RocksDB database. All keys and values are Buffers. */
export class RocksStore {
  private constructor(private readonly db: RawDb) {}

  static async open(location: string, options: OpenOptions = {}): Promise<RocksStore> {
    const db = factory(location);
    await new Promise<void>((resolve, reject) =>
      db.open(
        {
          createIfMissing: true,
          errorIfExists: false,
          writeBufferSize: options.writeBufferSize ?? DEFAULT_WRITE_BUFFER,
          cacheSize: options.cacheSize ?? 16 << 20,
        },
        settle(resolve, reject),
      ),
    );
    return new RocksStore(db);
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close(settle(resolve, reject)));
  }

  /** Applies all operations atomically (one WriteBatch). */
  batch(ops: readonly BatchOp[], sync: boolean): Promise<void> {
    return new Promise((resolve, reject) => writeBatch(this.db, ops, { sync }, settle(resolve, reject)));
  }

  getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) =>
      this.db.getMany(keys, { asBuffer: true }, (err, values) => (err ? reject(err) : resolve(values ?? []))),
    );
  }

  /** Deletes every key in the range. */
  clear(range: RangeOptions): Promise<void> {
    return new Promise((resolve, reject) => this.db.clear(range, settle(resolve, reject)));
  }

  /**
   * Reads up to `max` entries of a range (an implicit snapshot: the iterator sees the database as it
   * was when created) and ends the iterator.
   */
  async scan(options: IteratorOptions, max: number): Promise<{ keys: Buffer[]; values: Buffer[] }> {
    // The binding reads `limit` as an int32; -1 means no limit.
    const it = this.openIterator({ ...options, limit: max > 0x7fffffff ? -1 : max });
    try {
      return await it.nextMany(max);
    } finally {
      await it.end();
    }
  }

  iterator(options: IteratorOptions): RocksIterator {
    return this.openIterator(options);
  }

  private openIterator(options: IteratorOptions): RocksIterator {
    const raw = this.db.iterator({
      keyAsBuffer: true,
      valueAsBuffer: true,
      highWaterMark: 256 * 1024,
      ...options,
    });
    return new RocksIterator(raw);
  }
}

/** A forward or reverse cursor; call end() when done. */
export class RocksIterator {
  private ended = false;
  constructor(private readonly raw: RawIterator) {}

  /** Next up to `max` entries; fewer only at the end of the range. */
  nextMany(max: number): Promise<{ keys: Buffer[]; values: Buffer[] }> {
    const keys: Buffer[] = [];
    const values: Buffer[] = [];
    return new Promise((resolve, reject) => {
      const step = (): void => {
        if (keys.length >= max) {
          resolve({ keys, values });
          return;
        }
        this.raw.next((err, key, value) => {
          if (err) return reject(err);
          if (key === undefined) return resolve({ keys, values });
          keys.push(key);
          values.push(value ?? Buffer.alloc(0));
          step();
        });
      };
      step();
    });
  }

  end(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    return new Promise((resolve, reject) => this.raw.end(settle(resolve, reject)));
  }
}
