#!/usr/bin/env node
// The test command behind `npm test`: starts a real single-node Kafka (deploy/local) unless
// KAFKA_BROKERS is set, runs every test file with node's test runner, and stops the broker.
// As root it runs the suite in a fresh network namespace with only loopback (unshare -n), so no
// test can reach any address but this machine's own, DNS included.
//
//   node scripts/run-tests.mjs [--only unit|pipeline|e2e] [test files...]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const kafkaScript = join(root, 'deploy/local/kafka.sh');
const args = process.argv.slice(2);
let only;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--only') only = args[++i];
  else files.push(args[i]);
}

function discover() {
  const suites = only ? [only] : ['unit', 'pipeline', 'e2e'];
  const found = [];
  for (const suite of suites) {
    const dir = join(root, 'test', suite);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir, { recursive: true })) {
      if (String(f).endsWith('.test.ts')) found.push(relative(root, join(dir, String(f))));
    }
  }
  return found.sort();
}

const testFiles = files.length > 0 ? files : discover();
const needsKafka = !process.env.KAFKA_BROKERS && testFiles.some((f) => !f.startsWith('test/unit/'));

function run(cmd, cmdArgs, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, cmdArgs, { stdio: 'inherit', cwd: root, ...opts });
    const forward = (sig) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

function canUseNetns() {
  if (process.env.MEGURI_TEST_NETNS === 'off' || process.env.MEGURI_TEST_NETNS === 'inside') return false;
  if (process.env.KAFKA_BROKERS) return false; // a broker outside would be unreachable
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return false;
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
  return probe.status === 0;
}

// The k8s manifest test renders with kubectl; install it (Debian package) while the network is here.
if (testFiles.some((f) => f.includes('k8s')) && process.env.MEGURI_TEST_NETNS !== 'inside') {
  const kubectl = spawnSync('bash', [join(root, 'scripts/ensure-kubectl.sh')], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
  if (kubectl.status !== 0) console.error('# kubectl is not available; the k8s test will say why');
}

// The WARC tests read the files back with Python's warcio: set up its venv while the network is here.
if (testFiles.some((f) => f.includes('warc')) && process.env.MEGURI_TEST_NETNS !== 'inside') {
  const warcio = spawnSync('bash', [join(root, 'scripts/ensure-warcio.sh')], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
  if (warcio.status !== 0) console.error('# Python warcio is not available; the WARC tests will say why');
}

// The live-view test drives a real headless Chromium: install Debian's while the network is here.
if (testFiles.some((f) => f.includes('live-view')) && process.env.MEGURI_TEST_NETNS !== 'inside') {
  const chromium = spawnSync('bash', [join(root, 'scripts/ensure-chromium.sh')], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
  if (chromium.status !== 0) console.error('# Chromium is not available; the live-view test will say why');
}

if (canUseNetns()) {
  // Maven may need the network once for the broker's jars: fetch them before leaving it.
  if (needsKafka) {
    const jars = spawnSync('bash', [kafkaScript, 'jars'], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
    if (jars.status !== 0) process.exit(jars.status ?? 1);
  }
  console.log('# tests run in a network namespace with only loopback');
  const code = await run('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, fileURLToPath(import.meta.url), ...args], {
    env: { ...process.env, MEGURI_TEST_NETNS: 'inside' },
  });
  process.exit(code);
}

const env = { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' };
let stateDir;
if (needsKafka) {
  // A broker of its own per run: a developer's broker (and its data) is never touched.
  stateDir = mkdtempSync(join(tmpdir(), 'meguri-test-kafka-'));
  const started = spawnSync('bash', [kafkaScript, 'start'], {
    cwd: root,
    env: { ...env, MEGURI_KAFKA_STATE_DIR: stateDir },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const line = (started.stdout ?? '').split('\n').find((l) => l.startsWith('KAFKA_BROKERS='));
  if (started.status !== 0 || !line) {
    console.error('could not start the local Kafka broker (deploy/local/kafka.sh start)');
    rmSync(stateDir, { recursive: true, force: true });
    process.exit(1);
  }
  env.KAFKA_BROKERS = line.slice('KAFKA_BROKERS='.length).trim();
  // A single broker: topics the tests create (`meguri topics create` included) get one copy.
  env.MEGURI_REPLICATION_FACTOR ??= '1';
  env.MEGURI_MIN_INSYNC_REPLICAS ??= '1';
  console.log(`# kafka broker ${env.KAFKA_BROKERS}`);
}

// Tests whose simulated web runs on a scaled clock (a simulated day in under a second) measure how
// much the crawl gets done per wall second; beside another heavy test on two cores they starve. They
// run on their own, after the rest.
const SOLO = new Set(['test/e2e/revisits.test.ts']);
const together = testFiles.filter((f) => !SOLO.has(f));
const alone = testFiles.filter((f) => SOLO.has(f));

let code = 1;
try {
  const testArgs = ['--import', 'tsx', '--test', '--test-reporter=spec'];
  code = together.length > 0 ? await run(process.execPath, [...testArgs, '--test-concurrency=2', ...together], { env }) : 0;
  if (alone.length > 0) {
    console.log(`# on their own: ${alone.join(', ')}`);
    const soloCode = await run(process.execPath, [...testArgs, '--test-concurrency=1', ...alone], { env });
    code = code || soloCode;
  }
} finally {
  if (stateDir) {
    spawnSync('bash', [kafkaScript, 'stop'], { cwd: root, env: { ...env, MEGURI_KAFKA_STATE_DIR: stateDir }, stdio: ['ignore', 'ignore', 'inherit'] });
    rmSync(stateDir, { recursive: true, force: true });
  }
}
process.exit(code);
