/**
 * The fault campaign's harness: a multi-process crawl of the simulated web on a real broker
 * (`meguri run scheduler|fetcher|parser`, two of each by default, as pods run them), faults applied
 * to those processes by PID (kill -9, SIGSTOP/SIGCONT) or to the campaign's own broker, and the
 * figures of docs/reliability.md counted from the simulated web's access log and the broker's
 * committed records. Used by test/e2e/faults-*.test.ts (small, with assertions) and
 * bench/faults.bench.ts (bench size, one table).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, AssignerProtocol } from 'kafkajs';
import type { Admin } from 'kafkajs';
import { SimWeb } from '../../services/simweb/index.ts';
import { KafkaTransport } from '../../services/runtime/kafka/kafka-transport.ts';
import { plannedTopics } from '../../services/cli/topics.ts';
import { seedOutRecords, seedRecords } from '../../services/cli/crawl.ts';
import { kafkaTopicConfig } from '../../topology/index.ts';
import { Rng } from '../../services/simweb/random.ts';
import { pageRequests, resolveEntries, urlKey, pageKey } from './crawl-check.ts';
import { readCommitted } from './local-broker.ts';
import type { CommittedRecord } from './local-broker.ts';
import { crawlFigures } from './fault-figures.ts';
import { describeFigures } from './fault-assertions.ts';
import type { FetcherKill, ScenarioFigures } from './fault-figures.ts';
import { removeDir, tempDir, uniquePrefix } from './transports.ts';
import { logEvents, recoveryMs } from './fault-recovery.ts';
import type { FaultWindow } from './fault-recovery.ts';
import { prefillSchedulerState } from './state-prefill.ts';
import { freePort } from './ports.ts';

export type Role = 'scheduler' | 'fetcher' | 'parser';
const roles: readonly Role[] = ['scheduler', 'fetcher', 'parser'];

const bin = fileURLToPath(new URL('../../bin/meguri.js', import.meta.url));
const userAgent = 'meguri/0.1 (+http://meguri.invalid/bot)';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface CampaignOptions {
  /** Bootstrap address of the broker the crawl runs on. */
  readonly brokers: string;
  readonly hosts: number;
  readonly pagesPerHost: number;
  /** Seed of the simulated web. Default 11. */
  readonly webSeed?: number;
  /** Partitions of every topic. Default 4. */
  readonly partitions?: number;
  /** Processes per service. Default 2. */
  readonly replicas?: number;
  /** Scheduler's minimum interval between requests to one host, seconds. Default 0.05. */
  readonly minIntervalS?: number;
  /** Where each process's log goes (`<name>.log`). Default: a temp dir, removed by `close({ keepLogs: false })`. */
  readonly logDir?: string;
  /** Log level of the services. Default info (the logs are files, read when a scenario fails). */
  readonly childLogLevel?: string;
  /** Seed of the fault choices (which process a random kill hits). Default 1. */
  readonly faultSeed?: number;
  /** Progress lines on stderr. */
  readonly verbose?: boolean;
  /** Known URLs written to each scheduler partition's changelogs before the crawl (state-prefill.ts). */
  readonly prefillUrlsPerPartition?: number;
  /** Replication of the crawl's topics (a cluster of 3: 3 and 2). Default 1 and 1. */
  readonly replication?: { readonly factor: number; readonly minInsyncReplicas: number };
}

interface ServiceProcess {
  readonly role: Role;
  readonly name: string;
  readonly dataDir: string;
  readonly httpPort: number;
  child: ChildProcess;
  /** Exits not caused by the campaign (a crash). */
  readonly unexpectedExits: string[];
  expectingExit: boolean;
}

const running = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;

export class FaultCrawl {
  readonly prefix = uniquePrefix();
  readonly faults: string[] = [];
  readonly fetcherKills: FetcherKill[] = [];
  readonly faultWindows: FaultWindow[] = [];
  /** Restarted fetchers not yet ready: their rejoin's bound is added when they are. */
  private readonly pendingRejoins: Promise<void>[] = [];
  private readonly processes = new Map<string, ServiceProcess>();
  private readonly dirs: string[] = [];
  private readonly kafka: Kafka;
  private adminClient: Admin | undefined;
  private readonly rng: Rng;
  private readonly startedAt = Date.now();
  private readonly expected: Set<string>;
  private readonly env: NodeJS.ProcessEnv;
  private progressTimer: NodeJS.Timeout | undefined;
  private readonly webStall = monitorEventLoopDelay({ resolution: 20 });
  private exitHook: (() => void) | undefined;

