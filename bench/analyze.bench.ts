/**
 * Memory of `meguri analyze` as its input grows: writes a synthetic crawl's `pages` topic (50
 * servers, pages with links within and across servers, some exact duplicates) into an embedded
 * log at N and 10×N pages, runs every job on each in a fresh child process and prints the peak
 * resident memory (max RSS) and time. Page-level state lives in the job's scratch RocksDB, so the
 * peak should stay flat; per-server state grows with servers, which stay at 50 here.
 *
 * Each child runs with V8's heap capped (--heap-mb, default 64 MB): a job whose JavaScript state
 * grew with the pages would fail at 10× instead of finishing.
 *
 *   npx tsx bench/analyze.bench.ts [--pages 2000] [--factor 10] [--servers 50] [--heap-mb 64] [--json]
 */
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SCHEMA_VERSION } from '../schemas/index.ts';
import type { PageRecord } from '../schemas/index.ts';
import { createTransport } from '../services/runtime/index.ts';
import { analyze } from '../services/analyze/command.ts';
import { JOBS } from '../services/analyze/jobs.ts';
import type { JobName } from '../services/analyze/jobs.ts';
import { encodeBenchPage } from './analyze-page.ts';
import { tempDir, removeDir } from '../test/support/transports.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '2000' },
    factor: { type: 'string', default: '10' },
    servers: { type: 'string', default: '50' },
    'heap-mb': { type: 'string', default: '64' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
    data: { type: 'string' },
  },
});

/** Child mode: run one job over a data directory, print {maxRssMb, ms}. */
async function child(job: JobName, data: string): Promise<void> {
  const t0 = performance.now();
  const transport = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: data });
  try {
    await analyze(transport, job, [], { topicPrefix: '', lookup: () => undefined }, { out: () => {} });
  } finally {
    await transport.close();
  }
  process.stdout.write(JSON.stringify({ maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), heapMb: Math.round(process.memoryUsage().heapUsed / 1048576), ms: Math.round(performance.now() - t0) }) + '\n');
}

function pageBody(server: number, n: number, servers: number, pagesPerServer: number): string {
  if (n % 97 === 13) return '<!DOCTYPE html><html><head><title>Notice</title></head><body><p>The same notice on many pages of many servers, word for word.</p></body></html>';
  const links: string[] = [];
  for (let i = 1; i <= 12; i++) links.push(`<a href="/p/${(n * 7 + i * 13) % pagesPerServer}.html">p</a>`);
  for (let i = 1; i <= 3; i++) links.push(`<a href="http://s${(server * 31 + n * i * 17) % servers}.bench.test/p/${(n + i) % pagesPerServer}.html">x</a>`);
  const text = `<p>${`Page ${n} of server ${server} says something long enough to count as a sentence here. `.repeat(20)}</p>`;
  return `<!DOCTYPE html><html lang="en"><head><title>s${server} p${n}</title></head><body><img src="/i.png">${links.join(' ')}${text}</body></html>`;
}

async function writeCrawl(dir: string, pages: number, servers: number): Promise<void> {
  const t = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: dir });
  try {
    await t.ensureTopics([{ name: 'pages', partitions: 4 }]);
    const perServer = Math.ceil(pages / servers);
    const now = Date.now();
    let batch: { topic: string; key: string; value: Buffer }[] = [];
    for (let i = 0; i < pages; i++) {
      const server = i % servers;
      const n = Math.floor(i / servers);
      const url = `http://s${server}.bench.test/p/${n}.html`;
      const record: PageRecord = {
        v: SCHEMA_VERSION,
        request: { v: SCHEMA_VERSION, requestId: `r${i}`, url, host: `s${server}.bench.test`, reason: 'new', score: 1, depth: 1, cgiHops: 0, attempt: 1, issuedAt: now },
        finalUrl: url,
        redirects: [],
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        contentType: 'text/html',
        bodyTruncated: false,
        bytes: 0,
        decodedBytes: 0,
        timing: { startedAt: now, totalMs: 5 },
        serverIp: `192.0.2.${server % 250}`,
        fetchedAt: now + i,
      };
      batch.push({ topic: 'pages', key: `s${server}.bench.test`, value: encodeBenchPage(record, pageBody(server, n, servers, perServer)) });
      if (batch.length >= 500) {
        await t.send(batch);
        batch = [];
      }
    }
    await t.send(batch);
  } finally {
    await t.close();
  }
}

async function main(): Promise<void> {
  if (values.child !== undefined) return child(values.child as JobName, values.data!);
  const base = Number(values.pages);
  const factor = Number(values.factor);
  const servers = Number(values.servers);
  const self = fileURLToPath(import.meta.url);
  const rows: { pages: number; job: string; maxRssMb: number; heapMb: number; ms: number }[] = [];
  for (const pages of [base, base * factor]) {
    const dir = tempDir('meguri-bench-analyze-');
    try {
      await writeCrawl(dir, pages, servers);
      for (const job of JOBS) {
        const r = spawnSync(process.execPath, [`--max-old-space-size=${values['heap-mb']}`, '--import', 'tsx', self, '--child', job, '--data', dir], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${job} failed: ${r.stderr}`);
        const m = JSON.parse(r.stdout.trim().split('\n').pop()!) as { maxRssMb: number; heapMb: number; ms: number };
        rows.push({ pages, job, ...m });
      }
    } finally {
      removeDir(dir);
    }
  }
  if (values.json) {
    console.log(JSON.stringify({ machine: machineInfo(), servers, rows }, null, 2));
    return;
  }
  console.log(machineLine(machineInfo()));
  console.log(`analyze memory, ${servers} servers; peak RSS (and V8 heap in use at the end) of a fresh process per job, heap capped at ${values['heap-mb']} MB`);
  console.log('job             ' + [base, base * factor].map((p) => `${p} pages`.padStart(28)).join('') + '   ratio');
  for (const job of JOBS) {
    const a = rows.find((r) => r.job === job && r.pages === base)!;
    const b = rows.find((r) => r.job === job && r.pages === base * factor)!;
    const cell = (r: typeof a): string => `${r.maxRssMb} MB (${r.heapMb}) ${String(r.ms).padStart(6)} ms`.padStart(28);
    console.log(`${job.padEnd(16)}${cell(a)}${cell(b)}   ${(b.maxRssMb / a.maxRssMb).toFixed(2)}×`);
  }
}

await main();
