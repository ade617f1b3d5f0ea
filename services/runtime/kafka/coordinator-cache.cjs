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
 * the time asks the broker again.
 *
 * Plain CommonJS, because it patches kafkajs's Cluster class as kafkajs.cjs loads it.
 */

const COORDINATOR_TTL_MS = 1000;
const CACHE = Symbol('meguri:coordinators');
const INSTALLED = Symbol('meguri:coordinatorCache');

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
    const key = `${coordinatorType}:${groupId}`;
    const known = cache.get(key);
    if (known !== undefined && now() - known.at < COORDINATOR_TTL_MS) {
      try {
        return await this.findBroker({ nodeId: known.nodeId });
      } catch {
        // The broker is gone from the metadata or cannot be reached: ask again.
        cache.delete(key);
      }
    }
    const broker = await lookUp.call(this, { groupId, coordinatorType });
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

module.exports = { installCoordinatorCache, hasCoordinatorCache, COORDINATOR_TTL_MS };
