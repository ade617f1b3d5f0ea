/**
 * The last response archived per URL (payload digest, date, record id), in RocksDB so it does not
 * live in memory: what a later fetch of the URL needs to be written as a revisit.
 */
import { RocksDb } from '../runtime/rocksdb.ts';
import type { PreviousCapture } from './records.ts';

export class CaptureIndex {
  private constructor(private readonly db: RocksDb) {}

  static async open(dir: string): Promise<CaptureIndex> {
    return new CaptureIndex(await RocksDb.open(dir, { cacheSizeBytes: 8 * 1024 * 1024, writeBufferSizeBytes: 4 * 1024 * 1024 }));
  }

  async get(url: string): Promise<PreviousCapture | undefined> {
    const v = await this.db.get(Buffer.from(url));
    return v === undefined ? undefined : (JSON.parse(v.toString('utf8')) as PreviousCapture);
  }

  async put(url: string, c: PreviousCapture): Promise<void> {
    await this.db.put(Buffer.from(url), Buffer.from(JSON.stringify(c)));
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
