/**
 * Which bodies are kept and how a sitemap or feed is recognised: every XML type they are served as
 * in practice (RFC 6839's `+xml` suffix, RSS 1.0's application/rdf+xml, charset parameters), and the
 * document's root element deciding what it is, whatever its type.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseContentType, textKindOf } from '../../services/common/content-type.ts';
import { documentRootKind, rootElementName } from '../../services/parser/document-root.ts';
import { pageToRecords } from '../../services/parser/outcome.ts';
import { pageText } from '../../services/parser/charset.ts';
import { loadLanguageDetector } from '../../services/parser/language.ts';
import { linksRecord, pageRecord, type PageRecord } from '../../schemas/index.ts';

before(() => loadLanguageDetector());

const kindOf = (header: string): string | undefined => textKindOf(parseContentType(header)!.essence);

describe('kept content types', () => {
  it('keeps every XML type, with or without parameters', () => {
    for (const t of [
      'application/rdf+xml',
      'application/rss+xml',
      'application/atom+xml',
      'application/x-rss+xml',
      'application/vnd.example.sitemap+xml',
      'text/xml',
      'application/xml',
      'text/xml; charset="ISO-8859-1"',
      'APPLICATION/XML;charset=utf-8',
      'application/rdf+xml ; charset = UTF-8',
    ]) {
      assert.equal(kindOf(t), 'xml', t);
    }
    assert.equal(parseContentType('text/xml; charset="ISO-8859-1"')?.charset, 'ISO-8859-1');
  });

  it('XHTML stays HTML; types that are not text are not kept', () => {
    assert.equal(kindOf('application/xhtml+xml; charset=utf-8'), 'html');
    assert.equal(kindOf('text/plain; charset=utf-8'), 'text');
    for (const t of ['application/octet-stream', 'image/png', 'application/json', 'application/xml-dtd', 'application/+xml', 'xml']) assert.equal(kindOf(t), undefined, t);
  });
});

describe('the root element', () => {
  it('is found past the declaration, comments, processing instructions and a doctype', () => {
    assert.equal(rootElementName('\uFEFF<?xml version="1.0"?>\n<!-- c --><?xml-stylesheet href="s"?>\n<!DOCTYPE rdf:RDF [<!ENTITY x "y">]>\n<rdf:RDF xmlns:rdf="r">'), 'rdf');
    assert.equal(rootElementName('<urlset>'), 'urlset');
    assert.equal(rootElementName('https://a.test/one\nhttps://a.test/two\n'), undefined, 'a text sitemap has none');
    assert.equal(documentRootKind('<feed xmlns="http://www.w3.org/2005/Atom">'), 'feed');
    assert.equal(documentRootKind('<?xml version="1.0"?><sitemapindex>'), 'sitemap');
    assert.equal(documentRootKind('<!doctype html><html>'), 'other');
  });
});

const T0 = Date.UTC(2025, 0, 10);

function source(url: string, body: Buffer, contentType: string, reason: 'feed' | 'sitemap'): PageRecord {
  return pageRecord.parse({
    v: 1,
    request: { v: 1, requestId: 'r1', url, host: new URL(url).host, reason, score: 0, depth: 0, cgiHops: 0, attempt: 1, issuedAt: T0 - 100 },
    finalUrl: url,
    redirects: [],
    status: 200,
    headers: { 'content-type': contentType },
    contentType: contentType.split(';')[0],
    body,
    bodyTruncated: false,
    bytes: body.length,
    decodedBytes: body.length,
    timing: { startedAt: T0 - 100, totalMs: 100 },
    fetchedAt: T0,
  });
}

const RDF = `<?xml version="1.0" encoding="ISO-8859-1"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
  <channel rdf:about="http://a.test/"><title>Caf\u00e9</title></channel>
  <item rdf:about="http://a.test/1"><title>Caf\u00e9 1</title><link>http://a.test/1</link></item>
  <item rdf:about="http://a.test/2"><title>2</title><link>http://a.test/2</link></item>
</rdf:RDF>`;

describe('a document read by its root element, whatever its type', () => {
  it('an RSS 1.0 feed served as application/rdf+xml, and as text/html, in its declared charset', () => {
    for (const type of ['application/rdf+xml', 'text/html; charset=windows-1252', 'text/plain']) {
      const page = source('http://a.test/index.rdf', Buffer.from(RDF, 'latin1'), type, 'feed');
      assert.equal(pageText(page)?.charset, 'windows-1252', `${type}: the XML declaration names the charset`);
      const { outcome, links } = pageToRecords(page);
      linksRecord.parse(outcome);
      assert.equal(outcome.result, 'ok', type);
      assert.equal(outcome.document?.format, 'rdf', type);
      assert.deepEqual(links.map((l) => l.url), ['http://a.test/1', 'http://a.test/2'], type);
    }
  });

  it('a feed URL that answers with a sitemap is read as a sitemap; its URLs are the feed\'s items', () => {
    const body = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a.test/x</loc></url><url><loc>http://a.test/y</loc></url></urlset>';
    const { outcome, links } = pageToRecords(source('http://a.test/feed', Buffer.from(body), 'application/xml', 'feed'));
    linksRecord.parse(outcome);
    assert.equal(outcome.result, 'ok');
    assert.equal(outcome.document?.kind, 'feed');
    assert.equal(outcome.document?.format, 'urlset');
    assert.equal(outcome.document?.itemIds?.length, 2);
    assert.deepEqual(links.map((l) => [l.url, l.via]), [['http://a.test/x', 'feed'], ['http://a.test/y', 'feed']]);
  });

  it('a sitemap URL that answers with an Atom feed is read as a feed', () => {
    const body = '<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>e</id><link href="http://a.test/e"/></entry></feed>';
    const { outcome, links } = pageToRecords(source('http://a.test/sitemap.xml', Buffer.from(body), 'text/xml; charset=utf-8', 'sitemap'));
    assert.equal(outcome.document?.format, 'feed');
    assert.deepEqual(links.map((l) => l.url), ['http://a.test/e']);
  });

  it('an HTML page given as a feed stays a clear error, with no link', () => {
    const { outcome, links } = pageToRecords(source('http://a.test/feed', Buffer.from('<!doctype html><html><a href="/x">x</a></html>'), 'text/html', 'feed'));
    assert.equal(outcome.result, 'error');
    assert.equal(outcome.errorCode, 'MEGURI_ERR_FEED_FORMAT');
    assert.equal(links.length, 0);
  });
});
