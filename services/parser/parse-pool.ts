/**
 * A pool of worker threads that run pageToRecords, so HTML parsing and fingerprinting use the
 * machine's other cores instead of the event loop that also moves records and runs the scheduler.
 * The workers also bundle and encode the records, which reach the event loop as bytes to emit.
 */
import { Worker } from 'node:worker_threads';
import type { PageRecord } from '../../schemas/index.ts';
import type { OutcomeOptions, RecordPointer } from './outcome.ts';
import { unpackKeyedRecords } from './keyed-records.ts';
import type { EncodedLinksRecord, PackedLinksRecords } from './keyed-records.ts';

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
  /** The worker it was sent to. */
  worker: number;
}

type Reply = { id: number; records: PackedLinksRecords } | { id: number; error: string };

export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly load: number[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;
  private readonly workerData: WorkerOptions;
  /** Workers started again after one stopped (for tests and diagnostics). */
  restarts = 0;

  /** `options` reach every worker: languages, the parameter filter, aliases and extraction limits. */
  constructor(
    readonly size: number,
    options: OutcomeOptions = {},
  ) {
    if (!(size >= 1)) throw new RangeError('parse pool size must be ≥ 1');
    this.workerData = workerOptions(options);
    for (let i = 0; i < size; i++) {
      this.workers.push(this.start(i));
      this.load.push(0);
    }
  }

  private start(i: number): Worker {
    const worker = new Worker(new URL('./parse-worker-boot.mjs', import.meta.url), { workerData: this.workerData });
    worker.unref();
    worker.on('message', (msg: Reply) => {
      this.load[i]!--;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if ('error' in msg) p.reject(new Error(msg.error));
      else p.resolve(unpackKeyedRecords(msg.records));
    });
    worker.on('error', (err) => this.failJobsOf(i, err));
    worker.on('exit', (code) => {
      if (this.closed || this.workers[i] !== worker) return;
      // A worker that stopped (out of memory on a page, a crash) takes the pages it held with it:
      // they fail, and the caller's batch is retried or its bad record dead-lettered. A new
      // worker takes its place, or every later page sent to it would wait forever.
      this.failJobsOf(i, new Error(`parse worker stopped (exit code ${code})`));
      this.restarts++;
      this.load[i] = 0;
      this.workers[i] = this.start(i);
    });
    return worker;
  }

  private failJobsOf(i: number, err: Error): void {
    for (const [id, p] of this.pending) {
      if (p.worker !== i) continue;
      this.pending.delete(id);
      p.reject(err);
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
      this.pending.set(id, { resolve, reject, worker: best });
      if (own === undefined) this.workers[best]!.postMessage({ id, page, pointer });
      else this.workers[best]!.postMessage({ id, page: { ...page, body: own }, pointer }, [own.buffer]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
