/**
 * `meguri robots check --robots-file F --agent UA [--json] URL…`: the command's logic, kept apart
 * from argument parsing so it can be tested without a process.
 */
import { readFileSync } from 'node:fs';
import { explain } from './explain.ts';
import { parse, productToken } from './parse.ts';

export interface RobotsCheckOptions {
  robotsFile: string;
  agent: string;
  json?: boolean;
  urls: readonly string[];
}

/**
 * Prints one verdict per URL and returns the exit code: 0 when every URL is allowed, 1 when at
 * least one is blocked, 2 on a usage or read error (reported through `err`, default `out`).
 * Text lines are `ALLOWED  <url>  <rule>` / `BLOCKED  <url>  <rule>`; `--json` prints one array of
 * `{ url, allowed, rule }` in input order.
 *
 * An agent that names no product token (empty, `Foo Bar`, `360Spider`) is checked as the crawler
 * it would be: one that only the `*` group applies to. A note saying so goes to `err` when it is a
 * separate channel, so the verdicts on `out` stay machine-readable.
 */
export function robotsCheckCommand(opts: RobotsCheckOptions, out: (line: string) => void, err?: (line: string) => void): number {
  const fail = err ?? out;
  if (opts.urls.length === 0) {
    fail('robots check: give at least one URL or path to check');
    return 2;
  }
  let body: Uint8Array;
  try {
    body = readFileSync(opts.robotsFile);
  } catch (e) {
    fail(`robots check: cannot read ${opts.robotsFile}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  if (opts.agent.trim() !== '*' && productToken(opts.agent) === '') {
    err?.(
      `robots check: note: agent ${JSON.stringify(opts.agent)} names no product token (letters, '-', '_', then '/version' or a comment); only the '*' group applies`,
    );
  }
  const entries = explain(parse(body), opts.agent, opts.urls);
  if (opts.json === true) {
    out(JSON.stringify(entries));
  } else {
    for (const e of entries) {
      out(`${e.allowed ? 'ALLOWED' : 'BLOCKED'}  ${e.url}  ${e.rule ?? '(no matching rule)'}`);
    }
  }
  return entries.every((e) => e.allowed) ? 0 : 1;
}
