/**
 * Links travel in bundles: one `links` record per (source page, target host) instead of one record
 * per link. Every record costs the same to append, read, decode, validate and route whatever its
 * size, and a page's ~40 links mostly point to its own host, so a page makes a handful of records.
 * The parser (and the scheduler, passing score on) packs; the scheduler unpacks into the very
 * `link` records it would have received one by one, so everything after unpacking is unchanged.
 */
import { SCHEMA_VERSION, BUNDLE_CHARS, MAX_BUNDLE_TARGETS } from '../../schemas/index.ts';
import type { BundleTarget, DiscoveredLink, LinkBundle, LinksRecord, UnbundledLinksRecord } from '../../schemas/index.ts';
import { hostKey } from './url.ts';

export interface KeyedLinks {
  /** The target host (the record key). */
  readonly key: string;
  readonly value: DiscoveredLink | LinkBundle;
}

/**
 * Whether two links agree on every field a bundle shares (links agreeing on all of them, and on the
 * target host, are packed together). Compared field by field: a string key per link, hashed in a
 * map, cost more than the rest of the packing.
 */
function sameShared(a: DiscoveredLink, b: DiscoveredLink): boolean {
  return (
    a.source === b.source &&
    a.depth === b.depth &&
    a.cgiHops === b.cgiHops &&
    !a.sameSite === !b.sameSite &&
    a.foundAt === b.foundAt &&
    !a.propagated === !b.propagated &&
    (a.startSite ?? '') === (b.startSite ?? '') &&
    (a.via ?? '') === (b.via ?? '')
  );
}

/** The fields that differ from link to link, copied between a link and its bundle target. */
type TargetFields = Pick<BundleTarget, 'anchor' | 'kind' | 'lastmod' | 'priority' | 'changefreq'>;

/** `to` with the per-target fields `from` has set (absent ones stay absent, not undefined). */
function withTargetFields<T extends TargetFields>(to: T, from: TargetFields): T {
  if (from.anchor !== undefined) to.anchor = from.anchor;
  if (from.kind !== undefined) to.kind = from.kind;
  if (from.lastmod !== undefined) to.lastmod = from.lastmod;
  if (from.priority !== undefined) to.priority = from.priority;
  if (from.changefreq !== undefined) to.changefreq = from.changefreq;
  return to;
}

function targetOf(l: DiscoveredLink, bundleContribution: number): BundleTarget {
  const t = withTargetFields<BundleTarget>({ url: l.url }, l);
  if (l.contribution !== bundleContribution) t.contribution = l.contribution;
  return t;
}

function bundleOf(first: DiscoveredLink, targets: BundleTarget[]): LinkBundle {
  const b: LinkBundle = {
    v: SCHEMA_VERSION,
    type: 'links',
    source: first.source,
    depth: first.depth,
    cgiHops: first.cgiHops,
    contribution: first.contribution,
    sameSite: first.sameSite,
    foundAt: first.foundAt,
    targets,
  };
  if (first.propagated) b.propagated = true;
  if (first.startSite !== undefined) b.startSite = first.startSite;
  if (first.via !== undefined) b.via = first.via;
  return b;
}

/**
 * Packs links into keyed records: bundles per target host and shared fields, in the order each
 * host first appears; a host with a single link, and every redirect target, stays a `link` record.
 * `hosts[i]`, when given, is hostKey of links[i]'s URL (the parser has it from the sameSite test).
 */
export function packLinks(links: readonly DiscoveredLink[], hosts?: readonly string[]): KeyedLinks[] {
  // Groups in the order they were begun; a host's groups (nearly always one) found by its key.
  const groups: { key: string; links: DiscoveredLink[] }[] = [];
  const byHost = new Map<string, { key: string; links: DiscoveredLink[] }[]>();
  const out: KeyedLinks[] = [];
  for (let i = 0; i < links.length; i++) {
    const l = links[i]!;
    const key = hosts?.[i] || hostKey(l.url);
    if (l.redirect !== undefined) {
      out.push({ key, value: l });
      continue;
    }
    let hostGroups = byHost.get(key);
    if (!hostGroups) byHost.set(key, (hostGroups = []));
    let group = hostGroups.find((g) => sameShared(g.links[0]!, l));
    if (!group) {
      group = { key, links: [] };
      hostGroups.push(group);
      groups.push(group);
    }
    group.links.push(l);
  }
  for (const { key, links: group } of groups) {
    if (group.length === 1) {
      out.push({ key, value: group[0]! });
      continue;
    }
    let first = group[0]!;
    let targets: BundleTarget[] = [];
    let chars = 0;
    for (const l of group) {
      const size = l.url.length + (l.anchor?.length ?? 0);
      if (targets.length > 0 && (targets.length >= MAX_BUNDLE_TARGETS || chars + size > BUNDLE_CHARS)) {
        out.push({ key, value: bundleOf(first, targets) });
        first = l;
        targets = [];
        chars = 0;
      }
      targets.push(targetOf(l, first.contribution));
      chars += size;
    }
    out.push({ key, value: bundleOf(first, targets) });
  }
  return out;
}

/** The `link` records a bundle stands for, in its order. */
export function unpackLinks(bundle: LinkBundle): DiscoveredLink[] {
  // Built field by field: a spread of a rest object per target made slow (dictionary) objects of
  // over a kilobyte each, and the scheduler unpacks every link the crawl finds.
  const links: DiscoveredLink[] = [];
  for (const t of bundle.targets) {
    const link: DiscoveredLink = {
      v: bundle.v,
      type: 'link',
      url: t.url,
      source: bundle.source,
      depth: bundle.depth,
      cgiHops: bundle.cgiHops,
      contribution: t.contribution ?? bundle.contribution,
      sameSite: bundle.sameSite,
      foundAt: bundle.foundAt,
    };
    if (bundle.propagated !== undefined) link.propagated = bundle.propagated;
    if (bundle.startSite !== undefined) link.startSite = bundle.startSite;
    if (bundle.via !== undefined) link.via = bundle.via;
    links.push(withTargetFields(link, t));
  }
  return links;
}

/** A `links` record as the records it stands for: a bundle's links, or the record itself. */
export function linksOf(record: LinksRecord): UnbundledLinksRecord[] {
  return record.type === 'links' ? unpackLinks(record) : [record];
}
