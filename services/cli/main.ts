/**
 * The `meguri` command line: builds the program (program.ts) and runs it on this process's
 * arguments. An error prints one clear line and a non-zero exit code (2 for bad configuration).
 */
import { buildProgram } from './program.ts';
import { errorLine } from './error-line.ts';

// Output piped into `head` or a pager that quits early: stop quietly, as other command-line tools do.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    const e = err as Error & { code?: string };
    console.error(errorLine(err));
    if (process.env.MEGURI_DEBUG) console.error(e.stack);
    process.exitCode = e.code === 'MEGURI_ERR_CONFIG' ? 2 : 1;
  });
