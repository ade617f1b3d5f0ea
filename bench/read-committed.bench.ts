/**
 * Cost of meguri's read_committed filter against kafkajs 2.2.4's own, on fetches like the ones a
 * scheduler partition's `changes` reader gets: records of several transactional producers
 * interleaved, some transactions aborted. Prints records/s of each filter and how many aborted
 * records each lets through.
 * Usage: tsx bench/read-committed.bench.ts [records per fetch=500] [producers=8] [rounds=2000]
 */
import { createRequire } from 'node:module';
import { filterAbortedMessages } from '../services/runtime/kafka/read-committed.cjs';
import type { AbortedTransaction, FetchedMessage } from '../services/runtime/kafka/read-committed.cjs';
import { machineInfo, machineLine } from './machine.ts';

type Filter = (fetched: { messages: FetchedMessage[]; abortedTransactions: AbortedTransaction[] }) => FetchedMessage[];
const require = createRequire(import.meta.url);
const kafkajsDir = require.resolve('kafkajs/package.json').replace(/package\.json$/, '');
// Read the original file directly (the module cache holds meguri's filter under that name once kafkajs.cjs ran).
const original = require(`${kafkajsDir}src/consumer/filterAbortedMessages.js`) as Filter;

const perFetch = Number(process.argv[2] ?? 500);
const producers = Number(process.argv[3] ?? 8);
const rounds = Number(process.argv[4] ?? 2000);

/** One fetch: producers take turns writing; each transaction ends after 1-6 records, 40% aborted. */
function fetch(seed: number): { messages: FetchedMessage[]; abortedTransactions: AbortedTransaction[]; aborted: Set<string> } {
  let s = seed;
  const random = (): number => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const messages: FetchedMessage[] = [];
  const abortedTransactions: AbortedTransaction[] = [];
  const aborted = new Set<string>();
  const open = new Map<string, { first: number; left: number; abort: boolean; offsets: string[] }>();
  for (let offset = 0; messages.length < perFetch; offset++) {
    const pid = String(Math.floor(random() * producers));
    let tx = open.get(pid);
    if (!tx) open.set(pid, (tx = { first: offset, left: 1 + Math.floor(random() * 6), abort: random() < 0.4, offsets: [] }));
    if (tx.left-- > 0) {
      messages.push({ offset: String(offset), key: Buffer.from('k'), isControlRecord: false, batchContext: { producerId: pid, inTransaction: true } });
      tx.offsets.push(String(offset));
      continue;
    }
    messages.push({ offset: String(offset), key: Buffer.from([0, 0, 0, tx.abort ? 0 : 1]), isControlRecord: true, batchContext: { producerId: pid, inTransaction: true } });
    if (tx.abort) {
      abortedTransactions.push({ producerId: pid, firstOffset: String(tx.first) });
      for (const o of tx.offsets) aborted.add(o);
    }
    open.delete(pid);
  }
  return { messages, abortedTransactions, aborted };
}

const fetches = Array.from({ length: 50 }, (_, i) => fetch(i + 1));
console.log(machineLine(machineInfo()));
console.log(`${perFetch} records per fetch, ${producers} producers, ${rounds} fetches`);
for (const [name, filter] of [['kafkajs 2.2.4', original], ['meguri', filterAbortedMessages as Filter]] as const) {
  let leaked = 0;
  let lost = 0;
  for (const f of fetches) {
    const kept = new Set(filter(f).filter((m) => !m.isControlRecord).map((m) => m.offset));
    for (const o of f.aborted) if (kept.has(o)) leaked++;
    for (const m of f.messages) if (!m.isControlRecord && !f.aborted.has(m.offset) && !kept.has(m.offset)) lost++;
  }
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) filter(fetches[i % fetches.length]!);
  const ms = performance.now() - t0;
  const abortedTotal = fetches.reduce((n, f) => n + f.aborted.size, 0);
  console.log(
    `${name.padEnd(14)} ${Math.round((rounds * perFetch) / (ms / 1000)).toLocaleString('en-US')} records/s; ` +
      `aborted records delivered ${leaked} of ${abortedTotal}, committed records dropped ${lost}`,
  );
}
