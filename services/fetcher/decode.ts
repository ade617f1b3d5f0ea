/**
 * Content handling that needs no network: which types are worth a body and binary detection. The
 * body is kept as bytes; decoding its charset is the parser's business (services/parser/charset.ts).
 */
export { BINARY_SNIFF_BYTES, looksBinary, parseContentType, textKindOf } from '../common/content-type.ts';
export type { ParsedContentType, TextKind } from '../common/content-type.ts';
