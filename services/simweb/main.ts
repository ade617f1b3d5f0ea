/**
 * Runs the simulated web standalone (for the demo or manual poking) until SIGINT/SIGTERM.
 *
 *   npx tsx services/simweb/main.ts --hosts 100 --pages 40 --seed 1 --port 8080 \
 *     [--ips 127.0.0.1,127.0.0.2] [--bytes 21806] [--links 16] [--hostile] [--speed 3600] [--log access.ndjson] [--crawl-delay-share 0]
 *
 * Prints one JSON line with the port and the name -> IP map for the crawler's static resolver.
 */

import { ScaledClock, systemClock } from '../runtime/clock.ts';
import { hostilePreset } from './model.ts';
import { SimWeb } from './server.ts';

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}
function num(name: string, dflt: number): number {
  const v = opt(name);
  return v === undefined ? dflt : Number(v);
}

const speed = num('speed', 1);
const logFile = opt('log');
const web = await SimWeb.start({
  seed: num('seed', 1),
  hosts: num('hosts', 100),
  pagesPerHost: num('pages', 40),
  pageBytes: num('bytes', 21_806),
  ...(opt('links') !== undefined ? { linksPerPage: num('links', 16) } : {}),
  port: num('port', 0),
  ips: (opt('ips') ?? '127.0.0.1').split(','),
  clock: speed === 1 ? systemClock : new ScaledClock(Date.now(), speed),
  ...(process.argv.includes('--hostile') ? { hostile: hostilePreset() } : {}),
  ...(opt('crawl-delay-share') !== undefined ? { robots: { crawlDelayShare: num('crawl-delay-share', 0.05) } } : {}),
  ...(logFile === undefined ? {} : { accessLog: { file: logFile } }),
});
console.log(JSON.stringify({ port: web.port, ips: web.ips, hosts: web.model.hostCount, treeDepth: web.treeDepth(), resolve: web.resolveMap() }));

const stop = (): void => {
  void web.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
