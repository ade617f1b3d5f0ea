/**
 * The HTTP/1.1 front of the simulated web: one node:http server per listen IP (all on the same
 * port), virtual hosts by Host header, hostile behaviours, and an access log. It decides what to
 * answer; http.ts writes it (validators and 304s, compression, hostile bodies). Content comes from
 * SimWebModel; see index.ts for the overview.
 */

import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { systemClock, type Clock } from '../runtime/clock.ts';
import type { ChangeEvent, PageState } from './changes.ts';
import {
  SimWebModel,
  type ExpectedFetchOptions,
  type FailSpec,
  type FetchPlan,
  type HostBehavior,
  type Resource,
} from './model.ts';
import { hash01, hashString } from './random.ts';
import { binaryBytes, pdfBytes, pngBytes, renderCalendar, renderHref, renderPage, smallHtml, duplicateHtml, type RenderedPage } from './render.ts';
import type { RobotsResponse } from './robots.ts';
import { Lru, Responder, type Body } from './http.ts';
import type { AccessLogEntry, SimWebOptions, SimWebStats } from './server-types.ts';

export { chooseEncoding } from './http.ts';
export type { AccessLogEntry, SimWebOptions, SimWebStats } from './server-types.ts';

/** A link as found on a page: its canonical absolute URL and how it is written. */
export interface PageLink {
  url: string;
  href: string;
  nofollow: boolean;
}

interface ConnInfo {
  id: number;
  requests: number;
}

const P_FAIL = 0x5f01;

export class SimWeb {
  readonly model: SimWebModel;
  readonly clock: Clock;
  readonly ips: readonly string[];
  private portValue = 0;
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly connInfo = new WeakMap<Socket, ConnInfo>();
  private nextConnId = 0;
  private readonly log: AccessLogEntry[] = [];
  private dropped = 0;
  private readonly maxEntries: number;
  private logFile: WriteStream | undefined;
  /** Log finalizers of requests still in progress. */
  private readonly inflight = new Set<() => void>();
  private readonly attempts = new Map<string, number>();
  private readonly lastHit = new Map<number, number>();
  /** Writes the responses (http.ts). */
  private readonly http: Responder;
  private readonly pageCache: Lru<RenderedPage>;
  private closed = false;
  private readonly counters: SimWebStats = { requests: 0, byStatus: {}, bytes: 0, connections: 0, droppedLogEntries: 0 };

  private constructor(private readonly opts: SimWebOptions) {
    this.clock = opts.clock ?? systemClock;
    this.ips = opts.ips ?? ['127.0.0.1'];
    if (this.ips.length === 0) throw new RangeError('ips must not be empty');
    this.model = new SimWebModel(opts, opts.port ?? 0, this.clock.now());
    this.maxEntries = opts.accessLog?.maxEntries ?? 250_000;
    this.http = new Responder(this.model, this.clock, opts, () => this.closed);
    this.pageCache = new Lru(opts.cacheEntries ?? 1024);
  }

  /** Builds the web and starts listening; resolves once every listen IP is bound. */
  static async start(opts: SimWebOptions = {}): Promise<SimWeb> {
    const web = new SimWeb(opts);
    await web.listen(opts.port ?? 0);
    if (opts.accessLog?.file !== undefined) web.logFile = createWriteStream(opts.accessLog.file, { flags: 'a' });
    return web;
  }

