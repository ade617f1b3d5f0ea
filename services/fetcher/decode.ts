/**
 * Content handling that needs no network: which types are worth a body and binary detection. The
 * body is kept as bytes; decoding its charset is the parser's business (services/parser/charset.ts).
 */
export { parseContentType, textKindOf } from '../common/content-type.ts';
export type { ParsedContentType, TextKind } from '../common/content-type.ts';

/** Bytes of decoded body inspected by looksBinary. */
export const BINARY_SNIFF_BYTES = 1024;

/**
 * True for bytes that cannot be a text document: any NUL, or more than 10 % C0 controls other than
 * TAB, LF, FF, CR and ESC (ESC is legitimate in ISO-2022-JP). UTF-16 text has NULs, so a UTF-16 BOM
 * or a declared UTF-16 charset exempts the body.
 */
export function looksBinary(buf: Uint8Array, declaredCharset?: string): boolean {
  const n = Math.min(buf.length, BINARY_SNIFF_BYTES);
  if (n === 0) return false;
  const b0 = buf[0];
  const b1 = buf[1];
  if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0xff && b1 === 0xfe)) return false;
  if (declaredCharset !== undefined && /^utf-?16/i.test(declaredCharset)) return false;
  let controls = 0;
  for (let i = 0; i < n; i++) {
    const b = buf[i] as number;
    if (b >= 0x20) continue;
    if (b === 0) return true;
    if (b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b) controls++;
  }
  return controls * 10 > n;
}
