/**
 * A Kafka broker of a test's own (deploy/local/kafka.sh with a private state dir), which the test
 * may stop and start again by PID without disturbing the broker other tests share. Restarts keep the
 * data and the ports (MEGURI_KAFKA_KEEP_PORTS=1), so clients keep their bootstrap address. With
 * `nodes: 3` it is a KRaft cluster of three broker+controller nodes whose nodes can be stopped,
 * started and killed one at a time.
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
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
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

export interface LocalBrokerOptions {
  /** Broker+controller nodes: 1 (the default, kafka.sh's flat layout) or a cluster such as 3. */
  readonly nodes?: number;
}

export class LocalBroker {
  private constructor(
    readonly stateDir: string,
    readonly brokers: string,
    readonly nodes: number,
  ) {}

  static async start(options: LocalBrokerOptions = {}): Promise<LocalBroker> {
    const nodes = options.nodes ?? 1;
    if (!Number.isInteger(nodes) || nodes < 1 || nodes > 9) throw new Error(`nodes must be 1 to 9, not ${nodes}`);
    const stateDir = tempDir('meguri-fault-kafka-');
    const brokers = await LocalBroker.runAsync(stateDir, nodes === 1 ? ['start'] : ['start', '--brokers', String(nodes)]);
    if (!brokers) {
      removeDir(stateDir);
      throw new Error(`the test could not start its own broker (deploy/local/kafka.sh start${nodes === 1 ? '' : ` --brokers ${nodes}`})`);
    }
    return new LocalBroker(stateDir, brokers, nodes);
  }

  /** The node ids, 1 to `nodes`. */
  nodeIds(): number[] {
    return Array.from({ length: this.nodes }, (_, i) => i + 1);
  }

  /** PID of the broker's JVM (node 1's in a cluster), from kafka.sh's pid file; undefined when stopped. */
  pid(): number | undefined {
    return this.nodePid(1);
  }

