'use strict';
/**
 * Coordinator lookups kept for a moment, for kafkajs.
 *
 * kafkajs 2.2.4 sends a FindCoordinator request before every call that goes to a coordinator: a
 * transaction that writes outputs and commits input offsets (AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit, EndTxn) asked four times, so a crawl on Kafka sent as many FindCoordinator
 * requests as all its other requests together. The Java client keeps the coordinator until a
 * request to it fails. Here a cluster keeps each answer (the coordinator's node id, per coordinator
 * type and key) for COORDINATOR_TTL_MS, and forgets all of them when it refreshes its metadata,
 * which kafkajs does after connection errors and unknown brokers. A coordinator that moved within
 * the time answers NOT_COORDINATOR; kafkajs retries with backoff, and the retry that comes after
 * the time asks the broker again. Sooner, when the broker it remembers refused or failed a request
 * for that key since (coordinator-moves.cjs records those): then the next lookup asks at once.
 *
 * Plain CommonJS, because it patches kafkajs's Cluster class as kafkajs.cjs loads it.
 */

const COORDINATOR_TTL_MS = 1000;
const CACHE = Symbol('meguri:coordinators');
const INSTALLED = Symbol('meguri:coordinatorCache');
/** Per broker, the keys it refused a request for (NOT_COORDINATOR and the like) since it was last found as their coordinator. */
const REFUSED = new WeakMap();

/** The cache's key of a coordinator: type 0 (group) with a group id, 1 (transaction) with a transactional id. */
function coordinatorKey(coordinatorType, id) {
  return `${coordinatorType}:${id}`;
}

/** Records that `broker` refused or failed a request for `key`: lookups of that key stop trusting it. */
function markRefused(broker, key) {
  if (broker === null || typeof broker !== 'object') return;
  let keys = REFUSED.get(broker);
  if (keys === undefined) REFUSED.set(broker, (keys = new Set()));
  keys.add(key);
}

/** Whether `broker` refused a request for `key` since a lookup last named it the coordinator. */
function isRefused(broker, key) {
  return broker !== null && typeof broker === 'object' && REFUSED.get(broker)?.has(key) === true;
}

/** A lookup named `broker` the coordinator for `key` (again): trust it until it refuses. */
function clearRefused(broker, key) {
  if (broker !== null && typeof broker === 'object') REFUSED.get(broker)?.delete(key);
}

/**
 * @param {{ prototype: { findGroupCoordinator: Function, refreshMetadata: Function, findBroker: Function } }} Cluster kafkajs's Cluster class
 * @param {() => number} [now] clock (tests)
 */
function installCoordinatorCache(Cluster, now = Date.now) {
  const proto = Cluster.prototype;
  if (proto.findGroupCoordinator[INSTALLED]) return;
  const lookUp = proto.findGroupCoordinator;
  const refresh = proto.refreshMetadata;

  async function findGroupCoordinator({ groupId, coordinatorType = 0 }) {
    const cache = (this[CACHE] ??= new Map());
    const key = coordinatorKey(coordinatorType, groupId);
    const known = cache.get(key);
    if (known !== undefined && now() - known.at < COORDINATOR_TTL_MS) {
      try {
        const broker = await this.findBroker({ nodeId: known.nodeId });
        // It answered NOT_COORDINATOR (or the like) since: the coordinator moved, ask again.
        if (!isRefused(broker, key)) return broker;
      } catch {
        // The broker is gone from the metadata or cannot be reached: ask again.
      }
      cache.delete(key);
    }
    const broker = await lookUp.call(this, { groupId, coordinatorType });
    clearRefused(broker, key);
    if (broker && broker.nodeId !== undefined && broker.nodeId !== null) cache.set(key, { nodeId: broker.nodeId, at: now() });
    return broker;
  }
  findGroupCoordinator[INSTALLED] = true;

  async function refreshMetadata(...args) {
    this[CACHE]?.clear();
    return refresh.apply(this, args);
  }

  proto.findGroupCoordinator = findGroupCoordinator;
  proto.refreshMetadata = refreshMetadata;
}

/** Whether the cache is installed on a Cluster class. */
function hasCoordinatorCache(Cluster) {
  return Cluster.prototype.findGroupCoordinator[INSTALLED] === true;
}

module.exports = { installCoordinatorCache, hasCoordinatorCache, COORDINATOR_TTL_MS, coordinatorKey, markRefused, isRefused, clearRefused };
