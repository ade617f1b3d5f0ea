'use strict';
/**
 * A producer's send (`send`, `sendBatch`, and the same inside a transaction), for kafkajs.
 *
 * kafkajs 2.2.4 (src/producer/sendMessages.js) sends one produce request per leader broker and
 * waits for them with Promise.all inside its retrier. When one broker's request fails with a
 * retriable error, the others may still be in flight; the retry sends again to every broker that
 * has not answered yet, those in flight included, with the next sequence numbers, so the broker
 * takes the second copy for new records and a committed transaction holds them twice. The usual
 * trigger was kafkajs itself: each broker's part added its own partitions to the transaction, so a
 * send to three brokers made three AddPartitionsToTxn requests at once, and the coordinator
 * answered CONCURRENT_TRANSACTIONS to some. A retry also grouped the messages over again (a
 * round-robin partitioner moves them) and skipped every broker that had answered, so a partition
 * whose leader moved to such a broker was never sent, and the send still succeeded.
 *
 * Here a send groups its messages per partition once, and each partition is acknowledged or still
 * to send. An attempt adds every partition still to send to the transaction, in one request before
 * any produce request; sends them to their leaders of the moment, one request per broker; and waits
 * for every request to settle. An acknowledged partition is never sent again. A failed request gives
 * back its sequence numbers, so its partitions go again on the next attempt with the same ones (the
 * broker drops a batch it already wrote as a duplicate). Errors are handled as kafkajs does (metadata
 * refreshed after stale metadata and connection errors; a non-retriable error ends the send), once
 * nothing of the attempt is in flight.
 *
 * Plain CommonJS, because kafkajs.cjs installs it in place of kafkajs's module.
 */
const path = require('node:path');
const groupMessagesPerPartition = require('./group-messages.cjs');

const kafkajsSrc = path.join(path.dirname(require.resolve('kafkajs/package.json')), 'src');

/** kafkajs's own errors and response shape, required when a producer is made: the copies its kafkajs uses. */
function kafkajsModules() {
  return {
    errors: require(path.join(kafkajsSrc, 'errors.js')),
    staleMetadata: require(path.join(kafkajsSrc, 'protocol', 'error.js')).staleMetadata,
    serializeResponse: require(path.join(kafkajsSrc, 'producer', 'responseSerializer.js')),
  };
}

/** `{ topic, partitions: [{ partition, messages }] }` per topic, as kafkajs's requests take them. */
function topicDataOf(parts) {
  const byTopic = new Map();
  for (const { topic, partition, messages } of parts) {
    let partitions = byTopic.get(topic);
    if (partitions === undefined) byTopic.set(topic, (partitions = []));
    partitions.push({ partition, messages });
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
}

/** Errors after which kafkajs refreshes its metadata before trying again. */
function needsMetadata(staleMetadata, e) {
  return (
    staleMetadata(e) ||
    e.name === 'KafkaJSMetadataNotLoaded' ||
    e.name === 'KafkaJSConnectionError' ||
    e.name === 'KafkaJSConnectionClosedError' ||
    (e.name === 'KafkaJSProtocolError' && e.retriable)
  );
}

/** Every partition of the send with its messages. Done once: a retry must not move a message. */
function partitionsOf({ cluster, logger, partitioner, errors }, topicMessages) {
  const parts = [];
  for (const { topic, messages } of topicMessages) {
    const partitionMetadata = cluster.findTopicPartitionMetadata(topic);
    if (partitionMetadata.length === 0) {
      logger.debug('Producing to topic without metadata', { topic, targetTopics: Array.from(cluster.targetTopics ?? []) });
      throw new errors.KafkaJSMetadataNotLoaded('Producing to topic without metadata');
    }
    const groups = groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner });
    for (const partition of Object.keys(groups)) parts.push({ topic, partition, messages: groups[partition], acknowledged: false });
  }
  return parts;
}

/** The partitions to send, one request per broker that leads some of them now. */
async function requestsFor({ cluster, errors }, parts) {
  const perNode = new Map();
  const perTopic = new Map();
  for (const part of parts) {
    if (!perTopic.has(part.topic)) perTopic.set(part.topic, []);
    perTopic.get(part.topic).push(part);
  }
  for (const [topic, topicParts] of perTopic) {
    const leaders = cluster.findLeaderForPartitions(topic, topicParts.map((p) => p.partition));
    const leaderOf = new Map();
    for (const nodeId of Object.keys(leaders)) for (const partition of leaders[nodeId]) leaderOf.set(String(partition), nodeId);
    for (const part of topicParts) {
      const nodeId = leaderOf.get(String(part.partition));
      // kafkajs left a partition missing from its metadata out of the request and reported success.
      if (nodeId === undefined) throw new errors.KafkaJSMetadataNotLoaded(`No leader known for partition ${part.partition} of topic ${topic}`);
      if (!perNode.has(nodeId)) perNode.set(nodeId, []);
      perNode.get(nodeId).push(part);
    }
  }
  const requests = [];
  for (const [nodeId, nodeParts] of perNode) requests.push({ broker: await cluster.findBroker({ nodeId }), parts: nodeParts });
  return requests;
}