  private constructor(
    readonly options: CampaignOptions,
    readonly web: SimWeb,
    readonly logDir: string,
  ) {
    this.kafka = new Kafka({ clientId: 'meguri-fault-campaign', brokers: options.brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 3 } });
    this.rng = new Rng(options.faultSeed ?? 1);
    const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 15, userAgent: 'meguri' });
    this.expected = new Set([...plan.urls].map(urlKey));
    this.env = {
      ...process.env,
      MEGURI_KAFKA_BROKERS: options.brokers,
      MEGURI_TOPIC_PREFIX: this.prefix,
      MEGURI_PARTITIONS: String(options.partitions ?? 4),
      MEGURI_LOG_LEVEL: options.childLogLevel ?? 'info',
      MEGURI_DNS: 'static',
      MEGURI_RESOLVE: resolveEntries(web).join(','),
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
    };
  }

  /**
   * Starts the simulated web, creates the topics, starts every process, waits until each group has
   * all its members and every process is ready (so "no faults" means no membership change during the
   * crawl), then seeds the crawl (the records `meguri seed` sends).
   */
  static async start(options: CampaignOptions): Promise<FaultCrawl> {
    const web = await SimWeb.start({ seed: options.webSeed ?? 11, hosts: options.hosts, pagesPerHost: options.pagesPerHost, robots: { crawlDelays: [0.1] } });
    const logDir = options.logDir ?? tempDir('meguri-faults-');
    mkdirSync(logDir, { recursive: true });
    const crawl = new FaultCrawl(options, web, logDir);
    crawl.webStall.enable();
    try {
      // The topics and the seeds as `meguri topics create` and `meguri seed` make them, in this process:
      // the crawl under test is the services' processes; two more CLI starts would only cost CPU.
      // Creating many topics at once on a fresh broker can meet a metadata race ("does not host this
      // topic-partition"); creating again only adds what is missing.
      await crawl.retry('topics create', () => crawl.createTopics(), 3);
      crawl.log('topics created');
      if (options.prefillUrlsPerPartition) await crawl.prefill(options.prefillUrlsPerPartition);
      const replicas = options.replicas ?? 2;
      for (const role of roles) for (let i = 1; i <= replicas; i++) await crawl.startProcess(role, `${role}-${i}`);
      if (options.verbose) crawl.progressTimer = setInterval(() => crawl.log(`fetched ${crawl.fetchedCount()} of ${crawl.expected.size}`), 5000);
      if (!(await crawl.waitForSteadyGroups(replicas, 240_000))) crawl.fault('groups not steady after 240 s; seeding anyway');
      else crawl.log('every group steady and every process ready');
      await crawl.retry('seed', () => crawl.seed(web.homeUrls()), 1);
      crawl.log('seeded');
    } catch (err) {
      await crawl.close({ keepLogs: true });
      throw err;
    }
    return crawl;
  }

  /** Each service's group has `replicas` members holding partitions, and every process answers /readyz 200. */
  async waitForSteadyGroups(replicas: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      let steady = true;
      for (const role of roles) {
        const members = await this.groupMembers(role).catch(() => new Map<string, number>());
        if (members.size !== replicas || [...members.values()].some((n) => n === 0)) steady = false;
      }
      if (steady && (await Promise.all(this.names().map((n) => this.ready(n)))).every(Boolean)) return true;
      await sleep(250);
    }
    return false;
  }

  /** Runs `step`, up to `attempts` times. */
  private async retry(what: string, step: () => Promise<void>, attempts: number): Promise<void> {
    let lastError = '';
    for (let i = 1; i <= attempts; i++) {
      try {
        await step();
        return;
      } catch (err) {
        lastError = (err as Error).message;
        this.log(`${what} failed (attempt ${i}): ${lastError}`);
        if (i < attempts) await sleep(1000);
      }
    }
    throw new Error(`${what} failed: ${lastError}`);
  }

  /** Every topic of the topology under the crawl's prefix (`meguri topics create`), one copy each: one broker. */
  private async createTopics(): Promise<void> {
    const replication = this.options.replication ?? { factor: 1, minInsyncReplicas: 1 };
    const transport = new KafkaTransport({ brokers: this.options.brokers.split(','), replication });
    try {
      const planned = plannedTopics(this.prefix, this.options.partitions ?? 4);
      await transport.ensureTopics(planned.map((t) => ({ name: t.physical, partitions: t.partitionCount, config: kafkaTopicConfig(t, replication) })));
    } finally {
      await transport.close();
    }
  }

  /** Scheduler state of a long crawl, written to its changelogs before any scheduler starts. */
  private async prefill(urlsPerPartition: number): Promise<void> {
    const transport = new KafkaTransport({ brokers: this.options.brokers.split(',') });
    try {
      const r = await prefillSchedulerState(transport, { prefix: this.prefix, partitions: this.options.partitions ?? 4, urlsPerPartition });
      this.log(`prefilled ${urlsPerPartition.toLocaleString('en-US')} URLs per scheduler partition: ${r.records.toLocaleString('en-US')} changelog records, ${(r.bytes / 2 ** 20).toFixed(0)} MiB in ${(r.ms / 1000).toFixed(1)} s`);
    } finally {
      await transport.close();
    }
  }

  /** The seed records `meguri seed` sends to `links`. */
  private async seed(urls: readonly string[]): Promise<void> {
    const transport = new KafkaTransport({ brokers: this.options.brokers.split(',') });
    try {
      const topic = `${this.prefix}links`;
      const described = await transport.describeTopic(topic);
      if (!described) throw new Error(`topic ${topic} does not exist`);
      const { records, rejected } = seedRecords(urls, Date.now());
      if (rejected.length > 0) throw new Error(`seeds rejected: ${JSON.stringify(rejected)}`);
      await transport.send(seedOutRecords(topic, records, described.partitions.length));
    } finally {
      await transport.close();
    }
  }

  get reachable(): number {
    return this.expected.size;
  }

  names(role?: Role): string[] {
    return [...this.processes.values()].filter((p) => !role || p.role === role).map((p) => p.name);
  }

  pid(name: string): number {
    const pid = this.process(name).child.pid;
    if (pid === undefined) throw new Error(`${name} has no pid`);
    return pid;
  }

  isRunning(name: string): boolean {
    return running(this.process(name).child);
  }

  /** Reachable pages requested at least once so far (the server's view). */
  fetchedCount(): number {
    const seen = new Set<string>();
    for (const e of pageRequests(this.web)) {
      const key = pageKey(e.host, e.path);
      if (this.expected.has(key)) seen.add(key);
    }
    return seen.size;
  }

  progress(): number {
    return this.fetchedCount() / this.expected.size;
  }

  /** Waits until `fraction` of the reachable pages were fetched; false if the time ran out. */
  async waitForProgress(fraction: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.fetchedCount() >= fraction * this.expected.size) return true;
      await sleep(100);
    }
    return false;
  }

  pickRandom(role?: Role): string {
    return this.rng.pick(this.names(role));
  }

  /** kill -9 by PID, waits for the exit, then (unless told not to) starts it again on the same data dir. */
  async kill9(name: string, opts: { restartAfterMs?: number } = {}): Promise<void> {
    const p = this.process(name);
    // Offsets read before the kill (never later than what the dead fetcher had committed), fetches
    // counted up to its death: together an upper bound of what it had in flight.
    const committed = p.role === 'fetcher' ? await this.fetcherCommittedOffsets() : undefined;
    this.fault(`kill -9 ${name}`);
    const killedAt = Date.now();
    await this.signal(p, 'SIGKILL');
    if (committed) this.fetcherKills.push({ atWallMs: Date.now(), committed });
    await sleep(opts.restartAfterMs ?? 1000);
    const committedAtRestart = p.role === 'fetcher' ? await this.fetcherCommittedOffsets() : undefined;
    await this.startProcess(p.role, p.name);
    this.faultWindow(killedAt);
    // The restarted fetcher's join moves partitions back while the other fetcher has requests in
    // flight (kafkajs revokes only after the new assignment is handed out): those may be fetched
    // again too. Bound them the same way, up to the moment it is ready (its join is before that).
    if (committedAtRestart) this.pendingRejoins.push(this.noteRejoin(p.name, committedAtRestart));
  }

  private async noteRejoin(name: string, committed: Map<number, number>): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !(await this.ready(name))) await sleep(200);
    this.fetcherKills.push({ atWallMs: Date.now(), committed });
  }

  /** The fetchers' committed offsets now, to bound what a coming broker outage leaves in flight. */
  fetcherOffsetsBeforeOutage(): Promise<Map<number, number>> {
    return this.fetcherCommittedOffsets();
  }

  /** A broker outage ended: what the fetchers had taken but not committed before it counts as in flight. */
  noteBrokerOutage(committedBefore: Map<number, number>): void {
    this.fetcherKills.push({ atWallMs: Date.now(), committed: committedBefore });
  }

  /** SIGTERM by PID (a pod deleted), then started again at once on the same data dir and name. */
  async restartGracefully(name: string): Promise<void> {
    const p = this.process(name);
    this.fault(`SIGTERM ${name}, started again`);
    const stoppedAt = Date.now();
    await this.signal(p, 'SIGTERM');
    await this.startProcess(p.role, p.name);
    this.faultWindow(stoppedAt);
  }

  /** The broker that leads most partitions of a topic of the crawl. */
  async leaderOfMost(topic: string): Promise<number> {
    const admin = await this.admin();
    const meta = await admin.fetchTopicMetadata({ topics: [`${this.prefix}${topic}`] });
    const counts = new Map<number, number>();
    for (const p of meta.topics[0]?.partitions ?? []) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
    const [leader] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
    if (leader === undefined) throw new Error(`no leader known for ${topic}`);
    return leader;
  }

  /** SIGSTOP by PID: the process keeps its sockets but stops heartbeating and committing. */
  pause(name: string): void {
    this.fault(`SIGSTOP ${name}`);
    process.kill(this.pid(name), 'SIGSTOP');
  }

  resume(name: string): void {
    this.fault(`SIGCONT ${name}`);
    process.kill(this.pid(name), 'SIGCONT');
  }

  /** A fault's span, for its recovery time: from its first action to the moment it was over. */
  faultWindow(startMs: number, endMs = Date.now()): void {
    this.faultWindows.push({ startMs, endMs });
  }

  /** Note a fault applied outside this class (the broker's stop and start). */
  fault(what: string): void {
    this.faults.push(`${what} at ${Math.round(this.progress() * 100)} %, ${((Date.now() - this.startedAt) / 1000).toFixed(1)} s`);
    this.log(what);
  }

  /** Members of a service's consumer group, by process name, with their partition count. */
  async groupMembers(role: Role): Promise<Map<string, number>> {
    const admin = await this.admin();
    const { groups } = await admin.describeGroups([`${this.prefix}${role}`]);
    const out = new Map<string, number>();
    for (const m of groups[0]?.members ?? []) {
      const name = m.clientId.replace(new RegExp(`^meguri-${role}-`), '');
      const assignment = m.memberAssignment.length > 0 ? AssignerProtocol.MemberAssignment.decode(m.memberAssignment) : null;
      const partitions = assignment ? Object.values(assignment.assignment).reduce((s, ps) => s + ps.length, 0) : 0;
      out.set(name, (out.get(name) ?? 0) + partitions);
    }
    return out;
  }

  /** GET /readyz of a process: true on 200. */
  async ready(name: string): Promise<boolean> {
    try {
      const res = await fetch(`http://127.0.0.1:${this.process(name).httpPort}/readyz`, { signal: AbortSignal.timeout(2000) });
      await res.text();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** Log lines of a process (all its runs), optionally only from a byte offset on. */
  logOf(name: string, fromByte = 0): string {
    try {
      return readFileSync(join(this.logDir, `${name}.log`), 'utf8').slice(fromByte);
    } catch {
      return '';
    }
  }

  /**
   * Waits until every reachable page was fetched, then until the topics stop growing for `quietMs`
   * (the last outcomes reach the scheduler and its `changes` are committed). False if the crawl did
   * not complete in time.
   */
  async waitForCompletion(timeoutMs: number, quietMs = 5000): Promise<boolean> {
    const completed = await this.waitForProgress(1, timeoutMs);
    const settleBy = Date.now() + Math.max(30_000, quietMs * 6);
    let last = '';
    let stableSince = Date.now();
    while (Date.now() < settleBy) {
      const now = await this.topicEnds().catch(() => 'unavailable');
      if (now !== last) {
        last = now;
        stableSince = Date.now();
      } else if (Date.now() - stableSince >= quietMs) {
        break;
      }
      await sleep(500);
    }
    this.log(`topics quiet (crawl ${completed ? '' : 'not '}completed)`);
    return completed;
  }

  /** Counts the figures (reads the committed topics through the Java client). */
  async figures(scenario: string, completed: boolean): Promise<ScenarioFigures> {
    await Promise.all(this.pendingRejoins);
    const wallMs = Date.now() - this.startedAt;
    const t = (name: string): string => `${this.prefix}${name}`;
    const records = await readCommitted(this.options.brokers, [
      `${t('frontier')}:/requestId,/url,/reason,/attempt`,
      `${t('pages')}:/request/requestId,/request/url,/status,/error/code`,
      `${t('changes')}:/url,/kind,/md5`,
      `${t('revisits')}:/url`,
      `${t('deadletter')}:/service,/code,/reason`,
    ]);
    const of = (name: string): CommittedRecord[] => records.filter((r) => r.topic === t(name));
    const field = (r: CommittedRecord, ptr: string): string => String(r.fields?.[ptr] ?? '');
    const isRobots = (url: string): boolean => new URL(url).pathname === '/robots.txt';
    const frontier = of('frontier')
      .filter((r) => !isRobots(field(r, '/url')))
      .map((r) => ({ partition: r.partition, offset: r.offset, requestId: field(r, '/requestId'), key: urlKey(field(r, '/url')), about: `${field(r, '/reason')} attempt ${field(r, '/attempt')}` }));
    const pages = of('pages')
      .filter((r) => !isRobots(field(r, '/request/url')))
      .map((r) => ({ requestId: field(r, '/request/requestId'), key: urlKey(field(r, '/request/url')), about: `status ${field(r, '/status')}${field(r, '/error/code') ? ` ${field(r, '/error/code')}` : ''}` }));
    const changes = of('changes').map((r) => ({ key: urlKey(field(r, '/url')), kind: field(r, '/kind'), md5: field(r, '/md5') }));
    const deadLetterReasons: Record<string, number> = {};
    for (const r of of('deadletter')) {
      const reason = `${field(r, '/service')} ${field(r, '/code')}: ${field(r, '/reason').slice(0, 160)}`;
      deadLetterReasons[reason] = (deadLetterReasons[reason] ?? 0) + 1;
    }
    const fetches = pageRequests(this.web).map((e) => ({ key: pageKey(e.host, e.path), wallMs: e.wallMs }));
    this.log(`read ${records.length} committed records`);
    const counted = crawlFigures({ expected: this.expected, fetches, frontier, pages, changes, revisits: of('revisits').length, deadLetters: of('deadletter').length, fetcherKills: this.fetcherKills });
    const crashes = [...this.processes.values()].flatMap((p) => p.unexpectedExits.map((e) => `${p.name} ${e}`));
    const logs = this.names().map((n) => this.logOf(n));
    const events = logEvents(logs);
    const firstFault = Math.min(...this.faultWindows.map((w) => w.startMs));
    const eventsAfterFault = Number.isFinite(firstFault) ? logEvents(logs, firstFault) : events;
    const fetchTimes = fetches.filter((f) => this.expected.has(f.key)).map((f) => f.wallMs);
    const recoveryS = this.faultWindows.map((w) => {
      const ms = recoveryMs(fetchTimes, w);
      return ms === undefined ? null : Math.round(ms / 100) / 10;
    });
    const figures = {
      scenario,
      ...counted,
      completed: completed && counted.lost === 0,
      wallMs,
      startedAtMs: this.startedAt,
      faults: [...this.faults],
      crashes,
      deadLetterReasons,
      logDir: this.logDir,
      prefillUrlsPerPartition: this.options.prefillUrlsPerPartition ?? 0,
      partitions: this.options.partitions ?? 4,
      events,
      eventsAfterFault,
      recoveryS,
      webStallMaxMs: Math.round(this.webStall.max / 1e6),
    };
    this.log(`figures: ${describeFigures(figures)}`);
    return figures;
  }

  /** Stops every process (SIGTERM, then SIGKILL after 20 s), the admin client and the web. */
  async close(opts: { keepLogs: boolean }): Promise<void> {
    clearInterval(this.progressTimer);
    this.webStall.disable();
    if (this.exitHook) process.off('exit', this.exitHook);
    await Promise.all(
      [...this.processes.values()].map(async (p) => {
        if (!running(p.child)) return;
        p.expectingExit = true;
        // A paused process must be resumed to see the SIGTERM.
        if (p.child.pid !== undefined) process.kill(p.child.pid, 'SIGCONT');
        const exited = new Promise((r) => p.child.once('exit', r));
        p.child.kill('SIGTERM');
        const timer = setTimeout(() => running(p.child) && p.child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    await this.adminClient?.disconnect().catch(() => {});
    await this.web.close();
    this.dirs.forEach(removeDir);
    if (!opts.keepLogs && !this.options.logDir) removeDir(this.logDir);
  }

  private process(name: string): ServiceProcess {
    const p = this.processes.get(name);
    if (!p) throw new Error(`no process ${name}; known: ${this.names().join(', ')}`);
    return p;
  }

  private async startProcess(role: Role, name: string): Promise<void> {
    const previous = this.processes.get(name);
    let dataDir = previous?.dataDir;
    if (!dataDir) {
      dataDir = tempDir(`meguri-${name}-`);
      this.dirs.push(dataDir);
    }
    const httpPort = previous?.httpPort ?? (await freePort());
    // The ground truth is the web's pages: the schedulers read no sitemaps, so every request is one of them.
    const extra = role === 'scheduler' ? ['--min-interval', String(this.options.minIntervalS ?? 0.05), '--no-sitemaps', '--user-agent', userAgent] : role === 'fetcher' ? ['--user-agent', userAgent] : [];
    const logFd = openSync(join(this.logDir, `${name}.log`), 'a');
    const child = spawn(process.execPath, [bin, 'run', role, '--data', dataDir, ...extra], {
      // Schedulers join as static members, as their StatefulSet's pods do.
      env: { ...this.env, MEGURI_INSTANCE_ID: name, MEGURI_HTTP_PORT: String(httpPort), ...(role === 'scheduler' ? { MEGURI_STATIC_MEMBERSHIP: 'true' } : {}) },
      stdio: ['ignore', logFd, logFd],
    });
    closeSync(logFd);
    const p: ServiceProcess = previous ?? { role, name, dataDir, httpPort, child, unexpectedExits: [], expectingExit: false };
    p.child = child;
    p.expectingExit = false;
    child.once('exit', (code, signal) => {
      if (!p.expectingExit && p.child === child) {
        p.unexpectedExits.push(`exited ${signal ?? code} at ${Math.round(this.progress() * 100)} %`);
        this.log(`${name} exited on its own (${signal ?? code})`);
      }
    });
    this.processes.set(name, p);
    if (!this.exitHook) {
      // If the test or bench process itself ends abruptly, its services must not outlive it.
      this.exitHook = (): void => {
        for (const q of this.processes.values()) if (running(q.child) && q.child.pid !== undefined) process.kill(q.child.pid, 'SIGKILL');
      };
      process.once('exit', this.exitHook);
    }
  }

  private async signal(p: ServiceProcess, signal: NodeJS.Signals): Promise<void> {
    if (!running(p.child)) return;
    p.expectingExit = true;
    const exited = new Promise((r) => p.child.once('exit', r));
    process.kill(this.pid(p.name), signal);
    await exited;
  }

  /** The fetcher group's committed frontier offsets (empty when the broker does not answer: all count as in flight). */
  private async fetcherCommittedOffsets(): Promise<Map<number, number>> {
    const committed = new Map<number, number>();
    try {
      const admin = await this.admin();
      const [topic] = await admin.fetchOffsets({ groupId: `${this.prefix}fetcher`, topics: [`${this.prefix}frontier`] });
      for (const p of topic?.partitions ?? []) if (Number(p.offset) >= 0) committed.set(p.partition, Number(p.offset));
    } catch {
      committed.clear();
    }
    return committed;
  }

  private async topicEnds(): Promise<string> {
    const admin = await this.admin();
    const ends: string[] = [];
    for (const name of ['frontier', 'pages', 'links', 'changes', 'revisits', 'deadletter']) {
      const offsets = await admin.fetchTopicOffsets(`${this.prefix}${name}`);
      ends.push(offsets.map((o) => o.high).join(','));
    }
    return ends.join(';');
  }

  private async admin(): Promise<Admin> {
    if (!this.adminClient) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.adminClient = admin;
    }
    return this.adminClient;
  }

  private log(line: string): void {
    if (this.options.verbose) console.error(`[faults ${((Date.now() - this.startedAt) / 1000).toFixed(1)} s] ${line}`);
  }
}
