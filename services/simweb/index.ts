/**
 * simweb: a deterministic simulated web for tests, the demo and benchmarks.
 *
 * One HTTP/1.1 server (node:http) listens on one or more loopback IPs (same port on each) and
 * serves H virtual hosts `h0.sim.test` .. `h<H-1>.sim.test` by Host header. Everything is a pure
 * function of the seed: the link graph (power-law in-degree, mostly same-host links, a spanning
 * tree from `/` so depth bounds are meaningful), page paths, robots.txt, hostile hosts and
 * pages, and when each page changes (a Poisson process per page driven by a Clock).
 *
 *   const web = await SimWeb.start({ seed: 7, hosts: 100, pagesPerHost: 40 });
 *   const plan = web.expectedFetchSet({ seeds: web.homeUrls(), maxDepth: 3 });
 *   // crawl with resolver map web.resolveMap(), then compare web.accessLog() with plan.urls
 *   await web.close();
 *
 * See README.md in this folder for the full option list and the ground-truth rules.
 */

export { SimWeb, chooseEncoding, pageEtag } from './server.ts';
export type { AccessLogEntry, PageLink, SimWebOptions, SimWebStats } from './server.ts';
export { SimWebModel, hostilePreset, isPermanentFailure, relativeRef } from './model.ts';
export type {
  ExpectedFetchOptions,
  FailSpec,
  FetchOutcome,
  FetchPlan,
  HostBehavior,
  HostPick,
  HostileOptions,
  Link,
  ModelOptions,
  PageKind,
  Resource,
  SpecialPageShares,
} from './model.ts';
export { ChangeModel } from './changes.ts';
export type { ChangeEvent, ChangeOptions, PageState } from './changes.ts';
export { defaultRobots, parseRobots, robotsAllows, robotsCrawlDelay } from './robots.ts';
export type { RobotsGenOptions, RobotsResponse, RobotsRules } from './robots.ts';
