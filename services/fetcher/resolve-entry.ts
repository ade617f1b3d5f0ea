/**
 * `--resolve PATTERN=IP` values, apart from dns.ts so that the command line can check them while it
 * reads its flags without loading the resolver and the HTTP client behind it.
 */
import { isIP } from 'node:net';

export interface ResolveEntry {
  /** Lower-case host name, or `*.suffix` for every name under `suffix`. */
  pattern: string;
  ip: string;
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

export function validHostName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((label) => LABEL.test(label));
}

/**
 * Parses one `--resolve` value: `a.example=127.0.0.2`, `*.sim.test=127.0.0.1`, `v6.test=::1`.
 * Throws a RangeError that names the bad part.
 */
export function parseResolveEntry(spec: string): ResolveEntry {
  const eq = spec.indexOf('=');
  if (eq < 0) throw new RangeError(`--resolve ${JSON.stringify(spec)}: expected PATTERN=IP`);
  let pattern = spec.slice(0, eq).trim().toLowerCase();
  let ip = spec.slice(eq + 1).trim();
  if (pattern.endsWith('.')) pattern = pattern.slice(0, -1);
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  if (pattern.length === 0) throw new RangeError(`--resolve ${JSON.stringify(spec)}: empty host pattern`);
  if (isIP(ip) === 0) throw new RangeError(`--resolve ${JSON.stringify(spec)}: ${JSON.stringify(ip)} is not an IPv4 or IPv6 address`);
  const name = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
  if (isIP(name) !== 0) throw new RangeError(`--resolve ${JSON.stringify(spec)}: IP literals resolve to themselves and cannot be mapped`);
  if (!validHostName(name)) {
    const hint = name.includes('*') ? ' (a wildcard is only allowed as a leading "*.")' : '';
    throw new RangeError(`--resolve ${JSON.stringify(spec)}: ${JSON.stringify(pattern)} is not a valid host name${hint}`);
  }
  return { pattern, ip };
}
