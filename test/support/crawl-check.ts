/**
 * Ground-truth checks of a crawl against the simulated web's access log (the server's view is the
 * truth: what was really requested, when, and on which connection), and the harness of the black-box
 * tests: a small host-routed test web and `meguri crawl` run as a child process that reaches it only
 * through static name resolution.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SimWeb, AccessLogEntry } from '../../services/simweb/index.ts';

export function pageKey(host: string, path: string): string {
  return `${host}${path}`;
}

export function urlKey(url: string): string {
  const u = new URL(url);
  return pageKey(u.hostname, `${u.pathname}${u.search}`);
}

export function pageRequests(web: SimWeb): AccessLogEntry[] {
  return web.accessLog().filter((e) => e.path !== '/robots.txt');
}

/** Every expected page fetched exactly once, nothing else fetched, no disallowed URL requested. */
export function assertFetchedExactlyOnce(web: SimWeb, expected: Set<string>, disallowed: Set<string>, opts: { allowDuplicates?: boolean } = {}): void {
  const counts = new Map<string, number>();
  for (const e of pageRequests(web)) counts.set(pageKey(e.host, e.path), (counts.get(pageKey(e.host, e.path)) ?? 0) + 1);
  const want = new Set([...expected].map(urlKey));
  const missing = [...want].filter((k) => !counts.has(k));
  const extra = [...counts.keys()].filter((k) => !want.has(k));
  assert.deepEqual(missing, [], 'every reachable, allowed page was fetched');
  assert.deepEqual(extra, [], 'nothing outside the expected set was fetched');
  const forbidden = [...disallowed].map(urlKey).filter((k) => counts.has(k));
  assert.deepEqual(forbidden, [], 'no robots-disallowed URL was requested');
  if (!opts.allowDuplicates) {
    const dups = [...counts].filter(([, n]) => n > 1);
    assert.deepEqual(dups, [], 'no page was fetched twice');
  }
}

/** Per host: requests never overlap (one in flight) and starts are at least `minGapMs` apart. */
export function assertPolite(web: SimWeb, minGapMs: number): { minObservedGapMs: number; requests: number } {
  const byHost = new Map<string, AccessLogEntry[]>();
  for (const e of web.accessLog()) {
    const list = byHost.get(e.host) ?? [];
    byHost.set(e.host, list);
    list.push(e);
  }
  let minObserved = Infinity;
  let requests = 0;
  for (const [host, list] of byHost) {
    list.sort((a, b) => a.wallMs - b.wallMs);
    requests += list.length;
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const cur = list[i]!;
      const gap = cur.wallMs - prev.wallMs;
      minObserved = Math.min(minObserved, gap);
      assert.ok(cur.wallMs >= prev.wallMs + prev.durationMs - 1, `two requests in flight to ${host}: ${prev.path} and ${cur.path}`);
      assert.ok(gap >= minGapMs - 1, `requests to ${host} only ${gap} ms apart (${prev.path} → ${cur.path}), minimum ${minGapMs}`);
    }
  }
  return { minObservedGapMs: minObserved, requests };
}

export function resolveEntries(web: SimWeb): string[] {
  return Object.entries(web.resolveMap()).map(([pattern, ip]) => `${pattern}=${ip}`);
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/meguri.js');

export interface TestWebRequest {
  /** Host header without port. */
  readonly host: string;
  /** Path with query, as sent. */
  readonly path: string;
  /** Date.now() when the request arrived. */
  readonly wallMs: number;
  readonly userAgent: string;
}

export interface TestWebResponse {
  status: number;
  body?: string;
  /** No content-type header when absent. */
  contentType?: string;
}

/** Answers a request for `path` (with query) on virtual host `host`; links may use `web.url`. */
export type TestWebResponder = (host: string, path: string, web: TestWeb) => TestWebResponse;

/** One HTTP server on 127.0.0.1 serving every virtual host a test names; it logs every request. */
export class TestWeb {
  private readonly log: TestWebRequest[] = [];
  private server!: Server;
  port = 0;

  private constructor(private readonly respond: TestWebResponder) {}

  static async start(respond: TestWebResponder): Promise<TestWeb> {
    const web = new TestWeb(respond);
    web.server = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const path = req.url ?? '/';
      web.log.push({ host, path, wallMs: Date.now(), userAgent: String(req.headers['user-agent'] ?? '') });
      const { status, body, contentType } = web.respond(host, path, web);
      res.writeHead(status, contentType === undefined ? {} : { 'content-type': contentType });
      res.end(body);
    });
    await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve));
    web.port = (web.server.address() as AddressInfo).port;
    return web;
  }

  url(host: string, path = '/'): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Requests since the start or the last crawl through `cliCrawl`, robots.txt included, in arrival order. */
  accessLog(): readonly TestWebRequest[] {
    return this.log;
  }

  clearLog(): void {
    this.log.length = 0;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export interface MeguriRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface MeguriRunOptions {
  /** Killed (SIGKILL) after this long. Default 120 s. */
  timeoutMs?: number;
  /** Called once the child is started (to watch it while it runs). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Runs the `meguri` command as a child process with warnings-only logging, and waits for it to end. */
export function runMeguri(args: readonly string[], opts: MeguriRunOptions = {}): Promise<MeguriRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, MEGURI_LOG_LEVEL: 'warn' } });
    opts.onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface CliCrawlOptions extends MeguriRunOptions {
  seeds: readonly string[];
  /** `pattern=ip` entries: with `--dns static` the only names the crawl can reach. */
  resolve: readonly string[];
  /** The crawl's data goes to `dir/data`, its summary to `dir/summary.json`. */
  dir: string;
  /** Further flags of `meguri crawl`. */
  args?: readonly string[];
  /** Its access log is cleared first, so it holds this crawl's requests only. */
  web?: TestWeb;
}

/**
 * `meguri crawl` of `seeds` with static name resolution, until idle, without a progress bar; fails
 * the test unless it exits 0, and returns its summary (`--summary-json`).
 */
export async function cliCrawl<Summary = Record<string, unknown>>(o: CliCrawlOptions): Promise<Summary> {
  o.web?.clearLog();
  const summaryFile = join(o.dir, 'summary.json');
  const r = await runMeguri(
    [
      'crawl', ...o.seeds,
      '--dns', 'static', ...o.resolve.flatMap((entry) => ['--resolve', entry]),
      '--until-idle', '--no-progress',
      '--data', join(o.dir, 'data'), '--summary-json', summaryFile,
      ...(o.args ?? []),
    ],
    o,
  );
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(readFileSync(summaryFile, 'utf8')) as Summary;
}
