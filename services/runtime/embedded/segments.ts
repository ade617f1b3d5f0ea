/**
 * Large records outside the LSM tree. A record of a topic that is not compacted whose encoded size
 * reaches EXTERNAL_MIN_BYTES (page bodies; `links` bundles and outcomes) is appended to a segment
 * file of its partition, and RocksDB keeps a 21-byte pointer to it (codec.ts). In RocksDB every
 * flush and every compaction copied those records again, and since each level-0 file spans the
 * whole key space, the more a crawl had stored the more each compaction rewrote; appended once to
 * a file, a record is written once and deleted with its whole segment.
 *
 * A write batch's records are appended in memory and reach their files when the batch takes its
 * segment keys (takeTouched), one write per segment: a crawl appends several records per page.
 *
 * Files: `<log dir>/segments/<topic id>-<partition>/<seq>.seg`, encoded records back to back and
 * nothing else (the pointers say where each starts and how long it is). A segment is rolled at
 * the topic's `segment.bytes` (SEGMENT_BYTES by default).
 *
 * Crash order: a write batch's records go to their segments (flushed to disk first when the log
 * syncs) before the RocksDB batch that points at them is written, so a pointer never leads past the
 * end of a file. Bytes of a batch that never committed stay unreferenced at the end of a segment. A
 * process never appends to a segment it found when it opened the log: it starts a new one.
 *
 * Retention: 'g' keys (keys.ts) hold each segment's last offset, put in the same batch as the
 * records. Once the partition's low mark has passed it, a segment is deleted whole: its key first,
 * then the file. A file that has no key (created, but no batch writing to it committed; or its key
 * deleted just before a crash) is removed when the log opens.
 */
import { closeSync, fdatasync, mkdirSync, openSync, read, readdirSync, rmSync, unlinkSync, writeSync, writevSync } from 'node:fs';
import path from 'node:path';
import type { SegmentPointer } from './codec.ts';
import type { BatchOp } from './rocks.ts';
import { encodeU64, segmentKey } from './keys.ts';

/**
 * Records at least this large (encoded) go to segment files. A crawl's `links` bundles and outcomes
 * (1–4 KB) filled the log's memtables as much as its page bodies had: from 4 KiB down to 1 KiB, a
 * 20,000-page crawl's peak RSS fell by ~70 MiB and RocksDB's flushes by half (docs/benchmarks.md).
 * Smaller records (frontier requests, changelogs, offsets) stay in RocksDB.
 */
export const EXTERNAL_MIN_BYTES = 1024;
/**
 * A segment takes no new records once it is this large, unless the topic sets `segment.bytes` (as
 * in Kafka, retention deletes a whole segment at a time).
 */
export const SEGMENT_BYTES = 64 * 1024 * 1024;

/** Largest `segment.bytes` honoured: positions in a segment are 32-bit (Kafka allows up to 2^31 − 1). */
export const MAX_SEGMENT_BYTES = 1024 * 1024 * 1024;

/** The topic's `segment.bytes` (at most MAX_SEGMENT_BYTES), or SEGMENT_BYTES. */
export function segmentBytesOf(config: Readonly<Record<string, string>>): number {
  const n = Number(config['segment.bytes']);
  return Number.isFinite(n) && n > 0 ? Math.min(n, MAX_SEGMENT_BYTES) : SEGMENT_BYTES;
}

interface Segment {
  readonly seq: number;
  readonly file: string;
  /** Highest offset stored in it, as committed (undefined: no batch writing to it has committed). */
  lastOffset: number | undefined;
  /** Highest offset appended, committed or not. */
  appendedOffset: number;
  fd: number | undefined;
  /** Reads in flight; a segment is not deleted under them. */
  readers: number;
  /** Records appended since the last takeTouched(), not yet in the file, and where they start. */
  pending: Buffer[];
  pendingAt: number;
}

interface PartitionSegments {
  readonly topicId: number;
  readonly partition: number;
  readonly dir: string;
  /** By seq, ascending. */
  readonly segments: Segment[];
  /** The segment appends go to (created by this process), and its size. */
  active: { segment: Segment; size: number } | undefined;
  nextSeq: number;
}

export interface KnownSegment {
  readonly topicId: number;
  readonly partition: number;
  readonly seq: number;
  readonly lastOffset: number;
}

export class SegmentFiles {
  private readonly partitions = new Map<string, PartitionSegments>();
  /** Segments appended to since the last takeTouched(). */
  private touched = new Set<Segment>();

  constructor(readonly dir: string) {}

