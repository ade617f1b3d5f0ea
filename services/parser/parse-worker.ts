/**
 * Worker-thread side of the parse pool: turns pages into `links` records off the main thread.
 * Messages in: { id, page, pointer }; out: { id, outcome, links } or { id, error }.
 */
import { parentPort } from 'node:worker_threads';
import type { PageRecord } from '../../schemas/index.ts';
import { pageToRecords } from './outcome.ts';
import type { RecordPointer } from './outcome.ts';

interface Job {
  id: number;
  /** Structured cloning hands a Buffer over as a plain Uint8Array. */
  page: Omit<PageRecord, 'body'> & { body?: Uint8Array };
  pointer?: RecordPointer;
}

parentPort?.on('message', (job: Job) => {
  try {
    const { body, ...fields } = job.page;
    const page: PageRecord = body === undefined ? fields : { ...fields, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
    const { outcome, links } = pageToRecords(page, job.pointer);
    parentPort!.postMessage({ id: job.id, outcome, links });
  } catch (err) {
    parentPort!.postMessage({ id: job.id, error: (err as Error).message });
  }
});
