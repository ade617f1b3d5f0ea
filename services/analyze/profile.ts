/**
 * Muraoka et al.'s site profile: seven axes per site, each scored 0–100 where 50 is the mean over all
 * sites of the crawl (score = 50 × value / mean, capped at 100; a site at twice the mean or more
 * scores 100, an axis whose mean is 0 scores 0 for every site).
 */

export const PROFILE_AXES = ['staticPages', 'dynamicPages', 'inboundLinks', 'outboundLinks', 'internalLinks', 'allLinks', 'images'] as const;
export type ProfileAxis = (typeof PROFILE_AXES)[number];

export const AXIS_LABELS: Record<ProfileAxis, string> = {
  staticPages: 'static pages',
  dynamicPages: 'dynamic pages',
  inboundLinks: 'inbound links',
  outboundLinks: 'outbound links',
  internalLinks: 'internal links',
  allLinks: 'all links',
  images: 'images',
};

export type ProfileValues = Record<ProfileAxis, number>;

export interface SiteCounts {
  staticPages: number;
  dynamicPages: number;
  /** Links from pages of other sites to this one. */
  inboundLinks: number;
  /** Links from this site's pages to other sites. */
  outboundLinks: number;
  internalLinks: number;
  images: number;
}

export function profileValues(c: SiteCounts): ProfileValues {
  return { ...c, allLinks: c.outboundLinks + c.internalLinks };
}

export function axisMeans(all: Iterable<ProfileValues>): ProfileValues {
  const sum = Object.fromEntries(PROFILE_AXES.map((a) => [a, 0])) as ProfileValues;
  let n = 0;
  for (const v of all) {
    n++;
    for (const a of PROFILE_AXES) sum[a] += v[a];
  }
  for (const a of PROFILE_AXES) sum[a] = n === 0 ? 0 : sum[a] / n;
  return sum;
}

export function profileScores(v: ProfileValues, means: ProfileValues): ProfileValues {
  const out = {} as ProfileValues;
  for (const a of PROFILE_AXES) out[a] = means[a] > 0 ? Math.min(100, (50 * v[a]) / means[a]) : 0;
  return out;
}
