/** Content-Type parsing shared by the fetcher (which bodies to keep) and the parser (how to decode them). */

/** How a body is decoded: HTML rules, plain text (robots.txt) or XML (sitemaps, feeds). */
export type TextKind = 'html' | 'text' | 'xml';

const TEXT_TYPES: ReadonlyMap<string, TextKind> = new Map([
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
  ['text/plain', 'text'],
  ['application/xml', 'xml'],
  ['text/xml', 'xml'],
  ['application/rss+xml', 'xml'],
  ['application/atom+xml', 'xml'],
]);

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

/** The text kind of a content type, or undefined for types whose body is not kept. */
export function textKindOf(essence: string): TextKind | undefined {
  return TEXT_TYPES.get(essence);
}
