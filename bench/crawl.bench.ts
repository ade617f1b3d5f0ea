/**
 * End-to-end crawl throughput on the simulated web: scheduler, fetcher and parser in this process,
 * the web server in a child process on the same machine, interval 0, 21.8 KB pages.
 * Reports pages/s, CPU (crawler and web server) and the crawler's peak RSS.
 *
 * Every host listens on its own loopback address by default (127.0.0.2, …, 127.0.1.2, …), so the
 * per-IP cap (2 requests in flight per address) does not stand in for the crawl loop; `--ips 1`
 * puts every host on 127.0.0.1, as one shared-hosting server, and measures that bound instead.
 *
 *   npm run bench:crawl -- [--hosts 1000] [--pages 20] [--ips N] [--partitions 4] [--parser-workers N] [--kafka host:port] [--json]
 */
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCrawl } from '../services/cli/crawl.ts';
import { createResolver } from '../services/fetcher/dns.ts';
import { tempDir, removeDir, uniquePrefix } from '../test/support/transports.ts';
import { removeRunTopics, requireBroker } from './kafka-topics.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '1000' },
    pages: { type: 'string', default: '20' },
    ips: { type: 'string' },
    partitions: { type: 'string', default: '4' },
    kafka: { type: 'string', default: '' },
    json: { type: 'boolean', default: false },
    transport: { type: 'string', default: '' },
    'parser-workers': { type: 'string' },
  },
});

function cpuSecondsOf(pid: number): number {
  // utime + stime from /proc/<pid>/stat, in clock ticks (100 Hz on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The i-th loopback address from 127.0.0.2 on, 250 per third octet (no .0, .1 or .255 in the last). */
function loopbackAddress(i: number): string {
  return `127.0.${Math.floor(i / 250)}.${(i % 250) + 2}`;
}

async function startWeb(hosts: number, pages: number, ipCount: number): Promise<{ pid: number; resolve: string[]; seeds: string[]; stop: () => void }> {
  const main = fileURLToPath(new URL('../services/simweb/main.ts', import.meta.url));
  const ips = ipCount === 1 ? ['127.0.0.1'] : Array.from({ length: ipCount }, (_, i) => loopbackAddress(i));
  const child = spawn(process.execPath, ['--import', 'tsx', main, '--hosts', String(hosts), '--pages', String(pages), '--seed', '3', '--crawl-delay-share', '0', '--ips', ips.join(',')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  const info = JSON.parse(String(first.value)) as { port: number; resolve: Record<string, string> };
  return {
    pid: child.pid!,
    resolve: Object.entries(info.resolve).map(([k, v]) => `${k}=${v}`),
    seeds: Array.from({ length: hosts }, (_, i) => `http://h${i}.sim.test:${info.port}/`),
    stop: () => child.kill('SIGTERM'),
  };
}

async function run(kind: 'embedded' | 'kafka'): Promise<Record<string, number | string>> {
  const hosts = Number(values.hosts);
  const ipCount = values.ips === undefined ? hosts : Number(values.ips);
  if (!Number.isInteger(ipCount) || ipCount < 1 || ipCount > hosts) throw new RangeError(`--ips: 1 to --hosts (${hosts})`);
  const web = await startWeb(hosts, Number(values.pages), ipCount);
  const dir = tempDir('meguri-bench-crawl-');
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
  const cpu0 = process.cpuUsage();
  const webCpu0 = cpuSecondsOf(web.pid);
  const topicPrefix = uniquePrefix();
  try {
    const summary = await runCrawl({
      seeds: web.seeds,
      dataDir: dir,
      ...(kind === 'kafka' ? { kafkaBrokers: values.kafka.split(','), topicPrefix } : {}),
      partitions: Number(values.partitions),
      untilIdle: true,
      ...(values['parser-workers'] !== undefined ? { parserWorkers: Number(values['parser-workers']) } : {}),
      // Interval 0 means no politeness delay at all: no k × download time, no suspend windows.
      scheduler: { minIntervalMs: 0, userAgent: 'meguri', politeness: { kFactor: 0, suspendEnabled: false } },
      fetcher: { resolver: createResolver({ mode: 'static', resolve: web.resolve }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
    });
    const cpu = process.cpuUsage(cpu0);
    const crawlerCpuS = (cpu.user + cpu.system) / 1e6;
    const webCpuS = cpuSecondsOf(web.pid) - webCpu0;
    return {
      transport: kind,
      hosts,
      ips: ipCount,
      pages: summary.pagesFetched,
      elapsedS: summary.elapsedS,
      pagesPerS: summary.pagesPerS,
      crawlerCpuS: Math.round(crawlerCpuS * 10) / 10,
      webServerCpuS: Math.round(webCpuS * 10) / 10,
      cpuCoresUsed: Math.round(((crawlerCpuS + webCpuS) / summary.elapsedS) * 100) / 100,
      peakRssMiB: Math.round(peakRss / 2 ** 20),
      duplicates: summary.duplicateFetches,
      errors: summary.errors,
    };
  } finally {
    clearInterval(sampler);
    web.stop();
    removeDir(dir);
    if (kind === 'kafka') await removeRunTopics(values.kafka.split(','), topicPrefix);
  }
}

const kinds: ('embedded' | 'kafka')[] = values.transport ? [values.transport as 'embedded' | 'kafka'] : values.kafka ? ['embedded', 'kafka'] : ['embedded'];
if (kinds.includes('kafka')) await requireBroker(values.kafka.split(','), 'bench:crawl');
const results = [];
for (const k of kinds) results.push(await run(k));
const machine = machineInfo();
if (values.json) console.log(JSON.stringify({ machine, results }, null, 2));
else {
  console.log(machineLine(machine));
  console.table(results);
}
process.exit(0);
