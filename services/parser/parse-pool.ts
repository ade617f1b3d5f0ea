/**
 * A pool of worker threads that run pageToRecords, so HTML parsing and fingerprinting use the
 * machine's other cores instead of the event loop that also moves records and runs the scheduler.
 * The workers also bundle and encode the records, which reach the event loop as bytes to emit.
 */
import { Worker } from 'node:worker_threads';
import type { PageRecord } from '../../schemas/index.ts';
import type { OutcomeOptions, RecordPointer } from './outcome.ts';
import type { EncodedLinksRecord } from './keyed-records.ts';

/** OutcomeOptions as a worker receives them: plain data (the parameter filter as its list of names). */
export interface WorkerOptions extends Omit<OutcomeOptions, 'stripParams'> {
  stripParams?: readonly string[];
}

/** What structured cloning can carry of the parser's options; the worker rebuilds the rest. */
export function workerOptions(options: OutcomeOptions): WorkerOptions {
  const { stripParams, ...plain } = options;
  return stripParams !== undefined ? { ...plain, stripParams: stripParams.names } : plain;
}

interface Pending {
  resolve: (r: EncodedLinksRecord[]) => void;
  reject: (e: Error) => void;
}

type Reply = { id: number; records: EncodedLinksRecord[] } | { id: number; error: string };

export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly load: number[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;

  /** `options` reach every worker: languages, the parameter filter, aliases and extraction limits. */
  constructor(
    readonly size: number,
    options: OutcomeOptions = {},
  ) {
    if (!(size >= 1)) throw new RangeError('parse pool size must be ≥ 1');
    const boot = new URL('./parse-worker-boot.mjs', import.meta.url);
    for (let i = 0; i < size; i++) {
      const worker = new Worker(boot, { workerData: workerOptions(options) });
      worker.unref();
      worker.on('message', (msg: Reply) => {
        this.load[i]!--;
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if ('error' in msg) p.reject(new Error(msg.error));
        else p.resolve(msg.records);
      });
      worker.on('error', (err) => {
        // A crashed worker fails everything waiting; callers dead-letter those pages.
        for (const [id, p] of this.pending) {
          p.reject(err);
          this.pending.delete(id);
        }
      });
      this.workers.push(worker);
      this.load.push(0);
    }
  }

  /** The page's `links` records (keyedRecords), encoded. */
  run(page: PageRecord, pointer?: RecordPointer): Promise<EncodedLinksRecord[]> {
    if (this.closed) return Promise.reject(new Error('parse pool is closed'));
    let best = 0;
    for (let i = 1; i < this.load.length; i++) if (this.load[i]! < this.load[best]!) best = i;
    const id = this.nextId++;
    this.load[best]!++;
    // Structured cloning copies the whole ArrayBuffer behind a view, and a body read from Kafka is a
    // view into the fetch response (megabytes): the body goes over as its own copy, transferred.
    const body = page.body;
    const own = body === undefined ? undefined : new Uint8Array(body);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (own === undefined) this.workers[best]!.postMessage({ id, page, pointer });
      else this.workers[best]!.postMessage({ id, page: { ...page, body: own }, pointer }, [own.buffer]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
