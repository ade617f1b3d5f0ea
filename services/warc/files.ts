/**
 * WARC files on disk. A file is written under `<name>.open` and renamed to `<name>` when closed,
 * so a reader never sees half a file and a writer that crashed leaves only `.open` files, which the
 * next writer of the same name replaces. Every file starts with a warcinfo record.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { warcinfoRecord } from './records.ts';

/** Files roll over once they reach this size (the usual ~1 GB of web archives). */
export const DEFAULT_MAX_FILE_BYTES = 1_000_000_000;

export class WarcFile {
  private fd: number;
  bytes = 0;
  records = 0;

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  static async create(dir: string, name: string, info: Record<string, string>, gzip: boolean): Promise<WarcFile> {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, name);
    const file = new WarcFile(path, openSync(`${path}.open`, 'w'));
    file.write(await warcinfoRecord(name, info, { gzip }));
    return file;
  }

  write(chunk: Uint8Array): void {
    let off = 0;
    while (off < chunk.length) off += writeSync(this.fd, chunk, off, chunk.length - off);
    this.bytes += chunk.length;
    this.records++;
  }

  /** Flushes to disk and publishes the file under its final name. */
  close(): string {
    if (this.fd >= 0) {
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
      renameSync(`${this.path}.open`, this.path);
    }
    return this.path;
  }
}

/** A series of files `<prefix>-00001.warc.gz`, `-00002`, ... rolling over at `maxFileBytes`. */
export class RotatingWarcWriter {
  private current: WarcFile | undefined;
  private seq = 0;
  readonly files: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly prefix: string,
    private readonly info: Record<string, string>,
    private readonly opts: { maxFileBytes: number; gzip: boolean },
  ) {}

  async write(chunks: readonly Uint8Array[]): Promise<void> {
    if (this.current === undefined) {
      this.seq++;
      const name = `${this.prefix}-${String(this.seq).padStart(5, '0')}.warc${this.opts.gzip ? '.gz' : ''}`;
      this.current = await WarcFile.create(this.dir, name, this.info, this.opts.gzip);
    }
    for (const c of chunks) this.current.write(c);
    if (this.current.bytes >= this.opts.maxFileBytes) this.roll();
  }

  private roll(): void {
    if (this.current === undefined) return;
    this.files.push(this.current.close());
    this.current = undefined;
  }

  close(): string[] {
    this.roll();
    return this.files;
  }
}
