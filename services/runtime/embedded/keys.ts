/**
 * Binary key layout of the embedded log. Every number is big-endian so RocksDB's bytewise order is
 * numeric order; every key space starts with its own ASCII tag byte.
 *
 *   'F'                                        → format version (utf8)
 *   'm' topic(utf8)                            → topic metadata (JSON: id, partitions, config)
 *   'r' topicId(u32) partition(u32) offset(u64) → record (see codec.ts)
 *   't' topicId(u32) partition(u32) ts(i64)      → offset(u64): sparse time index
 *   'p' topicId(u32) partition(u32)             → low(u64) high(u64): partition bounds marker
 *   'o' group(utf8) 0x00 topicId(u32) partition(u32) → next offset(u64): committed offsets
 *   'S' group(utf8) 0x00 partition(decimal) 0x00 …  → state stores of a group's task (store.ts
 *                                                     lays out the rest: store name and key)
 *   'g' topicId(u32) partition(u32) seq(u32)     → last offset(u64) in that segment file
 *                                                  (segments.ts: large records outside RocksDB)
 *
 * Topics are referred to by a small numeric id (assigned at creation, never reused) to keep record
 * keys at 17 bytes. Signed timestamps are stored with a biased high word so negative values sort first.
 */

export const TAG_FORMAT = 0x46; // 'F'
export const TAG_META = 0x6d; // 'm'
export const TAG_RECORD = 0x72; // 'r'
export const TAG_TIME = 0x74; // 't'
export const TAG_BOUNDS = 0x70; // 'p'
export const TAG_OFFSET = 0x6f; // 'o'
export const TAG_STATE = 0x53; // 'S'
export const TAG_SEGMENT = 0x67; // 'g'

const TWO_32 = 4294967296;
const BIAS_31 = 0x80000000;

export function writeU64(buf: Buffer, pos: number, n: number): void {
  const hi = Math.floor(n / TWO_32);
  buf.writeUInt32BE(hi, pos);
  buf.writeUInt32BE(n - hi * TWO_32, pos + 4);
}

export function readU64(buf: Buffer, pos: number): number {
  return buf.readUInt32BE(pos) * TWO_32 + buf.readUInt32BE(pos + 4);
}

/** Order-preserving encoding of a signed safe integer. */
export function writeI64(buf: Buffer, pos: number, n: number): void {
  const hi = Math.floor(n / TWO_32);
  buf.writeUInt32BE(hi + BIAS_31, pos);
  buf.writeUInt32BE(n - hi * TWO_32, pos + 4);
}

export function readI64(buf: Buffer, pos: number): number {
  return (buf.readUInt32BE(pos) - BIAS_31) * TWO_32 + buf.readUInt32BE(pos + 4);
}

export const formatKey = Buffer.from([TAG_FORMAT]);

export function metaKey(topic: string): Buffer {
  return Buffer.concat([Buffer.from([TAG_META]), Buffer.from(topic, 'utf8')]);
}

export function metaPrefixRange(): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.from([TAG_META]), lt: Buffer.from([TAG_META + 1]) };
}

function partitionKey(tag: number, topicId: number, partition: number, extra: number): Buffer {
  const buf = Buffer.allocUnsafe(9 + extra);
  buf[0] = tag;
  buf.writeUInt32BE(topicId, 1);
  buf.writeUInt32BE(partition, 5);
  return buf;
}

export function recordKey(topicId: number, partition: number, offset: number): Buffer {
  const buf = partitionKey(TAG_RECORD, topicId, partition, 8);
  writeU64(buf, 9, offset);
  return buf;
}

/** Offset stored in a record key. */
export function recordKeyOffset(key: Buffer): number {
  return readU64(key, 9);
}

/** Range of all record keys of a partition with offsets in [from, to). */
export function recordRange(topicId: number, partition: number, from: number, to: number): { gte: Buffer; lt: Buffer } {
  return { gte: recordKey(topicId, partition, from), lt: recordKey(topicId, partition, to) };
}

