/** Decoding and validating consumed records against the catalog's schema of their topic. */
import type { z } from 'zod';
import type { ValueCodec } from './catalog.ts';
import type { InputRecord } from './processor.ts';
import type { LogRecord } from './transport.ts';
import { conformanceOf } from './conformance.ts';

export type Validated<In> = { ok: true; input: InputRecord<In> } | { ok: false; code: string; reason: string };

function decodeValue(value: Buffer | null, codec: ValueCodec | undefined): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (value === null) return { ok: false, reason: 'null value (tombstone) on a data topic' };
  if (codec !== undefined) {
    try {
      return { ok: true, value: codec.decode(value) };
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
  }
  try {
    return { ok: true, value: JSON.parse(value.toString('utf8')) as unknown };
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
}

export function validateInput<In>(schema: z.ZodType | undefined, record: LogRecord, codec?: ValueCodec): Validated<In> {
  const decoded = decodeValue(record.value, codec);
  if (!decoded.ok) return { ok: false, code: 'MEGURI_ERR_DECODE', reason: decoded.reason };
  // A value the schema's compiled test passes is one zod would return unchanged (conformance.ts).
  // Validation is for records from outside this process's services: one a service emitted and the
  // embedded log handed over from memory was built within its schema by typed code.
  if (!schema || record.conforms === true || conformanceOf(schema)?.(decoded.value) === true) return { ok: true, input: { ...record, value: decoded.value as In } };
  const parsed = schema.safeParse(decoded.value);
  if (!parsed.success) {
    const reason = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    return { ok: false, code: 'MEGURI_ERR_SCHEMA', reason };
  }
  return { ok: true, input: { ...record, value: parsed.data as In } };
}
