/**
 * Worker-thread side of the parse pool: turns pages into encoded `links` records off the main thread.
 * Messages in: { id, page, pointer }; out: { id, records } (PackedLinksRecords, its buffer
 * transferred) or { id, error }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PageRecord } from '../../schemas/index.ts';
import { needsLanguageDetector, pageToRecords } from './outcome.ts';
import { keyedRecords, packKeyedRecords } from './keyed-records.ts';
import { loadLanguageDetector } from './language.ts';
import type { OutcomeOptions, RecordPointer } from './outcome.ts';
import type { WorkerOptions } from './parse-pool.ts';
import { paramFilter } from '../common/url.ts';
import { decodePageContent } from '../common/page-content.ts';

const received = (workerData as WorkerOptions | null) ?? {};
const { stripParams, ...plain } = received;
const options: OutcomeOptions = stripParams !== undefined ? { ...plain, stripParams: paramFilter(stripParams) } : plain;

interface Job {
  id: number;
  /** Structured cloning hands a Buffer over as a plain Uint8Array. */
  page: Omit<PageRecord, 'body'> & { body?: Uint8Array };
  pointer?: RecordPointer;
}

const detectorReady = loadLanguageDetector();

parentPort?.on('message', async (job: Job) => {
  try {
    const { body, ...fields } = job.page;
    // A body stored as the server compressed it is decoded here, off the event loop.
    const page = decodePageContent(body === undefined ? fields : { ...fields, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) });
    // The tables take a few hundred ms to load at start, when a crawl's first answers are its
    // hosts' robots.txt: those (and every other page without text to detect) go on at once.
    if (needsLanguageDetector(page)) await detectorReady;
    const records = packKeyedRecords(keyedRecords(page, pageToRecords(page, job.pointer, options)));
    parentPort!.postMessage({ id: job.id, records }, [records.bytes.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ id: job.id, error: (err as Error).message });
  }
});
