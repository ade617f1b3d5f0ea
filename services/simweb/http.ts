/**
 * The wire side of the simulated web: complete responses with validators, 304s and compression
 * (cached per representation and coding), error answers, and the hostile bodies (huge, gzip bomb,
 * endless trickle). server.ts decides what to answer; a Responder writes it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliCompressSync, constants as zc, deflateSync, gzipSync } from 'node:zlib';
import type { Clock } from '../runtime/clock.ts';
import type { FailSpec, SimWebModel } from './model.ts';
import { gzipBomb, HUGE_CHUNK, smallHtml } from './render.ts';
import type { AccessLogEntry, SimWebOptions } from './server-types.ts';

type Encoding = 'br' | 'gzip' | 'deflate';

export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/** Picks br > gzip > deflate among codings the client accepts with q > 0. */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding === '') return undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name === undefined || name === '') continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m?.[1] !== undefined) weight = Number(m[1]);
    }
    q.set(name, weight);
  }
  const star = q.get('*');
  let best: Encoding | undefined;
  let bestQ = 0;
  for (const enc of ['br', 'gzip', 'deflate'] as const) {
    const w = q.get(enc) ?? star ?? 0;
    if (w > bestQ) {
      best = enc;
      bestQ = w;
    }
  }
  return best;
}

/** Fastest levels: the simulation needs valid codings at benchmark rates, not small bodies. */
function compress(body: Buffer, enc: Encoding): Buffer {
  if (enc === 'gzip') return gzipSync(body, { level: 1 });
  if (enc === 'deflate') return deflateSync(body, { level: 1 });
  return brotliCompressSync(body, { params: { [zc.BROTLI_PARAM_QUALITY]: 1, [zc.BROTLI_PARAM_SIZE_HINT]: body.length } });
}

/** Tiny LRU for rendered bodies. */
export class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) {
      const first = this.m.keys().next();
      if (first.done !== true) this.m.delete(first.value);
    }
  }
}

/** A complete response to write. */
export interface Body {
  status: number;
  contentType: string;
  body: Buffer;
  /** Body may be compressed. */
  compressible: boolean;
  headers?: Record<string, string>;
  /** Cache key for compressed variants. */
  key?: string;
  validators?: { etag: string; lastModified: number };
}

/** Writes responses for one SimWeb; owns the timers of delayed and trickling answers. */
export class Responder {
  /** Timers of delayed and trickling responses, cleared at close. */
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly cache: Lru<Buffer>;

  constructor(
    private readonly model: SimWebModel,
    private readonly clock: Clock,
    private readonly opts: Pick<SimWebOptions, 'hugeBytes' | 'bombBytes' | 'trickleIntervalMs' | 'cacheEntries'>,
    private readonly isClosed: () => boolean,
  ) {
    this.cache = new Lru(opts.cacheEntries ?? 1024);
  }

  /** Stops every pending timer (the server is closing). */
  clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  wallDelay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private baseHeaders(res: ServerResponse): void {
    res.setHeader('Date', httpDate(this.clock.now()));
    res.setHeader('Server', 'simweb');
  }

  fail(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry, f: FailSpec): void {
    const mode = f.mode ?? 'status';
    if (mode === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    if (mode === 'hang') return; // never answer; close() or the client ends it
    const headers: Record<string, string> = {};
    if (f.retryAfterSec !== undefined) {
      headers['Retry-After'] = f.retryAfterAsDate === true ? httpDate(this.clock.now() + f.retryAfterSec * 1000) : String(f.retryAfterSec);
    }
    const status = f.status ?? (f.retryAfterSec !== undefined ? 503 : 500);
    this.send(req, res, entry, { status, contentType: 'text/html; charset=utf-8', body: smallHtml(`Error ${status}`, 'Something went wrong.'), compressible: false, headers });
  }

  streamHuge(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry): void {
    const total = this.opts.hugeBytes ?? 10 * 1024 * 1024;
    this.baseHeaders(res);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(total) });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    let left = total;
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const n = Math.min(left, HUGE_CHUNK.length);
        left -= n;
        entry.bytes += n;
        const ok = res.write(n === HUGE_CHUNK.length ? HUGE_CHUNK : HUGE_CHUNK.subarray(0, n));
        if (left === 0) {
          res.end();
          return;
        }
        if (!ok) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  }

  async serveBomb(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry): Promise<void> {
    const body = await gzipBomb(this.opts.bombBytes ?? 128 * 1024 * 1024);
    if (res.destroyed || this.isClosed()) return;
    this.baseHeaders(res);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Encoding': 'gzip', 'Content-Length': String(body.length) });
    entry.encoding = 'gzip';
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    entry.bytes = body.length;
    res.end(body);
  }

  trickle(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry): void {
    this.baseHeaders(res);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const head = '<!DOCTYPE html><html><head><title>Slow</title></head><body><p>';
    res.write(head);
    entry.bytes += head.length;
    const every = this.opts.trickleIntervalMs ?? 1000;
    const tick = (): void => {
      this.timers.delete(timer);
      if (res.destroyed || this.isClosed()) return;
      res.write('.');
      entry.bytes += 1;
      timer = setTimeout(tick, every);
      this.timers.add(timer);
    };
    let timer = setTimeout(tick, every);
    this.timers.add(timer);
    res.once('close', () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    });
  }

  /** Writes a complete response, handling validators, 304 and compression. */
  send(req: IncomingMessage, res: ServerResponse, entry: AccessLogEntry, b: Body): void {
    if (res.destroyed || res.headersSent) return;
    this.baseHeaders(res);
    const host = this.model.hostIndex(entry.host);
    const behavior = host === undefined ? undefined : this.model.behavior(host);
    const headers: Record<string, string> = { ...b.headers };
    let status = b.status;
    const v = b.validators;
    const mode = behavior?.validators ?? 'both';
    if (v !== undefined) entry.etag = v.etag;
    if (v !== undefined && status === 200) {
      const useEtag = mode === 'both' || mode === 'etag';
      const useLm = mode === 'both' || mode === 'last-modified';
      if (useEtag) headers.ETag = v.etag;
      if (useLm) headers['Last-Modified'] = httpDate(v.lastModified);
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      let notModified = false;
      if (inm !== undefined) {
        if (useEtag) notModified = inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === v.etag);
      } else if (ims !== undefined && useLm) {
        const since = Date.parse(ims);
        if (Number.isFinite(since)) notModified = Math.floor(v.lastModified / 1000) * 1000 <= since;
      }
      if (notModified) status = 304;
    }
    if (status === 304) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    let body = b.body;
    const canCompress = b.compressible && behavior?.compression !== false && body.length >= 256;
    if (canCompress) {
      headers.Vary = 'Accept-Encoding';
      const enc = chooseEncoding(req.headers['accept-encoding']);
      if (enc !== undefined) {
        const ckey = b.key === undefined ? undefined : `${b.key}|${enc}`;
        let z = ckey === undefined ? undefined : this.cache.get(ckey);
        if (z === undefined) {
          z = compress(body, enc);
          if (ckey !== undefined) this.cache.set(ckey, z);
        }
        body = z;
        headers['Content-Encoding'] = enc;
        entry.encoding = enc;
      }
    }
    headers['Content-Type'] = b.contentType;
    headers['Content-Length'] = String(body.length);
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    entry.bytes += body.length;
    res.end(body);
  }
}
