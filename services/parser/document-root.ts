/**
 * What an XML document is, by its root element rather than by the Content-Type it was served with:
 * servers send feeds and sitemaps as text/xml, application/xml, application/rdf+xml, text/html or
 * text/plain alike, and a URL given as a feed may answer with a sitemap. Pure and cheap: only the
 * prolog (declaration, processing instructions, comments, doctype) is skipped, nothing is parsed.
 */

/** Characters of prolog looked through for the root element at most. */
export const ROOT_SCAN_CHARS = 64 * 1024;

/** What a root element makes of a document. */
export type DocumentRootKind = 'feed' | 'sitemap' | 'other';

const PROLOG_PART = /^(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!doctype(?:[^[>]|\[[\s\S]*?\])*>)/i;
const START_TAG = /^<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)[\s/>]/;

/**
 * Local name (lower-case, namespace prefix dropped) of the document's root element; undefined when
 * the text does not begin with markup (a text sitemap, plain text) or the prolog is longer than
 * ROOT_SCAN_CHARS.
 */
export function rootElementName(text: string): string | undefined {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const head = text.slice(at, at + ROOT_SCAN_CHARS);
  at = 0;
  for (;;) {
    const rest = head.slice(at);
    const part = PROLOG_PART.exec(rest);
    if (part !== null && part[0].length > 0) {
      at += part[0].length;
      continue;
    }
    const tag = START_TAG.exec(rest);
    if (tag === null) return undefined;
    const name = tag[1]!.toLowerCase();
    const colon = name.indexOf(':');
    return colon < 0 ? name : name.slice(colon + 1);
  }
}

/** A feed (rss, rdf:RDF, Atom feed), a sitemap (urlset, sitemapindex) or anything else. */
export function documentRootKind(text: string): DocumentRootKind {
  const name = rootElementName(text);
  if (name === 'rss' || name === 'rdf' || name === 'feed') return 'feed';
  if (name === 'urlset' || name === 'sitemapindex') return 'sitemap';
  return 'other';
}
