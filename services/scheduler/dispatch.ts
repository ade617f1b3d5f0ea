/**
 * Dispatch: due hosts are taken off the ready heap and asked for their next request — the host's
 * address (learnAddressFirst), robots.txt when it is missing or due, or the best queued URL under
 * the host's page cap, politeness gate, per-IP cap, robots rules, trap verdicts and the page budget.
 * One request per host is in flight, or up to politeness.maxPerHost while the host asks for no wait
 * between requests (mayOverlap); robots.txt and address requests always go alone. Each request's
 * deadline is kept for the lost-request sweep.
 */
import { randomUUID } from 'node:crypto';
import type { ProcessorContext } from '../runtime/index.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { FrontierRecord } from '../../schemas/index.ts';
import { forAgent, fromJSON } from './robots/index.ts';
import type { AgentMatcher } from './robots/index.ts';
import { addInFlight, inFlightCount, queueKeyIsKnown } from './state.ts';
import type { HostState, InFlight, UrlState } from './state.ts';
import type { QueueEntry } from './queue-cache.ts';
import { beforeRequest, emptyPoliteness, mayOverlap } from './politeness/index.ts';
import { agentFor, countIp, fileRevisit, maxPerHostFor, ruleFor, schedule, setDeadline, siteUnderCap } from './partition.ts';
import type { Partition } from './partition.ts';

export type RequestKind = 'page' | 'robots' | 'address';

