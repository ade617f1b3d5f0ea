'use strict';
/**
 * Which fetched records a read_committed consumer may see, for kafkajs.
 *
 * A fetch response lists the aborted transactions overlapping the fetched range as (producer id,
 * first offset). The broker keeps that index in the order the transactions were aborted, so when
 * several producers' transactions interleave in one partition (the scheduler's concurrent partition
 * tasks writing `changes`, say) a transaction that began later can be listed before one that began
 * earlier. kafkajs 2.2.4 walks the list assuming it is sorted by first offset, and starts at most one
 * aborted transaction per record, so it hands aborted records to its callers (and can hide committed
 * ones of a producer whose aborted transaction it starts too late).
 *
 * Here, as in the Java consumer: the list is sorted by first offset; every aborted transaction whose
 * first offset is at or before a record marks its producer as aborting; the producer's abort marker
 * (a control record) ends it; a transactional record of an aborting producer is dropped.
 *
 * Plain CommonJS, because kafkajs loads it in place of its own filter (see kafkajs.cjs).
 */

/** A control record's key is (version int16, type int16); type 0 is ABORT, 1 is COMMIT. */
function isAbortMarker(message) {
  const key = message.key;
  if (!key || key.length < 4) return false;
  return Buffer.from(key).readInt16BE(2) === 0;
}

/**
 * @param {{ messages: Array<{ offset: string, key: Buffer | null, isControlRecord?: boolean, batchContext?: { producerId?: string, inTransaction?: boolean } }>, abortedTransactions?: Array<{ producerId: string, firstOffset: string }> }} fetched
 * @returns the messages that are not part of an aborted transaction (control records included; kafkajs drops them next)
 */
function filterAbortedMessages({ messages, abortedTransactions }) {
  if (!abortedTransactions || abortedTransactions.length === 0) return messages;
  const pending = abortedTransactions
    .map((t) => ({ producerId: String(t.producerId), firstOffset: BigInt(t.firstOffset) }))
    .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const aborting = new Set();
  let next = 0;
  return messages.filter((message) => {
    const offset = BigInt(message.offset);
    while (next < pending.length && pending[next].firstOffset <= offset) aborting.add(pending[next++].producerId);
    const context = message.batchContext || {};
    const producerId = String(context.producerId);
    if (message.isControlRecord) {
      if (isAbortMarker(message)) aborting.delete(producerId);
      return true;
    }
    return !(context.inTransaction && aborting.has(producerId));
  });
}

module.exports = { filterAbortedMessages, isAbortMarker };
