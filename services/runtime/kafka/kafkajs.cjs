'use strict';
/**
 * kafkajs 2.2.4 with a read_committed consumer that never delivers aborted records, a producer
 * that groups a send's messages per partition in linear time, a protocol encoder that does not
 * zero-fill the buffers it writes over, produce requests whose record batches are written in one
 * pass without a copy of each message, every request framed in one buffer of its exact size, a
 * produce request's batches written straight into it (record-batch.cjs), coordinator lookups kept for a second (coordinator-cache.cjs)
 * instead of one FindCoordinator request per transaction step, a send that never sends a partition
 * again while a request of it is in flight (send-messages.cjs), and consumers that look their
 * group's coordinator up again when it moved (coordinator-moves.cjs).
 *
 * kafkajs is no longer maintained, so its faulty filter (see read-committed.cjs), its quadratic
 * grouping (group-messages.cjs) and its encoder (compiled with unfilled buffers, unfilled-encoder.cjs)
 * are replaced here, in the module cache, before kafkajs loads them: no install script is needed (it works with
 * `npm ci --ignore-scripts` and for anyone who installs meguri as a dependency). Every part of
 * meguri loads kafkajs through this module, and so should a subscriber written with kafkajs:
 * `import { Kafka } from 'meguri/kafkajs'`.
 *
 * If kafkajs was already loaded without the fix (someone imported it first), a second copy is
 * loaded with it; a self-check at load fails loudly if the fix does not take (a kafkajs whose
 * files moved, say).
 */
const Module = require('node:module');
const path = require('node:path');
const { filterAbortedMessages } = require('./read-committed.cjs');
const groupMessagesPerPartition = require('./group-messages.cjs');
const { compileEncoder, UnfilledBuffer } = require('./unfilled-encoder.cjs');
const { installCoordinatorCache, hasCoordinatorCache } = require('./coordinator-cache.cjs');
const { installCoordinatorMoves, hasCoordinatorMoves, followCoordinatorsInSendOffsets, followsCoordinators } = require('./coordinator-moves.cjs');
const createSendMessages = require('./send-messages.cjs');
const { measureRecord, createRecordBatch, createProduceRequest, createRequest } = require('./record-batch.cjs');

const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
const filterPath = path.join(kafkajsDir, 'src', 'consumer', 'filterAbortedMessages.js');
const batchPath = path.join(kafkajsDir, 'src', 'consumer', 'batch.js');
const groupPath = path.join(kafkajsDir, 'src', 'producer', 'groupMessagesPerPartition.js');
const encoderPath = path.join(kafkajsDir, 'src', 'protocol', 'encoder.js');
const clusterPath = path.join(kafkajsDir, 'src', 'cluster', 'index.js');
const recordPath = path.join(kafkajsDir, 'src', 'protocol', 'recordBatch', 'record', 'v0', 'index.js');
const recordBatchPath = path.join(kafkajsDir, 'src', 'protocol', 'recordBatch', 'v0', 'index.js');
const produceRequestPath = path.join(kafkajsDir, 'src', 'protocol', 'requests', 'produce', 'v3', 'request.js');
const requestPath = path.join(kafkajsDir, 'src', 'protocol', 'request.js');
const sendMessagesPath = path.join(kafkajsDir, 'src', 'producer', 'sendMessages.js');
const brokerPath = path.join(kafkajsDir, 'src', 'broker', 'index.js');
const offsetManagerPath = path.join(kafkajsDir, 'src', 'consumer', 'offsetManager', 'index.js');
const consumerGroupPath = path.join(kafkajsDir, 'src', 'consumer', 'consumerGroup.js');
const eosManagerPath = path.join(kafkajsDir, 'src', 'producer', 'eosManager', 'index.js');
const Encoder = compileEncoder(encoderPath, UnfilledBuffer);
const recordBatch = createRecordBatch({
  Encoder,
  longPath: path.join(kafkajsDir, 'src', 'utils', 'long.js'),
  compressionPath: path.join(kafkajsDir, 'src', 'protocol', 'message', 'compression', 'index.js'),
});
const produceRequest = createProduceRequest({ planBatch: recordBatch.planBatch });
const request = createRequest({ Encoder });
// kafkajs modules replaced before kafkajs loads them, and the module that requires each.
const replacements = [
  { file: filterPath, exports: filterAbortedMessages, user: batchPath },
  // send-messages.cjs groups with group-messages.cjs itself; this one is for anything else that asks.
  { file: groupPath, exports: groupMessagesPerPartition, user: sendMessagesPath },
  { file: sendMessagesPath, exports: createSendMessages, user: path.join(kafkajsDir, 'src', 'producer', 'messageProducer.js') },
  { file: encoderPath, exports: Encoder, user: path.join(kafkajsDir, 'src', 'protocol', 'request.js') },
  { file: recordPath, exports: measureRecord, user: produceRequestPath },
  { file: recordBatchPath, exports: recordBatch, user: produceRequestPath },
  { file: produceRequestPath, exports: produceRequest, user: path.join(kafkajsDir, 'src', 'protocol', 'requests', 'produce', 'index.js') },
  { file: requestPath, exports: request, user: path.join(kafkajsDir, 'src', 'network', 'connection.js') },
];

