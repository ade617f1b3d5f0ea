/**
 * Binary encoding of one record's value in RocksDB (topic, partition and offset live in the key):
 *
 *   flags(u8: 1 = key, 2 = value, 4 = headers) timestamp(i64)
 *   [key: len(u32) utf8] [value: len(u32) bytes] [headers: count(u32) (len(u32) utf8 len(u32) utf8)*]
 *
 * A missing value bit is a tombstone. Decoded values are views into the stored buffer (no copy).
 *
 * A record kept in a segment file (segments.ts) is stored in RocksDB as a pointer instead:
 *
 *   flags(u8: 128) timestamp(i64) seq(u32) position(u32) length(u32)
 *
 * The timestamp sits where it does in a record, so retention and the time index read both alike.
 */
import { readI64, writeI64 } from './keys.ts';

const F_KEY = 1;
const F_VALUE = 2;
const F_HEADERS = 4;
const F_EXTERNAL = 128;
const POINTER_BYTES = 21;

/** Where a record's encoded bytes are in a partition's segment files. */
export interface SegmentPointer {
  readonly seq: number;
  readonly position: number;
  readonly length: number;
}

const EMPTY_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export interface DecodedRecord {
  readonly timestamp: number;
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

export function encodeRecord(
  timestamp: number,
  key: string | null,
  value: Buffer | null,
  headers: Readonly<Record<string, string>> | undefined,
): Buffer {
  let flags = 0;
  let size = 9;
  let keyLen = 0;
  if (key != null) {
    flags |= F_KEY;
    keyLen = Buffer.byteLength(key, 'utf8');
    size += 4 + keyLen;
  }
  if (value != null) {
    flags |= F_VALUE;
    size += 4 + value.length;
  }
  let headerEntries: [string, string][] | undefined;
  if (headers) {
    headerEntries = Object.entries(headers);
    if (headerEntries.length > 0) {
      flags |= F_HEADERS;
      size += 4;
      for (const [k, v] of headerEntries) size += 8 + Buffer.byteLength(k, 'utf8') + Buffer.byteLength(v, 'utf8');
    } else {
      headerEntries = undefined;
    }
  }
  const buf = Buffer.allocUnsafe(size);
  buf[0] = flags;
  writeI64(buf, 1, timestamp);
  let pos = 9;
  if (key != null) {
    buf.writeUInt32BE(keyLen, pos);
    pos += 4;
    pos += buf.write(key, pos, 'utf8');
  }
  if (value != null) {
    buf.writeUInt32BE(value.length, pos);
    pos += 4;
    pos += value.copy(buf, pos);
  }
  if (headerEntries) {
    buf.writeUInt32BE(headerEntries.length, pos);
    pos += 4;
    for (const [k, v] of headerEntries) {
      const kl = buf.write(k, pos + 4, 'utf8');
      buf.writeUInt32BE(kl, pos);
      pos += 4 + kl;
      const vl = buf.write(v, pos + 4, 'utf8');
      buf.writeUInt32BE(vl, pos);
      pos += 4 + vl;
    }
  }
  return buf;
}

export function decodeRecord(buf: Buffer): DecodedRecord {
  const flags = buf[0] ?? 0;
  if (flags & F_EXTERNAL) throw new Error('embedded log: a segment pointer read as a record (resolve it first)');
  const timestamp = readI64(buf, 1);
  let pos = 9;
  let key: string | null = null;
  if (flags & F_KEY) {
    const len = buf.readUInt32BE(pos);
    pos += 4;
    key = buf.toString('utf8', pos, pos + len);
    pos += len;
  }
  let value: Buffer | null = null;
  if (flags & F_VALUE) {
    const len = buf.readUInt32BE(pos);
    pos += 4;
    value = buf.subarray(pos, pos + len);
    pos += len;
  }
  let headers = EMPTY_HEADERS;
  if (flags & F_HEADERS) {
    const count = buf.readUInt32BE(pos);
    pos += 4;
    const h: Record<string, string> = {};
    for (let i = 0; i < count; i++) {
      const kl = buf.readUInt32BE(pos);
      const k = buf.toString('utf8', pos + 4, pos + 4 + kl);
      pos += 4 + kl;
      const vl = buf.readUInt32BE(pos);
      const v = buf.toString('utf8', pos + 4, pos + 4 + vl);
      // defineProperty so a header named "__proto__" stays a plain own property.
      if (k === '__proto__') Object.defineProperty(h, k, { value: v, enumerable: true, writable: true, configurable: true });
      else h[k] = v;
      pos += 4 + vl;
    }
    headers = h;
  }
  return { timestamp, key, value, headers };
}

/** The pointer stored in RocksDB for an encoded record written to a segment file. */
export function encodePointer(encoded: Buffer, at: SegmentPointer): Buffer {
  const buf = Buffer.allocUnsafe(POINTER_BYTES);
  buf[0] = F_EXTERNAL;
  encoded.copy(buf, 1, 1, 9);
  buf.writeUInt32BE(at.seq, 9);
  buf.writeUInt32BE(at.position, 13);
  buf.writeUInt32BE(at.length, 17);
  return buf;
}

/** The segment pointer a stored value holds, or undefined for a record stored whole. */
export function pointerOf(buf: Buffer): SegmentPointer | undefined {
  if (((buf[0] ?? 0) & F_EXTERNAL) === 0) return undefined;
  return { seq: buf.readUInt32BE(9), position: buf.readUInt32BE(13), length: buf.readUInt32BE(17) };
}

/** Just the parts compaction needs, without materialising the value. */
export function peekRecord(buf: Buffer): { timestamp: number; key: string | null; tombstone: boolean } {
  const flags = buf[0] ?? 0;
  // Compacted topics keep every record in RocksDB (segments.ts); a pointer here is a bug.
  if (flags & F_EXTERNAL) throw new Error('embedded log: a compacted topic holds a segment pointer');
  const timestamp = readI64(buf, 1);
  let key: string | null = null;
  if (flags & F_KEY) {
    const len = buf.readUInt32BE(9);
    key = buf.toString('utf8', 13, 13 + len);
  }
  return { timestamp, key, tombstone: (flags & F_VALUE) === 0 };
}

/** Timestamp only. */
export function recordTimestamp(buf: Buffer): number {
  return readI64(buf, 1);
}
