/**
 * No output exceeds its topic's limit, on each transport with the limit it has there: the parser,
 * run as a stream service, reads pages ten times larger than its `links` topic's max.message.bytes
 * (the embedded log at Kafka's default 1 MiB; the real broker with the topic created at 256 KiB,
 * which the service reads back from the broker, and `pages` at 16 MiB to carry the inputs) and writes every record within it: nothing is
 * dead-lettered, no link is lost, and a robots.txt outcome carries its first rules.
 */
import { fetchedPage } from '../support/pages.ts';
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { StreamService, DEFAULT_MAX_MESSAGE_BYTES } from '../../services/runtime/index.ts';
import type { Transport } from '../../services/runtime/index.ts';
import { encodePageRecord, linksRecord } from '../../schemas/index.ts';
import type { LinksRecord, PageRecord } from '../../schemas/index.ts';
import { parserService } from '../../services/parser/service.ts';
import { linksOf } from '../../services/common/link-bundles.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { transportKinds, openTransport, tempDir, removeDir, uniquePrefix, waitFor, readAllBytes } from '../support/transports.ts';

const ORIGIN = 'http://big.test';
/**
 * Kafka's limit is set well below its default and below the ~768 KiB produce requests the Kafka
 * transport sends: the broker applies max.message.bytes to a whole record batch, so the transport
 * must also split a send by each topic's limit, or batches of records that each fit are refused.
 */
const LIMITS = { embedded: DEFAULT_MAX_MESSAGE_BYTES, kafka: 256 * 1024 } as const;

function lines(head: string, bytes: number, line: (i: number) => string): { text: string; count: number } {
  const parts = [head];
  let size = head.length;
  let count = 0;
  while (size < bytes) {
    const l = line(count++);
    parts.push(l);
    size += l.length;
  }
  return { text: parts.join(''), count };
}

/** Pages at 10× `limit`: a robots.txt, an HTML page of long links, a sitemap and an RSS 1.0 feed. */
function inputs(limit: number): { pages: PageRecord[]; links: number } {
  const tenfold = 10 * limit;
  const long = (i: number, n: number): string => `/p${i}/${'seg-'.repeat(n / 4)}`;
  const robots = lines('User-agent: *\nDisallow: /private\n', tenfold, (i) => `Disallow: /filler/${i}\n`);
  const anchors = lines('<html><body>', tenfold, (i) => `<a href="${long(i, 1800)}">${'"'.repeat(100)}</a>\n`);
  const sitemap = lines('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', tenfold, (i) => `<url><loc>${ORIGIN}${long(i, 400)}</loc></url>\n`);
  const feed = lines('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="c"><title>F</title></channel>', tenfold, (i) => `<item rdf:about="${ORIGIN}${long(i, 1200)}"><link>${ORIGIN}${long(i, 1200)}</link></item>\n`);
  return {
    pages: [
      fetchedPage(`${ORIGIN}/robots.txt`, robots.text, 'text/plain', 'robots'),
      fetchedPage(`${ORIGIN}/many-links.html`, `${anchors.text}</body></html>`, 'text/html', 'new'),
      fetchedPage(`${ORIGIN}/sitemap.xml`, `${sitemap.text}</urlset>`, 'application/xml', 'sitemap'),
      fetchedPage(`${ORIGIN}/index.rdf`, `${feed.text}</rdf:RDF>`, 'application/rdf+xml; charset=utf-8', 'feed'),
    ],
    links: anchors.count + sitemap.count + feed.count,
  };
}

/** The crawl's settings of a topic, with its max.message.bytes set to `bytes` when given. */
function withLimit(logical: string, bytes: number | undefined): { partitions: number; config: Record<string, string> } {
  const spec = crawlCatalog.topic(logical);
  return bytes === undefined ? spec : { partitions: spec.partitions, config: { ...spec.config, 'max.message.bytes': String(bytes) } };
}

for (const kind of transportKinds) {
  describe(`record sizes on ${kind}`, { timeout: 300_000 }, () => {
    let transport: Transport;
    const dirs: string[] = [];
    before(async () => {
      const dir = tempDir();
      dirs.push(dir);
      transport = await openTransport(kind, dir);
    });
    after(async () => {
      await transport.close();
      dirs.forEach(removeDir);
    });

    it(`the parser's records of pages at 10× a ${LIMITS[kind]}-byte links topic all fit it`, async () => {
      const limit = LIMITS[kind];
      const prefix = uniquePrefix();
      // Kafka: the topic is created with its limit; the service reads it back from the broker.
      const catalog =
        kind === 'kafka'
          ? { ...crawlCatalog, topic: (logical: string) => withLimit(logical, logical === 'links' ? limit : logical === 'pages' ? 16 * 1024 * 1024 : undefined) }
          : crawlCatalog;
      const parser = parserService({ workers: 1 });
      const dataDir = tempDir();
      dirs.push(dataDir);
      const service = new StreamService(parser, { transport, catalog, dataDir, topicPrefix: prefix, partitions: 1 });
      await service.start();
      await service.ready();
      try {
        if (kind === 'kafka') assert.equal(await transport.maxMessageBytes?.(`${prefix}links`), limit, 'the broker holds the topic limit');
        const { pages, links } = inputs(limit);
        for (const p of pages) await transport.send([{ topic: `${prefix}pages`, key: 'big.test', value: encodePageRecord(p) }]);
        const outcomes = async (): Promise<number> => (await readAllBytes(transport, `${prefix}links`)).filter((r) => r.value !== null && r.value.includes('"type":"outcome"')).length;
        await waitFor('an outcome per page', async () => (await outcomes()) === pages.length, 180_000, 250);
        const records = await readAllBytes(transport, `${prefix}links`);
        let found = 0;
        let robots: LinksRecord | undefined;
        for (const r of records) {
          const size = r.value!.length + (r.key?.length ?? 0);
          assert.ok(size <= limit, `a ${size}-byte record on a ${limit}-byte topic`);
          const value = linksRecord.parse(JSON.parse(r.value!.toString('utf8')));
          if (value.type === 'outcome') {
            if (value.reason === 'robots') robots = value;
            assert.equal(value.result, 'ok', `${value.url}: ${value.errorCode ?? ''}`);
          } else found += linksOf(value).length;
        }
        assert.equal(found, links, 'no link lost');
        assert.ok(robots?.type === 'outcome' && robots.robots?.truncated === true);
        assert.ok(robots.robots.body!.startsWith('User-agent: *\nDisallow: /private\n'));
        assert.deepEqual(await readAllBytes(transport, `${prefix}deadletter`), [], 'nothing dead-lettered');
      } finally {
        await service.stop();
        await parser.close();
      }
    });
  });
}