function installReplacements() {
  if (replacements.every((r) => require.cache[r.file]?.exports === r.exports)) return;
  if (replacements.some((r) => require.cache[r.file] || require.cache[r.user])) {
    // kafkajs was loaded with its own modules: drop that copy from the cache to load a fixed one.
    for (const key of Object.keys(require.cache)) {
      if (key.startsWith(kafkajsDir + path.sep)) delete require.cache[key];
    }
  }
  for (const r of replacements) {
    const replacement = new Module(r.file, module);
    replacement.filename = r.file;
    replacement.paths = Module._nodeModulePaths(path.dirname(r.file));
    replacement.exports = r.exports;
    replacement.loaded = true;
    require.cache[r.file] = replacement;
  }
}

/** A fetch with two aborted transactions listed out of first-offset order must yield nothing. */
function selfCheck() {
  const Batch = require(batchPath);
  const record = (offset, producerId) => ({
    offset: String(offset),
    key: Buffer.from(String(offset)),
    value: Buffer.from('x'),
    isControlRecord: false,
    batchContext: { producerId, inTransaction: true },
  });
  const batch = new Batch('check', '0', {
    partition: 0,
    highWatermark: '2',
    messages: [record(0, '7'), record(1, '8')],
    abortedTransactions: [
      { producerId: '8', firstOffset: '1' },
      { producerId: '7', firstOffset: '0' },
    ],
  });
  if (batch.messages.length !== 0) {
    throw new Error(`meguri could not install its read_committed fix into kafkajs at ${kafkajsDir} (a different kafkajs version?): aborted records would be delivered`);
  }
  if (require(groupPath) !== groupMessagesPerPartition) {
    throw new Error(`meguri could not install its message grouping into kafkajs at ${kafkajsDir} (a different kafkajs version?)`);
  }
  const encoded = new Encoder().writeInt32(7).writeVarIntString('meguri').writeBytes(Buffer.from('ab')).buffer;
  if (require(encoderPath) !== Encoder || encoded.toString('hex') !== '000000070c6d6567757269000000026162') {
    throw new Error(`meguri could not install its protocol encoder into kafkajs at ${kafkajsDir} (a different kafkajs version?)`);
  }
  if (require(recordBatchPath) !== recordBatch || require(recordPath) !== measureRecord || require(produceRequestPath) !== produceRequest || require(requestPath) !== request) {
    throw new Error(`meguri could not install its record batch encoder into kafkajs at ${kafkajsDir} (a different kafkajs version?)`);
  }
  const Cluster = require(clusterPath);
  if (typeof Cluster.prototype.findBroker !== 'function' || !hasCoordinatorCache(Cluster)) {
    throw new Error(`meguri could not install its coordinator cache into kafkajs at ${kafkajsDir} (a different kafkajs version?)`);
  }
  if (require(sendMessagesPath) !== createSendMessages) {
    throw new Error(`meguri could not install its producer send into kafkajs at ${kafkajsDir} (a different kafkajs version?): a retried send could write records twice`);
  }
  if (!hasCoordinatorMoves(coordinatorClasses()) || !followsCoordinators(require(eosManagerPath))) {
    throw new Error(`meguri could not install its coordinator lookups into kafkajs at ${kafkajsDir} (a different kafkajs version?)`);
  }
}

/** The kafkajs classes that keep a coordinator broker (see coordinator-moves.cjs). */
function coordinatorClasses() {
  return { Broker: require(brokerPath), OffsetManager: require(offsetManagerPath), ConsumerGroup: require(consumerGroupPath) };
}

installReplacements();
installCoordinatorCache(require(clusterPath));
installCoordinatorMoves(coordinatorClasses());
// Before kafkajs's producer requires it: the eosManager factory, with sendOffsets following a moved coordinator.
const createEosManager = require(eosManagerPath);
require.cache[eosManagerPath].exports = followCoordinatorsInSendOffsets(createEosManager, require(path.join(kafkajsDir, 'src', 'retry', 'index.js')));
// This exact form lets Node's ESM loader see kafkajs's named exports: `import { Kafka } from 'meguri/kafkajs'`.
module.exports = require('kafkajs');
selfCheck();
