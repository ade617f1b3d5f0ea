// The fetcher against servers that break the rules, written byte by byte on raw sockets on
// 127.0.0.1, and against links aimed at addresses it must not dial. Names resolve through the
// static map or an injected fake resolver only: nothing here asks a real DNS server. Every record
// must pass pageRecord.parse.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { MAX_PAGE_HEADERS, decodePageRecord, encodePageRecord, pageRecord } from '../../schemas/pages.ts';
import type { PageRecord } from '../../schemas/pages.ts';
import type { FrontierRecord } from '../../schemas/frontier.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import type { AddressRecord, RawResolve } from '../../services/fetcher/dns.ts';
import { isRetryable } from '../../services/fetcher/errors.ts';
import { createFetcher } from '../../services/fetcher/fetch.ts';
import type { Fetcher, FetcherOptions } from '../../services/fetcher/fetch.ts';
import { ManualClock } from '../../services/runtime/clock.ts';
import { pageText } from '../../services/parser/charset.ts';

/** The body as the parser will read it (the fetcher keeps bytes; charset decoding is the parser's). */
const text = (rec: PageRecord): string => pageText(rec)?.text ?? '';

const RESOLVE = ['*.hostile.test=127.0.0.1'];

let seq = 0;
function frontier(url: string): FrontierRecord {
  return {
    v: 1,
    requestId: `hostile-${++seq}`,
    url,
    host: new URL(url).hostname,
    reason: 'new',
    score: 1,
    depth: 0,
    cgiHops: 0,
    attempt: 1,
    issuedAt: 1_700_000_000_000,
  };
}

async function get(f: Fetcher, url: string): Promise<PageRecord> {
  const rec = await f.fetch(frontier(url));
  const parsed = pageRecord.safeParse(rec);
  assert.ok(parsed.success, `record does not validate: ${parsed.success ? '' : parsed.error.message}`);
  // Round-trips through the pages framing as it would through a topic.
  assert.deepEqual(decodePageRecord(encodePageRecord(rec)), rec);
  if (rec.error) assert.equal(rec.body, undefined, 'failed fetches carry no body');
  return rec;
}

/** What the raw server writes for one request: bytes, or pieces written with pauses between them. */
type Reply = Buffer | string | { pieces: (Buffer | string)[]; gapMs: number; end?: boolean };

const CRLF = '\r\n';
const page = (body: string, extra = ''): string => `HTTP/1.1 200 OK${CRLF}Content-Type: text/html; charset=utf-8${CRLF}Content-Length: ${Buffer.byteLength(body)}${CRLF}${extra}${CRLF}${body}`;
const HELLO = '<html><body>hello</body></html>';

