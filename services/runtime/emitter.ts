/**
 * The one path from a processor's emit to an OutRecord: the topic must be declared, the value is
 * serialised once, and the record is checked against its topic's maximum message size before it is
 * ever sent. A record that does not fit is split or shrunk when its topic allows it (a bundle of
 * links becomes smaller bundles, a page loses the end of its body and says why), otherwise it
 * becomes a dead letter with the reason — so one oversized output can never keep a partition
 * resending forever.
 */
import type { Logger } from './logger.ts';
import type { ServiceMetrics } from './metrics.ts';
import type { TopicCatalog, ValueCodec } from './catalog.ts';
import { EncodedValue } from './processor.ts';
import type { EmitOptions } from './processor.ts';
import type { LogRecord, OutRecord } from './transport.ts';
import { ServiceDefinitionError } from './errors.ts';
import { DEADLETTER_TOPIC, RECORD_OVERHEAD_BYTES, deadLetterRecord, deadLetterValue } from './deadletter.ts';

export type Origin = Pick<LogRecord, 'topic' | 'partition' | 'offset' | 'timestamp'>;

export interface EmitterSettings {
  readonly service: string;
  readonly outputs: readonly string[];
  readonly catalog: TopicCatalog;
  readonly physical: (logical: string) => string;
  /** Maximum record size per logical output topic (dead-letter topic included). */
  readonly maxBytes: ReadonlyMap<string, number>;
  readonly now: () => number;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
}

export function recordSize(key: string | null, value: Buffer | null, headers?: Readonly<Record<string, string>>): number {
  let size = RECORD_OVERHEAD_BYTES + (key === null ? 0 : Buffer.byteLength(key)) + (value?.length ?? 0);
  if (headers) for (const [k, v] of Object.entries(headers)) size += Buffer.byteLength(k) + Buffer.byteLength(v) + 8;
  return size;
}

/** A value as its topic carries it: the topic's codec, or UTF-8 JSON. */
function encodeWith(codec: ValueCodec | undefined, value: unknown): Buffer {
  return codec !== undefined ? codec.encode(value) : Buffer.from(JSON.stringify(value), 'utf8');
}

export class OutputEmitter {
  private readonly allowed: Set<string>;

  constructor(private readonly settings: EmitterSettings) {
    this.allowed = new Set([...settings.outputs, DEADLETTER_TOPIC]);
  }

  maxBytesOf(logical: string): number {
    const max = this.settings.maxBytes.get(logical);
    if (max === undefined) throw new ServiceDefinitionError('MEGURI_ERR_UNDECLARED_TOPIC', `no size limit known for topic "${logical}"`);
    return max;
  }

  /** Encodes one emit into `sink`. `origin` is the input being processed, for dead letters. */
  emit(sink: OutRecord[], topic: string, key: string | null, value: unknown, options: EmitOptions, origin: Origin | undefined): void {
    const s = this.settings;
    if (!this.allowed.has(topic)) {
      throw new ServiceDefinitionError('MEGURI_ERR_UNDECLARED_TOPIC', `${s.service} may not emit to "${topic}"; declared outputs: ${[...this.allowed].join(', ')}`);
    }
    const codec = s.catalog.codec?.(topic);
    const encoded = value instanceof EncodedValue ? value.bytes : encodeWith(codec, value);
    const max = this.maxBytesOf(topic);
    const size = recordSize(key, encoded, options.headers);
    if (size <= max) {
      sink.push(this.outRecord(topic, key, encoded, options));
      return;
    }
    const reason = `${size}-byte record exceeds the ${max}-byte max.message.bytes of topic ${s.physical(topic)}`;
    const fitted = this.fit(topic, key, value, encoded, options, max, reason);
    if (fitted === undefined) {
      this.deadLetter(sink, origin ?? { topic: s.physical(topic), partition: options.partition ?? 0, offset: -1, timestamp: s.now() }, key, encoded, 'MEGURI_ERR_RECORD_TOO_LARGE', `output to ${topic} not sent: ${reason}`);
      return;
    }
    for (const bytes of fitted) sink.push(this.outRecord(topic, key, bytes, options));
    s.metrics.truncatedOutputs.inc({ topic });
    s.logger.warn({ topic, key, bytes: size, maxBytes: max, records: fitted.length }, fitted.length > 1 ? 'output split to fit its topic' : 'output shrunk to fit its topic');
  }

  /**
   * An output too large for its topic as values that fit: split by the catalog (several records,
   * or one smaller), else shrunk (one smaller record); undefined when neither fits.
   */
  private fit(topic: string, key: string | null, value: unknown, encoded: Buffer, options: EmitOptions, max: number, reason: string): Buffer[] | undefined {
    const s = this.settings;
    const codec = s.catalog.codec?.(topic);
    const overhead = recordSize(key, encoded, options.headers) - encoded.length;
    // Splitting and shrinking work on the value: an encoded one is decoded first (rare: records past the limit).
    const plain = value instanceof EncodedValue ? (codec !== undefined ? codec.decode(value.bytes) : (JSON.parse(value.bytes.toString('utf8')) as unknown)) : value;
    const fits = (values: readonly unknown[] | undefined): Buffer[] | undefined => {
      if (values === undefined || values.length === 0) return undefined;
      const out = values.map((v) => encodeWith(codec, v));
      return out.every((b) => recordSize(key, b, options.headers) <= max) ? out : undefined;
    };
    const split = fits(s.catalog.split?.(topic, plain, max - overhead));
    if (split !== undefined) return split;
    const smaller = s.catalog.shrink?.(topic, plain, max - overhead - 1024, reason);
    return smaller === undefined ? undefined : fits([smaller]);
  }

  private outRecord(topic: string, key: string | null, value: Buffer, options: EmitOptions): OutRecord {
    const s = this.settings;
    return {
      topic: s.physical(topic),
      key,
      value,
      ...(options.partition !== undefined ? { partition: options.partition } : {}),
      timestamp: options.timestamp ?? s.now(),
      ...(options.headers ? { headers: options.headers } : {}),
      conforms: true,
    };
  }

  /** Adds a dead letter for `raw` (a consumed record's value or an output that could not be sent). */
  deadLetter(sink: OutRecord[], origin: Origin, key: string | null, raw: Buffer | null, code: string, reason: string): void {
    const s = this.settings;
    const value = deadLetterValue({
      service: s.service,
      version: s.catalog.deadletterVersion,
      origin,
      key,
      raw,
      code,
      reason,
      at: s.now(),
      maxBytes: this.maxBytesOf(DEADLETTER_TOPIC),
    });
    sink.push(deadLetterRecord(s.physical(DEADLETTER_TOPIC), value));
    s.metrics.deadletters.inc({ topic: origin.topic, code });
    s.logger.warn({ code, reason: value.reason, topic: origin.topic, partition: origin.partition, offset: origin.offset }, 'record sent to dead-letter topic');
  }
}
