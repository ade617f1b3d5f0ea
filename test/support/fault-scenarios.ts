/**
 * The fault campaign's scenarios, one function each, shared by the e2e tests (small web, assertions)
 * and `npm run bench:faults` (bench size, one table). Every fault touches only processes the
 * scenario started, by PID, or the campaign's own broker.
 */
import { join } from 'node:path';
import { FaultCrawl } from './fault-campaign.ts';
import type { CampaignOptions } from './fault-campaign.ts';
import type { ScenarioFigures } from './fault-figures.ts';
import type { LocalBroker } from './local-broker.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type ScenarioName =
  | 'no faults'
  | 'kill -9 random'
  | 'kill -9 schedulers'
  | 'zombie scheduler'
  | 'scheduler pod restart'
  | 'broker restart'
  | 'rolling restart'
  | 'kill -9 leader';
export const scenarioNames: readonly ScenarioName[] = ['no faults', 'kill -9 random', 'kill -9 schedulers', 'zombie scheduler', 'scheduler pod restart', 'broker restart', 'rolling restart', 'kill -9 leader'];
/** Scenarios that need a cluster of several brokers. */
export const clusterScenarios: readonly ScenarioName[] = ['rolling restart', 'kill -9 leader'];

export interface ScenarioSettings extends Omit<CampaignOptions, 'brokers'> {
  /** Kills in the kill -9 scenarios. */
  readonly kills: number;
  /** How long the whole crawl may take before it counts as not completed. */
  readonly completionTimeoutMs: number;
  /** How long the zombie stays stopped at least (past the session timeout). Default 25 s. */
  readonly pauseMs?: number;
  /** How long the broker stays down (a restart, a killed leader). Default 10 s. */
  readonly brokerDownMs?: number;
  /** Rounds of a rolling restart (each node in turn, back in sync before the next). Default 2. */
  readonly rollingRounds?: number;
  /** Keep the logs of every scenario, not only of failed ones. */
  readonly keepLogs?: boolean;
}

/** What the zombie scenario saw besides the figures. */
export interface ZombieEvidence {
  readonly zombie: string;
  readonly pausedMs: number;
  /** The other scheduler held every partition while the zombie was stopped. */
  readonly takenOver: boolean;
  /** Where the zombie's log stood when it was stopped (characters). */
  readonly logFrom: number;
  /** Log lines of the zombie after SIGSTOP that show a commit refused (fenced, epoch, generation). */
  readonly refusals: readonly string[];
  /** Partitions the zombie holds at the end (it rejoined). */
  readonly partitionsAtEnd: number;
  /** Its /readyz at the end (its tasks restored). */
  readonly readyAtEnd: boolean;
  readonly aliveAtEnd: boolean;
}

export interface ScenarioResult {
  readonly figures: ScenarioFigures;
  readonly zombie?: ZombieEvidence;
}

/** Refusals a fenced or evicted member meets when it tries to commit late. */
const refusal =
  /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION|FENCED_INSTANCE_ID|ProducerFenced|InvalidProducerEpoch|fenc|old epoch|newer producer|not aware of this member|generation id is not valid|migrated/i;

/**
 * Runs one scenario on `broker` (the campaign's own broker; only `broker restart` stops it) and
 * returns its figures. Logs are kept when the crawl did not complete.
 */