export function robotsUrlFor(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}/robots.txt`;
}

/** Emits requests for due hosts. Returns the number emitted. */
export async function dispatch(p: Partition, ctx: ProcessorContext): Promise<number> {
  const now = ctx.now();
  let emitted = 0;
  while (emitted < p.options.maxDispatchPerRound) {
    const top = p.heap.peekTime();
    if (top === undefined || top > now) break;
    const { time, host } = p.heap.pop()!;
    if (p.scheduled.get(host) !== time) continue;
    p.scheduled.delete(host);
    if (await dispatchHost(p, host, ctx)) emitted++;
    // A freed IP slot handed to this host and left unused goes to the next host waiting for it.
    p.ipSlots.settled(host, p.politeness.maxPerIp);
  }
  return emitted;
}

/** The host's robots.txt rules for the agent it is asked with (cached per host; dropped when robots.txt or the agent changes). */
function matcherFor(p: Partition, host: string, state: HostState): AgentMatcher | undefined {
  if (!state.robots) return undefined;
  const agent = agentFor(p, host);
  const cached = p.matchers.get(host);
  if (cached && cached.agent === agent) return cached.matcher;
  const matcher = forAgent(fromJSON(state.robots), agent);
  if (p.matchers.size > 50_000) p.matchers.clear();
  p.matchers.set(host, { agent, matcher });
  return matcher;
}

/**
 * The host is blocked by an operator's rule: nothing is asked of it. Its queued new URLs are
 * forgotten (found again if the block is lifted); known pages due for a revisit go back to the
 * long-term queue for `revisitDeferMs`.
 */
async function dropBlocked(p: Partition, host: string, state: HostState, now: number): Promise<void> {
  for (const { key, url } of await p.queues.all(host)) {
    p.queues.remove(host, key);
    const u = await p.urls.get(url);
    if (!u || u.status !== 'queued') continue;
    if (u.queuedAsRevisit || u.lastFetchAt !== undefined) {
      const { queueKey: _q, queuedAsRevisit: _v, ...rest } = u;
      const n = now + p.options.revisitDeferMs;
      p.urls.put(url, { ...rest, status: 'done', nextRevisitAt: n });
      fileRevisit(p, n, url);
    } else {
      p.urls.delete(url);
      p.stats.urlsKnown--;
    }
    p.stats.hostRuleSkipped++;
  }
  p.queues.clearCount(state);
}

async function dispatchHost(p: Partition, host: string, ctx: ProcessorContext): Promise<boolean> {
  const now = ctx.now();
  const state = (await p.hosts.get(host)) as HostState | undefined;
  if (!state || state.queued === 0) return false;
  // Requests already out: another only alongside pages, and only when the host allows overlap
  // (its outcome schedules the host again otherwise).
  const flying = inFlightCount(state);
  if (flying > 0) {
    const ctxPol = state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {};
    const plain = state.inflight!.kind === 'page' && state.overload === undefined && ruleFor(p, host)?.minIntervalS === undefined;
    if (!plain || !mayOverlap(flying, maxPerHostFor(p, host), state.politeness ?? emptyPoliteness(), p.politeness, ctxPol)) return false;
  }
  if (state.nextAt > now) {
    schedule(p, host, state.nextAt);
    return false;
  }
  // An operator's rule for the host (--host-rules), read now so a reloaded file applies at once.
  const rule = ruleFor(p, host);
  if (rule?.block === true) {
    await dropBlocked(p, host, state, now);
    p.hosts.put(host, state);
    return false;
  }
  if (rule?.minIntervalS !== undefined && state.politeness?.w !== undefined && state.politeness.w + rule.minIntervalS * 1000 > now) {
    schedule(p, host, state.politeness.w + rule.minIntervalS * 1000);
    return false;
  }
  // Per-site page cap (Muraoka et al.): at the cap the site's new URLs are given up; revisits go on.
  if (!(await siteUnderCap(p, host)) && (await p.queues.headNew(host))) {
    await dropNewAtCap(p, host, state);
    p.hosts.put(host, state);
    if (state.queued === 0) return false;
  }
  // Parked after repeated failures, suspended after a long continuous run, or a Retry-After.
  const gate = beforeRequest(state.politeness ?? emptyPoliteness(), now, p.politeness);
  if (!gate.ok) {
    schedule(p, host, gate.retryAt);
    return false;
  }
  // The host's address before anything is asked of its server, so the cap below sees every request.
  if (p.options.learnAddressFirst === true && state.ip === undefined && state.addressAskedAt === undefined) {
    if (flying > 0) return false;
    const first = await p.queues.head(host);
    if (!first) return false;
    emitRequest(p, host, state, robotsUrlFor(first.url), 'address', { depth: 0, cgiHops: 0, score: 0 }, 1, ctx);
    return true;
  }
  // Per-IP cap (Muraoka et al.): the host waits until a request to its server's address ends.
  if (!p.ipSlots.mayStart(state.ip, p.politeness.maxPerIp)) return waitForIp(p, host, state, now, ctx);
  // robots.txt first, and again whenever it is due.
  if (state.robots === undefined || (state.robotsDueAt !== undefined && state.robotsDueAt <= now)) {
    // Waits for the pages in flight: their outcomes schedule the host again.
    if (flying > 0) return false;
    const first = await p.queues.head(host);
    if (!first) return false;
    if (!p.ipSlots.mayStart(state.ip, p.politeness.maxPerIp)) return waitForIp(p, host, state, now, ctx);
    emitRequest(p, host, state, robotsUrlFor(first.url), 'robots', { depth: 0, cgiHops: 0, score: 0 }, 1, ctx);
    return true;
  }
  const matcher = matcherFor(p, host, state);
  if (state.robotsParked) {
    schedule(p, host, state.robotsDueAt ?? now + p.options.robotsRecheckMs);
    return false;
  }
  for (;;) {
    const head = await nextFromQueue(p, host, state);
    if (!head) {
      p.hosts.put(host, state);
      return false;
    }
    const urlState = await p.urls.get(head.url);
    p.queues.dequeue(host, state, head.key);
    if (!urlState || urlState.status !== 'queued') continue;
    if (matcher && !matcher.isAllowed(head.url).allowed) {
      p.urls.put(head.url, { status: 'disallowed', depth: urlState.depth, cgiHops: urlState.cgiHops, score: urlState.score });
      p.stats.robotsDisallowedSkipped++;
      continue;
    }
    // A new URL whose template proved a trap after it was queued: its representative was fetched.
    if (!head.known && rule?.judgeTraps !== false && (await p.templates.isTrap(host, head.url))) {
      p.urls.put(head.url, { status: 'trap', depth: urlState.depth, cgiHops: urlState.cgiHops, score: urlState.score });
      p.stats.templateSkipped++;
      state.templateSkipped = (state.templateSkipped ?? 0) + 1;
      p.hosts.put(host, state);
      continue;
    }
    if (!head.known && rule?.maxPages !== undefined && (state.distinctPages ?? 0) >= rule.maxPages) {
      // Forgotten rather than marked: raising the host's maxPages lets it be found again.
      p.urls.delete(head.url);
      p.stats.urlsKnown--;
      p.stats.hostRuleSkipped++;
      continue;
    }
    // The reads above let other partitions of the process dispatch: the address may have reached
    // its cap since the check at the top, and nothing may await between here and emitRequest
    // (checked before the budget, which a failed check would otherwise spend).
    if (!p.ipSlots.mayStart(state.ip, p.politeness.maxPerIp)) {
      requeue(p, host, state, head);
      return waitForIp(p, host, state, now, ctx);
    }
    const overPartitionBudget = p.options.maxPagesPerPartition !== undefined && p.stats.pagesFetched + p.deadlines.size >= p.options.maxPagesPerPartition;
    if (overPartitionBudget || (p.budget && !p.budget.tryTake())) {
      // Out of budget: keep the URL queued so a later, larger budget can pick it up.
      requeue(p, host, state, head);
      return false;
    }
    const { queueKey: _q, ...rest } = urlState;
    p.urls.put(head.url, { ...rest, status: 'inflight' });
    if (head.both) state.knownCredit = (state.knownCredit ?? 0) + p.options.revisitKnownShare - (head.known ? 1 : 0);
    emitRequest(p, host, state, head.url, 'page', urlState, 1, ctx);
    // Room for another one alongside it: the host is looked at again in this round.
    if (flying + 1 < maxPerHostFor(p, host) && state.queued > 0) schedule(p, host, now);
    return true;
  }
}

/** Puts a URL taken off the host's queue back where it was. */
function requeue(p: Partition, host: string, state: HostState, head: QueueEntry): void {
  p.queues.enqueue(host, state, head.key, head.url, head.rank);
  p.hosts.put(host, state);
}

/**
 * The host's address is at its cap: the host waits for a slot, which a request to the address hands
 * to the longest waiter when it ends (ip-slots.ts). Looking again after ipBusyRetryMs is only a
 * safeguard, spread out by the queue's length so that an address with thousands of hosts (a shared
 * host, a CDN) costs about maxPerIp looks per interval, not one per host.
 */
function waitForIp(p: Partition, host: string, state: HostState, now: number, ctx: ProcessorContext): false {
  const ip = state.ip!;
  p.ipSlots.waitFor(ip, host, () => schedule(p, host, ctx.now()), p);
  const turns = Math.max(1, Math.ceil(p.ipSlots.waiters(ip) / p.politeness.maxPerIp));
  schedule(p, host, now + Math.max(1, p.politeness.ipBusyRetryMs) * turns);
  return false;
}

/**
 * The host's next URL: new URLs (discovery, by score) and known URLs due for a revisit (by γ)
 * share the host's requests — `revisitKnownShare` of them go to known URLs while both wait
 * (the incremental archive crawler paper splits the short-term queue equally). A credit balance in the host state keeps the
 * split exact over time; when only one kind waits it gets every request.
 */
async function nextFromQueue(p: Partition, host: string, state: HostState): Promise<(QueueEntry & { known: boolean; both: boolean }) | undefined> {
  const [fresh, known] = await Promise.all([p.queues.headNew(host), p.queues.headKnown(host)]);
  if (!fresh && !known) return undefined;
  if (!known) return { ...fresh!, known: false, both: false };
  if (!fresh) return { ...known, known: true, both: false };
  const takeKnown = (state.knownCredit ?? 0) + p.options.revisitKnownShare >= 1 - 1e-9;
  return takeKnown ? { ...known, known: true, both: true } : { ...fresh, known: false, both: true };
}

/** The site is at its page cap: its queued new URLs are given up (marked `capped`); due revisits stay. */
async function dropNewAtCap(p: Partition, host: string, state: HostState): Promise<void> {
  for (const { key, url } of await p.queues.all(host)) {
    if (queueKeyIsKnown(host, key)) continue;
    p.queues.dequeue(host, state, key);
    const u = await p.urls.get(url);
    if (u && u.status === 'queued' && !u.queuedAsRevisit) {
      const { queueKey: _q, ...rest } = u;
      p.urls.put(url, { ...rest, status: 'capped' });
      p.stats.siteCapSkipped++;
    }
  }
}

export function emitRequest(
  p: Partition,
  host: string,
  state: HostState,
  url: string,
  kind: RequestKind,
  u: Pick<UrlState, 'depth' | 'cgiHops' | 'score' | 'etag' | 'lastModified' | 'queuedAsRevisit' | 'redirectChain' | 'startSite' | 'source'>,
  attempt: number,
  ctx: ProcessorContext,
): void {
  const now = ctx.now();
  const request: FrontierRecord = {
    v: SCHEMA_VERSION,
    requestId: randomUUID(),
    url,
    host,
    reason: kind === 'robots' || kind === 'address' ? kind : u.source === 'sitemap' || u.source === 'feed' ? u.source : u.queuedAsRevisit ? 'revisit' : u.redirectChain ? 'redirect' : 'new',
    score: u.score,
    depth: u.depth,
    cgiHops: u.cgiHops,
    attempt,
    issuedAt: now,
  };
  // Optional fields set one by one: a spread of an empty object per absent field cost an object
  // and a copy each, once per request.
  if (u.etag || u.lastModified) {
    const validators: NonNullable<FrontierRecord['validators']> = {};
    if (u.etag) validators.etag = u.etag;
    if (u.lastModified) validators.lastModified = u.lastModified;
    request.validators = validators;
  }
  if (state.ip) request.ip = state.ip;
  if (kind === 'page' && !u.queuedAsRevisit && u.redirectChain) request.redirects = u.redirectChain;
  if (kind === 'page' && u.startSite !== undefined) request.startSite = u.startSite;
  if (kind === 'page' && u.source === 'daily') request.daily = true;
  const rule = ruleFor(p, host);
  if (rule?.userAgent !== undefined) request.userAgent = rule.userAgent;
  const inflight: InFlight = { requestId: request.requestId, url, kind, issuedAt: now, attempt };
  if (kind !== 'address' && state.ip) inflight.ip = state.ip;
  addInFlight(state, inflight);
  countIp(p, inflight);
  p.hosts.put(host, state);
  setDeadline(p, request.requestId, host, now + p.options.requestTimeoutMs);
  // Keyed by the server's IP once known (Muraoka et al.'s per-IP limit): all hosts on one IP go to the
  // same frontier partition, so a single fetcher enforces the per-IP cap for them.
  ctx.emit('frontier', state.ip ?? host, request);
}
