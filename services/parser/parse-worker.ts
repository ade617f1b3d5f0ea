/**
 * Worker-thread side of the parse pool: turns pages into `links` records off the main thread.
 * Messages in: { id, page, pointer }; out: { id, outcome, links } or { id, error }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PageRecord } from '../../schemas/index.ts';
import { pageToRecords } from './outcome.ts';
import { loadLanguageDetector } from './language.ts';
import type { OutcomeOptions, RecordPointer } from './outcome.ts';

const options: OutcomeOptions = (workerData as OutcomeOptions | null) ?? {};

interface Job {
  id: number;
  page: PageRecord;
  pointer?: RecordPointer;
}

const detectorReady = loadLanguageDetector();

parentPort?.on('message', async (job: Job) => {
  await detectorReady;
  try {
    const { outcome, links } = pageToRecords(job.page, job.pointer, options);
    parentPort!.postMessage({ id: job.id, outcome, links });
  } catch (err) {
    parentPort!.postMessage({ id: job.id, error: (err as Error).message });
  }
});
