/**
 * The crawler against a hostile web, as a black box: `meguri crawl` runs as a child process with
 * static DNS over test/support/hostile-web.ts (one misbehaviour per virtual host), and the checks
 * read only what a user can see — the server's access log, the summary, `meguri tail` of the
 * crawl's topics, and the process's peak resident memory.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HostileWeb, HOSTILE_DOMAIN } from '../support/hostile-web.ts';
import type { HostileRequest } from '../support/hostile-web.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { cliCrawl } from '../support/crawl-check.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/meguri.js');
const USER_AGENT = 'meguri/0.1 (+http://meguri.invalid/bot)';

interface Outcome {
  type: 'outcome';
  url: string;
  reason: string;
  result: string;
  status: number;
  errorCode?: string;
  finalUrl?: string;
}

interface Summary {
  stoppedBecause: string;
  pagesFetched: number;
  duplicateFetches: number;
  deadletters: number;
  errors: number;
}

/** Peak resident set of a running process, from /proc (kB → MB); 0 once it has gone. */
function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function tail(dir: string, topic: string): unknown[] {
  const r = spawnSync(process.execPath, [bin, 'tail', topic, '--data', dir], { cwd: root, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
}

describe('hostile web, black box', { timeout: 420_000 }, () => {
  let web: HostileWeb;
  let dir: string;
  let summary: Summary;
  let outcomes: Outcome[];
  let peakMb = 0;
  const paths = (host: string): string[] => web.requests(host).map((r) => r.path);
  const fetchedPaths = (host: string): string[] => paths(host).filter((p) => p !== '/robots.txt');
  const outcomeFor = (host: string, path: string): Outcome | undefined => outcomes.find((o) => o.url === web.url(host, path));

  before(async () => {
    web = await HostileWeb.start({ trapFanout: 40 });
    dir = tempDir();
    const config = join(dir, 'scheduler.json');
    // Back-off and parking scaled down so failing hosts finish within the test.
    writeFileSync(config, JSON.stringify({ politeness: { kFactor: 1, maxDelay1Ms: 200, maxDelay2Ms: 200, backoffBaseMs: 50, backoffMaxMs: 500, parkBaseMs: 500, parkMaxMs: 1000 } }));
    let poll: NodeJS.Timeout | undefined;
    summary = await cliCrawl<Summary>({
      seeds: web.seeds(),
      resolve: [`*.${HOSTILE_DOMAIN}=127.0.0.1`],
      dir,
      args: ['--partitions', '2', '--no-sitemaps', '--min-interval', '0.05', '--timeout', '2', '--user-agent', USER_AGENT, '--scheduler-config', config],
      timeoutMs: 300_000,
      onSpawn: (child) => (poll = setInterval(() => (peakMb = Math.max(peakMb, peakRssMb(child.pid!))), 100)),
    }).finally(() => clearInterval(poll));
    outcomes = tail(join(dir, 'data'), 'links').filter((r): r is Outcome => (r as { type?: string }).type === 'outcome');
  });

  after(async () => {
    await web?.close();
    if (dir) removeDir(dir);
  });

  it('finishes idle, without dead letters or duplicate fetches, under 600 MB peak RSS', () => {
    assert.equal(summary.stoppedBecause, 'idle');
    assert.equal(summary.deadletters, 0, 'no record was rejected by any service');
    assert.equal(tail(join(dir, 'data'), 'deadletter').length, 0);
    assert.equal(summary.duplicateFetches, 0);
    assert.ok(peakMb > 0 && peakMb < 600, `peak RSS ${peakMb.toFixed(0)} MB`);
  });

  it('never sends a request to anything but the virtual hosts it resolved', () => {
    const stray = web.accessLog().filter((r) => !r.host.endsWith(`.${HOSTILE_DOMAIN}`));
    assert.deepEqual(stray.map((r) => `${r.host} ${r.path}`), [], 'IP literals, localhost and metadata addresses are not dialled');
  });

  it('reads robots.txt of a host before any page of it', () => {
    for (const host of web.hostNames()) {
      const list = paths(host);
      const firstPage = list.findIndex((p) => p !== '/robots.txt');
      if (firstPage < 0 || host === 'robotsdst') continue;
      assert.ok(list.indexOf('/robots.txt') >= 0 && list.indexOf('/robots.txt') < firstPage, `${host}: ${list.slice(0, 3).join(', ')}`);
    }
  });

  describe('pages', () => {
    it('follows links on malformed, NUL-ridden, deeply nested, untyped and Shift_JIS pages', () => {
      const got = fetchedPaths('pages');
      for (const p of ['/after-malformed', '/after-malformed-2', '/after-nul', '/after-deep', '/after-untyped', '/after-sjis', '/after-invalid']) assert.ok(got.includes(p), `${p} fetched`);
    });
    it('caps a 10 MB body and a gzip bomb, keeping links near the top', () => {
      assert.ok(fetchedPaths('pages').includes('/after-huge'));
      const bomb = outcomeFor('pages', '/gzip-bomb');
      assert.ok(bomb, 'the gzip bomb has an outcome');
    });
    it('turns binary served as HTML, a PNG, a 500 and a redirect loop into error outcomes', () => {
      assert.equal(outcomeFor('pages', '/binary')?.errorCode, 'MEGURI_ERR_BINARY');
      assert.equal(outcomeFor('pages', '/png')?.result, 'not-html');
      assert.equal(outcomeFor('pages', '/error500')?.result, 'server-error');
      assert.ok(fetchedPaths('pages').filter((p) => p.startsWith('/loop/')).length <= 8, 'the loop ended');
    });
    it('ends a body that never finishes with a timeout', () => {
      assert.equal(outcomeFor('pages', '/slow')?.errorCode, 'MEGURI_ERR_TIMEOUT');
    });
    it('keeps at most the outcome limit of 20,000 links and still follows the first', () => {
      assert.ok(fetchedPaths('pages').includes('/after-many'));
    });
    it('follows a normal link beside 10 KB URLs', () => {
      assert.ok(fetchedPaths('pages').includes('/after-long-links'));
    });
    it('gives a short body, a corrupt gzip, an unknown encoding and a 200 KB header outcomes', () => {
      for (const p of ['/short-body', '/bad-gzip', '/unknown-encoding', '/huge-header', '/empty', '/wrong-length-chunked']) assert.ok(outcomeFor('pages', p), `${p} has an outcome`);
      assert.equal(outcomeFor('pages', '/short-body')?.result, 'error');
      assert.equal(outcomeFor('pages', '/bad-gzip')?.result, 'error');
    });
  });

  describe('HTTP framing', () => {
    it('files parser errors as MEGURI_ERR_PROTOCOL', () => {
      for (const p of ['/bad-chunk', '/http09', '/bad-status', '/bad-header']) assert.equal(outcomeFor('proto', p)?.errorCode, 'MEGURI_ERR_PROTOCOL', p);
    });
    it('reads the final response after a stray 100 Continue or 103 Early Hints', () => {
      assert.equal(outcomeFor('proto', '/continue')?.result, 'ok');
      assert.equal(outcomeFor('proto', '/early-hints')?.result, 'ok');
      assert.ok(fetchedPaths('proto').includes('/after-continue'));
      assert.ok(fetchedPaths('proto').includes('/after-hints'));
    });
  });

  describe('redirects', () => {
    it('never fetches a disallowed path through a same-host redirect', () => {
      assert.ok(fetchedPaths('redir').includes('/to-private'));
      assert.ok(!fetchedPaths('redir').includes('/private/secret'));
    });
    it('reads the target host’s robots.txt first and keeps its Crawl-delay', () => {
      const target = web.requests('target');
      assert.equal(target[0]?.path, '/robots.txt');
      const pages = target.filter((r) => r.path !== '/robots.txt');
      assert.deepEqual(pages.map((r) => r.path).sort(), ['/landing', '/t2', '/t3']);
      for (let i = 1; i < target.length; i++) {
        const gap = target[i]!.wallMs - target[i - 1]!.wallMs;
        assert.ok(gap >= 950, `requests to target only ${gap} ms apart (${target[i - 1]!.path} → ${target[i]!.path})`);
      }
    });
    it('decodes a UTF-8 Location', () => {
      assert.ok(fetchedPaths('redir').includes('/caf%C3%A9-%C3%BC'), fetchedPaths('redir').join(' '));
    });
    it('ends a 60 KB Location with an error outcome and goes on with the host', () => {
      const o = outcomeFor('redir', '/long-location');
      assert.ok(o && o.result !== 'ok', 'the long Location has an outcome');
      assert.ok(fetchedPaths('redir').includes('/after-long-location'));
      assert.ok(!fetchedPaths('redir').some((p) => p.startsWith('/x?')));
    });
    it('refuses redirects to IP literals, the metadata address and other schemes', () => {
      assert.ok(!web.accessLog().some((r: HostileRequest) => r.path === '/ip-target'));
      assert.ok(outcomeFor('redir', '/to-ftp'), 'ftp redirect has an outcome');
    });
    it('resolves a relative Location', () => {
      assert.ok(fetchedPaths('redir').includes('/rel-target'));
    });
  });

  describe('traps', () => {
    it('bounds a session-id host and fetches its normal page', () => {
      const got = fetchedPaths('sid');
      assert.ok(got.length <= 100, `${got.length} requests`);
      assert.ok(got.includes('/normal'));
    });
    it('bounds a path-id host and fetches its normal page', () => {
      const got = fetchedPaths('pathid');
      assert.ok(got.includes('/normal'));
      assert.ok(got.length <= 1100, `${got.length} requests`);
    });
  });

  describe('politeness signals', () => {
    it('waits out a 429 Retry-After and ends while a host waits on a long one', () => {
      const rl = web.requests('ratelimit').filter((r) => r.path === '/');
      assert.ok(rl.length >= 2, 'retried');
      assert.ok(rl[1]!.wallMs - rl[0]!.wallMs >= 1900, `retried after ${rl[1]!.wallMs - rl[0]!.wallMs} ms`);
      assert.ok(fetchedPaths('retry').length <= 2, 'a host asking for two hours is not asked again');
    });
    it('bounds a host that resets or never answers', () => {
      assert.ok(fetchedPaths('reset').length <= 10);
      assert.ok(fetchedPaths('hang').length <= 10);
    });
    it('keeps a Crawl-delay of 1.5 s', () => {
      const list = web.requests('delay');
      assert.equal(list.length, 4);
      for (let i = 1; i < list.length; i++) assert.ok(list[i]!.wallMs - list[i - 1]!.wallMs >= 1450);
    });
  });

  describe('robots.txt', () => {
    it('fetches nothing of a host whose robots.txt answers 5xx or never', () => {
      assert.deepEqual(fetchedPaths('robots5xx'), []);
      assert.deepEqual(fetchedPaths('robotshang'), []);
    });
    it('crawls hosts whose robots.txt is 404, 403 or an HTML page', () => {
      assert.ok(fetchedPaths('robots404').includes('/r404-page'));
      assert.ok(fetchedPaths('robots403').includes('/'));
      assert.ok(fetchedPaths('robotshtml').includes('/hr-page'));
    });
    it('follows a robots.txt redirect to another host', () => {
      assert.ok(fetchedPaths('robotsredir').includes('/open'));
      assert.ok(!fetchedPaths('robotsredir').includes('/secret'));
    });
    it('honours the rules of a huge robots.txt, wildcards, $ anchors, a BOM and CRLF', () => {
      assert.ok(!fetchedPaths('robotshuge').includes('/top-secret'));
      assert.ok(fetchedPaths('robotshuge').includes('/fine'));
      const wild = fetchedPaths('wild');
      assert.ok(!wild.includes('/x.php') && !wild.includes('/doc?print=1'));
      assert.ok(wild.includes('/x.php?y=1') && wild.includes('/ok'));
      assert.ok(!fetchedPaths('bom').includes('/no') && fetchedPaths('bom').includes('/yes'));
    });
    it('obeys the most specific user-agent group', () => {
      const got = fetchedPaths('uagroup');
      assert.ok(!got.includes('/meguri-only') && got.includes('/all'));
    });
  });
});
