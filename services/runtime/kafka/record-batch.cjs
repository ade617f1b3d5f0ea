'use strict';
/**
 * The record batch of a produce request written in one pass, for kafkajs.
 *
 * kafkajs 2.2.4 encodes a produce request record by record: an Encoder per record, a one-element
 * Buffer per varint, Long objects for every 64-bit varint, then the records copied into the batch,
 * the batch copied into a length-prefixed copy, and a byte-at-a-time CRC-32C over it. On a crawl on
 * Kafka (about a hundred records per page: the page, links, outcomes, frontier requests and the
 * scheduler's changelogs) that was the largest single cost of the event loop.
 *
 * Here `Record` only measures a record, and a batch (header, records, CRC-32C) is measured and then
 * written in place: `RecordBatch` into one buffer of the exact size, a produce request straight into
 * the buffer of the whole request, framed by `createRequest` — the bytes kafkajs would have written,
 * checked against its own encoders in test/unit/kafkajs-record-batch.test.ts. A compressed batch
 * writes its records into one buffer for the codec the same way.
 *
 * Plain CommonJS, because kafkajs.cjs installs these in place of kafkajs's modules
 * (src/protocol/recordBatch/record/v0/index.js, src/protocol/recordBatch/v0/index.js,
 * src/protocol/requests/produce/v3/request.js and src/protocol/request.js).
 */

const MAGIC_BYTE = 2;
const TIMESTAMP_MASK = 0;
const TRANSACTIONAL_MASK = 16;
/** attributes, lastOffsetDelta, firstTimestamp, maxTimestamp, producerId, producerEpoch, firstSequence, record count */
const BODY_HEADER_BYTES = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** firstOffset, batch length, partitionLeaderEpoch, magic, CRC */
const BATCH_PREFIX_BYTES = 8 + 4 + 4 + 1 + 4;

// CRC-32C (Castagnoli, reflected 0x82f63b78), eight bytes per step.
const CRC_TABLE = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  CRC_TABLE[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = CRC_TABLE[n];
  for (let k = 1; k < 8; k++) {
    c = CRC_TABLE[c & 0xff] ^ (c >>> 8);
    CRC_TABLE[k * 256 + n] = c;
  }
}

