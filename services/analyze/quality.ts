/**
 * Akamine et al.'s page quality score for selecting pages: server rank (higher is better), URL depth
 * (deeper is lower), CGI argument length (longer is lower), crawl date (newer is higher) and a text
 * score (sentences above a length). The paper names the factors, not their weights: here each factor
 * is mapped to 0–1 and they are averaged with equal weights, giving 0–100.
 */

export interface QualityInput {
  /** Server PageRank of the page's host, 0–10 (10 = top server). */
  hostScore: number;
  pathDepth: number;
  queryLength: number;
  fetchedAt: number;
  sentences: number;
}

export interface QualityContext {
  /** Oldest and newest fetch time of the pages scored (the date factor is relative to them). */
  firstFetch: number;
  lastFetch: number;
}

export interface QualityFactors {
  rank: number;
  depth: number;
  cgi: number;
  date: number;
  text: number;
}

/** Query length at which the CGI factor falls to one half. */
export const CGI_HALF_CHARS = 32;
/** Long sentences at which the text factor reaches one half. */
export const TEXT_HALF_SENTENCES = 5;

export function qualityFactors(p: QualityInput, ctx: QualityContext): QualityFactors {
  const span = ctx.lastFetch - ctx.firstFetch;
  return {
    rank: Math.min(1, Math.max(0, p.hostScore / 10)),
    depth: 1 / (1 + p.pathDepth),
    cgi: 1 / (1 + p.queryLength / CGI_HALF_CHARS),
    date: span > 0 ? (p.fetchedAt - ctx.firstFetch) / span : 1,
    text: p.sentences / (p.sentences + TEXT_HALF_SENTENCES),
  };
}

export function qualityScore(p: QualityInput, ctx: QualityContext): number {
  const f = qualityFactors(p, ctx);
  return (100 * (f.rank + f.depth + f.cgi + f.date + f.text)) / 5;
}
