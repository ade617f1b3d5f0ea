'use strict';
/**
 * Coordinators followed when they move, for kafkajs.
 *
 * A group's (or a transactional id's) coordinator moves when its broker restarts or another broker
 * takes over its partition of __consumer_offsets (__transaction_state); the old broker then answers
 * NOT_COORDINATOR (NOT_COORDINATOR_FOR_GROUP in kafkajs 2.2.4), COORDINATOR_NOT_AVAILABLE or
 * COORDINATOR_LOAD_IN_PROGRESS, or cannot be reached. kafkajs 2.2.4 keeps the coordinator it found
 * at a join in two places: the consumer group (heartbeats, SyncGroup, LeaveGroup) and the offset
 * manager each join makes (OffsetCommit, OffsetFetch). The offset manager looks again only when
 * its connection is down, and then for the same broker, so after a rolling restart every offset
 * commit failed with "This is not the correct coordinator for this group"; heartbeats sent from
 * inside a long batch kept going to the old broker too, until the member's session ran out
 * (kafkajs rejoins only between batches).
 * Everything else (a join, a transaction's steps, TxnOffsetCommit) asks the cluster each time, and
 * coordinator-cache.cjs would answer with the old broker for up to a second.
 *
 * Here every request kafkajs sends to a coordinator that fails because the broker is not (or not
 * yet) the coordinator, or could not be reached, marks that broker as refused for that group or
 * transactional id (coordinator-cache.cjs). Before its next request the offset manager or the
 * consumer group looks a refused coordinator up again, and the cache never answers with a refused
 * broker, so the lookup is a fresh FindCoordinator. The request that failed still fails; the
 * caller's retry (kafkajs retries offset commits and joins) goes to the new coordinator.
 *
 * A transaction's sendOffsets (AddOffsetsToTxn, then TxnOffsetCommit) had no such retry: kafkajs
 * 2.2.4 means to look the group's coordinator up again after NOT_COORDINATOR, but under names its
 * error table does not use ('NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE',
 * 'COORDINATOR_LOAD_IN_PROGRESS'), so the first refusal failed the transaction. Here sendOffsets is
 * tried again on those errors and on CONCURRENT_TRANSACTIONS: both requests only add to the open
 * transaction (the same group, the same offsets), so sending them twice changes nothing.
 *
 * Plain CommonJS, because it patches kafkajs's classes as kafkajs.cjs loads them.
 */
const { coordinatorKey, markRefused, isRefused, clearRefused } = require('./coordinator-cache.cjs');

const GROUP = 0;
const TRANSACTION = 1;
const INSTALLED = Symbol('meguri:coordinatorMoves');

/** Broker requests that go to a coordinator, with the key of the coordinator each goes to. */
const COORDINATOR_REQUESTS = {
  joinGroup: (r) => coordinatorKey(GROUP, r.groupId),
  syncGroup: (r) => coordinatorKey(GROUP, r.groupId),
  heartbeat: (r) => coordinatorKey(GROUP, r.groupId),
  leaveGroup: (r) => coordinatorKey(GROUP, r.groupId),
  offsetCommit: (r) => coordinatorKey(GROUP, r.groupId),
  offsetFetch: (r) => coordinatorKey(GROUP, r.groupId),
  // TxnOffsetCommit goes to the group's coordinator, not the transaction's.
  txnOffsetCommit: (r) => coordinatorKey(GROUP, r.groupId),
  addPartitionsToTxn: (r) => coordinatorKey(TRANSACTION, r.transactionalId),
  addOffsetsToTxn: (r) => coordinatorKey(TRANSACTION, r.transactionalId),
  endTxn: (r) => coordinatorKey(TRANSACTION, r.transactionalId),
  // Without a transactional id it goes to any broker (an idempotent producer).
  initProducerId: (r) => (r.transactionalId ? coordinatorKey(TRANSACTION, r.transactionalId) : undefined),
};

/** Answers of a broker that is not the coordinator (any more, or yet), under kafkajs 2.2.4's names. */
const NOT_COORDINATOR = new Set(['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS']);
/** A coordinator that cannot be reached may have moved as well (its broker restarting). */
const UNREACHABLE = new Set(['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError']);

