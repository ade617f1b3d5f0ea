/**
 * The runtime's error classes and the one place that decides what an error means for a task.
 *
 * Every class has a `name` and a stable `code` (match on `code`, not on messages). `classifyError`
 * maps any error — ours, kafkajs's, the embedded log's, Node's — to one of four recoveries:
 *
 * - `migrated`: the task is no longer (or may no longer be) the owner of its partition — its
 *   producer was fenced, its group generation is gone, or its transaction state is unknown. Close the
 *   task dirty (drop uncommitted state), rejoin the group, restore from the changelog.
 * - `bad-record`: one input record cannot be handled (schema, decode, a processor failure that
 *   follows that record when it is isolated, an output too large to send). Dead-letter it, move on.
 * - `transient`: the cluster is briefly unavailable (network, coordinator moving, timeouts). Retry
 *   the same work with back-off on the same producer; never dead-letter anything for it.
 * - `fatal`: nothing a retry can fix (authorisation, a bug such as an illegal task transition, a
 *   crashed consumer). Stop the service with one clear log line and a non-zero exit.
 */

export type Recovery = 'migrated' | 'bad-record' | 'transient' | 'fatal';

/** Where the error happened: the processor's code, the commit, or opening the task. */
export type ErrorStage = 'process' | 'commit' | 'open';

const BRAND = Symbol.for('meguri.error');

export abstract class MeguriError extends Error {
  abstract readonly code: string;
  abstract readonly recovery: Recovery;
  readonly [BRAND] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The task lost its partition or cannot prove it still owns it: close dirty, rejoin, restore. */
export class TaskMigratedError extends MeguriError {
  readonly code = 'MEGURI_ERR_TASK_MIGRATED';
  readonly recovery = 'migrated';
}

/** A short outage of the cluster or the log: retry with back-off. */
export class TransientError extends MeguriError {
  readonly code = 'MEGURI_ERR_TRANSIENT';
  readonly recovery = 'transient';
}

/** An output record larger than its topic accepts. */
export class RecordTooLargeError extends MeguriError {
  readonly code = 'MEGURI_ERR_RECORD_TOO_LARGE';
  readonly recovery = 'bad-record';

  constructor(
    readonly topic: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`record of ${bytes} bytes exceeds the ${maxBytes}-byte limit of topic ${topic}`);
  }
}

/** A service used the runtime wrongly (emit to an undeclared topic, a store it did not declare). */
export class ServiceDefinitionError extends MeguriError {
  readonly recovery = 'fatal';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A task was asked to move between lifecycle states in a way the lifecycle forbids: a bug. */
export class IllegalTaskStateError extends MeguriError {
  readonly code = 'MEGURI_ERR_ILLEGAL_TASK_STATE';
  readonly recovery = 'fatal';
}

/** The service cannot continue (e.g. its consumer crashed for good). */
export class FatalServiceError extends MeguriError {
  readonly code = 'MEGURI_ERR_FATAL';
  readonly recovery = 'fatal';
}

export function isMeguriError(err: unknown): err is MeguriError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** Kafka protocol error types meaning "someone else owns this now" (Kafka Streams: TaskMigratedException). */
const MIGRATED_TYPES = new Set([
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
  'TRANSACTION_COORDINATOR_FENCED',
  'UNKNOWN_MEMBER_ID',
  'ILLEGAL_GENERATION',
  'REBALANCE_IN_PROGRESS',
  'FENCED_INSTANCE_ID',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_TXN_STATE',
]);

/** Kafka protocol error types meaning "the group no longer counts this member in". */
const MEMBERSHIP_LOST_TYPES = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'FENCED_INSTANCE_ID']);

/**
 * Whether a group request was refused because the coordinator no longer counts this member in (it
 * was dropped, or acts for an old generation): retrying it can never succeed; the member must join
 * again. A rebalance in progress is not this: it ends by itself. kafkajs wraps some of these in an
 * error of its own, with the original as `originalError` or `cause`.
 */
export function isMembershipLost(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === undefined || e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && MEMBERSHIP_LOST_TYPES.has(type)) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && /not aware of this member|generation id is not valid|fenced instance/i.test(message)) return true;
    queue.push((e as { cause?: unknown }).cause, (e as { originalError?: unknown }).originalError);
  }
  return false;
}

const TRANSIENT_TYPES = new Set([
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
  'GROUP_LOAD_IN_PROGRESS',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'CONCURRENT_TRANSACTIONS',
  'KAFKA_STORAGE_ERROR',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'UNSTABLE_OFFSET_COMMIT',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
]);

const BAD_RECORD_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);

const FATAL_TYPES = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
  'UNSUPPORTED_VERSION',
  'INVALID_TRANSACTION_TIMEOUT',
]);

/** kafkajs error classes (by name) that mean the broker was briefly unreachable. */
const TRANSIENT_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSStaleTopicMetadataAssignment',
]);

const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** What one error (not its causes) says, or undefined if it says nothing we recognise. */
function classifyOne(err: unknown): Recovery | undefined {
  if (isMeguriError(err)) return err.recovery;
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { name?: unknown; type?: unknown; code?: unknown; retriable?: unknown };
  const type = typeof e.type === 'string' ? e.type : undefined;
  if (type !== undefined) {
    if (MIGRATED_TYPES.has(type)) return 'migrated';
    if (TRANSIENT_TYPES.has(type)) return 'transient';
    if (BAD_RECORD_TYPES.has(type)) return 'bad-record';
    if (FATAL_TYPES.has(type)) return 'fatal';
  }
  const name = typeof e.name === 'string' ? e.name : '';
  // The embedded log rejects a commit for a partition the member no longer owns.
  if (name === 'FencedCommitError') return 'migrated';
  if (TRANSIENT_NAMES.has(name)) return 'transient';
  if (typeof e.code === 'string' && TRANSIENT_NODE_CODES.has(e.code)) return 'transient';
  // kafkajs's own wording for a producer whose epoch was bumped by a newer instance.
  if (err instanceof Error && /fenced|epoch/i.test(err.message) && /producer|transaction/i.test(err.message)) return 'migrated';
  return undefined;
}

/**
 * The recovery for an error raised at `stage`. Causes are followed (kafkajs wraps the last protocol
 * error in KafkaJSNumberOfRetriesExceeded). What nothing recognises is, by stage: a processor failure
 * (`process`) a bad-record suspect, isolated record by record; an unknown commit or open failure
 * `migrated`, because the transaction's outcome is unknown and only a re-open from the changelog is
 * sure to be right.
 */
export function classifyError(err: unknown, stage: ErrorStage): Recovery {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e !== undefined && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const r = classifyOne(e);
    if (r !== undefined) return r;
  }
  return stage === 'process' ? 'bad-record' : 'migrated';
}

/** A short description for logs and dead letters: class name, code and message. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown; type?: unknown }).code ?? (err as { type?: unknown }).type;
    return `${err.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${err.message}`;
  }
  return String(err);
}