  private async listen(port: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        let p = port;
        for (const ip of this.ips) {
          const server = this.makeServer();
          this.servers.push(server);
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen(p, ip, () => {
              server.off('error', reject);
              resolve();
            });
          });
          const addr = server.address();
          if (addr !== null && typeof addr === 'object') p = addr.port;
        }
        this.portValue = p;
        this.model.port = p;
        return;
      } catch (err) {
        await this.closeServers();
        const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (!(inUse && port === 0 && attempt < 20)) throw err;
      }
    }
  }

  private makeServer(): Server {
    const server = createServer({ noDelay: true, requestTimeout: 0, keepAlive: true }, (req, res) => this.onRequest(req, res));
    server.keepAliveTimeout = this.opts.keepAliveTimeoutMs ?? 5000;
    server.timeout = 0;
    server.on('connection', (sock: Socket) => {
      this.sockets.add(sock);
      this.connInfo.set(sock, { id: ++this.nextConnId, requests: 0 });
      this.counters.connections++;
      sock.on('close', () => this.sockets.delete(sock));
    });
    server.on('clientError', (_err, sock: Socket) => {
      if (sock.writable) sock.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else sock.destroy();
    });
    return server;
  }

  // ---------------------------------------------------------------- public API

  get port(): number {
    return this.portValue;
  }

  hostNames(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.model.hostCount; i++) out.push(this.model.hostName(i));
    return out;
  }

  /** `http://h<i>.sim.test:<port>` */
  origin(host: string | number): string {
    return this.model.origin(this.model.requireHost(host));
  }

  /** Canonical URL of page n of a host (page 0 is `/`). */
  urlOf(host: string | number, n: number): string {
    return this.model.urlOf(this.model.requireHost(host), n);
  }

  homeUrls(): string[] {
    return this.hostNames().map((h) => this.model.origin(this.model.requireHost(h)) + '/');
  }

  /** Every page URL of a host (pages 0..P-1). */
  pageUrls(host: string | number): string[] {
    const i = this.model.requireHost(host);
    const out: string[] = [];
    for (let n = 0; n < this.model.pagesOf(i); n++) out.push(this.model.urlOf(i, n));
    return out;
  }

  /** Links within `treeDepth()` of `/` reach every page of every host. */
  treeDepth(): number {
    let d = 0;
    for (let i = 0; i < this.model.hostCount; i++) d = Math.max(d, this.model.treeDepth(i));
    return d;
  }

  hostIp(host: string | number): string {
    const i = this.model.requireHost(host);
    const name = this.model.hostName(i);
    return this.opts.hostIps?.[name] ?? this.model.behavior(i).ip ?? this.ips[i % this.ips.length] ?? '127.0.0.1';
  }

  /** Static name -> IP map for the crawler's resolver: a wildcard, plus every host when several IPs are used. */
  resolveMap(): Record<string, string> {
    const first = this.ips[0] ?? '127.0.0.1';
    const map: Record<string, string> = { [`*.${this.model.domain}`]: first };
    for (let i = 0; i < this.model.hostCount; i++) {
      const ip = this.hostIp(i);
      if (ip !== first || this.ips.length > 1) map[this.model.hostName(i)] = ip;
    }
    return map;
  }

  setRobots(host: string | number, robots: string | null | RobotsResponse): void {
    this.model.setRobots(host, robots);
  }

  robotsTxt(host: string | number): RobotsResponse {
    return this.model.robots(this.model.requireHost(host));
  }

  /** The ground-truth robots predicate for an absolute URL. */
  isAllowed(url: string, userAgent?: string): boolean {
    const p = this.model.parseUrl(url);
    if (p === undefined) return false;
    return this.model.isAllowed(p.host, p.path, userAgent);
  }

  behavior(host: string | number): HostBehavior {
    return this.model.behavior(this.model.requireHost(host));
  }

  /** Changes a host's behaviour at runtime, e.g. make it start failing mid-crawl. */
  configureHost(host: string | number, patch: HostBehavior): void {
    this.model.configureHost(this.model.requireHost(host), patch);
  }

  /** Links of the HTML page at `url` (at clock time `at`, default now); empty for anything else. */
  linksOf(url: string, at = this.clock.now()): PageLink[] {
    const p = this.model.parseUrl(url);
    if (p === undefined) return [];
    const r = this.model.resolve(p.host, p.path, at);
    if (r.type !== 'page' && r.type !== 'calendar') return [];
    return r.links.map((l) => ({
      url: this.model.canonical(l.host, l.path),
      href: renderHref(this.model, p.host, r.path, l),
      nofollow: l.nofollow,
    }));
  }

  /** What the web holds at `url` (at clock time `at`): page, redirect, binary, gone, ... */
  resourceAt(url: string, at = this.clock.now()): Resource | undefined {
    const p = this.model.parseUrl(url);
    return p === undefined ? undefined : this.model.resolve(p.host, p.path, at);
  }

  expectedFetchSet(o: ExpectedFetchOptions): FetchPlan {
    return this.model.expectedFetchSet(o, this.clock.now());
  }

  /** The link graph between the pages of `expectedFetchSet(o)` (see SimWebModel.linkGraph). */
  linkGraph(o: ExpectedFetchOptions): { urls: string[]; src: Uint32Array; dst: Uint32Array } {
    return this.model.linkGraph(o, this.clock.now());
  }

  /** Number of changes of the page at `url` up to clock time t (the version in its ETag). */
  versionAt(url: string, t: number): number {
    return this.model.versionAt(url, t);
  }

  stateAt(url: string, t: number): PageState {
    return this.model.stateAt(url, t);
  }

  /** Changes of the page at `url` with from < t <= to. */
  changeTimes(url: string, from: number, to: number): ChangeEvent[] {
    return this.model.changeTimes(url, from, to);
  }

  /** The ETag the page at `url` carries at time t. */
  etagAt(url: string, t: number): string {
    const p = this.model.parseUrl(url);
    const n = p === undefined ? undefined : this.model.pageOfPath(p.host, p.path);
    if (p === undefined || n === undefined) throw new RangeError(`not a page: ${url}`);
    return pageEtag(p.host, n, this.model.versionAt(url, t));
  }

  accessLog(): readonly AccessLogEntry[] {
    return this.log;
  }

  clearLog(): void {
    this.log.length = 0;
  }

  stats(): SimWebStats {
    return { ...this.counters, byStatus: { ...this.counters.byStatus }, droppedLogEntries: this.dropped };
  }

  /** Stops listening, destroys every open connection (hanging and trickling ones too) and flushes the log file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.http.clearTimers();
    await this.closeServers();
    // Requests cut off by the shutdown still get their (aborted) log entries.
    for (const finish of [...this.inflight]) finish();
    if (this.logFile !== undefined) {
      const f = this.logFile;
      await new Promise<void>((resolve) => f.end(resolve));
    }
  }

  private async closeServers(): Promise<void> {
    const waits = this.servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (!s.listening) return resolve();
          s.close(() => resolve());
        }),
    );
    for (const s of this.servers) s.closeAllConnections();
    for (const sock of this.sockets) sock.destroy();
    this.sockets.clear();
    await Promise.all(waits);
    this.servers.length = 0;
  }

  // ---------------------------------------------------------------- serving

  private record(e: AccessLogEntry): void {
    this.counters.requests++;
    this.counters.bytes += e.bytes;
    const k = String(e.status);
    this.counters.byStatus[k] = (this.counters.byStatus[k] ?? 0) + 1;
    this.log.push(e);
    if (this.log.length > this.maxEntries) {
      const drop = Math.max(1, Math.floor(this.maxEntries / 10));
      this.log.splice(0, drop);
      this.dropped += drop;
    }
    if (this.logFile !== undefined && !this.logFile.closed) this.logFile.write(JSON.stringify(e) + '\n');
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const sock = req.socket;
    const conn = this.connInfo.get(sock) ?? { id: 0, requests: 0 };
    conn.requests++;
    const wallStart = performance.now();
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    const entry: AccessLogEntry = {
      t: this.clock.now(),
      wallMs: Date.now(),
      host: hostHeader.replace(/:\d+$/, '').replace(/\.$/, ''),
      path: req.url ?? '/',
      method: req.method ?? 'GET',
      status: 0,
      clientIp: sock.remoteAddress ?? '',
      connectionId: conn.id,
      requestOnConnection: conn.requests,
      localIp: sock.localAddress ?? '',
      localPort: sock.localPort ?? 0,
      bytes: 0,
      durationMs: 0,
      conditional: req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined,
      aborted: false,
    };
    const ua = req.headers['user-agent'];
    if (ua !== undefined) entry.userAgent = ua;
    const finish = (): void => {
      if (!this.inflight.delete(finish)) return;
      entry.durationMs = performance.now() - wallStart;
      entry.status = res.headersSent ? res.statusCode : 0;
      entry.aborted = !res.writableFinished;
      this.record(entry);
    };
    this.inflight.add(finish);
    res.once('close', finish);
    req.resume();
    this.handle(req, res, conn, entry).catch(() => {
      if (!res.headersSent && !res.destroyed) {
        res.statusCode = 500;
        res.end();
      } else res.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse, conn: ConnInfo, entry: AccessLogEntry): Promise<void> {
    const method = entry.method;
    const path = entry.path;
    const host = this.model.hostIndex(entry.host);
    if (host === undefined) {
      return this.http.send(req, res, entry, { status: 404, contentType: 'text/html; charset=utf-8', body: smallHtml('Unknown host', 'No such site here.'), compressible: false });
    }
    const b = this.model.behavior(host);
    if (b.closeAfter !== undefined && conn.requests >= b.closeAfter) res.setHeader('Connection', 'close');
    if (this.opts.strictIp === true && entry.localIp !== this.hostIp(host)) {
      return this.http.send(req, res, entry, { status: 421, contentType: 'text/plain', body: Buffer.from('Misdirected Request\n'), compressible: false });
    }
    if (method !== 'GET' && method !== 'HEAD') {
      return this.http.send(req, res, entry, { status: 405, contentType: 'text/plain', body: Buffer.from('Method Not Allowed\n'), compressible: false, headers: { Allow: 'GET, HEAD' } });
    }
    const document = b.documents?.[path];
    if (document !== undefined) {
      return this.http.send(req, res, entry, { status: document.status ?? 200, contentType: document.contentType, body: Buffer.from(document.body), compressible: false });
    }
    const explicitRedirect = b.redirects?.[path];
    if (explicitRedirect !== undefined) {
      const loc = explicitRedirect.location;
      return this.http.send(req, res, entry, { status: explicitRedirect.status ?? 301, contentType: 'text/html; charset=utf-8', body: smallHtml('Moved', 'Moved.'), compressible: false, headers: { Location: loc } });
    }
    const isRobots = path === '/robots.txt';
    const hostile = !isRobots || b.hostileRobots === true;
    if (hostile && b.latencyMs !== undefined && b.latencyMs > 0) {
      await this.http.wallDelay(b.latencyMs);
      if (res.destroyed || this.closed) return;
    }
    if (hostile && b.rateLimit !== undefined) {
      const now = this.clock.now();
      const last = this.lastHit.get(host);
      this.lastHit.set(host, now);
      if (last !== undefined && now - last < b.rateLimit.minIntervalMs) {
        const rl = b.rateLimit;
        return this.http.send(req, res, entry, {
          status: rl.status ?? 429,
          contentType: 'text/html; charset=utf-8',
          body: smallHtml('Too Many Requests', 'Slow down.'),
          compressible: false,
          headers: rl.retryAfterSec === undefined ? {} : { 'Retry-After': String(rl.retryAfterSec) },
        });
      }
    }
    if (hostile && b.fail !== undefined && this.shouldFail(host, path, b.fail)) {
      return this.http.fail(req, res, entry, b.fail);
    }
    if (isRobots) {
      const r = this.model.robots(host);
      return this.http.send(req, res, entry, { status: r.status, contentType: 'text/plain; charset=utf-8', body: Buffer.from(r.body), compressible: false });
    }
    if (path === '/sitemap.xml') return this.http.send(req, res, entry, this.sitemap(host));
    if (path.startsWith('/_sim/')) return this.special(req, res, entry, host, path);
    const r = this.model.resolve(host, path, entry.t);
    return this.serveResource(req, res, entry, host, r);
  }

  private shouldFail(host: number, path: string, f: FailSpec): boolean {
    const rate = f.rate ?? 1;
    if (rate >= 1 && f.firstAttempts === undefined) return true;
    const key = `${host} ${path}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    if (f.firstAttempts !== undefined) return attempt <= f.firstAttempts;
    return hash01(this.model.seed, P_FAIL, host, hashString(path), attempt) < rate;
  }

  private sitemap(host: number): Body {
    const urls: string[] = [];
    for (let n = 0; n < this.model.pagesOf(host); n++) urls.push(`<url><loc>${this.model.urlOf(host, n).replace(/&/g, '&amp;')}</loc></url>`);
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`;
    return { status: 200, contentType: 'application/xml', body: Buffer.from(xml), compressible: true };
  }

  private pageBody(r: Extract<Resource, { type: 'page' }>, kindOverride?: 'malformed' | 'latin1' | 'sjis', invalid?: boolean): Body {
    const kind = kindOverride ?? r.kind;
    const key = `p${r.host}/${r.page}/${r.state.version}/${kind}/${invalid === true ? 1 : 0}`;
    let rendered = this.pageCache.get(key);
    if (rendered === undefined) {
      rendered = renderPage(this.model, { ...r, kind, invalidLinks: invalid ?? r.invalidLinks }, this.model.pageBytes);
      this.pageCache.set(key, rendered);
    }
    return {
      status: 200,
      contentType: rendered.contentType,
      body: rendered.body,
      compressible: true,
      key,
      validators: { etag: pageEtag(r.host, r.page, r.state.version), lastModified: r.state.lastModified },
    };
  }

  private staticValidators(host: number, path: string): { etag: string; lastModified: number } {
    return { etag: `"s-${hashString(`${host} ${path}`).toString(36)}"`, lastModified: this.model.changes.epochMs - 86_400_000 };
  }

  private serveResource(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry, host: number, r: Resource): void | Promise<void> {
    switch (r.type) {
      case 'page':
        return this.http.send(req, res, entry, this.pageBody(r));
      case 'calendar':
        return this.http.send(req, res, entry, {
          status: 200,
          contentType: 'text/html; charset=utf-8',
          body: renderCalendar(this.model, host, r.date, r.path, r.links),
          compressible: true,
          validators: this.staticValidators(host, r.path),
        });
      case 'redirect': {
        const loc = r.absolute || r.to.host !== host ? this.model.canonical(r.to.host, r.to.path) : r.to.path;
        return this.http.send(req, res, entry, {
          status: r.status,
          contentType: 'text/html; charset=utf-8',
          body: smallHtml('Moved', `Moved to <a href="${loc}">${loc}</a>.`),
          compressible: false,
          headers: { Location: loc },
        });
      }
      case 'gone':
        return this.http.send(req, res, entry, { status: r.status, contentType: 'text/html; charset=utf-8', body: smallHtml(r.status === 410 ? 'Gone' : 'Not Found', 'This page is no longer here.'), compressible: false });
      case 'notfound':
        return this.http.send(req, res, entry, { status: 404, contentType: 'text/html; charset=utf-8', body: smallHtml('Not Found', 'No such page.'), compressible: false });
      case 'binary':
        return this.serveBinary(req, res, entry, host, r.kind, r.page, r.path);
    }
  }

  private serveBinary(
    req: IncomingMessage,
    res: ServerResponse,
    entry: AccessLogEntry,
    host: number,
    kind: 'png' | 'pdf' | 'binary' | 'huge' | 'bomb' | 'trickle' | 'duplicate',
    page: number,
    path: string,
  ): void | Promise<void> {
    const validators = this.staticValidators(host, path);
    const keyNum = hashString(`${this.model.seed} ${host} ${page}`);
    switch (kind) {
      case 'png':
        return this.http.send(req, res, entry, { status: 200, contentType: 'image/png', body: pngBytes(keyNum), compressible: false, validators });
      case 'pdf':
        return this.http.send(req, res, entry, { status: 200, contentType: 'application/pdf', body: pdfBytes(`Document ${page} of ${this.model.hostName(host)}`), compressible: false, validators });
      case 'binary':
        return this.http.send(req, res, entry, { status: 200, contentType: 'text/html; charset=utf-8', body: binaryBytes(keyNum), compressible: false, validators });
      case 'huge':
        return this.http.streamHuge(req, res, entry);
      case 'bomb':
        return this.http.serveBomb(req, res, entry);
      case 'trickle':
        return this.http.trickle(req, res, entry);
      case 'duplicate':
        return this.http.send(req, res, entry, { status: 200, contentType: 'text/html; charset=utf-8', body: duplicateHtml(), compressible: true, validators });
    }
  }

  private special(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry, host: number, path: string): void | Promise<void> {
    const notFound = (): void => this.http.send(req, res, entry, { status: 404, contentType: 'text/html; charset=utf-8', body: smallHtml('Not Found', 'No such page.'), compressible: false });
    const rest = path.slice('/_sim/'.length);
    let m: RegExpExecArray | null;
    if ((m = /^status\/([1-5][0-9][0-9])$/.exec(rest)) !== null) {
      const status = Number(m[1]);
      const headers: Record<string, string> = status >= 300 && status < 400 ? { Location: '/' } : {};
      return this.http.send(req, res, entry, { status, contentType: 'text/html; charset=utf-8', body: status === 204 || status === 304 ? Buffer.alloc(0) : smallHtml(`Status ${status}`, 'As requested.'), compressible: false, headers });
    }
    if ((m = /^redirect\/([1-9][0-9]?)$/.exec(rest)) !== null) {
      const k = Number(m[1]);
      const to = k === 1 ? '/' : `/_sim/redirect/${k - 1}`;
      return this.http.send(req, res, entry, { status: 302, contentType: 'text/html; charset=utf-8', body: smallHtml('Found', to), compressible: false, headers: { Location: to } });
    }
    if ((m = /^loop\/([ab])$/.exec(rest)) !== null) {
      const to = `/_sim/loop/${m[1] === 'a' ? 'b' : 'a'}`;
      return this.http.send(req, res, entry, { status: 301, contentType: 'text/html; charset=utf-8', body: smallHtml('Moved', to), compressible: false, headers: { Location: to } });
    }
    if ((m = /^retry-after\/([0-9]{1,6})$/.exec(rest)) !== null) {
      return this.http.fail(req, res, entry, { status: 503, retryAfterSec: Number(m[1]) });
    }
    if ((m = /^slow\/([0-9]{1,6})$/.exec(rest)) !== null) {
      const ms = Number(m[1]);
      return this.http.wallDelay(ms).then(() => {
        if (!res.destroyed && !this.closed) this.http.send(req, res, entry, { status: 200, contentType: 'text/html; charset=utf-8', body: smallHtml('Slow', `Waited ${ms} ms.`), compressible: false });
      });
    }
    switch (rest) {
      case '429':
        return this.http.fail(req, res, entry, { status: 429, retryAfterSec: 1 });
      case 'reset':
        return this.http.fail(req, res, entry, { mode: 'reset' });
      case 'hang':
        return this.http.fail(req, res, entry, { mode: 'hang' });
      case 'close':
        res.setHeader('Connection', 'close');
        return this.http.send(req, res, entry, { status: 200, contentType: 'text/html; charset=utf-8', body: smallHtml('Bye', 'Connection closes.'), compressible: false });
      case 'png':
      case 'pdf':
      case 'binary':
      case 'huge':
      case 'bomb':
      case 'trickle':
        return this.serveBinary(req, res, entry, host, rest, 0, path);
      case 'malformed':
      case 'latin1':
      case 'sjis':
      case 'invalid-links': {
        const r = this.model.resolve(host, '/', entry.t);
        if (r.type !== 'page') return notFound();
        const page = { ...r, path };
        const body = rest === 'invalid-links' ? this.pageBody(page, undefined, true) : this.pageBody(page, rest);
        delete body.validators;
        return this.http.send(req, res, entry, body);
      }
      default:
        return notFound();
    }
  }

}

/** Strong ETag of a page version (same for every content coding). */
export function pageEtag(host: number, page: number, version: number): string {
  return `"${host.toString(36)}-${page.toString(36)}-${version.toString(36)}"`;
}
