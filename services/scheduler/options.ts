/**
 * Scheduler settings: one strict zod schema, units in the names, defaults from the papers where they
 * give one (max depth 15 and robots re-check every 6 h: Muraoka et al.; 10 s minimum interval for the open
 * web: Hoshino et al.).
 */
import { z } from 'zod';
import { politenessConfig, politenessConfigSchema } from './politeness/config.ts';
import { DEFAULT_REVISIT_OPTIONS } from '../revisit/estimator.ts';
import { DEFAULT_STRIP_PARAMS } from '../common/url.ts';

const HOUR = 3_600_000;

/** A regular expression's source, refused with the reason when it does not compile. */
const regexSource = z.string().min(1).superRefine((source, ctx) => {
  try {
    new RegExp(source);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

export const schedulerOptionsSchema = z.strictObject({
  userAgent: z.string().min(1).default('meguri').describe('User-Agent whose product token selects the robots.txt group.'),
  maxDepth: z.number().int().min(0).default(15).describe('Hops from the nearest seed beyond which links are not followed.'),
  maxCgiHops: z.number().int().min(0).default(10).describe('Hops out of dynamic pages a link may be followed.'),
  minIntervalMs: z.number().int().min(0).default(10_000).describe('Minimum gap between the end of one request to a host and the start of the next.'),
  robotsRecheckMs: z.number().int().min(1).default(6 * HOUR).describe('Re-fetch robots.txt this often.'),
  requestTimeoutMs: z.number().int().min(1).default(120_000).describe('A request without an outcome after this long is considered lost.'),
  maxAttempts: z.number().int().min(1).default(3).describe('Tries of a lost request before the URL is given up.'),
  maxPagesPerPartition: z.number().int().min(0).optional().describe('Page budget of each scheduler partition (unset: unlimited).'),
  dispatchIntervalMs: z.number().int().min(1).default(20).describe('How often due hosts are looked for.'),
  maxDispatchPerRound: z.number().int().min(1).default(2000).describe('Fetch requests emitted per dispatch round at most.'),
  ordering: z
    .enum(['ipr-dl1', 'ipr-vr', 'ipr-ar', 'blc', 'bf'])
    .default('ipr-dl1')
    .describe('Crawl order within a host (Yamada et al.): incremental PageRank with the DL1, VR or AR cut-off, back-link count, or breadth-first.'),
  orderingValueRatio: z.number().positive().default(1.5).describe('IPR-VR: a fetched page passes on what it receives when that is at least this times its score.'),
  orderingAccumulatedRatio: z
    .number()
    .positive()
    .default(29 / 30)
    .describe('IPR-AR: a fetched page passes on its accumulated receipts once they reach this share of its score (29/30: 30× the score at the last pass).'),
  idleParkedMs: z
    .number()
    .int()
    .min(0)
    .default(30_000)
    .describe('URLs of a parked host (robots.txt unreachable, repeated failures, a Retry-After or back-off) whose next try is further away than this do not keep a --until-idle crawl running.'),
  learnAddressFirst: z
    .boolean()
    .optional()
    .describe("Resolve a new host's name through the fetcher before its first request, so every request to a server is keyed and capped by its IP (politeness.maxPerIp holds across fetcher processes). Unset: on for `meguri run scheduler`, off for `meguri crawl` (one fetcher in the process limits every address itself)."),
  revisit: z.boolean().default(true).describe('Revisit fetched pages at their estimated change rate and report changes (the incremental archive crawler paper).'),
  goneAfterHostFailures: z
    .number()
    .int()
    .min(1)
    .default(3)
    .describe("A known page whose host was unreachable (name, connection) on this many revisits in a row is reported gone."),
  pageRetries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .describe("A new page whose fetch failed on the host's side (429, 5xx, a timeout or reset) is queued again this many times, after the host's back-off or Retry-After, before it is recorded as an error."),
  revisitSweepMs: z.number().int().min(1).default(1000).describe('How often the long-term queue is swept for due revisits.'),
  revisitKnownShare: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe("Share of a host's requests given to revisits of known URLs while new URLs wait too (the incremental archive crawler paper: half)."),
  shortTermWindowMs: z
    .number()
    .int()
    .min(1)
    .default(24 * HOUR)
    .describe("A host's short-term queue holds the known URLs its interval allows within this window (times revisitKnownShare); the incremental archive crawler paper: 1 day."),
  revisitDeferMs: z
    .number()
    .int()
    .min(1)
    .default(72 * HOUR)
    .describe('A due revisit that finds the short-term queue full goes back to the long-term queue for this long (the incremental archive crawler paper: 3 days).'),
  overloadRemedy: z
    .enum(['stretch', 'delay', 'none'])
    .default('stretch')
    .describe('What to do when a host cannot bear its revisit schedule (1/L below its interval): multiply intervals, add a delay, or only report.'),
  revisitGoal: z
    .enum(['freshness', 'versions'])
    .default('freshness')
    .describe(
      'What revisits optimise (docs/revisits.md): freshness, the share of time copies are up to date (Cho & Garcia-Molina’s Lagrangian allocation per host budget); versions, distinct versions captured per fetch (an archive’s aim). Importance weights pages in both.',
    ),
  revisitPolicy: z
    .strictObject({
      allocation: z.enum(['proportional', 'sqrt', 'goal']),
      freshnessScaleS: z.number().positive(),
      droppedIntervalS: z.number().positive(),
      posterior: z.boolean(),
      pooled: z.boolean(),
      versionValueS: z.number().min(0),
      priorMinS: z.number().positive(),
      priorMaxS: z.number().positive(),
      minIntervalS: z.number().positive(),
      backoff: z.number().gt(1),
      secondVisitMinS: z.number().positive(),
      secondVisitMaxS: z.number().positive(),
    })
    .partial()
    .default({})
    .describe('Revisit interval rules (docs/revisits.md): allocation of estimated change intervals (goal: by revisitGoal), τ0, what a captured version is worth under freshness, the interval of pages the goal drops, the posterior and its per-host pooled prior, minimum, back-off, 2nd-visit range.'),
  stripParams: z
    .array(z.string().min(1))
    .default([...DEFAULT_STRIP_PARAMS])
    .describe('Query and path parameters removed from every URL (session ids, tracking tags); `name*` matches a prefix. The parser is given the same list.'),
  maxUrlsPerTemplate: z
    .number()
    .int()
    .min(0)
    .default(1000)
    .describe('New URLs of one host that one URL template (same path shape, parameter names) may add at most; 0: no limit. Bounds spider traps (the incremental archive crawler paper).'),
  templateRoundSize: z
    .number()
    .int()
    .min(1)
    .default(256)
    .describe("A template's first this many URLs share a host's first queue round; later ones go to rounds that double in size, so no template starves the host's other pages."),
  trapProbePages: z
    .number()
    .int()
    .min(0)
    .default(10)
    .describe('First fetches of a URL template after which it is judged; a template whose pages carry the same text and that keeps producing new URLs (trapNewUrls) is a trap and keeps only its representative (0: never judge).'),
  trapDuplicateShare: z
    .number()
    .min(0)
    .max(1)
    .default(0.8)
    .describe("Share of a template's judged pages with its first page's main text (within changeHammingThreshold) that makes it a trap."),
  trapNewUrls: z
    .number()
    .int()
    .min(0)
    .default(100)
    .describe("New URLs of a template admitted after its first page was fetched, at least, before it can be a trap: a trap keeps producing URLs, a small site's alike pages (all listed before the first is fetched) do not."),
  queryRestriction: z
    .enum(['off', 'form', 'all'])
    .default('off')
    .describe('Query restriction (Hoshino et al.): form: a URL is not followed when its form without the query was seen before; all: no URL with a query is followed.'),
  sitemaps: z.boolean().default(false).describe("Read each host's sitemaps (robots.txt Sitemap: lines, else /sitemap.xml) and queue what they list (sitemaps.org). The CLI turns it on unless --no-sitemaps or a settings file sets it false."),
  sitemapIntervalMs: z.number().int().min(1).default(24 * HOUR).describe('Base re-read interval of a sitemap; adapted to how often it changes, within base/24 to base×7.'),
  feedIntervalMs: z.number().int().min(1).default(24 * HOUR).describe('Base re-read interval of a feed; adapted to the rate of new items, within base/24 to base×7.'),
  dailyIntervalMs: z.number().int().min(1).default(24 * HOUR).describe('Re-read interval of daily pages (--daily-file), whatever the revisit estimator says.'),
  scope: z
    .enum(['host', 'domain', 'web'])
    .default('web')
    .describe("Crawl scope: host: only the seeds' host names; domain: the seeds' registrable domains and their subdomains; web: every link (within maxDepth). `meguri crawl` defaults to domain. Seeds added later extend a host/domain scope."),
  include: z
    .array(regexSource)
    .default([])
    .describe('Regular expressions on the normalised URL: when any is given, a discovered URL must match one to be queued.'),
  exclude: z
    .array(regexSource)
    .default([])
    .describe('Regular expressions on the normalised URL: a discovered URL matching any is not queued (exclude wins over include).'),
  aliases: z
    .record(z.string(), z.string())
    .default({})
    .describe('Server aliases (the incremental archive crawler paper): alias host name → canonical host name; URLs on an alias are moved to the canonical host (also learned from a root that permanently redirects to another host).'),
  mode: z
    .enum(['crawl', 'discovery'])
    .default('crawl')
    .describe("discovery: Hoshino et al.'s server-discovery crawl — each seed a start site, only its internal URLs (same host or a subdomain) fetched, external hosts reported once on `servers`."),
  sampleRate: z
    .number()
    .gt(0)
    .max(1)
    .default(1)
    .describe('Discovery mode: share of the internal URLs found at depth n that are crawled at depth n+1 (Hoshino et al.: 0.55 finds 95 % of the servers at ~55 % load).'),
  sampleSeed: z.number().int().default(1).describe('Discovery mode: seed of the sampling draw (the same seed draws the same sample).'),
  followServers: z.boolean().default(false).describe('Discovery mode: every new server becomes a start site of its own (Muraoka et al. seeds new servers continuously).'),
  changeHammingThreshold: z.number().int().min(0).max(64).default(3).describe('Text fingerprints this close count as the same content (boilerplate-only change).'),
  politeness: politenessConfigSchema
    .omit({ minIntervalMs: true, maxDepth: true, maxCgiHops: true })
    .partial()
    .default({})
    .describe('The rest of the politeness policy (dynamic interval, k × download time, back-off, suspend windows): see docs/politeness.md.'),
});

export type SchedulerOptions = z.infer<typeof schedulerOptionsSchema>;
export type SchedulerOptionsInput = z.input<typeof schedulerOptionsSchema>;

/**
 * Every scheduler setting with its default, nested groups filled in: what `meguri config scheduler`
 * prints and the Kubernetes manifests mount as the scheduler's config file.
 */
export function schedulerDefaults(): Record<string, unknown> {
  const base = schedulerOptionsSchema.parse({});
  const { minIntervalMs: _m, maxDepth: _d, maxCgiHops: _c, ...politeness } = politenessConfig();
  const { allocation, freshnessScaleS, versionValueS, droppedIntervalS, posterior, pooled, minIntervalS, backoff, secondVisitMinS, secondVisitMaxS } = DEFAULT_REVISIT_OPTIONS;
  const revisitPolicy = { allocation, freshnessScaleS, versionValueS, droppedIntervalS, posterior, pooled, minIntervalS, backoff, secondVisitMinS, secondVisitMaxS };
  return { ...base, politeness, revisitPolicy };
}
