/**
 * `meguri robots check --robots-file F --agent UA [--json] URL…`: the command's logic, kept apart
 * from argument parsing so it can be tested without a process.
 */
import { readFileSync } from 'node:fs';
import { explain } from './explain.ts';
import { parse } from './parse.ts';

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
 */
export function robotsCheckCommand(
  opts: RobotsCheckOptions,
  out: (line: string) => void,
  err: (line: string) => void = out,
): number {
  if (opts.urls.length === 0) {
    err('robots check: give at least one URL or path to check');
    return 2;
  }
  if (opts.agent.trim() === '') {
    err('robots check: --agent must not be empty');
    return 2;
  }
  let body: Uint8Array;
  try {
    body = readFileSync(opts.robotsFile);
  } catch (e) {
    err(`robots check: cannot read ${opts.robotsFile}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
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