export async function runScenario(name: ScenarioName, broker: LocalBroker | { readonly brokers: string }, settings: ScenarioSettings): Promise<ScenarioResult> {
  // One log directory per scenario under the one given, so runs never append to each other's logs.
  const logDir = settings.logDir ? join(settings.logDir, `${name.replace(/[^a-z0-9]+/gi, '-')}-${Date.now()}`) : undefined;
  const crawl = await FaultCrawl.start({ ...settings, brokers: broker.brokers, ...(logDir ? { logDir } : {}) });
  let keepLogs = settings.keepLogs ?? false;
  try {
    const deadline = Date.now() + settings.completionTimeoutMs;
    const left = (): number => Math.max(0, deadline - Date.now());
    let zombie: ZombieEvidence | undefined;
    if (name === 'kill -9 random' || name === 'kill -9 schedulers') {
      for (let i = 1; i <= settings.kills; i++) {
        // Spread the kills over the crawl: the i-th at i/(kills+1) of the pages.
        if (!(await crawl.waitForProgress(i / (settings.kills + 1), left()))) break;
        const victim = name === 'kill -9 random' ? crawl.pickRandom() : crawl.names('scheduler')[(i - 1) % crawl.names('scheduler').length]!;
        await crawl.kill9(victim);
      }
    } else if (name === 'zombie scheduler') {
      zombie = await zombieScheduler(crawl, settings, left);
    } else if (name === 'scheduler pod restart') {
      // A pod deleted and recreated: SIGTERM (a clean stop), started again at once under the same
      // name (the StatefulSet's pod name: the same static member) on the same volume.
      if (await crawl.waitForProgress(1 / 3, left())) await crawl.restartGracefully(crawl.names('scheduler')[0]!);
    } else if (name === 'rolling restart') {
      if (!('stopNode' in broker)) throw new Error('a rolling restart needs the campaign its own cluster');
      if (await crawl.waitForProgress(1 / 4, left())) {
        const startedAt = Date.now();
        for (let round = 1; round <= (settings.rollingRounds ?? 2); round++) {
          for (const id of broker.nodeIds()) {
            // A moving coordinator can cost the fetchers an offset commit: what they had taken by
            // then may be fetched again, as after a broker restart (the at-least-once bound).
            const committed = await crawl.fetcherOffsetsBeforeOutage();
            crawl.fault(`round ${round}: broker ${id} stopped (controlled shutdown)`);
            await broker.stopNode(id);
            await sleep(settings.brokerDownMs ?? 10_000);
            await broker.startNode(id);
            await broker.waitInSync([], 120_000);
            crawl.noteBrokerOutage(committed);
            crawl.fault(`round ${round}: broker ${id} back in sync`);
          }
        }
        crawl.faultWindow(startedAt);
      }
    } else if (name === 'kill -9 leader') {
      if (!('kill9Node' in broker)) throw new Error('killing a leader needs the campaign its own cluster');
      if (await crawl.waitForProgress(1 / 3, left())) {
        const leader = await crawl.leaderOfMost('links');
        const committed = await crawl.fetcherOffsetsBeforeOutage();
        crawl.fault(`kill -9 broker ${leader} (leads most links partitions)`);
        const killedAt = Date.now();
        await broker.kill9Node(leader);
        await sleep(settings.brokerDownMs ?? 30_000);
        await broker.startNode(leader);
        crawl.fault(`broker ${leader} started again`);
        crawl.faultWindow(killedAt);
        await broker.waitInSync([], 120_000);
        crawl.noteBrokerOutage(committed);
      }
    } else if (name === 'broker restart') {
      if (!('stop' in broker)) throw new Error('the broker restart scenario needs the campaign its own broker');
      if (await crawl.waitForProgress(1 / 3, left())) {
        const committed = await crawl.fetcherOffsetsBeforeOutage();
        crawl.fault(`broker stopped (pid ${broker.pid() ?? '?'})`);
        const stoppedAt = Date.now();
        await broker.stop();
        await sleep(settings.brokerDownMs ?? 10_000);
        await broker.restart();
        crawl.fault(`broker started again (pid ${broker.pid() ?? '?'})`);
        crawl.faultWindow(stoppedAt);
        crawl.noteBrokerOutage(committed);
      }
    }
    const completed = await crawl.waitForCompletion(left());
    if (zombie) {
      const refusals = crawl
        .logOf(zombie.zombie)
        .slice(zombie.logFrom)
        .split('\n')
        .filter((l) => refusal.test(l))
        .map((l) => l.slice(0, 400));
      zombie = { ...zombie, refusals, partitionsAtEnd: (await crawl.groupMembers('scheduler').catch(() => new Map<string, number>())).get(zombie.zombie) ?? 0, readyAtEnd: await crawl.ready(zombie.zombie), aliveAtEnd: crawl.isRunning(zombie.zombie) };
    }
    const figures = await crawl.figures(name, completed);
    // Logs stay whenever a promise was broken, so the cause can be read from them.
    const f = figures;
    if (!f.completed || f.crashes.length > 0 || f.schedulerDuplicates > 0 || f.refetches > f.inFlightAtKills || f.duplicateChanges > 0 || f.deadLetters > 0 || f.revisits > 0) keepLogs = true;
    return zombie ? { figures, zombie } : { figures };
  } catch (err) {
    keepLogs = true;
    throw err;
  } finally {
    await crawl.close({ keepLogs });
  }
}

/**
 * A scheduler stopped with SIGSTOP at a third of the crawl, for at least `pauseMs` and until the
 * other scheduler holds every partition, then resumed: it must find its commits refused, rejoin
 * and restore.
 */
async function zombieScheduler(crawl: FaultCrawl, settings: ScenarioSettings, left: () => number): Promise<ZombieEvidence> {
  const [victim] = crawl.names('scheduler');
  if (!victim) throw new Error('no scheduler to pause');
  const none: ZombieEvidence = { zombie: victim, pausedMs: 0, takenOver: false, logFrom: 0, refusals: [], partitionsAtEnd: 0, readyAtEnd: false, aliveAtEnd: false };
  if (!(await crawl.waitForProgress(1 / 3, left()))) return none;
  const logFrom = crawl.logOf(victim).length;
  crawl.pause(victim);
  const pausedAt = Date.now();
  const pauseMs = settings.pauseMs ?? 25_000;
  let takenOver = false;
  while (Date.now() - pausedAt < Math.max(pauseMs, 90_000) && left() > 0) {
    const now = await crawl.groupMembers('scheduler').catch(() => new Map<string, number>());
    const others = [...now].filter(([n]) => n !== victim);
    if (!now.has(victim) && others.some(([, partitions]) => partitions > 0)) takenOver = true;
    if (takenOver && Date.now() - pausedAt >= pauseMs) break;
    await sleep(500);
  }
  crawl.resume(victim);
  crawl.faultWindow(pausedAt);
  const pausedMs = Date.now() - pausedAt;
  // Give the zombie time to try its late commits and rejoin before the crawl may end.
  const rejoinBy = Date.now() + Math.min(60_000, left());
  while (Date.now() < rejoinBy) {
    const now = await crawl.groupMembers('scheduler').catch(() => new Map<string, number>());
    if ((now.get(victim) ?? 0) > 0 && (await crawl.ready(victim))) break;
    await sleep(500);
  }
  return { zombie: victim, pausedMs, takenOver, logFrom, refusals: [], partitionsAtEnd: 0, readyAtEnd: false, aliveAtEnd: true };
}