  /**
   * Registers the segments RocksDB knows about and removes files it does not know (see the module
   * comment). Returns the keys of segments whose files are gone and whose records are all below
   * `lowOf` (a crash between deleting a file and its key cannot leave that, but a hand-deleted file
   * can): they are dropped. A missing file that still holds retained records is reported by reads.
   */
  load(known: readonly KnownSegment[], lowOf: (topicId: number, partition: number) => number): Buffer[] {
    mkdirSync(this.dir, { recursive: true });
    const stale: Buffer[] = [];
    const onDisk = new Set<string>();
    for (const name of readdirSync(this.dir)) {
      const m = /^(\d+)-(\d+)$/.exec(name);
      if (!m) continue;
      for (const file of readdirSync(path.join(this.dir, name))) onDisk.add(path.join(this.dir, name, file));
    }
    for (const k of known) {
      const ps = this.partitionOf(k.topicId, k.partition);
      const file = segmentFile(ps.dir, k.seq);
      if (!onDisk.has(file) && k.lastOffset < lowOf(k.topicId, k.partition)) {
        stale.push(segmentKey(k.topicId, k.partition, k.seq));
        continue;
      }
      onDisk.delete(file);
      ps.segments.push({ seq: k.seq, file, lastOffset: k.lastOffset, appendedOffset: k.lastOffset, fd: undefined, readers: 0, pending: [], pendingAt: 0 });
      ps.nextSeq = Math.max(ps.nextSeq, k.seq + 1);
    }
    for (const ps of this.partitions.values()) ps.segments.sort((a, b) => a.seq - b.seq);
    for (const file of onDisk) {
      // Never referenced: make sure no later segment of this process takes its number.
      const m = /(\d+)-(\d+)\/(\d+)\.seg$/.exec(file);
      if (m) {
        const ps = this.partitionOf(Number(m[1]), Number(m[2]));
        ps.nextSeq = Math.max(ps.nextSeq, Number(m[3]) + 1);
      }
      rmSync(file, { force: true });
    }
    return stale;
  }

  /**
   * Appends one encoded record at `offset` of the partition; its pointer is what RocksDB keeps. The
   * bytes reach the file in takeTouched(), before the batch that points at them; `encoded` must not
   * change until then.
   */
  append(topicId: number, partition: number, offset: number, encoded: Buffer, segmentBytes = SEGMENT_BYTES): SegmentPointer {
    const ps = this.partitionOf(topicId, partition);
    let active = ps.active;
    if (active === undefined || active.size >= segmentBytes) {
      mkdirSync(ps.dir, { recursive: true });
      const seq = ps.nextSeq++;
      const file = segmentFile(ps.dir, seq);
      const segment: Segment = { seq, file, lastOffset: undefined, appendedOffset: offset, fd: openSync(file, 'wx+'), readers: 0, pending: [], pendingAt: 0 };
      ps.segments.push(segment);
      active = ps.active = { segment, size: 0 };
    }
    const position = active.size;
    const segment = active.segment;
    if (segment.pending.length === 0) segment.pendingAt = position;
    segment.pending.push(encoded);
    active.size += encoded.length;
    segment.appendedOffset = offset;
    this.touched.add(segment);
    return { seq: segment.seq, position, length: encoded.length };
  }

  /**
   * Writes the records appended since the last call to their files, and returns the segments
   * touched: the 'g' key puts that go into the same batch as the records, and what to mark
   * committed once the batch is durable. If a write fails, nothing appended since the last call is
   * kept (the batch fails with the error; its bytes stay unreferenced) and the error is thrown.
   */
  takeTouched(): { ops: BatchOp[]; segments: { segment: Segment; lastOffset: number; topicId: number; partition: number }[] } {
    const touched = this.touched;
    this.touched = new Set();
    try {
      for (const segment of touched) writeAllAt(segment.fd!, segment.pending, segment.pendingAt);
    } catch (err) {
      for (const segment of touched) {
        const active = this.ownerOf(segment).active;
        // The next batch appends where this one started, over whatever part of it was written.
        if (active?.segment === segment && segment.pending.length > 0) active.size = segment.pendingAt;
        segment.pending = [];
      }
      throw err;
    }
    const ops: BatchOp[] = [];
    const segments: { segment: Segment; lastOffset: number; topicId: number; partition: number }[] = [];
    for (const segment of touched) {
      segment.pending = [];
      const ps = this.ownerOf(segment);
      ops.push({ type: 'put', key: segmentKey(ps.topicId, ps.partition, segment.seq), value: encodeU64(segment.appendedOffset) });
      segments.push({ segment, lastOffset: segment.appendedOffset, topicId: ps.topicId, partition: ps.partition });
    }
    return { ops, segments };
  }

  /** Flushes the given segments' bytes to disk (for a log that syncs every batch). */
  async sync(segments: readonly { segment: Segment }[]): Promise<void> {
    await Promise.all(
      segments.map(
        ({ segment }) =>
          new Promise<void>((resolve, reject) => {
            if (segment.fd === undefined) return resolve();
            fdatasync(segment.fd, (err) => (err ? reject(err) : resolve()));
          }),
      ),
    );
  }

  /** The batch naming these segments' last offsets is durable. */
  committed(segments: readonly { segment: Segment; lastOffset: number }[]): void {
    for (const { segment, lastOffset } of segments) {
      if (segment.lastOffset === undefined || lastOffset > segment.lastOffset) segment.lastOffset = lastOffset;
    }
  }

