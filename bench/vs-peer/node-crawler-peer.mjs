// The peer of bench:vs-peer: node-crawler 2.0.2 as its users run it for a plain link crawl — one
// process, 128 connections, frontier and dedup in memory, no robots.txt, nothing persisted — with a
// SAX link pass (htmlparser2) instead of cheerio. Names resolve through the static map it is given,
// never through DNS. Prints one JSON line: pages, errors, elapsed seconds.
//
//   node bench/vs-peer/node-crawler-peer.mjs '{"seeds":[...],"resolve":{"h0.sim.test":"127.0.0.2"},"maxPages":20000}'
import Crawler from 'crawler';
import { Parser } from 'htmlparser2';

const { seeds, resolve, maxPages, connections = 128 } = JSON.parse(process.argv[2] ?? '{}');
const staticLookup = (hostname, options, callback) => {
  const cb = typeof options === 'function' ? options : callback;
  const address = resolve[hostname];
  if (address === undefined) {
    const err = new Error(`no static address for ${hostname}`);
    err.code = 'ENOTFOUND';
    return cb(err);
  }
  if (typeof options === 'object' && options?.all) return cb(null, [{ address, family: 4 }]);
  return cb(null, address, 4);
};

const seen = new Set();
let fetched = 0;
let errors = 0;
const started = globalThis.performance.now();

function links(html, base) {
  const out = [];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name !== 'a' || attrs.href === undefined) return;
        try {
          const u = new URL(attrs.href, base);
          if (u.protocol !== 'http:' && u.protocol !== 'https:') return;
          u.hash = '';
          out.push(u.href);
        } catch {
          // not a URL
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return out;
}

const crawler = new Crawler({
  maxConnections: connections,
  jQuery: false,
  retries: 0,
  timeout: 30_000,
  silence: true,
  // No agent of our own: node-crawler's option cleaning walks into an Agent and breaks it. got uses
  // Node's global agent, which keeps connections alive (Node 20).
  dnsLookup: staticLookup,
  callback: (error, res, done) => {
    if (error) {
      errors++;
      if (process.env.PEER_DEBUG) console.error(String(error));
    }
    else {
      fetched++;
      const type = String(res.headers['content-type'] ?? '');
      if (res.statusCode === 200 && type.includes('html')) {
        for (const url of links(res.body, res.options.url)) {
          if (seen.size >= maxPages) break;
          if (seen.has(url)) continue;
          seen.add(url);
          crawler.add(url);
        }
      }
    }
    done();
  },
});

crawler.on('drain', () => {
  const elapsedS = (globalThis.performance.now() - started) / 1000;
  console.log(JSON.stringify({ pages: fetched, errors, queued: seen.size, elapsedS: Math.round(elapsedS * 1000) / 1000, pagesPerS: Math.round((fetched / elapsedS) * 10) / 10 }));
  process.exit(0);
});

for (const s of seeds) {
  seen.add(s);
  crawler.add(s);
}
