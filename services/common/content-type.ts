/** Content-Type parsing shared by the fetcher (which bodies to keep) and the parser (how to decode them). */

/** How a body is decoded: HTML rules, plain text (robots.txt) or XML (sitemaps, feeds). */
export type TextKind = 'html' | 'text' | 'xml';

const TEXT_TYPES: ReadonlyMap<string, TextKind> = new Map([
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
  ['text/plain', 'text'],
  ['application/xml', 'xml'],
  ['text/xml', 'xml'],
  // RSS 1.0 is registered as RDF; the rest of the XML family arrives through the +xml suffix.
  ['application/rdf+xml', 'xml'],
  ['application/rss+xml', 'xml'],
  ['application/atom+xml', 'xml'],
]);

/** A structured syntax suffix of XML (RFC 6839 §4.1): `application/rdf+xml`, `application/x-rss+xml`, `text/vnd.foo+xml`. */
const XML_SUFFIX = /^[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.+-]+\+xml$/;

export interface ParsedContentType {
  /** Lower-case `type/subtype`, parameters dropped. */
  essence: string;
  /** The charset parameter as written, unquoted. */
  charset?: string;
}

const CHARSET_PARAM = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

export function parseContentType(value: string | undefined): ParsedContentType | undefined {
  if (value === undefined) return undefined;
  const semi = value.indexOf(';');
  const essence = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  if (essence.length === 0) return undefined;
  const out: ParsedContentType = { essence: essence.length > 256 ? essence.slice(0, 256) : essence };
  if (semi >= 0) {
    const m = CHARSET_PARAM.exec(value);
    const cs = m?.[1] ?? m?.[2];
    if (cs) out.charset = cs.trim();
  }
  return out;
}

/**
 * The text kind of a content type's essence (lower-case, parameters dropped: parseContentType), or
 * undefined for types whose body is not kept. Any `+xml` type is XML (RFC 6839), except XHTML,
 * which is read as HTML.
 */
export function textKindOf(essence: string): TextKind | undefined {
  return TEXT_TYPES.get(essence) ?? (XML_SUFFIX.test(essence) ? 'xml' : undefined);
}

/** Bytes of decoded body inspected by looksBinary (the fetcher's check, and the reader's for a body kept compressed). */
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
