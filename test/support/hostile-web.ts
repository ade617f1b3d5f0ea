/**
 * A hostile web for black-box crawl tests: one raw TCP server on 127.0.0.1 serving many virtual
 * hosts (`<name>.hostile.test`), each with one misbehaviour — broken HTTP framing, stray 1xx,
 * redirects into disallowed paths or onto other hosts, UTF-8 and 60 KB `Location`s, addresses a
 * crawler must not dial, session-id and path-id traps, long `Retry-After`s, odd robots.txt files,
 * bodies that never end, gzip bombs. Responses are written byte by byte as the behaviour says, so
 * nothing in Node's HTTP server can tidy them up. Every request is logged with its arrival time.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

/** 64 KB of binary: every byte value in turn, in a scrambled order. */
const BINARY_BODY = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 131 + 7) & 0xff));
import { gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';

export const HOSTILE_DOMAIN = 'hostile.test';

export interface HostileRequest {
  /** Host header without port, lower-cased. */
  readonly host: string;
  /** Path with query, as sent. */
  readonly path: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Date.now() when the request head arrived. */
  readonly wallMs: number;
}

interface Responder {
  (req: HostileRequest, sock: Socket, web: HostileWeb): void;
}

const CRLF = '\r\n';

function head(status: number, reason: string, headers: Record<string, string | number> = {}): string {
  let s = `HTTP/1.1 ${status} ${reason}${CRLF}`;
  for (const [k, v] of Object.entries({ connection: 'close', ...headers })) s += `${k}: ${v}${CRLF}`;
  return s + CRLF;
}

function send(sock: Socket, status: number, reason: string, body: string | Buffer, headers: Record<string, string | number> = {}): void {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  sock.end(Buffer.concat([Buffer.from(head(status, reason, { 'content-length': buf.length, ...headers }), 'latin1'), buf]));
}

function html(sock: Socket, body: string, headers: Record<string, string | number> = {}): void {
  send(sock, 200, 'OK', body, { 'content-type': 'text/html; charset=utf-8', ...headers });
}

function text(sock: Socket, body: string | Buffer, status = 200): void {
  send(sock, status, status === 200 ? 'OK' : 'Status', body, { 'content-type': 'text/plain' });
}

function page(title: string, links: readonly string[], extra = ''): string {
  const items = links.map((l) => `<li><a href="${l}">${l.length > 80 ? 'link' : l}</a></li>`).join('\n');
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1><p>A page of the hostile web used to test a crawler.</p><ul>${items}</ul>${extra}</body></html>`;
}

function redirect(sock: Socket, location: string | Buffer, status = 302): void {
  const loc = typeof location === 'string' ? Buffer.from(location, 'latin1') : location;
  sock.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${status} Found${CRLF}connection: close${CRLF}content-length: 0${CRLF}location: `, 'latin1'), loc, Buffer.from(CRLF + CRLF, 'latin1')]));
}

function rid(): string {
  return randomBytes(8).toString('hex');
}

const ALLOW_ALL = 'User-agent: *\nAllow: /\n';

interface HostDef {
  robots?: Responder;
  /** Path (without query) → responder; `*` is the fallback. */
  pages: Record<string, Responder>;
}

/** What a test can check per behaviour. */
export interface HostileWebOptions {
  /** Links each trap page carries. Default 40. */
  trapFanout?: number;
}

export class HostileWeb {
  private server!: Server;
  private readonly log: HostileRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private hosts: Record<string, HostDef> = {};
  private readonly bomb: Buffer;
  private readonly hits = new Map<string, number>();
  port = 0;

  private constructor(readonly options: HostileWebOptions) {
    // 64 MiB of zeros gzip to ~64 KB: served as a page it inflates far past any sane decode cap.
    this.bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  }

