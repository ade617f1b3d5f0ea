/**
 * Server aliases (the incremental archive crawler paper): host names that serve the same site as another (`example.com` and
 * `www.example.com`). With an alias map, every URL on an alias is rewritten to its canonical host,
 * so the links of both hosts meet one host's state (one queue, one politeness clock, one copy of
 * each page).
 *
 * File format (`--alias-file F`): one `alias canonical` pair of host names per line, `#` comments.
 * Chains resolve to their end (`a b` and `b c` make both point at `c`); a cycle is refused.
 */
import { registrableDomain } from './url.ts';

export class AliasFileError extends Error {}

const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

export function parseAliasFile(text: string, source = 'alias file'): Map<string, string> {
  const direct = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') return;
    const parts = line.split(/\s+/);
    const where = `${source} line ${i + 1}`;
    if (parts.length !== 2) throw new AliasFileError(`${where}: expected "alias canonical", got ${JSON.stringify(raw.trim())}`);
    const [alias, canonical] = parts.map((p) => p.toLowerCase().replace(/\.$/, '')) as [string, string];
    for (const name of [alias, canonical]) if (!HOST.test(name)) throw new AliasFileError(`${where}: ${JSON.stringify(name)} is not a host name`);
    if (alias === canonical) throw new AliasFileError(`${where}: ${alias} is an alias of itself`);
    const earlier = direct.get(alias);
    if (earlier !== undefined && earlier !== canonical) throw new AliasFileError(`${where}: ${alias} is already an alias of ${earlier}`);
    direct.set(alias, canonical);
  });
  const resolved = new Map<string, string>();
  for (const alias of direct.keys()) {
    const seen = new Set([alias]);
    let target = direct.get(alias)!;
    while (direct.has(target)) {
      if (seen.has(target)) throw new AliasFileError(`${source}: aliases form a cycle through ${alias}`);
      seen.add(target);
      target = direct.get(target)!;
    }
    resolved.set(alias, target);
  }
  return resolved;
}

/** The URL on its canonical host (the host name replaced, scheme, port, path and query kept). */
export function canonicalUrl(url: string, aliases: ReadonlyMap<string, string>): string {
  if (aliases.size === 0) return url;
  const start = url.indexOf('://') + 3;
  let end = start;
  while (end < url.length && url[end] !== '/' && url[end] !== '?' && url[end] !== '#') end++;
  const authority = url.slice(start, end);
  const colon = authority.startsWith('[') ? authority.indexOf(':', authority.indexOf(']')) : authority.lastIndexOf(':');
  const name = colon >= 0 ? authority.slice(0, colon) : authority;
  const canonical = aliases.get(name.toLowerCase());
  if (canonical === undefined) return url;
  return url.slice(0, start) + canonical + (colon >= 0 ? authority.slice(colon) : '') + url.slice(end);
}

/**
 * A learned alias: a host's root answered with a permanent redirect (301/308) to another host of
 * the same registrable domain (`example.com` → `www.example.com/home`), or to another host's root
 * (`old-name.example` → `new-name.example/`). A root that sends visitors to some page of an
 * unrelated site is a link, not an alias: its other URLs need not exist there.
 * Returns the origin (`https://www.example.com`) its URLs move to, or undefined.
 */
export function learnedAlias(requestUrl: string, status: number, location: string | undefined): string | undefined {
  if ((status !== 301 && status !== 308) || location === undefined) return undefined;
  let from: URL;
  let to: URL;
  try {
    from = new URL(requestUrl);
    to = new URL(location);
  } catch {
    return undefined;
  }
  if (from.pathname !== '/' || from.search !== '') return undefined;
  if (to.hostname === from.hostname) return undefined;
  const toRoot = to.pathname === '/' && to.search === '';
  if (!toRoot && registrableDomain(to.hostname) !== registrableDomain(from.hostname)) return undefined;
  return to.origin;
}

/** The URL moved to an alias's canonical origin. */
export function moveToOrigin(url: string, origin: string): string {
  const u = new URL(url);
  return origin + u.pathname + u.search;
}
