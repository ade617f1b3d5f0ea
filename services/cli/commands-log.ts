/**
 * The commands that read a crawl's topics: `tail`, `replay`, `analyze` and `export warc`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { ReplayFlags } from './replay.ts';
import { replayAnalyses } from './replay-analyses.ts';
import { addLogLocation } from './log-location.ts';
import type { LogLocation } from './log-location.ts';
import { JOBS } from '../analyze/jobs.ts';
import type { ScanProgress } from '../analyze/scan.ts';
import { int } from './flag-parsers.ts';
// Only what builds the commands and checks their flags is imported here; each command imports the
// modules it runs when it runs, so `meguri --help` and a command's help load no crawler.

/** `meguri tail` and `meguri replay`. */
export function addReadCommands(program: Command): void {
  addLogLocation(
    program
      .command('tail')
      .description('Print a topic\'s records as JSON lines (e.g. changes, revisits), from Kafka or an embedded crawl that is not running.')
      .argument('<topic>', 'logical topic name: changes, revisits, pages, links, frontier, servers, deadletter'),
  )
    .option('--since <time>', 'start at the first record at or after this time (ISO 8601 or epoch ms)')
    .option('--follow', 'keep printing new records until interrupted')
    .option('--with-page', 'print each record with the pages record its `page` pointer names')
    .option('--diff', 'changes only: print each record for reading, a changed page with its paragraphs added (quoted) and removed (by position)')
    .option('--limit <n>', 'stop after n records', int('--limit', 1))
    .action(async (topic: string, flags: { kafka?: string; data: string; topicPrefix: string; since?: string; follow?: boolean; withPage?: boolean; diff?: boolean; limit?: number }) => {
      const { tailCommand } = await import('./tail.ts');
      const abort = new AbortController();
      const onSignal = (): void => abort.abort();
      process.once('SIGINT', onSignal);
      try {
        await tailCommand(topic, flags, (line) => process.stdout.write(line + '\n'), abort.signal);
      } finally {
        process.off('SIGINT', onSignal);
      }
    });

  addLogLocation(
    program
      .command('replay')
      .description('Re-read a stretch of a topic into an analysis (records with positions, the current parser over stored pages, or a summary), or reset a consumer group to it.')
      .argument('<topic>', 'logical topic name: pages, changes, revisits, links, frontier, deadletter'),
  )
    .option('--since <time>', 'from the first record at or after this time (ISO 8601 or epoch ms; default: the beginning)')
    .option('--until <time>', 'up to the first record at or after this time (default: the end as of now)')
    .addOption(new Option('--into <analysis>', 'records: JSON lines with positions; parse: run the current parser over stored pages; summary: one JSON object').choices([...replayAnalyses]).default('records'))
    .option('--group <id>', 'instead of reading, set this consumer group\'s committed offsets to the start of the stretch (the group must not be running)')
    .option('--limit <n>', 'stop after n records', int('--limit', 1))
    .action(async (topic: string, flags: ReplayFlags) => {
      const { replayCommand } = await import('./replay.ts');
      const report = await replayCommand(topic, flags, (line) => process.stdout.write(line + '\n'), (line) => console.error(line));
      if (report.invalid > 0) {
        console.error(`${report.invalid} record(s) could not be used`);
        process.exitCode = 1;
      }
    });
}

