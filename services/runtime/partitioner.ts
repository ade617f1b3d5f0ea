/**
 * Key → partition with Kafka's default partitioner: murmur2 of the key's UTF-8 bytes, made positive
 * (`& 0x7fffffff`), modulo the partition count. Both transports call this, so a host lands on the
 * same partition number on the embedded log and on Kafka, and on the same one as a Java producer
 * would put it. test/unit/partitioner.test.ts holds it to kafkajs's DefaultPartitioner over many
 * keys; kafkajs computes the same hash in 64-bit `Long` objects, which took microseconds per key,
 * and every record a crawl writes has a key (a host, or a URL for `revisits` and `changes`).
 */

// murmur2's mixing constants and the seed Kafka uses.
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/**
 * murmur2 of a string's UTF-8 bytes. An ASCII string (nearly every host and URL) is its own bytes;
 * any other is first turned into a string with one character per byte of its UTF-8.
 */
export function murmur2(key: string): number {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0x7f) return murmur2OfBytes(Buffer.from(key, 'utf8').toString('latin1'));
  return murmur2OfBytes(key);
}

/** murmur2 over a string of character codes 0-255 taken as bytes (Kafka's `Utils.murmur2`), as a signed 32-bit integer. */
function murmur2OfBytes(key: string): number {
  const length = key.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 8) | (key.charCodeAt(i + 2) << 16) | (key.charCodeAt(i + 3) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The last one to three bytes.
  const rest = length & 3;
  if (rest !== 0) {
    if (rest === 3) h ^= key.charCodeAt(whole + 2) << 16;
    if (rest >= 2) h ^= key.charCodeAt(whole + 1) << 8;
    h ^= key.charCodeAt(whole);
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

let roundRobin = 0;

/** Partition for `key` among `partitions`; records without a key are spread round-robin. */
export function partitionForKey(key: string | null, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`invalid partition count ${partitions}`);
  if (key == null) return roundRobin++ % partitions;
  return (murmur2(key) & 0x7fffffff) % partitions;
}