/** Range covering every possible record key of a partition. */
export function recordPartitionRange(topicId: number, partition: number): { gte: Buffer; lt: Buffer } {
  const gte = partitionKey(TAG_RECORD, topicId, partition, 0);
  const lt = partitionKey(TAG_RECORD, topicId, partition, 8);
  lt.fill(0xff, 9);
  // 'lt' 0xff…ff excludes only the offset 2^64-1, far beyond any safe integer offset.
  return { gte, lt };
}

export function timeKey(topicId: number, partition: number, timestamp: number): Buffer {
  const buf = partitionKey(TAG_TIME, topicId, partition, 8);
  writeI64(buf, 9, timestamp);
  return buf;
}

export function timeKeyTimestamp(key: Buffer): number {
  return readI64(key, 9);
}

export function timePartitionRange(topicId: number, partition: number): { gte: Buffer; lt: Buffer } {
  const gte = partitionKey(TAG_TIME, topicId, partition, 0);
  const lt = partitionKey(TAG_TIME, topicId, partition, 8);
  lt.fill(0xff, 9);
  return { gte, lt };
}

export function boundsKey(topicId: number, partition: number): Buffer {
  return partitionKey(TAG_BOUNDS, topicId, partition, 0);
}

export function segmentKey(topicId: number, partition: number, seq: number): Buffer {
  const buf = partitionKey(TAG_SEGMENT, topicId, partition, 4);
  buf.writeUInt32BE(seq, 9);
  return buf;
}

export function decodeSegmentKey(key: Buffer): { topicId: number; partition: number; seq: number } {
  return { topicId: key.readUInt32BE(1), partition: key.readUInt32BE(5), seq: key.readUInt32BE(9) };
}

export function segmentPrefixRange(): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.from([TAG_SEGMENT]), lt: Buffer.from([TAG_SEGMENT + 1]) };
}

export function encodeU64(n: number): Buffer {
  const buf = Buffer.allocUnsafe(8);
  writeU64(buf, 0, n);
  return buf;
}

export function encodeBounds(low: number, high: number): Buffer {
  const buf = Buffer.allocUnsafe(16);
  writeU64(buf, 0, low);
  writeU64(buf, 8, high);
  return buf;
}

export function decodeBounds(buf: Buffer): { low: number; high: number } {
  return { low: readU64(buf, 0), high: readU64(buf, 8) };
}

export function offsetKey(group: string, topicId: number, partition: number): Buffer {
  const g = Buffer.from(group, 'utf8');
  const buf = Buffer.allocUnsafe(1 + g.length + 1 + 8);
  buf[0] = TAG_OFFSET;
  g.copy(buf, 1);
  buf[1 + g.length] = 0;
  buf.writeUInt32BE(topicId, 2 + g.length);
  buf.writeUInt32BE(partition, 6 + g.length);
  return buf;
}

export function decodeOffsetKey(key: Buffer): { group: string; topicId: number; partition: number } {
  const end = key.length - 9;
  return {
    group: key.toString('utf8', 1, end),
    topicId: key.readUInt32BE(end + 1),
    partition: key.readUInt32BE(end + 5),
  };
}

export function offsetPrefixRange(): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.from([TAG_OFFSET]), lt: Buffer.from([TAG_OFFSET + 1]) };
}

/** Key prefix (as a string; store keys are utf8) of the state stores of one task of a group. */
export function stateKeyPrefix(group: string, partition: number): string {
  return `${String.fromCharCode(TAG_STATE)}${group}\u0000${partition}\u0000`;
}

/** The range holding every task's state of a group. */
export function stateGroupRange(group: string): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.from(`${String.fromCharCode(TAG_STATE)}${group}\u0000`, 'utf8'), lt: Buffer.from(`${String.fromCharCode(TAG_STATE)}${group}\u0001`, 'utf8') };
}

/** The partition of a key under stateGroupRange(group). */
export function stateKeyPartition(group: string, key: Buffer): number {
  const start = Buffer.byteLength(group, 'utf8') + 2;
  const end = key.indexOf(0, start);
  return Number(key.toString('latin1', start, end < 0 ? key.length : end));
}