  /** PID of one node's JVM; undefined when it is stopped. */
  nodePid(id: number): number | undefined {
    const file = join(this.nodeDir(id), 'kafka.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  // Stops, starts and kills never block the event loop: a test's simulated web runs in the same
  // process and must keep answering while a broker takes seconds to stop or to start (a frozen web
  // makes fetches time out, and the crawl then rightly asks for those pages again).

  /** Stops the broker, every node of a cluster (SIGTERM to each PID, then waits for the exit): data and ports stay. */
  async stop(): Promise<void> {
    await this.script(['stop'], 'kafka.sh stop');
  }

  /** Starts it again (every stopped node of a cluster) on the same ports with the same data. */
  async restart(): Promise<void> {
    this.expectSameBrokers(await LocalBroker.runAsync(this.stateDir, ['start']));
  }

  /** Stops one node: a controlled shutdown (SIGTERM), waiting until its JVM has exited. */
  async stopNode(id: number): Promise<void> {
    await this.script(['stop', '--node', String(this.checkNode(id))], `kafka.sh stop --node ${id}`);
  }

  /** Starts one node again on its ports with its data, and waits until it answers. */
  async startNode(id: number): Promise<void> {
    this.expectSameBrokers(await LocalBroker.runAsync(this.stateDir, ['start', '--node', String(this.checkNode(id))]));
  }

  /** SIGKILL to one node's JVM, as a crash would: no controlled shutdown. */
  async kill9Node(id: number): Promise<void> {
    await this.script(['kill', '--node', String(this.checkNode(id))], `kafka.sh kill --node ${id}`);
  }

  /** Stops the broker (every node) and deletes its state. */
  destroy(): void {
    spawnSync('bash', [kafkaScript, 'reset'], { env: this.env(), stdio: ['ignore', 'ignore', 'inherit'] });
    removeDir(this.stateDir);
  }

  /** Where a node's server.log lives (node 1's by default), for reading causes after a failure. */
  serverLog(id = 1): string {
    return join(this.nodeDir(id), 'logs', 'server.log');
  }

  /**
   * Waits until every partition of `topics` (of every topic, internal ones included, when empty)
   * has a leader and all its replicas in sync, as after a rolling restart once the restarted node
   * has caught up. Rejects with the lagging partitions after `timeoutMs`.
   */
  async waitInSync(topics: readonly string[] = [], timeoutMs = 60_000): Promise<void> {
    const kafka = new Kafka({
      clientId: 'meguri-local-broker',
      brokers: this.brokers.split(','),
      logLevel: logLevel.NOTHING,
      connectionTimeout: 2000,
      requestTimeout: 5000,
      retry: { retries: 2, initialRetryTime: 200 },
    });
    const admin = kafka.admin();
    const deadline = Date.now() + timeoutMs;
    let lagging: string[] = ['no answer yet'];
    let inSync = 0;
    while (Date.now() < deadline) {
      try {
        // A connection of its own each round: a node that just went away may hold the old one.
        await admin.connect();
        const { topics: found } = await admin.fetchTopicMetadata({ topics: [...topics] });
        lagging = [];
        for (const topic of found) {
          for (const p of topic.partitions) {
            if (p.leader < 0 || p.isr.length < p.replicas.length) {
              lagging.push(`${topic.name}/${p.partitionId} leader ${p.leader} isr [${p.isr.join(',')}] of [${p.replicas.join(',')}]`);
            }
          }
        }
        if (found.length < topics.length) lagging.push(`only ${found.length} of ${topics.length} topics found`);
        // Twice in a row: each answer comes from whichever node kafkajs picks, and a node's view
        // of the ISRs can trail the controller's for a moment.
        if (lagging.length === 0 && ++inSync === 2) return;
        if (lagging.length > 0) inSync = 0;
      } catch (err) {
        lagging = [(err as Error).message];
        inSync = 0;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      await sleep(250);
    }
    throw new Error(`partitions not back in sync within ${timeoutMs} ms: ${lagging.slice(0, 10).join('; ')}`);
  }

  /** A one-node broker lives in the state dir itself (kafka.sh's flat layout), a cluster's nodes in node-<id>/. */
  private nodeDir(id: number): string {
    this.checkNode(id);
    return this.nodes === 1 ? this.stateDir : join(this.stateDir, `node-${id}`);
  }

  private checkNode(id: number): number {
    if (!Number.isInteger(id) || id < 1 || id > this.nodes) throw new Error(`no node ${id}: the broker has nodes 1 to ${this.nodes}`);
    return id;
  }

  private expectSameBrokers(brokers: string | undefined): void {
    if (brokers !== this.brokers) throw new Error(`the broker came back on ${brokers ?? 'nothing'} instead of ${this.brokers}`);
  }

  private async script(args: readonly string[], what: string): Promise<void> {
    const { status } = await LocalBroker.spawnScript(this.stateDir, args);
    if (status !== 0) throw new Error(`${what} failed`);
  }

  private env(): NodeJS.ProcessEnv {
    return LocalBroker.envFor(this.stateDir);
  }

  /** A loaded machine can take well over kafka.sh's default 60 s to start a broker. */
  private static envFor(stateDir: string): NodeJS.ProcessEnv {
    return { MEGURI_KAFKA_START_TIMEOUT: '180', ...process.env, MEGURI_KAFKA_STATE_DIR: stateDir, MEGURI_KAFKA_KEEP_PORTS: '1' };
  }

  /** kafka.sh in a child process, awaited without blocking: its exit status and standard output. */
  private static spawnScript(stateDir: string, args: readonly string[]): Promise<{ status: number | null; stdout: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('bash', [kafkaScript, ...args], { env: LocalBroker.envFor(stateDir), stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => (stdout += d));
      child.once('error', reject);
      child.once('close', (status) => resolve({ status, stdout }));
    });
  }

  private static async runAsync(stateDir: string, args: readonly string[]): Promise<string | undefined> {
    const out = await LocalBroker.spawnScript(stateDir, args);
    const line = out.stdout.split('\n').find((l) => l.startsWith('KAFKA_BROKERS='));
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
