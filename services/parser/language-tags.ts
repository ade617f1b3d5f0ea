/**
 * Language tags without the detector (cheap to import, e.g. for command-line parsing):
 * primary subtags of BCP 47 tags and `--languages` lists.
 */

/** Primary language subtag of a BCP 47 tag or a Content-Language list; undefined for none/invalid. */
export function primaryTag(tag: string | null | undefined): string | undefined {
  if (tag === null || tag === undefined) return undefined;
  const first = tag.split(',')[0]!.trim().toLowerCase();
  const m = /^([a-z]{2,3})(?:[-_][a-z0-9]{1,8})*$/.exec(first);
  return m === null ? undefined : m[1];
}

/** Parses `--languages ja,en` into a set of primary subtags; throws on an entry that is not one. */
export function parseLanguageList(value: string): ReadonlySet<string> {
  const out = new Set<string>();
  for (const part of value.split(',')) {
    const t = part.trim();
    if (t === '') continue;
    const p = primaryTag(t);
    if (p === undefined) throw new Error(`not a language code: ${JSON.stringify(t)} (use ISO 639-1 codes such as ja,en)`);
    out.add(p);
  }
  if (out.size === 0) throw new Error('empty language list');
  return out;
}