/** Whether an error of a coordinator request means the coordinator must be looked up again. */
function isCoordinatorFailure(e) {
  return e != null && (NOT_COORDINATOR.has(e.type) || UNREACHABLE.has(e.name));
}

/** A group's coordinator asked for again: the cache skips a refused broker, so this is current. */
async function lookUpGroupCoordinator(cluster, groupId) {
  const broker = await cluster.findGroupCoordinator({ groupId, coordinatorType: GROUP });
  clearRefused(broker, coordinatorKey(GROUP, groupId));
  return broker;
}

function installed(fn) {
  return typeof fn === 'function' && fn[INSTALLED] === true;
}

function mark(fn) {
  fn[INSTALLED] = true;
  return fn;
}

/**
 * @param {{ Broker: { prototype: object }, OffsetManager: { prototype: object }, ConsumerGroup: { prototype: object } }} classes kafkajs's classes (or stand-ins in tests)
 */
function installCoordinatorMoves({ Broker, OffsetManager, ConsumerGroup }) {
  if (Broker) {
    const proto = Broker.prototype;
    for (const [name, keyOf] of Object.entries(COORDINATOR_REQUESTS)) {
      const send = proto[name];
      if (typeof send !== 'function' || installed(send)) continue;
      proto[name] = mark(async function (request, ...rest) {
        try {
          return await send.call(this, request, ...rest);
        } catch (e) {
          const key = request ? keyOf(request) : undefined;
          if (key !== undefined && isCoordinatorFailure(e)) markRefused(this, key);
          throw e;
        }
      });
    }
  }

  if (OffsetManager && !installed(OffsetManager.prototype.getCoordinator)) {
    const getCoordinator = OffsetManager.prototype.getCoordinator;
    OffsetManager.prototype.getCoordinator = mark(async function () {
      if (isRefused(this.coordinator, coordinatorKey(GROUP, this.groupId))) {
        this.coordinator = await lookUpGroupCoordinator(this.cluster, this.groupId);
      }
      // kafkajs's own: reconnects a coordinator whose connection is down.
      return getCoordinator.call(this);
    });
  }

  if (ConsumerGroup) {
    const proto = ConsumerGroup.prototype;
    // Heartbeats and LeaveGroup go to the coordinator found at the join; a join itself asks the cluster.
    for (const name of ['heartbeat', 'leave']) {
      const original = proto[name];
      if (typeof original !== 'function' || installed(original)) continue;
      proto[name] = mark(async function (...args) {
        if (isRefused(this.coordinator, coordinatorKey(GROUP, this.groupId))) {
          this.coordinator = await lookUpGroupCoordinator(this.cluster, this.groupId);
        }
        return original.apply(this, args);
      });
    }
  }
}

/**
 * kafkajs's eosManager factory (src/producer/eosManager/index.js), with sendOffsets tried again when
 * a coordinator refused it.
 * @param {Function} createEosManager kafkajs's factory
 * @param {Function} createRetry kafkajs's retrier factory (src/retry/index.js)
 */
function followCoordinatorsInSendOffsets(createEosManager, createRetry) {
  if (installed(createEosManager)) return createEosManager;
  return mark(function createEosManagerFollowingCoordinators(options) {
    const eosManager = createEosManager(options);
    const sendOffsets = eosManager.sendOffsets;
    const retrier = createRetry(options.cluster.retry);
    eosManager.sendOffsets = (args) =>
      retrier(async (bail) => {
        try {
          return await sendOffsets(args);
        } catch (e) {
          if (isCoordinatorFailure(e) || e?.type === 'CONCURRENT_TRANSACTIONS') throw e;
          bail(e);
        }
      });
    return eosManager;
  });
}

/** Whether every patch is in place on these classes. */
function hasCoordinatorMoves({ Broker, OffsetManager, ConsumerGroup }) {
  return (
    Object.keys(COORDINATOR_REQUESTS).every((name) => installed(Broker.prototype[name])) &&
    installed(OffsetManager.prototype.getCoordinator) &&
    installed(ConsumerGroup.prototype.heartbeat) &&
    installed(ConsumerGroup.prototype.leave)
  );
}

module.exports = { installCoordinatorMoves, hasCoordinatorMoves, isCoordinatorFailure, followCoordinatorsInSendOffsets, followsCoordinators: installed };
