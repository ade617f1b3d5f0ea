/**
 * The CLI's flag parsers and shared help texts: each checks one flag's value and says what is wrong
 * with it (commander prints the message and exits non-zero).
 */
import { InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { parseLanguageList } from '../parser/language-tags.ts';
import { parseCidr } from '../fetcher/address-policy.ts';
import { parseResolveEntry } from '../fetcher/resolve-entry.ts';

export function int(name: string, min = 0): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

export function share(name: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`${name} must be a share between 0 and 1`);
    return n;
  };
}

export function seconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number of seconds ≥ 0');
  return n;
}

/** A duration: seconds, or a number with a unit (`90s`, `30m`, `6h`, `1d`); in ms. */
export function duration(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(v);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m?.[2] ?? 's').toLowerCase() as 'ms' | 's' | 'm' | 'h' | 'd'];
  const ms = m ? Math.round(Number(m[1]) * unit) : NaN;
  if (!(ms >= 1)) throw new InvalidArgumentError('must be a duration > 0: seconds, or a number with ms, s, m, h or d (e.g. 24h)');
  return ms;
}

export function positiveNumber(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

export function languageList(v: string): string[] {
  try {
    return [...parseLanguageList(v)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

export function positiveSeconds(v: string): number {
  const n = seconds(v);
  if (n <= 0) throw new InvalidArgumentError('must be a number of seconds > 0');
  return n;
}

export function collect(v: string, prev: string[]): string[] {
  parseResolveEntry(v); // fail fast on a malformed entry
  return [...prev, v];
}

/** Repeatable regular-expression flag (--include/--exclude), refused at once when it does not compile. */
export function collectRegex(flag: string): (v: string, prev: string[]) => string[] {
  return (v, prev) => {
    try {
      new RegExp(v);
    } catch (err) {
      throw new InvalidArgumentError(`${flag} ${JSON.stringify(v)}: ${(err as Error).message}`);
    }
    return [...prev, v];
  };
}

export function queryMode(v: string): 'off' | 'form' | 'all' {
  if (v !== 'off' && v !== 'form' && v !== 'all') throw new InvalidArgumentError(`--query-restriction must be off, form or all, got ${v} (alone it means form: put it after the seed URLs or before another flag)`);
  return v;
}

export function rate(v: string): number {
  const n = Number(v);
  if (!(n > 0 && n <= 1)) throw new InvalidArgumentError(`--sample-rate must be a number in (0, 1], got ${v}`);
  return n;
}

export const ALIAS_HELP = 'server aliases: one "alias canonical" pair of host names per line (# comments); URLs on an alias are crawled on the canonical host (seeds, links, scheduler state)';

/** Reads --alias-file (or MEGURI_ALIAS_FILE) into alias → canonical; a bad file stops the command with the line named. */
export function readAliases(file: string | undefined, { parseAliasFile }: typeof import('../common/aliases.ts')): Record<string, string> {
  if (file === undefined || file === '') return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`cannot read alias file ${file}: ${(err as Error).message}`);
  }
  return Object.fromEntries(parseAliasFile(text, `alias file ${file}`));
}

export const HOST_RULES_HELP = 'JSON rules per host or *.domain ({"example.org": {"block": true}, "*.shop.example": {"maxPages": 1000}}: block, minIntervalS, maxPages, maxPerHost, maxDepth, judgeTraps, userAgent), read again when the file changes or on SIGHUP; a bad file is refused at start with the key named';
export const SCOPE_HELP = "which links are followed: host: the seeds' host names; domain: the seeds' registrable domains and their subdomains; web: every link within --max-depth";
export const INCLUDE_HELP = 'queue only discovered URLs matching this JavaScript regular expression (on the normalised URL; repeatable: any may match)';
export const EXCLUDE_HELP = 'never queue discovered URLs matching this regular expression (repeatable; exclude wins over include; seeds are always taken)';

export function collectCidr(v: string, prev: string[]): string[] {
  try {
    parseCidr(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return [...prev, v.trim()];
}

export const ALLOW_ADDRESS_HELP = 'let the fetcher dial this address or CIDR range although the address policy refuses it (loopback, private, link-local, ...; under --dns static anything not reached through --resolve); repeatable';


export function paramNames(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
