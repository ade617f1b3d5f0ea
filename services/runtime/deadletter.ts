/**
 * Dead letters: a record a service could not accept (or an output it could not send) goes to the
 * dead-letter topic with its origin, a stable code and the reason — never dropped silently. A dead
 * letter always fits its topic: a raw value too large for it is cut, and the reason says so.
 */
import type { LogRecord, OutRecord } from './transport.ts';

export const DEADLETTER_TOPIC = 'deadletter';

/** Bytes a record needs besides key and value in a Kafka record batch (batch header, record framing). */
export const RECORD_OVERHEAD_BYTES = 128;

export interface DeadLetterValue {
  readonly v: number;
  readonly service: string;
  readonly reason: string;
  readonly code: string;
  readonly origin: { readonly topic: string; readonly partition: number; readonly offset: string; readonly timestamp: number };
  readonly key: string | null;
  readonly value: string;
  readonly valueEncoding: 'utf8' | 'base64';
  readonly at: number;
}

function isUtf8(buf: Buffer): boolean {
  return Buffer.from(buf.toString('utf8'), 'utf8').equals(buf);
}

export interface DeadLetterInput {
  readonly service: string;
  readonly version: number;
  /** Where the rejected data came from (for an output: the input being processed, if known). */
  readonly origin: Pick<LogRecord, 'topic' | 'partition' | 'offset' | 'timestamp'>;
  readonly key: string | null;
  readonly raw: Buffer | null;
  readonly code: string;
  readonly reason: string;
  readonly at: number;
  /** The dead-letter topic's maximum record size. */
  readonly maxBytes: number;
}

/** Builds a dead-letter value that fits `maxBytes` (the raw value is cut if it must be). */
export function deadLetterValue(input: DeadLetterInput): DeadLetterValue {
  const full = input.raw ?? Buffer.alloc(0);
  let raw = full;
  for (let round = 0; ; round++) {
    const reason = raw.length === full.length ? input.reason : `${input.reason} (value cut to its first ${raw.length} of ${full.length} bytes to fit the dead-letter topic)`;
    const utf8 = isUtf8(raw);
    const value: DeadLetterValue = {
      v: input.version,
      service: input.service,
      reason,
      code: input.code,
      origin: { topic: input.origin.topic, partition: input.origin.partition, offset: String(input.origin.offset), timestamp: input.origin.timestamp },
      key: input.key,
      value: utf8 ? raw.toString('utf8') : raw.toString('base64'),
      valueEncoding: utf8 ? 'utf8' : 'base64',
      at: input.at,
    };
    const size = Buffer.byteLength(JSON.stringify(value)) + Buffer.byteLength(input.key ?? '') + RECORD_OVERHEAD_BYTES;
    if (size <= input.maxBytes || raw.length === 0 || round >= 8) return value;
    // Escaping makes the size grow faster than the raw value: cut by the measured ratio, with room.
    raw = raw.subarray(0, Math.max(0, Math.floor(raw.length * ((input.maxBytes - 1024) / size) * 0.95)));
  }
}

/** The dead-letter OutRecord for a value built by deadLetterValue. */
export function deadLetterRecord(physicalTopic: string, value: DeadLetterValue): OutRecord {
  return { topic: physicalTopic, key: value.key, value: Buffer.from(JSON.stringify(value), 'utf8') };
}
