/**
 * Crash-test fixture: appends keyed records to the embedded log as fast as it can, with several
 * sends in flight, and prints every acknowledged high watermark per partition on stdout until it is
 * killed. Every fifth record is large enough to be kept in a segment file (segments.ts), so a kill
 * lands between segment writes and the batches that point at them as well.
 * Usage: node --import tsx append-forever.ts <dir>
 */
import { pino } from 'pino';
import { EmbeddedTransport } from '../../../services/runtime/embedded/index.ts';
import { appendedValueLength } from './append-forever-values.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: append-forever.ts <dir>');

const transport = await EmbeddedTransport.open({ dir, logger: pino({ level: 'silent' }), maintenanceIntervalMs: 0 });
await transport.ensureTopics([{ name: 'crash', partitions: 3 }]);

let seq = 0;
const acked = [0, 0, 0];
async function writer(): Promise<void> {
  while (true) {
    const records = Array.from({ length: 50 }, () => {
      const n = seq++;
      return { topic: 'crash', key: `k${n % 97}`, value: Buffer.alloc(appendedValueLength(n), n % 251), headers: { n: String(n) } };
    });
    const meta = await transport.send(records);
    for (const m of meta) acked[m.partition] = Math.max(acked[m.partition] ?? 0, m.offset + 1);
    process.stdout.write(`acked ${JSON.stringify(acked)}\n`);
  }
}
await Promise.all([writer(), writer(), writer(), writer()]);