/** CRC-32C of buf[start, end), unsigned. */
function crc32c(buf, start = 0, end = buf.length) {
  const T = CRC_TABLE;
  let crc = -1;
  let i = start;
  const end8 = end - ((end - start) & 7);
  for (; i < end8; i += 8) {
    const a = crc ^ (buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24));
    crc =
      T[1792 + (a & 0xff)] ^
      T[1536 + ((a >>> 8) & 0xff)] ^
      T[1280 + ((a >>> 16) & 0xff)] ^
      T[1024 + (a >>> 24)] ^
      T[768 + buf[i + 4]] ^
      T[512 + buf[i + 5]] ^
      T[256 + buf[i + 6]] ^
      T[buf[i + 7]];
  }
  for (; i < end; i++) crc = T[(crc ^ buf[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** Bytes of an unsigned varint of a 32-bit value. */
function sizeOfUVarInt(u) {
  let bytes = 1;
  while ((u & 0xffffff80) !== 0) {
    bytes++;
    u >>>= 7;
  }
  return bytes;
}

function zigZag32(v) {
  return (v << 1) ^ (v >> 31);
}

function writeUVarInt(buf, pos, u) {
  while ((u & 0xffffff80) !== 0) {
    buf[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[pos++] = u & 0x7f;
  return pos;
}

/** The zigzag form of a 64-bit value as a BigInt (kafkajs: Long.fromValue, so fractions truncate). */
function zigZag64(value) {
  const v = BigInt.asIntN(64, BigInt(typeof value === 'number' ? Math.trunc(value) : String(value)));
  return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
}

function sizeOfVarLong(value) {
  if (typeof value === 'number' && value >= -0x40000000 && value < 0x40000000 && Number.isInteger(value)) return sizeOfUVarInt(zigZag32(value));
  let z = zigZag64(value);
  let bytes = 1;
  while (z >= 0x80n) {
    bytes++;
    z >>= 7n;
  }
  return bytes;
}

function writeVarLong(buf, pos, value) {
  if (typeof value === 'number' && value >= -0x40000000 && value < 0x40000000 && Number.isInteger(value)) return writeUVarInt(buf, pos, zigZag32(value));
  let z = zigZag64(value);
  while (z >= 0x80n) {
    buf[pos++] = Number(z & 0x7fn) | 0x80;
    z >>= 7n;
  }
  buf[pos++] = Number(z);
  return pos;
}

/** Key and value bytes as kafkajs writes them: a Buffer as it is, anything else as UTF-8 of String(it). */
function bytesOf(value) {
  if (value === null || value === undefined) return null;
  return Buffer.isBuffer(value) ? value : Buffer.from(String(value), 'utf8');
}

function sizeOfBytes(b) {
  return b === null ? 1 : sizeOfUVarInt(zigZag32(b.length)) + b.length;
}

function writeBytes(buf, pos, b) {
  if (b === null) return writeUVarInt(buf, pos, zigZag32(-1));
  pos = writeUVarInt(buf, pos, zigZag32(b.length));
  b.copy(buf, pos);
  return pos + b.length;
}

/** A record measured, written later by RecordBatch (in place of kafkajs's per-record Encoder). */
class MeasuredRecord {
  constructor(offsetDelta, timestampDelta, key, value, headers) {
    this.offsetDelta = offsetDelta;
    this.timestampDelta = timestampDelta;
    this.key = bytesOf(key);
    this.value = bytesOf(value);
    /** [key, value] pairs, repeated keys for array values, as kafkajs flattens them. */
    this.headers = [];
    for (const name of Object.keys(headers)) {
      const v = headers[name];
      if (Array.isArray(v)) for (const item of v) this.headers.push([Buffer.from(name, 'utf8'), bytesOf(item)]);
      else this.headers.push([Buffer.from(name, 'utf8'), bytesOf(v)]);
    }
    let body = 1 + sizeOfVarLong(timestampDelta) + sizeOfUVarInt(zigZag32(offsetDelta)) + sizeOfBytes(this.key) + sizeOfBytes(this.value);
    body += sizeOfUVarInt(zigZag32(this.headers.length));
    for (const [k, v] of this.headers) body += sizeOfBytes(k) + sizeOfBytes(v);
    this.bodySize = body;
    this.size = sizeOfUVarInt(zigZag32(body)) + body;
  }

  write(buf, pos) {
    pos = writeUVarInt(buf, pos, zigZag32(this.bodySize));
    buf[pos++] = 0; // attributes: none used
    pos = writeVarLong(buf, pos, this.timestampDelta);
    pos = writeUVarInt(buf, pos, zigZag32(this.offsetDelta));
    pos = writeBytes(buf, pos, this.key);
    pos = writeBytes(buf, pos, this.value);
    pos = writeUVarInt(buf, pos, zigZag32(this.headers.length));
    for (const [k, v] of this.headers) {
      pos = writeBytes(buf, pos, k);
      pos = writeBytes(buf, pos, v);
    }
    return pos;
  }
}

/** kafkajs's Record(...) in its place: measures the record, which RecordBatch writes. */
function measureRecord({ offsetDelta = 0, timestampDelta = 0, key, value, headers = {} }) {
  return new MeasuredRecord(offsetDelta, timestampDelta, key, value, headers);
}

/** Size and writer of a record RecordBatch was given: a measured one, or an Encoder of one. */
function recordSize(r) {
  return r instanceof MeasuredRecord ? r.size : r.buffer.length;
}

/** A kafkajs Encoder holding `buf` as written (kafkajs reads `buf`, `offset` and `buffer`). */
function asEncoder(Encoder, buf) {
  const e = new Encoder(0);
  e.buf = buf;
  e.offset = buf.length;
  return e;
}

function writeRecord(r, buf, pos) {
  if (r instanceof MeasuredRecord) return r.write(buf, pos);
  const b = r.buffer;
  b.copy(buf, pos);
  return pos + b.length;
}

/**
 * The record-batch module for kafkajs, bound to its Encoder (the result must be one: the produce
 * request copies it with writeEncoder), its Long and its compression codecs (loaded at the first
 * batch, from the kafkajs copy in use by then).
 */
function createRecordBatch({ Encoder, longPath, compressionPath }) {
  let Long;
  let compression;
  function load() {
    Long ??= require(longPath);
    compression ??= require(compressionPath);
  }

  function writeInt64(buf, pos, value) {
    load();
    const long = Long.fromValue(value);
    buf.writeInt32BE(long.getHighBits(), pos);
    buf.writeInt32BE(long.getLowBits(), pos + 4);
    return pos + 8;
  }

  function recordsBuffer(records) {
    let total = 0;
    for (const r of records) total += recordSize(r);
    const buf = Buffer.allocUnsafe(total);
    let pos = 0;
    for (const r of records) pos = writeRecord(r, buf, pos);
    return buf;
  }

  /**
   * A record batch measured (and its records compressed, if asked), written later by `write` into
   * a buffer someone else allocated: the produce request writes all its batches into its own.
   */
  async function planBatch({
    compression: codec = 0,
    firstOffset = 0,
    firstTimestamp = Date.now(),
    maxTimestamp = Date.now(),
    partitionLeaderEpoch = 0,
    lastOffsetDelta = 0,
    transactional = false,
    producerId = -1,
    producerEpoch = 0,
    firstSequence = 0,
    records = [],
  }) {
    load();
    const attributes = (codec & compression.COMPRESSION_CODEC_MASK) | TIMESTAMP_MASK | (transactional ? TRANSACTIONAL_MASK : 0);
    let compressed;
    let recordBytes = 0;
    if (codec === compression.Types.None) {
      for (const r of records) recordBytes += recordSize(r);
    } else {
      compressed = await compression.lookupCodec(codec).compress(asEncoder(Encoder, recordsBuffer(records)));
      recordBytes = compressed.length;
    }
    const size = BATCH_PREFIX_BYTES + BODY_HEADER_BYTES + recordBytes;
    /** Writes the batch at buf[start, start + size) and returns start + size. */
    const write = (out, start) => {
      let pos = writeInt64(out, start, firstOffset);
      out.writeInt32BE(size - 12, pos);
      out.writeInt32BE(partitionLeaderEpoch, pos + 4);
      out.writeInt8(MAGIC_BYTE, pos + 8);
      const bodyStart = start + BATCH_PREFIX_BYTES;
      pos = bodyStart;
      out.writeInt16BE(attributes, pos);
      out.writeInt32BE(lastOffsetDelta, pos + 2);
      pos = writeInt64(out, pos + 6, firstTimestamp);
      pos = writeInt64(out, pos, maxTimestamp);
      pos = writeInt64(out, pos, producerId);
      out.writeInt16BE(producerEpoch, pos);
      out.writeInt32BE(firstSequence, pos + 2);
      out.writeInt32BE(records.length, pos + 6);
      pos += 10;
      if (compressed === undefined) {
        for (const r of records) pos = writeRecord(r, out, pos);
      } else {
        compressed.copy(out, pos);
        pos += compressed.length;
      }
      if (pos !== start + size) throw new Error(`record batch: wrote ${pos - start} of ${size} bytes`);
      out.writeUInt32BE(crc32c(out, bodyStart, pos), bodyStart - 4);
      return pos;
    };
    return { size, write };
  }

  async function RecordBatch(batch) {
    const plan = await planBatch(batch);
    const out = Buffer.allocUnsafe(plan.size);
    plan.write(out, 0);
    return asEncoder(Encoder, out);
  }

  return { RecordBatch, planBatch, MAGIC_BYTE };
}

/** Bytes of a protocol string as kafkajs writes it: Int16 length (−1 for null), then UTF-8. */
function sizeOfString(value) {
  return value === null || value === undefined ? 2 : 2 + Buffer.byteLength(value, 'utf8');
}

function writeString(buf, pos, value) {
  if (value === null || value === undefined) {
    buf.writeInt16BE(-1, pos);
    return pos + 2;
  }
  const n = Buffer.byteLength(value, 'utf8');
  buf.writeInt16BE(n, pos);
  buf.write(value, pos + 2, n, 'utf8');
  return pos + 2 + n;
}

/**
 * A request body measured first and written once, straight into the buffer of the whole request
 * (createRequest below). It still reads as a kafkajs Encoder (`buf`, `offset`, `buffer`, `size()`),
 * written into a buffer of its own on first use, for any caller that wants one.
 */
class DeferredPayload {
  constructor(size, writeTo) {
    this.bytes = size;
    /** Writes the body at buf[start, start + size) and returns start + size; may run again. */
    this.writeTo = writeTo;
    this.written = undefined;
  }

  size() {
    return this.bytes;
  }

  get offset() {
    return this.bytes;
  }

  get buf() {
    if (this.written === undefined) {
      const buf = Buffer.allocUnsafe(this.bytes);
      this.writeTo(buf, 0);
      this.written = buf;
    }
    return this.written;
  }

  get buffer() {
    return this.buf;
  }
}

/**
 * kafkajs's Produce request (protocol/requests/produce/v3/request.js, which versions 4 to 7 reuse)
 * over the record batch above: the same bytes, without a copy of every message (kafkajs spread each
 * one into a new object to add its offset and timestamp deltas), an Encoder per topic and
 * partition, or a copy of every batch: the batches are measured, and the body is written once, into
 * the request's own buffer (a DeferredPayload). `planBatch` is the one createRecordBatch made.
 */
function createProduceRequest({ planBatch }) {
  const PRODUCE = 0;
  return ({ acks, timeout, transactionalId = null, producerId, producerEpoch = 0, compression, topicData }) => ({
    apiKey: PRODUCE,
    apiVersion: 3,
    apiName: 'Produce',
    expectResponse: () => acks !== 0,
    encode: async () => {
      const topics = [];
      let size = sizeOfString(transactionalId) + 2 + 4 + 4;
      for (const { topic, partitions } of topicData) {
        const batches = [];
        size += sizeOfString(topic) + 4;
        for (const { partition, messages, firstSequence } of partitions) {
          const { firstTimestamp, maxTimestamp, now } = batchTimes(messages);
          const batch = await planBatch({
            // Absent, both take planBatch's defaults, kafkajs's own (no compression, producer id -1).
            compression,
            firstTimestamp,
            maxTimestamp,
            producerId,
            producerEpoch,
            firstSequence,
            transactional: !!transactionalId,
            lastOffsetDelta: messages.length - 1,
            records: measureMessages(messages, firstTimestamp, now),
          });
          batches.push({ partition, batch });
          size += 4 + 4 + batch.size;
        }
        topics.push({ topic, batches });
      }
      return new DeferredPayload(size, (buf, start) => {
        let pos = writeString(buf, start, transactionalId);
        buf.writeInt16BE(acks, pos);
        buf.writeInt32BE(timeout, pos + 2);
        buf.writeInt32BE(topics.length, pos + 6);
        pos += 10;
        for (const { topic, batches } of topics) {
          pos = writeString(buf, pos, topic);
          buf.writeInt32BE(batches.length, pos);
          pos += 4;
          for (const { partition, batch } of batches) {
            buf.writeInt32BE(partition, pos);
            buf.writeInt32BE(batch.size, pos + 4);
            pos = batch.write(buf, pos + 8);
          }
        }
        if (pos !== start + size) throw new Error(`produce request: wrote ${pos - start} of ${size} bytes`);
        return pos;
      });
    },
  });
}

/**
 * kafkajs's protocol/request.js, which frames every request: its size, then the header (API key and
 * version, correlation id, client id), then the body. kafkajs copied the body into a header-prefixed
 * Encoder and that into a size-prefixed one, each allocated at the next power of two: three to four
 * times the bytes of every produce request, in buffers too large for Node's pool (and so counted by
 * V8 as external memory, which starts full garbage collections). Here the request is one buffer of
 * its exact size; a DeferredPayload body is written straight into it, any other body copied once.
 */
function createRequest({ Encoder }) {
  return async ({ correlationId, clientId, request: { apiKey, apiVersion, encode } }) => {
    const payload = await encode();
    const body = payload instanceof DeferredPayload ? undefined : payload.buffer;
    const bodySize = body === undefined ? payload.size() : body.length;
    const headerSize = 2 + 2 + 4 + sizeOfString(clientId);
    const out = Buffer.allocUnsafe(4 + headerSize + bodySize);
    out.writeInt32BE(headerSize + bodySize, 0);
    out.writeInt16BE(apiKey, 4);
    out.writeInt16BE(apiVersion, 6);
    out.writeInt32BE(correlationId, 8);
    const at = writeString(out, 12, clientId);
    if (body === undefined) payload.writeTo(out, at);
    else body.copy(out, at);
    return asEncoder(Encoder, out);
  };
}

/**
 * First and last timestamps of a batch as kafkajs picks them: the messages' own, sorted as strings
 * (Array.prototype.sort without a comparator), or now for a batch without any.
 */
function batchTimes(messages) {
  let first;
  let firstKey = '';
  let last;
  let lastKey = '';
  for (const m of messages) {
    const t = m.timestamp;
    if (t === null || t === undefined) continue;
    const key = String(t);
    if (first === undefined || key < firstKey) {
      first = t;
      firstKey = key;
    }
    if (last === undefined || key >= lastKey) {
      last = t;
      lastKey = key;
    }
  }
  const now = Date.now();
  return first === undefined ? { firstTimestamp: now, maxTimestamp: now, now } : { firstTimestamp: first, maxTimestamp: last, now };
}

/** The batch's records measured, each with its offset and its timestamp's distance from the first. */
function measureMessages(messages, firstTimestamp, now) {
  const records = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    records[i] = new MeasuredRecord(i, (m.timestamp || now) - firstTimestamp, m.key, m.value, m.headers ?? {});
  }
  return records;
}

module.exports = { measureRecord, createRecordBatch, createProduceRequest, createRequest, crc32c, MeasuredRecord, DeferredPayload };