  /**
   * Reads the encoded records the pointers name, in their order; neighbours in a file are read at
   * once. A record that lies past the end of its file (undefined here) was lost: only a machine
   * crash without `sync` can leave that, when the batch pointing at it reached the disk and the
   * segment's bytes did not.
   */
  async read(topicId: number, partition: number, pointers: readonly SegmentPointer[]): Promise<(Buffer | undefined)[]> {
    const ps = this.partitions.get(partitionId(topicId, partition));
    const out = new Array<Buffer | undefined>(pointers.length);
    let i = 0;
    while (i < pointers.length) {
      const first = pointers[i]!;
      let j = i + 1;
      let end = first.position + first.length;
      while (j < pointers.length && pointers[j]!.seq === first.seq && pointers[j]!.position === end) end += pointers[j++]!.length;
      const segment = ps?.segments.find((s) => s.seq === first.seq);
      if (segment === undefined) throw new Error(`embedded log: segment ${first.seq} of topic id ${topicId} partition ${partition} is not known`);
      const bytes = await this.readSpan(segment, first.position, end - first.position);
      for (let k = i, at = 0; k < j; k++) {
        const length = pointers[k]!.length;
        out[k] = at + length <= bytes.length ? bytes.subarray(at, at + length) : undefined;
        at += length;
      }
      i = j;
    }
    return out;
  }

  /** Up to `length` bytes from `position`: fewer when the file ends first. */
  private async readSpan(segment: Segment, position: number, length: number): Promise<Buffer> {
    segment.readers++;
    try {
      try {
        segment.fd ??= openSync(segment.file, 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // Only removed by hand: retention deletes a segment's key before its file.
        throw new Error(`embedded log: segment file ${segment.file} is missing; the records it held cannot be read`, { cause: err });
      }
      const fd = segment.fd;
      const buf = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const n = await new Promise<number>((resolve, reject) => read(fd, buf, done, length - done, position + done, (err, bytes) => (err ? reject(err) : resolve(bytes))));
        if (n === 0) return buf.subarray(0, done);
        done += n;
      }
      return buf;
    } finally {
      segment.readers--;
    }
  }

  /**
   * Segments of the partition all of whose records are below `low` (never the one being appended
   * to, nor one being read): their keys, to delete first, and then removeFiles() for the files.
   */
  expired(topicId: number, partition: number, low: number): { keys: Buffer[]; segments: Segment[] } {
    const ps = this.partitions.get(partitionId(topicId, partition));
    const keys: Buffer[] = [];
    const segments: Segment[] = [];
    if (ps === undefined) return { keys, segments };
    for (const segment of ps.segments) {
      if (segment === ps.active?.segment || segment.readers > 0) continue;
      if (segment.lastOffset === undefined || segment.lastOffset >= low) continue;
      keys.push(segmentKey(topicId, partition, segment.seq));
      segments.push(segment);
    }
    return { keys, segments };
  }

  removeFiles(segments: readonly Segment[]): void {
    for (const segment of segments) {
      const ps = this.ownerOf(segment);
      const at = ps.segments.indexOf(segment);
      if (at >= 0) ps.segments.splice(at, 1);
      if (segment.fd !== undefined) closeSync(segment.fd);
      segment.fd = undefined;
      try {
        unlinkSync(segment.file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }

  /** Number of segment files of a partition (for tests and stats). */
  count(topicId: number, partition: number): number {
    return this.partitions.get(partitionId(topicId, partition))?.segments.length ?? 0;
  }

  close(): void {
    for (const ps of this.partitions.values()) {
      for (const segment of ps.segments) {
        if (segment.fd !== undefined) closeSync(segment.fd);
        segment.fd = undefined;
      }
      ps.active = undefined;
    }
  }

  private partitionOf(topicId: number, partition: number): PartitionSegments {
    const id = partitionId(topicId, partition);
    let ps = this.partitions.get(id);
    if (ps === undefined) {
      ps = { topicId, partition, dir: path.join(this.dir, id), segments: [], active: undefined, nextSeq: 1 };
      this.partitions.set(id, ps);
    }
    return ps;
  }

  private ownerOf(segment: Segment): PartitionSegments {
    const ps = this.partitions.get(path.basename(path.dirname(segment.file)));
    if (ps === undefined) throw new Error(`embedded log: segment ${segment.file} has no partition`);
    return ps;
  }
}

/** Writes `buffers` back to back from `position`: one call, and more only for a short write. */
function writeAllAt(fd: number, buffers: readonly Buffer[], position: number): void {
  if (buffers.length === 0) return;
  let written = writevSync(fd, buffers, position);
  let at = position;
  for (const b of buffers) {
    if (written >= b.length) {
      written -= b.length;
      at += b.length;
      continue;
    }
    let done = written;
    written = 0;
    while (done < b.length) done += writeSync(fd, b, done, b.length - done, at + done);
    at += b.length;
  }
}

function partitionId(topicId: number, partition: number): string {
  return `${topicId}-${partition}`;
}

function segmentFile(dir: string, seq: number): string {
  return path.join(dir, `${String(seq).padStart(10, '0')}.seg`);
}
