/**
 * Crawl progress: a live bar on a terminal (cli-progress), plain status lines every few seconds
 * otherwise (logs, CI), nothing when disabled. Written to stderr; stdout is for results.
 */
import cliProgress from 'cli-progress';
import type { CrawlSnapshot } from './crawl.ts';

export interface ProgressDisplay {
  update(p: CrawlSnapshot): void;
  stop(): void;
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

export function startProgress(enabled: boolean, maxPages?: number): ProgressDisplay {
  if (!enabled) return { update: () => {}, stop: () => {} };
  if (!process.stderr.isTTY) {
    let last = 0;
    return {
      update: (p) => {
        if (Date.now() - last < 5000) return;
        last = Date.now();
        process.stderr.write(
          `pages ${p.pagesFetched} (${p.pagesPerS}/s) queued ${p.queued} in-flight ${p.inflight} hosts ${p.hosts} errors ${p.errors} robots-skipped ${p.robotsDisallowedSkipped} ${mib(p.bytes)} MiB ${p.elapsedS.toFixed(0)} s\n`,
        );
      },
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: ' {bar} {value}/{total} pages | {rate}/s | queued {queued} | in flight {inflight} | hosts {hosts} | errors {errors} | {mib} MiB',
      hideCursor: true,
      stream: process.stderr,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(maxPages ?? 1, 0, { rate: 0, queued: 0, inflight: 0, hosts: 0, errors: 0, mib: '0.0' });
  return {
    update: (p) => {
      if (maxPages === undefined) bar.setTotal(Math.max(1, p.pagesFetched + p.queued + p.inflight));
      bar.update(p.pagesFetched, { rate: p.pagesPerS, queued: p.queued, inflight: p.inflight, hosts: p.hosts, errors: p.errors, mib: mib(p.bytes) });
    },
    stop: () => bar.stop(),
  };
}
