'use strict';
/**
 * Which partition each message of a send goes to, for kafkajs's producer: `{ [partition]: messages }`,
 * messages in send order. kafkajs 2.2.4 builds the groups by copying a partition's whole group for
 * every message added to it, which is quadratic in the messages per partition (2 % of the event loop
 * of a crawl on Kafka, whose sends carry hundreds of records); this builds the same groups in one
 * pass. Installed into kafkajs by kafkajs.cjs.
 */
function groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner }) {
  if (partitionMetadata.length === 0) return {};
  const groups = {};
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    (groups[partition] ??= []).push(message);
  }
  return groups;
}

module.exports = groupMessagesPerPartition;
