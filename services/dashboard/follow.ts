/**
 * Feeds the live view from a crawl's topics: a consumer group of its own (no commits: a viewer)
 * reading `pages` (counters, servers, countries), `frontier` (requests issued) and `changes`
 * (recent changes) from the beginning, then live.
 */
import { safeDecodePageRecord } from '../common/page-decode.ts';
import type { Transport, GroupMember } from '../runtime/index.ts';
import type { LiveState } from './live-state.ts';

export async function followCrawl(transport: Transport, o: { topicPrefix: string; state: LiveState; groupId: string }): Promise<{ stop(): Promise<void> }> {
  const pages = `${o.topicPrefix}pages`;
  const frontier = `${o.topicPrefix}frontier`;
  const changes = `${o.topicPrefix}changes`;
  const member: GroupMember = await transport.join({
    groupId: o.groupId,
    topics: [pages, frontier, changes],
    startFrom: 'earliest',
    maxBatchRecords: 1000,
    onAssigned: async () => {},
    onRevoked: async () => {},
    eachBatch: async (batch) => {
      for (const r of batch.records) {
        if (r.value === null) continue;
        if (batch.topic === pages) {
          const d = safeDecodePageRecord(r.value);
          // Pages only: robots.txt fetches and address look-ups are not counted.
          if (!d.ok || d.page.request.reason === 'address' || d.page.request.reason === 'robots') continue;
          o.state.onPage({ url: d.page.finalUrl, status: d.page.status, bytes: d.page.bytes, ...(d.page.serverIp !== undefined ? { serverIp: d.page.serverIp } : {}), at: d.page.fetchedAt });
        } else if (batch.topic === frontier) {
          // Page requests only, as for pages above.
          const text = r.value.toString('utf8');
          if (!text.includes('"reason":"address"') && !text.includes('"reason":"robots"')) o.state.onRequest();
        } else {
          try {
            const c = JSON.parse(r.value.toString('utf8')) as { url?: string; kind?: string; time?: number };
            if (typeof c.url === 'string' && typeof c.kind === 'string') o.state.onChange({ url: c.url, kind: c.kind, at: c.time ?? r.timestamp });
          } catch {
            // not JSON: nothing to show
          }
        }
      }
    },
  });
  await member.ready();
  return { stop: () => member.stop() };
}