const REPLIES: Record<string, Reply> = {
  '/continue': `HTTP/1.1 100 Continue${CRLF}${CRLF}${page(HELLO)}`,
  '/continue-twice': `HTTP/1.1 100 Continue${CRLF}${CRLF}HTTP/1.1 100 Continue${CRLF}Server: x${CRLF}${CRLF}${page(HELLO)}`,
  '/continue-split': { pieces: ['HTTP/1.', `1 100 Cont`, `inue${CRLF}`, CRLF, page(HELLO)], gapMs: 20 },
  '/continue-alone': { pieces: [`HTTP/1.1 100 Continue${CRLF}${CRLF}`, page(HELLO)], gapMs: 50 },
  '/early-hints': `HTTP/1.1 103 Early Hints${CRLF}Link: </style.css>; rel=preload${CRLF}${CRLF}${page(HELLO)}`,
  '/processing-then-continue': `HTTP/1.1 102 Processing${CRLF}${CRLF}HTTP/1.1 100 Continue${CRLF}${CRLF}${page(HELLO)}`,
  '/bad-chunk': `HTTP/1.1 200 OK${CRLF}Content-Type: text/html${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}zz${CRLF}hello${CRLF}0${CRLF}${CRLF}`,
  '/http09': '<html><body>an HTTP/0.9 reply: no status line, no headers</body></html>\n',
  '/bad-header': `HTTP/1.1 200 OK${CRLF}Content-Type: text/html${CRLF}Bad Header Name: x${CRLF}Content-Length: 5${CRLF}${CRLF}hello`,
  '/nul-header': `HTTP/1.1 200 OK${CRLF}Content-Type: text/html\0${CRLF}Content-Length: 5${CRLF}${CRLF}hello`,
  '/status-099': `HTTP/1.1 099 Too Early${CRLF}Content-Length: 5${CRLF}${CRLF}hello`,
  '/length-mismatch': { pieces: [`HTTP/1.1 200 OK${CRLF}Content-Type: text/html${CRLF}Content-Length: 50${CRLF}Connection: close${CRLF}${CRLF}short`], gapMs: 10, end: true },
  '/upgrade': `HTTP/1.1 101 Switching Protocols${CRLF}Upgrade: websocket${CRLF}Connection: Upgrade${CRLF}${CRLF}`,
  '/utf8-location': Buffer.concat([Buffer.from(`HTTP/1.1 301 Moved${CRLF}Location: /caf`), Buffer.from('é/ü?q=日本', 'utf8'), Buffer.from(`${CRLF}Content-Length: 0${CRLF}${CRLF}`)]),
  '/latin1-location': Buffer.concat([Buffer.from(`HTTP/1.1 301 Moved${CRLF}Location: /caf`), Buffer.from([0xe9]), Buffer.from(`${CRLF}Content-Length: 0${CRLF}${CRLF}`)]),
  '/long-location': `HTTP/1.1 302 Found${CRLF}Location: /${'x'.repeat(60 * 1024)}${CRLF}Content-Length: 0${CRLF}${CRLF}`,
  '/junk-fields': Buffer.concat([
    Buffer.from(`HTTP/1.1 200 \xff\xfe weird status text${CRLF}`, 'latin1'),
    Buffer.from(`Content-Type: text/html; charset="${'x'.repeat(300)}"${CRLF}`),
    Buffer.from(`ETag: "${'e'.repeat(5000)}"${CRLF}Last-Modified: ${'\xff'.repeat(3000)}${CRLF}`, 'latin1'),
    Buffer.from(`Server: ${'😀'.repeat(1500)}${CRLF}Content-Length: 5${CRLF}${CRLF}hello`),
  ]),
  '/many-headers': `HTTP/1.1 200 OK${CRLF}${Array.from({ length: 300 }, (_, i) => `X-Filler-${i}: ${i}${CRLF}`).join('')}Set-Cookie: a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT${CRLF}Set-Cookie: b=2${CRLF}ETag: "late"${CRLF}Content-Type: text/html${CRLF}Content-Length: 5${CRLF}${CRLF}hello`,
  '/to-loopback-literal': '', // filled in once the port is known
};

function replyFor(target: string, port: number): Reply {
  if (target === '/to-loopback-literal') return `HTTP/1.1 302 Found${CRLF}Location: http://127.0.0.1:${port}/secret${CRLF}Content-Length: 0${CRLF}${CRLF}`;
  const known = REPLIES[new URL(target, 'http://x').pathname];
  if (known !== undefined) return known;
  return page(`<html><body>${target}</body></html>`);
}

interface RawServer {
  port: number;
  /** Request targets (path and query) in arrival order, decoded as latin1. */
  seen: string[];
  connections: number;
  close(): Promise<void>;
}

/** A server that reads one request head at a time and writes the scripted bytes back. */
async function rawServer(): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const state: RawServer = { port: 0, seen: [], connections: 0, close: async () => {} };
  const server = net.createServer((s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      let end: number;
      while ((end = buf.indexOf('\r\n\r\n')) >= 0) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        const target = /^GET (\S+) HTTP\/1\.1/.exec(head)?.[1] ?? '/';
        state.seen.push(target);
        void write(s, replyFor(target, state.port));
      }
    });
  });
  async function write(s: net.Socket, reply: Reply): Promise<void> {
    if (typeof reply === 'string' || Buffer.isBuffer(reply)) {
      s.write(typeof reply === 'string' ? Buffer.from(reply, 'latin1') : reply);
      return;
    }
    for (const piece of reply.pieces) {
      if (s.destroyed) return;
      s.write(typeof piece === 'string' ? Buffer.from(piece, 'latin1') : piece);
      await new Promise((r) => setTimeout(r, reply.gapMs));
    }
    if (reply.end === true) s.end();
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return state;
}

