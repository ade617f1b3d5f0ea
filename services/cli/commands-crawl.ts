/**
 * The commands that crawl with every service in this process: `crawl` and `demo`.
 */
import { Command, InvalidArgumentError } from 'commander';
import { writeFileSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { int, share, positiveSeconds, paramNames } from './flag-parsers.ts';
import { addCrawlFlags, explicitOptions, loadCrawlModules, crawlOptions, withSpeed, uiPort, crawlWithDisplay, report } from './crawl-flags.ts';
import type { CrawlFlags } from './crawl-flags.ts';
// Only what builds the commands and checks their flags is imported here; each command imports the
// modules it runs when it runs, so `meguri --help` and a command's help load no crawler.

/** `meguri crawl` and `meguri demo` (a simulated web, optionally changing on a fast clock). */
export function addCrawlCommands(program: Command): void {
  addCrawlFlags(
    program
      .command('crawl')
      .description('Crawl from seed URLs with every service in this process (embedded log by default).')
      .argument('[urls...]', 'seed URLs'),
    { minInterval: 10, dns: 'system' },
  ).action(async (urls: string[], flags: CrawlFlags, cmd: Command) => {
    const m = await loadCrawlModules();
    const options = await withSpeed(crawlOptions(m, urls, flags, explicitOptions(cmd)), flags.speed);
    if (options.seeds.length === 0 && (options.sources ?? []).length === 0) throw new InvalidArgumentError('give seed URLs, --seeds-file, --feeds-file or --daily-file (or add seeds to a running crawl with `meguri seed`)');
    const summary = await crawlWithDisplay(m, options, flags);
    report(summary, flags.summaryJson);
    if (flags.out !== undefined && summary.perDepth) {
      const { depthCsv, depthChartSvg } = await import('../common/discovery-report.ts');
      mkdirSync(flags.out, { recursive: true });
      const series = [{ name: 'crawl', rows: summary.perDepth }];
      writeFileSync(join(flags.out, 'discovery.csv'), depthCsv(series));
      writeFileSync(join(flags.out, 'discovery.svg'), depthChartSvg(series, `Server discovery: ${summary.externalServers ?? 0} servers, ${summary.uniqueUrlsFetched} pages`));
    }
  });

  addCrawlFlags(
    program
      .command('demo')
      .description('Start a simulated web on 127.0.0.1 and crawl it live, fully offline: names resolve only through a static map. Every crawl flag applies, but --dns is always static and --until-idle is on unless --max-pages is given.')
      .option('--hosts <n>', 'simulated hosts', int('--hosts', 1), 20)
      .option('--pages <n>', 'pages per host', int('--pages', 1), 40)
      .option('--web-seed <n>', 'seed of the simulated web graph', int('--web-seed', 0), 1)
      .option('--changing', 'pages change on Poisson schedules (hourly to yearly, some boilerplate-only, some disappear) on a fast clock (--speed, default 3600); reports versions seen and staleness beside a fixed revisit interval with the same fetches')
      .option('--duration <s>', 'with --changing: wall seconds the crawl runs (default 60)', positiveSeconds)
      .option('--ips <list>', 'loopback addresses the simulated hosts are spread over, comma-separated (default 127.0.0.1)', paramNames)
      .option('--duplicates <share>', 'share of leaf pages that are exact copies of one notice page (default 0)', share('--duplicates'))
      .option('--shift-jis <share>', 'share of leaf pages in Japanese, Shift_JIS encoded (default 0)', share('--shift-jis')),
    { minInterval: 0.1, dns: 'static', data: '', dataHelp: 'a new temporary directory' },
  ).action(async (flags: CrawlFlags & { hosts: number; pages: number; webSeed: number; changing?: boolean; duration?: number; ips?: string[]; duplicates?: number; shiftJis?: number }, cmd: Command) => {
    const m = await loadCrawlModules();
    if (flags.changing) {
      const { changingDemoTable, runChangingDemo, scaledTimers } = await import('./demo-changing.ts');
      const { startProgress } = await import('./progress-display.ts');
      const speed = flags.speed ?? 3600;
      const display = startProgress(flags.progress, undefined);
      try {
        const report = await runChangingDemo({
          hosts: flags.hosts,
          pagesPerHost: flags.pages,
          webSeed: flags.webSeed,
          speed,
          durationS: flags.duration ?? 60,
          dataDir: flags.data,
          crawlOptions: (seeds, resolve, data) => {
            const o = crawlOptions(m, seeds, { ...flags, data, dns: 'static', speed: undefined }, explicitOptions(cmd), resolve);
            return { ...o, scheduler: { ...scaledTimers(speed), ...o.scheduler } };
          },
          onProgress: (p) => display.update(p),
          log: (line) => console.error(line),
        });
        display.stop();
        if (flags.summaryJson) writeFileSync(flags.summaryJson, JSON.stringify(report, null, 2) + '\n');
        console.log(JSON.stringify(report, null, 2));
        console.error(changingDemoTable(report));
      } finally {
        display.stop();
      }
      return;
    }
    const special = { ...(flags.duplicates !== undefined ? { duplicate: flags.duplicates } : {}), ...(flags.shiftJis !== undefined ? { shiftJis: flags.shiftJis } : {}) };
    const { SimWeb } = await import('../simweb/index.ts');
    const web = await SimWeb.start({
      seed: flags.webSeed,
      hosts: flags.hosts,
      pagesPerHost: flags.pages,
      ...(flags.ips !== undefined && flags.ips.length > 0 ? { ips: flags.ips } : {}),
      ...(Object.keys(special).length > 0 ? { hostile: { pages: special } } : {}),
    });
    try {
      const resolve = Object.entries(web.resolveMap()).map(([pattern, ip]) => `${pattern}=${ip}`);
      const data = flags.data || mkdtempSync(join(tmpdir(), 'meguri-demo-'));
      const options = await withSpeed(crawlOptions(m, web.homeUrls(), { ...flags, data, dns: 'static', untilIdle: flags.untilIdle ?? (flags.maxPages === undefined) }, explicitOptions(cmd), resolve), flags.speed);
      console.error(`simulated web: ${flags.hosts} hosts × ${flags.pages} pages on ${web.ips.join(',')}:${web.port}; data in ${data}`);
      // The live view (--ui) places the simulated web's addresses in countries of its own.
      const liveCountries = uiPort(flags.ui) !== undefined ? (await import('./live-view.ts')).demoCountryTable(web.ips) : [];
      const summary = await crawlWithDisplay(m, options, flags, liveCountries);
      const agent = (flags.userAgent ?? 'meguri').split(/[/ ]/)[0] ?? 'meguri';
      const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: flags.maxDepth, userAgent: agent });
      report(summary, flags.summaryJson, { simulatedWeb: { hosts: flags.hosts, pagesPerHost: flags.pages, reachableAllowedPages: plan.urls.size, requestsServed: web.accessLog().length } });
    } finally {
      await web.close();
    }
  });
}
