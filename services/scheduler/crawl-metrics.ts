/**
 * The crawl's progress as Prometheus gauges, per scheduler partition owned by this process: URLs
 * known and queued, requests in flight, pages fetched, revisits, changed pages, errors, sitemap,
 * feed and daily-page reads and what they found. The counts
 * are the partition's own (kept in its state store), so they continue where they were when a
 * partition moves to another pod; only partitions this process owns now are reported, so a sum over
 * pods never counts a partition twice.
 */
import type client from 'prom-client';
import { partitionGauge } from './load-metrics.ts';
import type { CrawlProgress, PartitionLoad } from './progress.ts';
import type { PartitionStats } from './state.ts';

type Snapshot = { readonly stats: PartitionStats; readonly load: PartitionLoad };

export function registerCrawlMetrics(registry: client.Registry, progress: CrawlProgress, owned: ReadonlyMap<number, unknown>): void {
  const gauge = (name: string, help: string, value: (s: Snapshot) => number): void =>
    partitionGauge(registry, name, help, function* () {
      for (const partition of owned.keys()) {
        const snapshot = progress.partition(partition);
        if (snapshot) yield [partition, value(snapshot)];
      }
    });
  gauge('meguri_scheduler_urls_known', 'URLs the partition knows (queued, fetched or given up)', (s) => s.stats.urlsKnown);
  gauge('meguri_scheduler_urls_queued', 'URLs waiting in the partition\'s host queues (new and due revisits)', (s) => s.load.queued);
  gauge('meguri_scheduler_urls_waiting_on_parked_hosts', 'Queued URLs of hosts parked for a long while (robots.txt unreachable, repeated failures)', (s) => s.load.parked ?? 0);
  gauge('meguri_scheduler_requests_in_flight', 'Fetch requests sent and not answered yet (one per host, or up to politeness.maxPerHost)', (s) => s.load.inflight);
  gauge('meguri_scheduler_hosts', 'Hosts the partition knows', (s) => s.stats.hosts);
  gauge('meguri_scheduler_pages_fetched', 'Page fetches answered, cumulative for the partition (rate() gives pages/s)', (s) => s.stats.pagesFetched);
  gauge('meguri_scheduler_bytes_fetched', 'Bytes of the fetched pages, cumulative for the partition', (s) => s.stats.bytes);
  gauge('meguri_scheduler_robots_fetched', 'robots.txt fetches answered, cumulative for the partition', (s) => s.stats.robotsFetched);
  gauge('meguri_scheduler_revisits', 'Revisits of known pages answered, cumulative for the partition', (s) => s.stats.revisits);
  gauge('meguri_scheduler_changed_pages', 'Revisits that found the content changed, cumulative for the partition', (s) => s.stats.changed);
  gauge('meguri_scheduler_fetch_errors', 'Fetches that ended in an error, cumulative for the partition', (s) => s.stats.errors);
  gauge('meguri_scheduler_lost_requests', 'URLs given up after their requests were lost too often, cumulative for the partition', (s) => s.stats.lost);
  gauge('meguri_scheduler_sitemaps_fetched', 'Sitemap reads answered, cumulative for the partition', (s) => s.stats.sitemapsFetched ?? 0);
  gauge('meguri_scheduler_sitemap_errors', 'Sitemap reads that failed (fetch error or unreadable document), cumulative', (s) => s.stats.sitemapErrors ?? 0);
  gauge('meguri_scheduler_sitemap_urls', 'New URLs queued because a sitemap listed them, cumulative', (s) => s.stats.sitemapUrls ?? 0);
  gauge('meguri_scheduler_feeds_fetched', 'Feed reads answered, cumulative for the partition', (s) => s.stats.feedsFetched ?? 0);
  gauge('meguri_scheduler_feed_errors', 'Feed reads that failed (fetch error or unreadable document), cumulative', (s) => s.stats.feedErrors ?? 0);
  gauge('meguri_scheduler_feed_items_new', 'New URLs queued from feed items, cumulative', (s) => s.stats.feedItemsNew ?? 0);
  gauge('meguri_scheduler_daily_fetched', 'Daily page reads (--daily-file) answered, cumulative', (s) => s.stats.dailyFetched ?? 0);
  gauge('meguri_scheduler_daily_new_links', 'New URLs queued from links found on daily pages, cumulative', (s) => s.stats.dailyNewLinks ?? 0);
  gauge('meguri_scheduler_lastmod_revisits', 'Known URLs revisited early because a sitemap or feed dated them after their last fetch, cumulative', (s) => s.stats.lastmodRevisits ?? 0);
  gauge('meguri_scheduler_off_language_pages', 'Pages outside --languages (kept, links not followed), cumulative', (s) => s.stats.offLanguage ?? 0);
  gauge('meguri_scheduler_out_of_scope_skipped', 'Discovered URLs not queued because they are outside the crawl scope or refused by include/exclude, cumulative for the partition', (s) => s.stats.outOfScopeSkipped ?? 0);
  gauge('meguri_scheduler_host_rule_skipped', 'URLs not queued or given up by a per-host rule (--host-rules: block, maxPages, maxDepth), cumulative for the partition', (s) => s.stats.hostRuleSkipped ?? 0);
  gauge('meguri_scheduler_robots_disallowed_skipped', 'URLs never requested because robots.txt disallows them, cumulative for the partition', (s) => s.stats.robotsDisallowedSkipped);
}