  static async start(options: HostileWebOptions = {}): Promise<HostileWeb> {
    const web = new HostileWeb(options);
    web.server = createServer((sock) => web.onConnection(sock));
    await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve));
    web.port = (web.server.address() as AddressInfo).port;
    web.hosts = web.define(); // links carry the port
    return web;
  }

  url(host: string, path = '/'): string {
    return `http://${host}.${HOSTILE_DOMAIN}:${this.port}${path}`;
  }

  seeds(): string[] {
    return [this.url('www')];
  }

  /** Hosts of the web (short names). */
  hostNames(): string[] {
    return Object.keys(this.hosts);
  }

  accessLog(): readonly HostileRequest[] {
    return this.log;
  }

  /** Requests to one virtual host (short name), in arrival order. */
  requests(host: string): HostileRequest[] {
    const full = `${host}.${HOSTILE_DOMAIN}`;
    return this.log.filter((r) => r.host === full);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(sock: Socket): void {
    this.sockets.add(sock);
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => undefined);
    let buf = '';
    const onData = (chunk: Buffer): void => {
      buf += chunk.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > 64 * 1024) sock.destroy();
        return;
      }
      sock.off('data', onData);
      const lines = buf.slice(0, end).split('\r\n');
      const [method = '', path = ''] = (lines[0] ?? '').split(' ');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const host = (headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      const req: HostileRequest = { host, path, method, headers, wallMs: Date.now() };
      this.log.push(req);
      this.dispatch(req, sock);
    };
    sock.on('data', onData);
  }

  private dispatch(req: HostileRequest, sock: Socket): void {
    const short = req.host.endsWith(`.${HOSTILE_DOMAIN}`) ? req.host.slice(0, -HOSTILE_DOMAIN.length - 1) : undefined;
    const def = short !== undefined ? this.hosts[short] : undefined;
    if (!def) {
      // A request that names no virtual host of this web: an address the crawler should not dial.
      text(sock, 'not a host of this web', 421);
      return;
    }
    const pathOnly = req.path.split('?')[0] ?? '/';
    if (pathOnly === '/robots.txt') {
      (def.robots ?? ((_r, s) => text(s, ALLOW_ALL)))(req, sock, this);
      return;
    }
    const responder = def.pages[pathOnly] ?? def.pages['*'];
    if (!responder) {
      send(sock, 404, 'Not Found', 'not found', { 'content-type': 'text/html' });
      return;
    }
    responder(req, sock, this);
  }

  private hit(key: string): number {
    const n = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, n);
    return n;
  }

  private define(): Record<string, HostDef> {
    const u = (h: string, p = '/'): string => this.url(h, p);
    const fanout = this.options.trapFanout ?? 40;
    const simple = (title: string, links: string[] = []): Responder => (_r, s) => html(s, page(title, links));
    const hosts: Record<string, HostDef> = {};

    // --- page-level hostility -------------------------------------------------------------
    const pagePaths = [
      '/malformed', '/huge', '/gzip-bomb', '/binary', '/invalid-links', '/loop/0', '/slow', '/error500', '/png',
      '/many-links', '/long-links', '/short-body', '/bad-gzip', '/unknown-encoding', '/sjis', '/huge-header',
      '/nul', '/deep', '/empty', '/no-content-type', '/wrong-length-chunked',
    ];
    hosts.pages = {
      // The 20,000 links of /many-links are real links, but not worth a test's time to fetch.
      robots: (_r, s) => text(s, 'User-agent: *\nDisallow: /many/\n'),
      pages: {
        '/': simple('pages', pagePaths),
        '/malformed': (_r, s) => html(s, `<html><head><title>bad</titel></title><body><div><p><a href="/after-malformed" class="x" class="y">x<table><tr><td>unclosed <b><i></b></i> <a href=/after-malformed-2 =oops>y</a></div></div></span><script>document.write("</scr"+"ipt>")</script><!-- unterminated comment`),
        '/after-malformed': simple('after malformed'),
        '/after-malformed-2': simple('after malformed 2'),
        '/huge': (_r, s) => {
          const top = page('huge', ['/after-huge']);
          const filler = Buffer.alloc(10 * 1024 * 1024, 'lorem ipsum dolor sit amet ');
          send(s, 200, 'OK', Buffer.concat([Buffer.from(top), filler]), { 'content-type': 'text/html' });
        },
        '/after-huge': simple('after huge'),
        '/gzip-bomb': (_r, s, w) => send(s, 200, 'OK', w.bomb, { 'content-type': 'text/html', 'content-encoding': 'gzip' }),
        // Bytes of every value, NULs among them, as in any real binary: random bytes would lack a NUL
        // in the sniffed first kilobyte about once in 55 fetches and then pass the control-share test.
        '/binary': (_r, s) => send(s, 200, 'OK', BINARY_BODY, { 'content-type': 'text/html' }),
        '/invalid-links': simple('invalid links', ['http://[::1', 'http://exa mple.hostile.test/', 'javascript:alert(1)', 'mailto:a@b.c', 'data:text/html,<a>', 'http://', '//', 'http://%zz/', `http://a${'b'.repeat(300)}.hostile.test/`, '/after-invalid']),
        '/after-invalid': simple('after invalid'),
        '/loop/0': (_r, s) => redirect(s, '/loop/1'),
        '/loop/1': (_r, s) => redirect(s, '/loop/0'),
        '/slow': (_r, s) => {
          s.write(head(200, 'OK', { 'content-type': 'text/html', 'transfer-encoding': 'chunked' }));
          const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write('1\r\na\r\n')), 200);
          s.on('close', () => clearInterval(t));
        },
        '/error500': (_r, s) => send(s, 500, 'Internal Server Error', 'boom', { 'content-type': 'text/html' }),
        '/png': (_r, s) => send(s, 200, 'OK', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), { 'content-type': 'image/png' }),
        '/many-links': (_r, s) => {
          const links: string[] = [];
          for (let i = 0; i < 20_000; i++) links.push(`/many/${i}`);
          html(s, page('many links', ['/after-many', ...links]));
        },
        '/after-many': simple('after many'),
        '/long-links': simple('long links', [`/long?q=${'x'.repeat(10_000)}`, `/${'seg/'.repeat(2_000)}`, '/after-long-links']),
        '/after-long-links': simple('after long links'),
        '/short-body': (_r, s) => s.end(head(200, 'OK', { 'content-type': 'text/html', 'content-length': 100_000 }) + '<html><body>only a little'),
        '/bad-gzip': (_r, s) => send(s, 200, 'OK', Buffer.from('1f8b0800000000000003deadbeef', 'hex'), { 'content-type': 'text/html', 'content-encoding': 'gzip' }),
        '/unknown-encoding': (_r, s) => send(s, 200, 'OK', 'zzzz', { 'content-type': 'text/html', 'content-encoding': 'x-hostile' }),
        '/sjis': (_r, s) => send(s, 200, 'OK', iconv.encode('<html><head><meta charset="Shift_JIS"><title>日本語のページ</title></head><body><a href="/after-sjis">次へ</a></body></html>', 'Shift_JIS'), { 'content-type': 'text/html' }),
        '/after-sjis': simple('after sjis'),
        '/huge-header': (_r, s) => s.end(head(200, 'OK', { 'content-type': 'text/html', 'x-junk': 'j'.repeat(200_000), 'content-length': 2 }) + 'ok'),
        // A NUL in the first bytes marks binary content (the fetcher's sniffing); past them, stray
        // NULs are noise the parser must survive.
        '/nul': (_r, s) => html(s, `<html><body><p>${'plain text before the noise. '.repeat(80)}</p>\u0000\u0000<a href="/after-nul">n\u0000ul</a>\u0000</body></html>`),
        '/after-nul': simple('after nul'),
        '/deep': (_r, s) => html(s, `<html><body>${'<div>'.repeat(100_000)}<a href="/after-deep">deep</a></body></html>`),
        '/after-deep': simple('after deep'),
        '/empty': (_r, s) => send(s, 200, 'OK', '', { 'content-type': 'text/html' }),
        '/no-content-type': (_r, s) => send(s, 200, 'OK', page('untyped', ['/after-untyped'])),
        '/after-untyped': simple('after untyped'),
        '/wrong-length-chunked': (_r, s) => s.end(head(200, 'OK', { 'content-type': 'text/html', 'transfer-encoding': 'chunked', 'content-length': 5 }) + '5\r\nhello\r\n0\r\n\r\n'),
      },
    };

    // --- HTTP framing ------------------------------------------------------------------------
    hosts.proto = {
      pages: {
        '/': simple('proto', ['/bad-chunk', '/http09', '/continue', '/early-hints', '/bad-status', '/bad-header']),
        '/bad-chunk': (_r, s) => s.end(head(200, 'OK', { 'content-type': 'text/html', 'transfer-encoding': 'chunked' }) + 'zz\r\nhello\r\n0\r\n\r\n'),
        '/http09': (_r, s) => s.end('<html><body>no status line at all</body></html>\n'),
        '/continue': (_r, s) => {
          s.write(`HTTP/1.1 100 Continue${CRLF}${CRLF}`);
          setTimeout(() => html(s, page('after 100', ['/after-continue'])), 20);
        },
        '/after-continue': simple('after continue'),
        '/early-hints': (_r, s) => {
          s.write(`HTTP/1.1 103 Early Hints${CRLF}link: </style.css>; rel=preload${CRLF}${CRLF}`);
          setTimeout(() => html(s, page('after 103', ['/after-hints'])), 20);
        },
        '/after-hints': simple('after hints'),
        '/bad-status': (_r, s) => s.end(`HTTP/1.1 abc Whatever${CRLF}content-length: 2${CRLF}${CRLF}ok`),
        '/bad-header': (_r, s) => s.end(`HTTP/1.1 200 OK${CRLF}content-type: text/html${CRLF}x-bad\u0001header: 1${CRLF}content-length: 2${CRLF}${CRLF}ok`),
      },
    };

    // --- redirects -----------------------------------------------------------------------------
    hosts.redir = {
      robots: (_r, s) => text(s, 'User-agent: *\nDisallow: /private/\n'),
      pages: {
        '/': simple('redirects', ['/to-private', '/to-other', '/utf8', '/long-location', '/to-ip', '/to-metadata', '/to-ftp', '/relative/a', '/after-long-location']),
        '/to-private': (_r, s) => redirect(s, '/private/secret'),
        '/private/secret': simple('secret'),
        '/to-other': (_r, s) => redirect(s, u('target', '/landing'), 301),
        '/utf8': (_r, s) => redirect(s, Buffer.from('/café-ü', 'utf8')),
        '/caf%C3%A9-%C3%BC': simple('café'),
        '/long-location': (_r, s) => redirect(s, `/x?${'q'.repeat(60 * 1024)}`),
        '/after-long-location': simple('after long location'),
        '/to-ip': (_r, s, w) => redirect(s, `http://127.0.0.1:${w.port}/ip-target`),
        '/to-metadata': (_r, s) => redirect(s, 'http://169.254.169.254/latest/meta-data/'),
        '/to-ftp': (_r, s) => redirect(s, 'ftp://ftp.hostile.test/file'),
        '/relative/a': (_r, s) => redirect(s, '../rel-target'),
        '/rel-target': simple('relative target'),
      },
    };
    hosts.target = {
      robots: (_r, s) => text(s, 'User-agent: *\nCrawl-delay: 1\nAllow: /\n'),
      pages: {
        '/landing': simple('landing', ['/t2', '/t3']),
        '/t2': simple('t2'),
        '/t3': simple('t3'),
      },
    };

    // --- addresses a crawler must not dial ---------------------------------------------------
    hosts.addr = {
      pages: {
        '/': (_r, s, w) =>
          html(s, page('addresses', [`http://0x7f.1:${w.port}/hex`, `http://127.0.0.1:${w.port}/literal`, `http://[::1]:${w.port}/v6`, `http://2130706433:${w.port}/decimal`, 'http://169.254.169.254/latest/meta-data/', `http://localhost:${w.port}/localhost`, `http://10.0.0.1:${w.port}/private`, '/after-addr'])),
        '/after-addr': simple('after addresses'),
      },
    };

    // --- traps -----------------------------------------------------------------------------------
    const sidPage: Responder = (_r, s) => {
      const links: string[] = [];
      for (let i = 0; i < fanout; i++) links.push(`/list?sid=${rid()}`);
      html(s, page('session list', links));
    };
    const trapHome = (title: string, trapLink: () => string): Responder => (_r, s) => {
      const links: string[] = [];
      for (let i = 0; i < fanout; i++) links.push(trapLink());
      html(s, page(title, [...links, '/normal']));
    };
    hosts.sid = { pages: { '/': trapHome('sid home', () => `/list?sid=${rid()}&p=${Math.floor(Math.random() * fanout)}`), '/list': sidPage, '/normal': simple('normal page') } };
    const pathTrap: Responder = (_r, s) => {
      const links: string[] = [];
      for (let i = 0; i < fanout; i++) links.push(`/s/${rid()}${rid()}/page`);
      html(s, page('path ids', links));
    };
    hosts.pathid = { pages: { '/': trapHome('path-id home', () => `/s/${rid()}${rid()}/page`), '*': pathTrap, '/normal': simple('normal page') } };

    // --- politeness signals ----------------------------------------------------------------------
    hosts.retry = { pages: { '*': (_r, s) => send(s, 503, 'Service Unavailable', 'later', { 'retry-after': 7200, 'content-type': 'text/html' }) } };
    hosts.ratelimit = {
      pages: {
        '/': (_r, s, w) => (w.hit('ratelimit') === 1 ? send(s, 429, 'Too Many Requests', 'slow down', { 'retry-after': 2, 'content-type': 'text/html' }) : html(s, page('rate limited home', ['/rl2']))),
        '/rl2': simple('rl2'),
      },
    };
    hosts.reset = { pages: { '*': (_r, s) => s.resetAndDestroy() } };
    hosts.hang = { pages: { '*': () => undefined } };

    // --- robots.txt ----------------------------------------------------------------------------------
    hosts.robots5xx = { robots: (_r, s) => text(s, 'down', 503), pages: { '*': simple('should not be fetched') } };
    hosts.robots404 = { robots: (_r, s) => text(s, 'no robots', 404), pages: { '/': simple('robots 404 home', ['/r404-page']), '/r404-page': simple('page') } };
    hosts.robots403 = { robots: (_r, s) => text(s, 'forbidden', 403), pages: { '/': simple('robots 403 home') } };
    hosts.robotsredir = {
      robots: (_r, s) => redirect(s, u('robotsdst', '/robots-real.txt'), 301),
      pages: { '/': simple('robots redirect home', ['/secret', '/open']), '/open': simple('open'), '/secret': simple('secret') },
    };
    hosts.robotsdst = { pages: { '/robots-real.txt': (_r, s) => text(s, 'User-agent: *\nDisallow: /secret\n') } };
    hosts.robotshuge = {
      robots: (_r, s) => text(s, `User-agent: *\nDisallow: /top-secret\n${'# filler comment line for a very large robots.txt\n'.repeat(14_000)}`),
      pages: { '/': simple('huge robots home', ['/top-secret', '/fine']), '/fine': simple('fine'), '/top-secret': simple('secret') },
    };
    hosts.robotshtml = { robots: (_r, s) => html(s, '<html><body><h1>Welcome</h1><p>Disallow nothing here</p></body></html>'), pages: { '/': simple('html robots home', ['/hr-page']), '/hr-page': simple('page') } };
    hosts.robotshang = { robots: () => undefined, pages: { '*': simple('should not be fetched') } };
    hosts.delay = {
      robots: (_r, s) => text(s, 'User-agent: *\nCrawl-delay: 1.5\n'),
      pages: { '/': simple('delay home', ['/d1', '/d2']), '/d1': simple('d1'), '/d2': simple('d2') },
    };
    hosts.wild = {
      robots: (_r, s) => text(s, 'User-agent: *\nDisallow: /*.php$\nDisallow: /*?print=\n'),
      pages: { '/': simple('wildcards home', ['/x.php', '/x.php?y=1', '/doc?print=1', '/ok']), '/x.php': simple('php'), '/doc': simple('doc'), '/ok': simple('ok') },
    };
    hosts.bom = { robots: (_r, s) => text(s, Buffer.from('\ufeffUser-agent: *\r\nDisallow: /no\r\n', 'utf8')), pages: { '/': simple('bom home', ['/no', '/yes']), '/no': simple('no'), '/yes': simple('yes') } };
    hosts.uagroup = {
      robots: (_r, s) => text(s, 'User-agent: meguri\nDisallow: /meguri-only\n\nUser-agent: *\nDisallow: /all\n'),
      pages: { '/': simple('user-agent groups home', ['/meguri-only', '/all']), '/meguri-only': simple('m'), '/all': simple('all') },
    };

    hosts.www = { pages: { '/': simple('hostile web', Object.keys(hosts).filter((h) => !['robotsdst', 'target'].includes(h)).map((h) => u(h))) } };
    return hosts;
  }
}
