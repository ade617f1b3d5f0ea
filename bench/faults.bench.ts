/**
 * The fault campaign: a multi-process crawl (2 schedulers, 2 fetchers, 2 parsers, each a
 * `meguri run` process) of the simulated web on a Kafka broker of its own, once per scenario —
 * no faults, kill -9 of a random service, kill -9 of the schedulers, a scheduler stopped past its
 * session timeout (zombie), the broker stopped and started again — and one table of what each
 * crawl fetched, lost and duplicated. docs/reliability.md explains the figures.
 *
 *   npm run bench:faults -- [--brokers 1|3] [--hosts 300] [--pages 20] [--kills 10] [--prefill 100000] [--only 'zombie scheduler,...'] [--timeout-min 15] [--json]
 *
 * As root it runs inside a fresh network namespace with only loopback (unshare -n), like the tests.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { LocalBroker } from '../test/support/local-broker.ts';
import { figuresTable } from '../test/support/fault-table.ts';
import type { ScenarioFigures } from '../test/support/fault-figures.ts';
import { clusterScenarios, runScenario, scenarioNames } from '../test/support/fault-scenarios.ts';
import type { ScenarioName, ZombieEvidence } from '../test/support/fault-scenarios.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '300' },
    pages: { type: 'string', default: '20' },
    kills: { type: 'string', default: '10' },
    partitions: { type: 'string', default: '4' },
    only: { type: 'string', default: '' },
    'timeout-min': { type: 'string', default: '15' },
    'web-seed': { type: 'string', default: '11' },
    /** known URLs written to each scheduler partition before the crawl */
    prefill: { type: 'string', default: '0' },
    /** brokers of the campaign's own cluster: 1, or 3 (topics with 3 copies, 2 in sync) */
    brokers: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
});

function reexecInNamespace(): number | undefined {
  if (process.env.MEGURI_BENCH_NETNS === 'inside' || process.env.MEGURI_BENCH_NETNS === 'off') return undefined;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  if (spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' }).status !== 0) return undefined;
  const root = fileURLToPath(new URL('..', import.meta.url));
  // The broker's jars must be in the cache before the network goes away.
  if (spawnSync('bash', [`${root}deploy/local/kafka.sh`, 'jars'], { stdio: ['ignore', 'ignore', 'inherit'] }).status !== 0) return 1;
  const self = fileURLToPath(import.meta.url);
  const res = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, '--import', 'tsx', self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, MEGURI_BENCH_NETNS: 'inside' },
  });
  return res.status ?? 1;
}

/** Which URLs were fetched twice, when (s into the scenario), and whether a fetcher kill had them in flight. */
function describeRefetches(r: ScenarioFigures): string {
  const faults = r.faults.join('; ');
  return `${r.refetched
    .slice(0, 12)
    .map((x) => `${x.key} at ${x.fetchedAtMs.map((t) => ((t - r.startedAtMs) / 1000).toFixed(1)).join(' & ')} s${x.inFlightAtAKill ? ' (in flight at a kill)' : ''}`)
    .join(', ')} (faults: ${faults})`;
}

async function main(): Promise<void> {
  const outer = reexecInNamespace();
  if (outer !== undefined) process.exit(outer);
  const nodes = Number(values.brokers);
  if (nodes !== 1 && nodes !== 3) throw new Error('--brokers is 1 or 3');
  // One broker cannot lose a leader or roll; a cluster's whole restart is the rolling one.
  const fitting = scenarioNames.filter((n) => (nodes === 1 ? !clusterScenarios.includes(n) : n !== 'broker restart'));
  const wanted = values.only ? values.only.split(',').map((s) => s.trim()) : [...fitting];
  const unknown = wanted.filter((w) => !scenarioNames.includes(w as ScenarioName));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${scenarioNames.join(', ')}`);
  const settings = {
    hosts: Number(values.hosts),
    pagesPerHost: Number(values.pages),
    partitions: Number(values.partitions),
    webSeed: Number(values['web-seed']),
    kills: Number(values.kills),
    prefillUrlsPerPartition: Number(values.prefill),
    ...(nodes === 3 ? { replication: { factor: 3, minInsyncReplicas: 2 } } : {}),
    completionTimeoutMs: Number(values['timeout-min']) * 60_000,
    verbose: !values.quiet,
  };
  const started = new Date();
  const broker = await LocalBroker.start({ nodes });
  // The brokers are daemons of kafka.sh: an interrupted bench must not leave them running.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      broker.destroy();
      process.exit(130);
    });
  }
  const rows: ScenarioFigures[] = [];
  const zombies: ZombieEvidence[] = [];
  try {
    for (const name of wanted as ScenarioName[]) {
      console.error(`\n# scenario: ${name}`);
      try {
        const result = await runScenario(name, broker, settings);
        rows.push(result.figures);
        if (result.zombie) zombies.push(result.zombie);
        console.error(`# ${name}: ${JSON.stringify(result.figures)}`);
        if (result.zombie) console.error(`# zombie: ${JSON.stringify(result.zombie)}`);
      } catch (err) {
        console.error(`# ${name} failed to run: ${(err as Error).stack ?? String(err)}`);
      }
    }
  } finally {
    broker.destroy();
  }
  if (values.json) {
    console.log(JSON.stringify({ started: started.toISOString(), settings, machine: machineInfo(), rows, zombies }, null, 2));
    return;
  }
  console.log(
    `fault campaign ${started.toISOString()}: ${nodes} broker(s), ${settings.hosts} hosts × ${settings.pagesPerHost} pages, ${settings.partitions} partitions, ${settings.prefillUrlsPerPartition.toLocaleString('en-US')} prefilled URLs per scheduler partition, 2 schedulers, 2 fetchers, 2 parsers, ${settings.kills} kills`,
  );
  console.log(machineLine(machineInfo()));
  console.log(figuresTable(rows));
  for (const r of rows) {
    const extra = [
      r.faults.length > 0 ? `faults: ${r.faults.join('; ')}` : '',
      r.crashes.length > 0 ? `crashed: ${r.crashes.join('; ')}` : '',
      r.uncommittedRequestsFetched > 0 ? `${r.uncommittedRequestsFetched} aborted (uncommitted) requests fetched` : '',
      r.urlsWithTwoNew > 0 ? `${r.urlsWithTwoNew} URLs with two \`new\` changes` : '',
      r.duplicatePages > 0 ? `${r.duplicatePages} duplicate \`pages\` records` : '',
      r.revisits > 0 ? `${r.revisits} \`revisits\` records` : '',
      Object.keys(r.deadLetterReasons).length > 0 ? `dead letters: ${JSON.stringify(r.deadLetterReasons)}` : '',
      r.refetches > r.inFlightAtKills ? `re-fetched beyond the bound: ${describeRefetches(r)}` : '',
      existsSync(r.logDir) ? `logs kept in ${r.logDir}` : '',
    ].filter(Boolean);
    if (extra.length > 0) console.log(`- ${r.scenario}: ${extra.join('; ')}`);
  }
  for (const z of zombies) {
    console.log(
      `- zombie ${z.zombie}: stopped ${(z.pausedMs / 1000).toFixed(0)} s, taken over: ${z.takenOver ? 'yes' : 'no'}, refused late commits seen in its log: ${z.refusals.length}, partitions at the end: ${z.partitionsAtEnd}, ready at the end: ${z.readyAtEnd ? 'yes' : 'no'}`,
    );
  }
}

await main();
