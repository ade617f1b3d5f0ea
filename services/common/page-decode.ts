/**
 * Reading stored `pages` values outside the stream runtime (analyze, WARC export, replay, the
 * dashboard): schemas/pages.ts's decoder with the runtime's compiled conformance test of the
 * header, so a header zod would return unchanged is taken as it is instead of being parsed again.
 */
import { pageRecord, safeDecodePageRecord as decodeWithTest } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { conformanceOf } from '../runtime/conformance.ts';

function conforms(fields: Record<string, unknown>): boolean {
  return conformanceOf(pageRecord)?.(fields) === true;
}

/** One `pages` value, framing and header checked, as a result instead of a throw. */
export function safeDecodePageRecord(value: Buffer): { ok: true; page: PageRecord } | { ok: false; reason: string } {
  return decodeWithTest(value, conforms);
}
