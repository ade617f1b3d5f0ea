/**
 * A Kafka broker of a test's own (deploy/local/kafka.sh with a private state dir), which the test
 * may stop and start again by PID without disturbing the broker other tests share. Restarts keep the
 * data and the ports (MEGURI_KAFKA_KEEP_PORTS=1), so clients keep their bootstrap address.
 *
 * Also: the broker's jar directory, and a read of topics through the broker project's own Java
 * client at read_committed (CommittedReader.java), the reference view of what was committed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { removeDir, tempDir } from './transports.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const kafkaScript = join(repoRoot, 'deploy/local/kafka.sh');
const readerSource = fileURLToPath(new URL('./CommittedReader.java', import.meta.url));

/** `<cache>/kafka-<version>/libs`, as kafka.sh lays it out. */
export function kafkaLibsDir(): string {
  const pom = readFileSync(join(repoRoot, 'deploy/local/pom.xml'), 'utf8');
  const version = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1];
  if (!version) throw new Error('deploy/local/pom.xml has no kafka.version');
  const cache = process.env.MEGURI_CACHE_DIR || (homedir() ? join(homedir(), '.cache/meguri') : join(repoRoot, '.cache/meguri'));
  const libs = join(cache, `kafka-${version}`, 'libs');
  if (!existsSync(libs)) throw new Error(`no Kafka jars in ${libs}: run \`bash deploy/local/kafka.sh jars\` once`);
  return libs;
}

export class LocalBroker {
  private constructor(
    readonly stateDir: string,
    readonly brokers: string,
  ) {}

  static async start(): Promise<LocalBroker> {
    const stateDir = tempDir('meguri-fault-kafka-');
    const brokers = LocalBroker.run(stateDir, 'start');
    if (!brokers) {
      removeDir(stateDir);
      throw new Error('the fault campaign could not start its own broker (deploy/local/kafka.sh start)');
    }
    return new LocalBroker(stateDir, brokers);
  }

  /** PID of the broker's JVM, from kafka.sh's pid file; undefined when stopped. */
  pid(): number | undefined {
    const file = join(this.stateDir, 'kafka.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  /** Stops the broker (SIGTERM to its PID, then waits for the exit): data and ports stay. */
  stop(): void {
    const status = spawnSync('bash', [kafkaScript, 'stop'], { env: this.env(), stdio: ['ignore', 'ignore', 'inherit'] });
    if (status.status !== 0) throw new Error('kafka.sh stop failed');
  }

  /** Starts it again on the same ports with the same data. */
  restart(): void {
    const brokers = LocalBroker.run(this.stateDir, 'start');
    if (brokers !== this.brokers) throw new Error(`the broker came back on ${brokers ?? 'nothing'} instead of ${this.brokers}`);
  }

  /** Stops the broker and deletes its state. */
  destroy(): void {
    spawnSync('bash', [kafkaScript, 'stop'], { env: this.env(), stdio: ['ignore', 'ignore', 'inherit'] });
    removeDir(this.stateDir);
  }

  /** Where its server.log lives, for reading causes after a failure. */
  serverLog(): string {
    return join(this.stateDir, 'logs', 'server.log');
  }

  private env(): NodeJS.ProcessEnv {
    return LocalBroker.envFor(this.stateDir);
  }

  /** A loaded machine can take well over kafka.sh's default 60 s to start a broker. */
  private static envFor(stateDir: string): NodeJS.ProcessEnv {
    return { MEGURI_KAFKA_START_TIMEOUT: '180', ...process.env, MEGURI_KAFKA_STATE_DIR: stateDir, MEGURI_KAFKA_KEEP_PORTS: '1' };
  }

  private static run(stateDir: string, command: 'start'): string | undefined {
    const out = spawnSync('bash', [kafkaScript, command], {
      env: LocalBroker.envFor(stateDir),
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    const line = (out.stdout ?? '').split('\n').find((l) => l.startsWith('KAFKA_BROKERS='));
    return out.status === 0 && line ? line.slice('KAFKA_BROKERS='.length).trim() : undefined;
  }
}

export interface CommittedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  /** The whole value, unless the topic was read with a projection. */
  readonly value?: string | null;
  /** The projected JSON pointers of the value (null when absent). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/**
 * Every committed record of `topics` (each optionally `name:/ptr,/ptr` to keep only those fields),
 * as the Java client at read_committed sees them. Rejects unless the read reached the end.
 */
export async function readCommitted(brokers: string, topics: readonly string[], timeoutMs = 120_000): Promise<CommittedRecord[]> {
  try {
    return await readCommittedOnce(brokers, topics, timeoutMs);
  } catch (err) {
    // One more try: on a loaded machine the client's metadata calls can time out.
    console.error(`# ${(err as Error).message}; reading once more`);
    return readCommittedOnce(brokers, topics, timeoutMs);
  }
}

/**
 * The reader compiled once per source and jar set (into the temp dir, shared by every test file),
 * so each read starts a JVM without first compiling the source (about half its CPU time).
 * Undefined when javac is not there: the source launcher runs it instead.
 */
let compiledReaderDir: string | undefined | null = null;
function compiledReader(libs: string): string | undefined {
  if (compiledReaderDir !== null) return compiledReaderDir;
  const hash = createHash('sha256').update(readFileSync(readerSource)).update(libs).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `meguri-committed-reader-${hash}`);
  if (!existsSync(join(dir, 'CommittedReader.class'))) {
    const staging = tempDir('meguri-committed-reader-build-');
    const built = spawnSync('javac', ['-nowarn', '-cp', `${libs}/*`, '-d', staging, readerSource], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (built.status !== 0) {
      removeDir(staging);
      compiledReaderDir = undefined;
      return undefined;
    }
    try {
      renameSync(staging, dir);
    } catch {
      // Another test file compiled it at the same moment: use theirs.
      removeDir(staging);
    }
  }
  compiledReaderDir = dir;
  return dir;
}

async function readCommittedOnce(brokers: string, topics: readonly string[], timeoutMs: number): Promise<CommittedRecord[]> {
  const libs = kafkaLibsDir();
  const compiled = compiledReader(libs);
  // A short-lived client reading a few thousand records: the C1 compiler and the serial collector
  // start it in about half the CPU time of the defaults.
  const jvm = ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-OmitStackTraceInFastThrow', '-Dlog4j.configuration=none'];
  const program = compiled ? ['-cp', `${compiled}:${libs}/*`, 'CommittedReader'] : ['-cp', `${libs}/*`, readerSource];
  const child = spawn('java', [...jvm, ...program, brokers, String(timeoutMs), ...topics], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    // The client's log4j has no configuration here; keep only what could explain a failure.
    if (stderr.length < 20_000) stderr += d;
  });
  const records: CommittedRecord[] = [];
  let ended = false;
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  for await (const line of lines) {
    if (!line) continue;
    const parsed = JSON.parse(line) as CommittedRecord | { end: true };
    if ('end' in parsed) ended = true;
    else records.push(parsed);
  }
  const code = await exited;
  if (code !== 0 || !ended) throw new Error(`CommittedReader failed (exit ${code}): ${stderr.split('\n').slice(-15).join('\n')}`);
  return records;
}
