/**
 * `meguri export warc`: a crawl's `pages` (all, or --since to --until) as WARC/1.1 files: per record
 * with a response, a request record and a response (or revisit) record, gzip per record, files
 * rolling over at ~1 GB. Fetches that got no response (status 0) are counted, not archived.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transport } from '../runtime/index.ts';
import { stretchOf } from '../common/offset-range.ts';
import { CaptureIndex } from './capture-index.ts';
import { RotatingWarcWriter, DEFAULT_MAX_FILE_BYTES } from './files.ts';
import { decodeArchivedFetch } from './page-record.ts';
import { buildFetchRecords } from './records.ts';

export interface ExportFlags {
  topicPrefix: string;
  out: string;
  since?: number;
  until?: number;
  maxFileBytes?: number;
  gzip?: boolean;
  /** File name prefix (default meguri-<time of the export>). */
  prefix?: string;
  /** User-Agent written in the rebuilt request records. */
  userAgent?: string;
}

export interface ExportReport {
  records: number;
  responses: number;
  revisits: number;
  /** pages records without an HTTP response (fetch errors). */
  noResponse: number;
  invalid: number;
  files: string[];
}

export async function exportWarc(
  transport: Transport,
  flags: ExportFlags,
  io: { warn?: (line: string) => void; progress?: (done: number, total: number) => void } = {},
): Promise<ExportReport> {
  const topic = `${flags.topicPrefix}pages`;
  const stretches = await stretchOf(transport, topic, flags.since, flags.until);
  const total = stretches.reduce((a, s) => a + s.to - s.from, 0);
  const gzip = flags.gzip ?? true;
  const scratch = mkdtempSync(join(tmpdir(), 'meguri-warc-'));
  const index = await CaptureIndex.open(join(scratch, 'captures'));
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const writer = new RotatingWarcWriter(
    flags.out,
    flags.prefix ?? `meguri-${stamp}`,
    { software: 'meguri', format: 'WARC File Format 1.1', description: `pages of topic ${topic}`, 'payload-note': 'payloads are bodies after transfer and content decoding; original encodings in X-Archive-Orig-* headers' },
    { maxFileBytes: flags.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES, gzip },
  );
  const report: ExportReport = { records: 0, responses: 0, revisits: 0, noResponse: 0, invalid: 0, files: [] };
  try {
    for (const s of stretches) {
      if (s.from >= s.to) continue;
      for await (const batch of transport.readPartition(topic, s.partition, s.from, s.to)) {
        for (const r of batch) {
          report.records++;
          const decoded = decodeArchivedFetch(r.value, flags.userAgent);
          if (!decoded.ok) {
            report.invalid++;
            io.warn?.(`${topic}/${r.partition}@${r.offset}: ${decoded.error}`);
            continue;
          }
          if (!decoded.hasResponse) {
            report.noResponse++;
            continue;
          }
          const f = decoded.fetch;
          const built = await buildFetchRecords(f, await index.get(f.url), { gzip });
          await writer.write(built.chunks);
          if (built.capture) await index.put(f.url, built.capture);
          if (built.kind === 'revisit') report.revisits++;
          else report.responses++;
        }
        io.progress?.(report.records, total);
      }
    }
  } finally {
    report.files = writer.close();
    await index.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  return report;
}
