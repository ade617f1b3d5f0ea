/**
 * The `meguri` commands and their flags (main.ts runs them). Every command has --help; errors print
 * a clear message and a non-zero exit code. Long-running commands log JSON (pino) to stderr and keep
 * stdout for results. The commands are defined by group in commands-*.ts; docs/cli.md's usage lines
 * and flag tables are generated from them (cli-reference.ts, `npm run docs:generate`), so their help
 * texts are the reference (test/unit/reference-docs.test.ts fails when the doc is stale).
 */
import { Command } from 'commander';
// Each group of commands is defined in its own module; none of them loads a crawler until its
// command runs, so `meguri --help` and a command's help stay fast (cli-lazy-imports.test.ts).
import { addCrawlCommands } from './commands-crawl.ts';
import { addServiceCommands } from './commands-service.ts';
import { addAnalyzeCommand, addExportCommands, addReadCommands } from './commands-log.ts';
import { addConfigCommand, addParseCommand, addRobotsCommands, addSimulateCommand, addStatsCommands, addTopicsCommands } from './commands-tools.ts';

const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('meguri')
    .description('An incremental, polite web crawler built as a stream-processing system on Apache Kafka (or an embedded log).')
    .version(VERSION)
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  addCrawlCommands(program);
  addServiceCommands(program);
  addReadCommands(program);
  addAnalyzeCommand(program);
  addExportCommands(program);
  addParseCommand(program);
  addTopicsCommands(program);
  addSimulateCommand(program);
  addConfigCommand(program);
  addStatsCommands(program);
  addRobotsCommands(program);
  return program;
}
