/**
 * Lost requests: a request whose outcome never came back (its fetcher died with it) is re-issued
 * after `requestTimeoutMs`, at most `maxAttempts` times, then given up — the page marked `lost`, a
 * lost robots.txt treated as unreachable (the host parked, retried later).
 */
import type { ProcessorContext } from '../runtime/index.ts';
import { rulesForFetchResult, toJSON } from './robots/index.ts';
import { takeInFlight } from './state.ts';
import type { HostState } from './state.ts';
import { emitRequest } from './dispatch.ts';
import { releaseIp, schedule } from './partition.ts';
import type { Partition } from './partition.ts';

function intervalFor(p: Partition, state: HostState): number {
  return Math.max(p.options.minIntervalMs, state.crawlDelayMs ?? 0);
}

/** Re-issues requests whose outcome never came. Returns the number of hosts changed. */
export async function sweepLost(p: Partition, ctx: ProcessorContext): Promise<number> {
  const now = ctx.now();
  let changed = 0;
  await p.deadlines.sweep(now, async (requestId, host) => {
    const state = (await p.hosts.get(host)) as HostState | undefined;
    const lost = state ? takeInFlight(state, requestId) : undefined;
    if (!state || !lost) return;
    releaseIp(p, requestId);
    changed++;
    if (lost.attempt < p.options.maxAttempts) {
      ctx.logger.warn({ host, url: lost.url, attempt: lost.attempt }, 'request lost; re-issuing');
      const u = lost.kind === 'page' ? await p.urls.get(lost.url) : undefined;
      emitRequest(p, host, state, lost.url, lost.kind, u ?? { depth: 0, cgiHops: 0, score: 0 }, lost.attempt + 1, ctx);
      return;
    }
    ctx.logger.warn({ host, url: lost.url }, 'request lost too often; giving up the URL');
    p.stats.lost++;
    state.nextAt = now + intervalFor(p, state);
    if (lost.kind === 'page') {
      const u = await p.urls.get(lost.url);
      if (u) p.urls.put(lost.url, { ...u, status: 'lost' });
    } else if (lost.kind === 'address') {
      // No answer about the address: go on without it (the fetcher resolves the name itself).
      state.addressAskedAt = now;
    } else {
      // robots.txt never answered: treat as unreachable (complete disallow, retry later).
      state.robots = toJSON(rulesForFetchResult({ error: new Error('robots.txt request lost'), nowMs: now, unreachableSinceMs: state.robotsUnreachableSince ?? null }).rules);
      state.robotsParked = true;
      state.robotsDueAt = now + 60_000;
      p.parked.track(host, state, now);
    }
    p.hosts.put(host, state);
    if (state.queued > 0) schedule(p, host, state.nextAt);
  });
  return changed;
}
