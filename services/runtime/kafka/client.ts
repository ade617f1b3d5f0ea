/**
 * The kafkajs client as the runtime configures it: its log lines through pino at the level each
 * deserves, and the retry settings of producers and admin calls.
 */
// kafkajs with the read_committed fix: never import 'kafkajs' itself for runtime values.
import { kafkajs } from './kafkajs.ts';
import type { logCreator } from 'kafkajs';
import type { Logger } from '../logger.ts';

const { logLevel: KafkaLogLevel } = kafkajs;

/**
 * Runs `op` again while it fails with an error Kafka marks retriable (NOT_LEADER_FOR_PARTITION and
 * the like: a partition just created or moved is unknown to its broker for a moment), for up to
 * `budgetMs`; any other error, or the last one, is thrown.
 */
export async function retryWhileRetriable<T>(op: () => Promise<T>, budgetMs: number): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await op();
    } catch (err) {
      if ((err as { retriable?: unknown }).retriable !== true || Date.now() + wait > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Idempotent producers retry without a count limit (kafkajs warns otherwise: a limit can break EOS). */
export const PRODUCER_RETRY = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 5000 };

/**
 * Transactional producers start their retries sooner: the first AddPartitionsToTxn after a commit
 * usually meets CONCURRENT_TRANSACTIONS (the broker is still writing the previous transaction's
 * markers), and each transaction then waited out a whole first retry. The Java producer waits
 * about 20 ms there too.
 */
export const TRANSACTIONAL_RETRY = { ...PRODUCER_RETRY, initialRetryTime: Number(process.env.MEGURI_TX_RETRY_MS ?? 20) };

/**
 * Broker answers that are part of normal operation and that kafkajs retries by itself, yet logs at
 * ERROR: a transaction's next request arriving while the previous one's markers are still being
 * written (CONCURRENT_TRANSACTIONS, after most commits under load), a coordinator that is still
 * loading its log after a start, a coordinator not there yet or moved (on a broker just started,
 * before its `__consumer_offsets` and `__transaction_state` partitions have leaders: kafkajs looks
 * it up again), and a partition whose leader moved or, on a topic just created,
 * is still being settled (NOT_LEADER_FOR_PARTITION: kafkajs refreshes its metadata and sends again).
 * Their texts are kafkajs's (protocol/error.js). If the retries run out, the failure still reaches
 * the caller, which reports it.
 */
const ROUTINE_RETRY_TEXTS = [
  'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
  "The coordinator is loading and hence can't process requests",
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
  'This server is not the leader for that topic-partition',
];

/**
 * kafkajs ERROR entries of a cluster that is partly or briefly out of reach (a broker restarting or
 * killed, a connection reset): kafkajs retries them, and the runtime acts when the retries run out,
 * so they are warnings — visible in an outage, not errors that page anyone.
 */
const UNREACHABLE_TEXTS = ['Connection error', 'ECONNREFUSED', 'ECONNRESET', 'Connection timeout', 'Closed connection', 'Failed to connect to seed broker', 'Not connected', 'timed out'];

/**
 * kafkajs ERROR entries that say the group moved on without this member (it was dropped, or acts
 * for an old generation): the member joins again and its tasks reopen (docs/architecture.md).
 */
const MEMBERSHIP_TEXTS = ['The coordinator is not aware of this member', 'The provided generation id is not valid', 'The group is rebalancing'];

/** A kafkajs ERROR entry that only says a routine retry is under way (it is logged at debug). */
export function isRoutineRetry(log: { message?: string; error?: unknown }): boolean {
  return ROUTINE_RETRY_TEXTS.some((t) => logText(log).includes(t));
}

function logText(log: { message?: string; error?: unknown }): string {
  return `${typeof log.error === 'string' ? log.error : ''} ${log.message ?? ''}`;
}

/**
 * The level a kafkajs ERROR entry deserves: debug for routine retries, warn for an unreachable
 * broker or a membership the runtime restores by itself, error for anything else.
 */
export function levelOfKafkajsError(log: { message?: string; error?: unknown }): 'debug' | 'warn' | 'error' {
  const text = logText(log);
  if (ROUTINE_RETRY_TEXTS.some((t) => text.includes(t))) return 'debug';
  if (UNREACHABLE_TEXTS.some((t) => text.includes(t)) || MEMBERSHIP_TEXTS.some((t) => text.includes(t))) return 'warn';
  return 'error';
}

export function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ level, log }) => {
      const { message, ...extra } = log;
      const child = { component: 'kafkajs', ...extra };
      if (level === KafkaLogLevel.ERROR) logger[levelOfKafkajsError(log)](child, message);
      else if (level === KafkaLogLevel.WARN) logger.warn(child, message);
      else if (level === KafkaLogLevel.INFO) logger.debug(child, message);
      else logger.trace(child, message);
    };
}
