/**
 * A pool of worker threads that run pageToRecords, so HTML parsing and fingerprinting use the
 * machine's other cores instead of the event loop that also moves records and runs the scheduler.
 */
import { Worker } from 'node:worker_threads';
import type { PageRecord, OutcomeLink, DiscoveredLink } from '../../schemas/index.ts';
import type { OutcomeOptions, RecordPointer } from './outcome.ts';

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
  resolve: (r: { outcome: OutcomeLink; links: DiscoveredLink[] }) => void;
  reject: (e: Error) => void;
}

type Reply = { id: number; outcome: OutcomeLink; links: DiscoveredLink[] } | { id: number; error: string };

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
        else p.resolve({ outcome: msg.outcome, links: msg.links });
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

  run(page: PageRecord, pointer?: RecordPointer): Promise<{ outcome: OutcomeLink; links: DiscoveredLink[] }> {
    if (this.closed) return Promise.reject(new Error('parse pool is closed'));
    let best = 0;
    for (let i = 1; i < this.load.length; i++) if (this.load[i]! < this.load[best]!) best = i;
    const id = this.nextId++;
    this.load[best]!++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.workers[best]!.postMessage({ id, page, pointer });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