/** One produce request; its partitions are acknowledged when it succeeds, its sequence numbers given back when not. */
async function produce({ eosManager, serializeResponse }, broker, parts, { acks, timeout, compression }) {
  await eosManager.acquireBrokerLock(broker);
  try {
    const topicData = topicDataOf(parts);
    for (const { topic, partitions } of topicData) {
      for (const entry of partitions) {
        entry.firstSequence = eosManager.getSequence(topic, entry.partition);
        eosManager.updateSequence(topic, entry.partition, entry.messages.length);
      }
    }
    let response;
    try {
      response = await broker.produce({
        transactionalId: eosManager.isTransactional() ? eosManager.getTransactionalId() : undefined,
        producerId: eosManager.getProducerId(),
        producerEpoch: eosManager.getProducerEpoch(),
        acks,
        timeout,
        compression,
        topicData,
      });
    } catch (e) {
      for (const { topic, partitions } of topicData) {
        for (const entry of partitions) eosManager.updateSequence(topic, entry.partition, -entry.messages.length);
      }
      throw e;
    }
    for (const part of parts) part.acknowledged = true;
    return acks !== 0 ? serializeResponse(response) : [];
  } finally {
    await eosManager.releaseBrokerLock(broker);
  }
}

/**
 * After an attempt with failures, once nothing of it is in flight: reconnect or refresh metadata as
 * kafkajs would, then throw to retry, or bail on an error that retrying cannot cure.
 */
async function afterFailures({ cluster, logger, staleMetadata }, failures, bail, retryCount, retryTime) {
  for (const e of failures) {
    if (e.name === 'KafkaJSConnectionClosedError') cluster.removeBroker({ host: e.host, port: e.port });
  }
  // The error kafkajs would decide on: one that retrying cannot cure ends the send.
  const e = failures.find((f) => !f.retriable) ?? failures[0];
  if (!cluster.isConnected()) {
    logger.debug(`Cluster has disconnected, reconnecting: ${e.message}`, { retryCount, retryTime });
    await cluster.connect();
    await cluster.refreshMetadata();
    throw e;
  }
  if (e.retriable && failures.some((f) => needsMetadata(staleMetadata, f))) {
    logger.error(`Failed to send messages: ${e.message}`, { retryCount, retryTime });
    await cluster.refreshMetadata();
    throw e;
  }
  logger.error(`${e.message}`, { retryCount, retryTime });
  if (e.retriable) throw e;
  bail(e);
}

/**
 * @param {{ logger: object, cluster: object, partitioner: Function, eosManager: object, retrier: Function }} deps as kafkajs's messageProducer passes them
 */
function createSendMessages({ logger, cluster, partitioner, eosManager, retrier }) {
  const deps = { logger, cluster, partitioner, eosManager, ...kafkajsModules() };

  return async function sendMessages({ acks, timeout, compression, topicMessages }) {
    let parts;
    const responses = [];

    return retrier(async (bail, retryCount, retryTime) => {
      await cluster.addMultipleTargetTopics(topicMessages.map(({ topic }) => topic));
      let failures;
      try {
        await cluster.refreshMetadataIfNecessary();
        parts ??= partitionsOf(deps, topicMessages);
        const pending = parts.filter((p) => !p.acknowledged);
        // One AddPartitionsToTxn for the whole send, answered before any record goes out.
        if (pending.length > 0 && eosManager.isTransactional()) await eosManager.addPartitionsToTransaction(topicDataOf(pending));
        const requests = await requestsFor(deps, pending);
        // Every request settles before anything is decided: none may still be in flight on a retry.
        const settled = await Promise.allSettled(requests.map(({ broker, parts }) => produce(deps, broker, parts, { acks, timeout, compression })));
        failures = [];
        for (const result of settled) {
          if (result.status === 'fulfilled') responses.push(...result.value);
          else failures.push(result.reason);
        }
        if (failures.length === 0) return responses;
      } catch (e) {
        failures = [e];
      }
      return afterFailures(deps, failures, bail, retryCount, retryTime);
    });
  };
}

module.exports = createSendMessages;