/** A fake resolver answer table; the real c-ares resolver is never built. */
function fakeDns(table: Record<string, string[]>): { raw: RawResolve; asked: string[] } {
  const asked: string[] = [];
  const raw: RawResolve = (host, rrtype) => {
    asked.push(`${host}/${rrtype}`);
    const answers = table[host];
    if (answers === undefined) return Promise.reject(Object.assign(new Error(`${host} not in the test table`), { code: 'ENOTFOUND' }));
    const next = answers.length > 1 ? (answers.shift() as string) : (answers[0] as string);
    const family = net.isIP(next);
    if ((rrtype === 'A' && family !== 4) || (rrtype === 'AAAA' && family !== 6)) return Promise.reject(Object.assign(new Error('no data'), { code: 'ENODATA' }));
    return Promise.resolve<AddressRecord[]>([{ address: next, ttl: 0 }]);
  };
  return { raw, asked };
}

describe('fetcher against hostile servers', () => {
  let srv: RawServer;
  let base: string;
  const fetchers: Fetcher[] = [];
  function fetcher(opts: FetcherOptions = {}): Fetcher {
    const f = createFetcher({ resolve: RESOLVE, connectTimeoutMs: 1000, headersTimeoutMs: 1500, totalTimeoutMs: 3000, ...opts });
    fetchers.push(f);
    return f;
  }
  before(async () => {
    srv = await rawServer();
    base = `http://www.hostile.test:${srv.port}`;
  });
  afterEach(async () => {
    await Promise.all(fetchers.splice(0).map((f) => f.close()));
    srv.seen.length = 0;
    srv.connections = 0;
  });
  after(() => srv.close());

  describe('interim 1xx responses (RFC 9110 §15.2)', () => {
    for (const path of ['/continue', '/continue-twice', '/continue-split', '/continue-alone', '/early-hints', '/processing-then-continue']) {
      it(`keeps the final response after ${path.slice(1)}`, async () => {
        const rec = await get(fetcher(), base + path);
        assert.equal(rec.error, undefined, JSON.stringify(rec.error));
        assert.equal(rec.status, 200);
        assert.equal(text(rec), HELLO);
        assert.equal(rec.headers['content-type'], 'text/html; charset=utf-8');
      });
    }

    it('drops a 100 Continue inside TLS too', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'meguri-hostile-tls-'));
      try {
        execFileSync('openssl', [
          'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
          '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
          '-subj', '/CN=tls.hostile.test', '-addext', 'subjectAltName=DNS:tls.hostile.test',
        ], { stdio: 'ignore' });
        const cert = readFileSync(path.join(dir, 'cert.pem'));
        const open = new Set<tls.TLSSocket>();
        const server = tls.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (s) => {
          open.add(s);
          s.on('close', () => open.delete(s));
          s.on('error', () => {});
          let head = '';
          s.on('data', (d: Buffer) => {
            head += d.toString('latin1');
            if (!head.includes('\r\n\r\n')) return;
            head = '';
            s.write(`HTTP/1.1 100 Continue${CRLF}${CRLF}`);
            setTimeout(() => s.write(page(HELLO)), 20);
          });
        });
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const port = (server.address() as AddressInfo).port;
        try {
          const f = fetcher({ tls: { ca: cert } });
          for (const n of [1, 2]) {
            const rec = await get(f, `https://tls.hostile.test:${port}/${n}`);
            assert.equal(rec.error, undefined, JSON.stringify(rec.error));
            assert.equal(rec.status, 200);
            assert.equal(text(rec), HELLO);
            assert.equal(rec.connectionReused, n === 2);
          }
        } finally {
          for (const s of open) s.destroy();
          await new Promise<void>((r) => server.close(() => r()));
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keeps the connection alive across a 100 Continue: the next request reuses it', async () => {
      const f = fetcher();
      const first = await get(f, base + '/continue');
      const second = await get(f, base + '/continue?again');
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(second.connectionReused, true);
      assert.equal(srv.connections, 1);
    });
  });

  describe('protocol errors', () => {
    const cases: [string, RegExp][] = [
      ['/bad-chunk', /chunk size/i],
      ['/http09', /HTTP\/1\.1 protocol/],
      ['/bad-header', /header/i],
      ['/nul-header', /header value/i],
      ['/upgrade', /switched protocols/],
      ['/length-mismatch', /content-length/],
      ['/status-099', /^malformed response: undici's HTTP\/1\.1 parser gave up \(statusCode >= 100\)$/],
    ];
    for (const [path, message] of cases) {
      it(`fails ${path.slice(1)} with MEGURI_ERR_PROTOCOL, not retryable`, async () => {
        const rec = await get(fetcher(), base + path);
        assert.equal(rec.error?.code, 'MEGURI_ERR_PROTOCOL', JSON.stringify(rec.error));
        assert.match(rec.error.message, message);
        assert.equal(isRetryable(rec.error.code), false);
      });
    }

    it('is not fooled into a retry: one request reaches the server', async () => {
      await get(fetcher(), base + '/http09');
      assert.deepEqual(srv.seen, ['/http09']);
    });
  });

  describe('redirect targets', () => {
    // Whether the fetcher follows the hop or hands the 3xx back, the target must be the UTF-8 reading.
    it('decodes a UTF-8 Location as UTF-8', async () => {
      const rec = await get(fetcher(), base + '/utf8-location');
      // The 3xx ends the request; its target, resolved with the UTF-8 bytes percent-encoded (not
      // their latin1 reading %C3%83%C2%A9), goes back to the scheduler.
      assert.equal(rec.location, `${base}/caf%C3%A9/%C3%BC?q=%E6%97%A5%E6%9C%AC`);
      assert.equal(rec.error, undefined);
    });

    it('keeps a Location that is not valid UTF-8 as latin1', async () => {
      const rec = await get(fetcher(), base + '/latin1-location');
      assert.equal(rec.location, `${base}/caf%C3%A9`);
    });

    it('ends a 60 KB Location with MEGURI_ERR_BAD_REDIRECT in a record that passes its schema', async () => {
      const rec = await get(fetcher(), base + '/long-location');
      assert.equal(rec.error?.code, 'MEGURI_ERR_BAD_REDIRECT');
      assert.match(rec.error.message, /over the 8192-character URL limit/);
      assert.ok(rec.error.message.length <= 2000);
      assert.equal(isRetryable(rec.error.code), false);
      assert.equal(rec.status, 302);
      assert.equal(rec.finalUrl, base + '/long-location');
      assert.ok((rec.headers.location ?? '').length <= 2048);
      assert.deepEqual(srv.seen, ['/long-location'], 'the target is never requested');
    });
  });

  it('bounds every field copied from a response to what the pages schema accepts', async () => {
    const rec = await get(fetcher(), base + '/junk-fields');
    assert.equal(rec.status, 200);
    assert.equal(rec.error, undefined);
    assert.equal(text(rec), 'hello');
    for (const [name, value] of Object.entries(rec.headers)) assert.ok(value.length <= 2048, `${name}: ${value.length}`);
    assert.ok(!/[\uD800-\uDBFF]$/.test(rec.headers.server ?? ''), 'no half surrogate pair at the cut');
    assert.equal(rec.contentType, 'text/html');
  });

  it('keeps the response headers, at most MAX_PAGE_HEADERS, the ones the crawler reads first', async () => {
    const rec = await get(fetcher(), base + '/many-headers');
    assert.equal(rec.status, 200);
    assert.equal(Object.keys(rec.headers).length, MAX_PAGE_HEADERS);
    assert.equal(rec.headers.etag, '"late"', 'a flood of other headers does not push out the validators');
    assert.equal(rec.headers['content-type'], 'text/html');
    assert.equal(rec.headers['x-filler-0'], '0');
  });

  describe('address policy', () => {
    it('static DNS: IP-literal URLs are not dialled, junk spellings included, even when --resolve names the same address', async () => {
      const f = fetcher();
      const literals = [
        `http://127.0.0.1:${srv.port}/a`,
        `http://0x7f.1:${srv.port}/b`,
        `http://2130706433:${srv.port}/c`,
        `http://0177.0.0.01:${srv.port}/d`,
        `http://[::1]:${srv.port}/e`,
        `http://[::ffff:127.0.0.1]:${srv.port}/f`,
        `http://169.254.169.254/latest/meta-data/`,
        `http://8.8.8.8/`,
      ];
      for (const url of literals) {
        const rec = await get(f, url);
        assert.equal(rec.error?.code, 'MEGURI_ERR_FORBIDDEN_ADDRESS', `${url}: ${JSON.stringify(rec.error)}`);
        assert.match(rec.error.message, /not dialled under --dns static/);
        assert.equal(rec.status, 0);
        assert.equal(isRetryable(rec.error.code), false);
      }
      assert.equal(srv.connections, 0, 'no connection was made');
      // The mapped name still works.
      assert.equal((await get(f, `${base}/ok`)).status, 200);
    });

    it('static DNS: --allow-address opens exactly the ranges it names', async () => {
      const f = fetcher({ allowAddresses: ['127.0.0.1/32'] });
      assert.equal((await get(f, `http://0x7f.1:${srv.port}/allowed`)).status, 200);
      assert.deepEqual(srv.seen, ['/allowed']);
      const other = await get(f, `http://127.0.0.2:${srv.port}/not-allowed`);
      assert.equal(other.error?.code, 'MEGURI_ERR_FORBIDDEN_ADDRESS');
    });

    it('system DNS: refuses loopback, private, link-local and metadata addresses, literal or resolved, before connecting', async () => {
      const dns = fakeDns({ 'rebind.example': ['127.0.0.1'], 'intranet.example': ['10.0.0.8'], 'v6.example': ['::ffff:169.254.169.254'], 'nat64.example': ['64:ff9b::7f00:1'] });
      const f = fetcher({ resolver: createResolver({ mode: 'system', resolve: RESOLVE, rawResolve: dns.raw, clock: new ManualClock(0) }) });
      const urls = [
        `http://127.0.0.1:${srv.port}/`,
        `http://0x7f.1:${srv.port}/`,
        `http://[::1]:${srv.port}/`,
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:a9fe:a9fe]/',
        'http://[fd00::1]/',
        'http://[fe80::1]/',
        'http://100.64.1.1/',
        'http://192.168.0.1/',
        `http://rebind.example:${srv.port}/`,
        'http://intranet.example/',
        'http://v6.example/',
        'http://nat64.example/',
      ];
      for (const url of urls) {
        const rec = await get(f, url);
        assert.equal(rec.error?.code, 'MEGURI_ERR_FORBIDDEN_ADDRESS', `${url}: ${JSON.stringify(rec.error)}`);
        assert.match(rec.error.message, /not a public address/);
      }
      assert.match((await get(f, 'http://intranet.example/')).error?.message ?? '', /^intranet\.example resolves to 10\.0\.0\.8, which is not a public address \(private \(RFC 1918\)\); allow it with --allow-address$/);
      assert.equal(srv.connections, 0);
      // Names mapped by --resolve stay allowed in system mode too.
      assert.equal((await get(f, `${base}/mapped`)).status, 200);
    });

    it('system DNS: --allow-address lets a resolved private address through', async () => {
      const dns = fakeDns({ 'lab.example': ['127.0.0.1'] });
      const f = fetcher({ allowAddresses: ['127.0.0.0/8'], resolver: createResolver({ mode: 'system', rawResolve: dns.raw, clock: new ManualClock(0) }) });
      const rec = await get(f, `http://lab.example:${srv.port}/lab`);
      assert.equal(rec.status, 200);
      assert.equal(rec.serverIp, '127.0.0.1');
    });

    it('judges the address actually dialled: an answer that turns to loopback after the first check is refused (DNS rebinding)', async () => {
      // The first answer is allowed, the next ones point at loopback; answers are not cached (TTL 0).
      const dns = fakeDns({ 'flip.example': ['127.0.0.2', '127.0.0.1'] });
      const resolver = createResolver({ mode: 'system', rawResolve: dns.raw, clock: new ManualClock(0), minTtlMs: 0, maxTtlMs: 0 });
      const f = fetcher({ allowAddresses: ['127.0.0.2'], resolver });
      const rec = await get(f, `http://flip.example:${srv.port}/flip`);
      assert.equal(rec.error?.code, 'MEGURI_ERR_FORBIDDEN_ADDRESS', JSON.stringify(rec.error));
      assert.match(rec.error.message, /flip\.example resolves to 127\.0\.0\.1/);
      assert.ok(dns.asked.length >= 2, `asked ${dns.asked.join(', ')}`);
      assert.equal(srv.connections, 0, 'loopback was never dialled');
    });

    it('checks every redirect hop: a redirect to a loopback literal is not followed', async () => {
      const rec = await get(fetcher(), `${base}/to-loopback-literal`);
      assert.ok(!srv.seen.includes('/secret'), `requests: ${srv.seen.join(', ')}`);
      // Either the fetcher stopped at the hop, or it handed the 3xx back to its caller.
      if (rec.status !== 302) assert.equal(rec.error?.code, 'MEGURI_ERR_FORBIDDEN_ADDRESS');
      else if (rec.error !== undefined) assert.equal(rec.error.code, 'MEGURI_ERR_FORBIDDEN_ADDRESS');
      assert.equal(srv.connections, 1);
    });
  });
});
