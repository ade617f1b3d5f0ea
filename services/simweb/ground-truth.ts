/**
 * The simulated web's ground truth for a crawl: the exact set of URLs a correct crawler fetches from
 * given seeds, and the link graph it sees (for the ordering simulator), computed from the model's
 * public answers (resolve, robots, behaviours).
 */
import type { SimWebModel } from './model.ts';
import { isPermanentFailure } from './model-types.ts';
import type { ExpectedFetchOptions, FetchOutcome, FetchPlan } from './model-types.ts';

/** Outcome of fetching a resource and the links a correct crawler follows from it. */
function fetchResult(
  model: SimWebModel,
  host: number,
  path: string,
  t: number,
  followNofollow: boolean,
): { outcome: FetchOutcome; links: { host: number; path: string }[]; redirect?: { host: number; path: string } } {
  const b = model.behavior(host);
  if (isPermanentFailure(b.fail)) {
    return { outcome: b.fail?.mode === 'hang' ? 'timeout' : 'error', links: [] };
  }
  const r = model.resolve(host, path, t);
  switch (r.type) {
    case 'page':
    case 'calendar':
      return { outcome: 'html', links: r.links.filter((l) => followNofollow || !l.nofollow) };
    case 'redirect':
      return { outcome: 'redirect', links: [], redirect: r.to };
    case 'binary':
      if (r.kind === 'png' || r.kind === 'pdf') return { outcome: 'not-html', links: [] };
      if (r.kind === 'trickle') return { outcome: 'timeout', links: [] };
      return { outcome: r.kind === 'binary' ? 'not-html' : 'html', links: [] };
    case 'gone':
    case 'notfound':
      return { outcome: 'error', links: [] };
  }
}

/**
 * The exact set of URLs a correct crawler fetches: BFS by depth from the seeds, skipping
 * robots-disallowed URLs, not following rel=nofollow links, and following nothing out of
 * disallowed, non-HTML, error or redirecting responses (a redirect's target is followed with
 * `redirectCost`). Hosts that fail permanently count as fetched with outcome error/timeout;
 * transient failures (flaky, Retry-After, rate limits) are assumed to be retried successfully.
 */
export function expectedFetchSet(model: SimWebModel, o: ExpectedFetchOptions, now: number): FetchPlan {
  const at = o.at ?? now;
  const ua = o.userAgent ?? model.userAgent;
  const redirectCost = o.redirectCost ?? 0;
  const maxUrls = o.maxUrls ?? 5_000_000;
  const plan: FetchPlan = { urls: new Set(), depth: new Map(), outcome: new Map(), disallowed: new Set() };
  const seedHosts = new Set<number>();
  const best = new Map<string, number>();
  let level: { url: string; host: number; path: string }[] = [];
  let next: { url: string; host: number; path: string }[] = [];

  const offer = (host: number, path: string, d: number, sameLevel: boolean): void => {
    if (d > o.maxDepth) return;
    if (o.sameHostOnly === true && !seedHosts.has(host)) return;
    const url = model.canonical(host, path);
    const prev = best.get(url);
    if (prev !== undefined && prev <= d) return;
    const allowed = o.isAllowed !== undefined ? o.isAllowed(url) : model.isAllowed(host, path, ua);
    best.set(url, d);
    if (!allowed) {
      plan.disallowed.add(url);
      return;
    }
    if (best.size > maxUrls) throw new RangeError(`expectedFetchSet exceeded ${maxUrls} URLs`);
    (sameLevel ? level : next).push({ url, host, path });
  };

  for (const s of o.seeds) {
    const p = model.parseUrl(s);
    if (p === undefined) {
      plan.urls.add(s);
      plan.depth.set(s, 0);
      plan.outcome.set(s, 'error');
      continue;
    }
    seedHosts.add(p.host);
  }
  for (const s of o.seeds) {
    const p = model.parseUrl(s);
    if (p !== undefined) offer(p.host, p.path, 0, true);
  }
  for (let d = 0; d <= o.maxDepth && level.length > 0; d++) {
    for (let i = 0; i < level.length; i++) {
      const item = level[i];
      if (item === undefined || best.get(item.url) !== d || plan.outcome.has(item.url)) continue;
      const res = fetchResult(model, item.host, item.path, at, o.followNofollow === true);
      plan.urls.add(item.url);
      plan.depth.set(item.url, d);
      plan.outcome.set(item.url, res.outcome);
      for (const l of res.links) offer(l.host, l.path, d + 1, false);
      if (res.redirect !== undefined) offer(res.redirect.host, res.redirect.path, d + redirectCost, redirectCost === 0);
    }
    level = next;
    next = [];
  }
  return plan;
}

/**
 * The link graph a correct crawler sees from `o.seeds`: nodes are the pages of `expectedFetchSet(o)`
 * (in its order, seeds first), edges the links it follows between them (a redirect links to its
 * target), each distinct target once per page in page order. For measuring crawl order against the
 * true PageRank of what the crawl can reach.
 */
export function linkGraph(model: SimWebModel, o: ExpectedFetchOptions, now: number): { urls: string[]; src: Uint32Array; dst: Uint32Array } {
  const at = o.at ?? now;
  const urls = [...expectedFetchSet(model, o, now).urls];
  const index = new Map(urls.map((u, i) => [u, i]));
  const src: number[] = [];
  const dst: number[] = [];
  urls.forEach((url, i) => {
    const p = model.parseUrl(url);
    if (p === undefined) return;
    const res = fetchResult(model, p.host, p.path, at, o.followNofollow === true);
    const targets = res.redirect === undefined ? res.links : [...res.links, res.redirect];
    const seen = new Set<number>();
    for (const l of targets) {
      const t = index.get(model.canonical(l.host, l.path));
      if (t === undefined || seen.has(t)) continue;
      seen.add(t);
      src.push(i);
      dst.push(t);
    }
  });
  return { urls, src: Uint32Array.from(src), dst: Uint32Array.from(dst) };
}
