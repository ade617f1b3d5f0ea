/**
 * Where a command finds a crawl's topics: Kafka (`--kafka`) or an embedded crawl's data directory
 * (`--data`, which no running crawl may hold), plus the topic prefix.
 */
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import type { Transport } from '../runtime/index.ts';

export interface LogLocation {
  kafka?: string;
  data: string;
  topicPrefix: string;
}

export function addLogLocation(cmd: Command): Command {
  return cmd
    .option('--kafka <brokers>', 'Kafka bootstrap servers')
    .option('--data <dir>', 'data directory of an embedded crawl', '.data')
    .option('--topic-prefix <prefix>', 'topic prefix', '');
}

/**
 * Opens the crawl's log. Commands that only read (`existing: true`) refuse a data directory without
 * an embedded log instead of creating an empty one there.
 */
export async function openLog(at: LogLocation, opts: { existing?: boolean } = {}): Promise<Transport> {
  // Loaded here, not at the top: `addLogLocation` builds `--help` text, which needs no log.
  const { createTransport, embeddedLogDir } = await import('../runtime/index.ts');
  const brokers = at.kafka ? at.kafka.split(',').map((b) => b.trim()).filter(Boolean) : [];
  if (brokers.length === 0 && opts.existing === true && !existsSync(embeddedLogDir(at.data))) {
    throw new Error(`no embedded crawl in ${at.data} (is --data the crawl's data directory? or pass --kafka)`);
  }
  try {
    return await createTransport({ transport: brokers.length > 0 ? 'kafka' : 'embedded', kafkaBrokers: brokers, dataDir: at.data });
  } catch (err) {
    // RocksDB allows one process per database: the embedded log of a running crawl is locked.
    if (brokers.length === 0 && /\bLOCK\b|lock file/i.test((err as Error).message)) {
      throw new Error(`the embedded log in ${at.data} is in use by a running crawl: stop it first (or crawl on Kafka to read topics while it runs)`);
    }
    throw err;
  }
}