/** `meguri analyze`: re-analysis jobs over a crawl's pages. */
export function addAnalyzeCommand(program: Command): void {
  addLogLocation(
    program
      .command('analyze')
      .description("Re-analyse a crawl's pages (Muraoka et al., Akamine et al.): host-rank, distributions, duplicates, site-profile HOST..., geo. Bounded memory (a scratch RocksDB); text, --json, --out DIR for CSV + SVG.")
      .addArgument(new Command().createArgument('<job>', 'the analysis to run').choices([...JOBS]))
      .argument('[hosts...]', 'site-profile: the sites to profile (default: the 5 with most pages)'),
  )
    .option('--since <time>', 'pages fetched at or after this time (ISO 8601 or epoch ms; default: the beginning)')
    .option('--until <time>', 'pages fetched before this time (default: the end as of now)')
    .option('--json', 'print one JSON object')
    .option('--out <dir>', 'write the CSV and SVG files of the job here')
    .option('--weighted', 'host-rank, duplicates: weight server links by their number of page links (default: each server pair once)')
    .option('--top <n>', 'rows of ranked lists to print', int('--top', 1))
    .option('--work-dir <dir>', 'where the scratch store goes (default: the system temporary directory)')
    .option('--country <range=CC>', 'geo: place an address or CIDR range in a country before the database is asked, e.g. 127.0.0.2=JP (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--country-table <file>', 'geo: file of RANGE=CC lines, consulted after --country, before the database')
    .option('--no-progress', 'no progress lines on stderr')
    .action(async (job: string, hosts: string[], flags: LogLocation & { since?: string; until?: string; json?: boolean; out?: string; weighted?: boolean; top?: number; workDir?: string; country: string[]; countryTable?: string; progress: boolean }) => {
      const [{ analyze, isJob }, { parseTime }, { openLog }] = await Promise.all([import('../analyze/command.ts'), import('./tail.ts'), import('./log-location.ts')]);
      if (!isJob(job)) throw new InvalidArgumentError(`unknown job ${job}`);
      const since = flags.since !== undefined ? parseTime(flags.since, '--since') : undefined;
      const until = flags.until !== undefined ? parseTime(flags.until, '--until') : undefined;
      if (since !== undefined && until !== undefined && until <= since) throw new InvalidArgumentError('--until must be later than --since');
      let last = 0;
      const progress = (p: ScanProgress): void => {
        const now = Date.now();
        if (now - last < 1000) return;
        last = now;
        console.error(p.phase === 'read' ? `analyze ${job}: read ${p.done}/${p.total} pages records (${p.total === 0 ? 100 : Math.floor((100 * p.done) / p.total)} %)` : `analyze ${job}: aggregated ${p.done} pages`);
      };
      const transport = await openLog(flags, { existing: true });
      try {
        await analyze(
          transport,
          job,
          hosts,
          {
            topicPrefix: flags.topicPrefix,
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
            ...(flags.json ? { json: true } : {}),
            ...(flags.out !== undefined ? { out: flags.out } : {}),
            ...(flags.weighted ? { weighted: true } : {}),
            ...(flags.top !== undefined ? { top: flags.top } : {}),
            ...(flags.workDir !== undefined ? { workDir: flags.workDir } : {}),
            country: flags.country,
            ...(flags.countryTable !== undefined ? { countryTable: flags.countryTable } : {}),
          },
          { out: (line) => process.stdout.write(line + '\n'), warn: (line) => console.error(line), ...(flags.progress ? { progress } : {}) },
        );
      } finally {
        await transport.close();
      }
    });
}

/** `meguri export warc`. */
export function addExportCommands(program: Command): void {
  const exportCmd = program.command('export').description("Write a crawl's pages in an archive format.");
  addLogLocation(
    exportCmd
      .command('warc')
      .description("A crawl's pages as WARC/1.1 files: request + response (or revisit for 304s and unchanged payloads) per fetch, gzip per record, files of ~1 GB."),
  )
    .requiredOption('--out <dir>', 'directory for the .warc.gz files')
    .option('--since <time>', 'pages fetched at or after this time (ISO 8601 or epoch ms)')
    .option('--until <time>', 'pages fetched before this time')
    .option('--max-file-bytes <n>', 'start a new file once one reaches this size', int('--max-file-bytes', 1), 1_000_000_000)
    .option('--prefix <name>', 'file name prefix (default meguri-<time of the export>)')
    .option('--user-agent <ua>', 'User-Agent written in the request records (the crawl\'s own; not stored in pages records)')
    .option('--no-gzip', 'plain .warc files')
    .option('--json', 'print the report as JSON')
    .action(async (flags: LogLocation & { out: string; since?: string; until?: string; maxFileBytes: number; prefix?: string; userAgent?: string; gzip: boolean; json?: boolean }) => {
      const [{ exportWarc }, { parseTime }, { openLog }] = await Promise.all([import('../warc/export.ts'), import('./tail.ts'), import('./log-location.ts')]);
      const since = flags.since !== undefined ? parseTime(flags.since, '--since') : undefined;
      const until = flags.until !== undefined ? parseTime(flags.until, '--until') : undefined;
      const transport = await openLog(flags, { existing: true });
      try {
        const report = await exportWarc(
          transport,
          {
            topicPrefix: flags.topicPrefix,
            out: flags.out,
            maxFileBytes: flags.maxFileBytes,
            gzip: flags.gzip,
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
            ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
            ...(flags.userAgent !== undefined ? { userAgent: flags.userAgent } : {}),
          },
          { warn: (line) => console.error(line) },
        );
        if (flags.json) console.log(JSON.stringify(report));
        else {
          console.log(`${report.records} pages records: ${report.responses} responses, ${report.revisits} revisits, ${report.noResponse} without a response, ${report.invalid} unusable`);
          for (const f of report.files) console.log(`wrote ${f}`);
        }
        if (report.invalid > 0) process.exitCode = 1;
      } finally {
        await transport.close();
      }
    });
}
