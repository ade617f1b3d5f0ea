/**
 * The last guard of the `links` topic's size limit, applied by the runtime to an output that does
 * not fit (catalog.split): the parser already bounds what grows with its input (robots.txt bodies
 * to 500 KiB, bundles to 1,000 targets and ~256 K characters, outLinks to 2,000 URLs and 256 K
 * characters), but a topic may be configured smaller than 1 MB, and escapes (`"` → `\"`, a control
 * character → `\u0001`) make JSON longer than the text it holds. Pure.
 *
 *   bundle   → split in halves, in target order, until each half fits: no link is lost;
 *   outcome  → `outLinks` dropped (the scheduler then cannot pass the page's score on again, the
 *              page is otherwise unchanged), feed item ids halved, the main text's later
 *              paragraphs left out (`text.truncated`), the robots.txt body cut at a line break
 *              (`truncated`: its later rules do not apply);
 *   seed, link → bounded by their schema (URLs ≤ 8,192 characters): never split.
 */
import type { LinkBundle, LinksRecord, OutcomeLink } from '../schemas/index.ts';
import { robotsBody } from '../services/common/robots-body.ts';

/** Bytes of a value as the topic carries it (UTF-8 JSON). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

function splitBundle(bundle: LinkBundle, maxBytes: number, out: LinkBundle[]): boolean {
  if (jsonBytes(bundle) <= maxBytes) {
    out.push(bundle);
    return true;
  }
  const n = bundle.targets.length;
  if (n < 2) return false;
  const half = Math.ceil(n / 2);
  return splitBundle({ ...bundle, targets: bundle.targets.slice(0, half) }, maxBytes, out) && splitBundle({ ...bundle, targets: bundle.targets.slice(half) }, maxBytes, out);
}

/** The robots.txt body cut (at line breaks) until the outcome fits; undefined when even an empty body does not. */
function cutRobots(outcome: OutcomeLink, maxBytes: number): OutcomeLink | undefined {
  const robots = outcome.robots;
  if (robots?.body === undefined) return undefined;
  const whole = robots.bodyBytes ?? Buffer.byteLength(robots.body, 'utf8');
  let body = robots.body;
  for (let round = 0; round < 32; round++) {
    const bytes = Buffer.byteLength(body, 'utf8');
    const candidate: OutcomeLink = { ...outcome, robots: { ...robots, body, truncated: true, bodyBytes: whole } };
    const size = jsonBytes(candidate);
    if (size <= maxBytes) return candidate;
    if (bytes === 0) return undefined;
    // Shrink in proportion to the excess (escapes make the JSON longer than the bytes), at least by a tenth.
    const target = Math.min(Math.floor(bytes * 0.9), Math.floor((bytes * maxBytes) / size));
    body = robotsBody(body, Math.max(0, target)).body;
  }
  return undefined;
}

/** The main text's later paragraphs left out until the outcome fits (a prefix, as the parser bounds it). */
function cutText(outcome: OutcomeLink, maxBytes: number): OutcomeLink | undefined {
  const text = outcome.text;
  if (text === undefined) return undefined;
  const paragraphCount = text.paragraphCount ?? text.paragraphs.length;
  const chars = text.chars ?? text.paragraphs.reduce((n, p) => n + p.length, 0);
  let keep = text.paragraphs.length;
  for (;;) {
    const candidate: OutcomeLink = { ...outcome, text: { paragraphs: text.paragraphs.slice(0, keep), truncated: true, paragraphCount, chars } };
    if (jsonBytes(candidate) <= maxBytes) return candidate;
    if (keep === 0) return undefined;
    keep = Math.floor(keep / 2);
  }
}

function shrinkOutcome(outcome: OutcomeLink, maxBytes: number): OutcomeLink | undefined {
  let smaller: OutcomeLink = outcome;
  if (smaller.outLinks !== undefined) {
    const { outLinks: _dropped, ...rest } = smaller;
    smaller = rest;
    if (jsonBytes(smaller) <= maxBytes) return smaller;
  }
  const ids = smaller.document?.itemIds;
  if (smaller.document !== undefined && ids !== undefined) {
    let keep = ids.length;
    while (keep > 0 && jsonBytes(smaller) > maxBytes) {
      keep = Math.floor(keep / 2);
      smaller = { ...smaller, document: { ...smaller.document!, itemIds: ids.slice(0, keep) } };
    }
    if (jsonBytes(smaller) <= maxBytes) return smaller;
  }
  if (smaller.text !== undefined) return cutText(smaller, maxBytes);
  return cutRobots(smaller, maxBytes);
}

/**
 * Records that each fit `maxBytes` (UTF-8 JSON) and together carry what `record` carries, as far as
 * the module comment says; undefined when that is not possible (the runtime then dead-letters it).
 */
export function fitLinksRecord(record: LinksRecord, maxBytes: number): LinksRecord[] | undefined {
  if (jsonBytes(record) <= maxBytes) return [record];
  if (record.type === 'links') {
    const out: LinkBundle[] = [];
    return splitBundle(record, maxBytes, out) ? out : undefined;
  }
  if (record.type === 'outcome') {
    const smaller = shrinkOutcome(record, maxBytes);
    return smaller === undefined ? undefined : [smaller];
  }
  return undefined;
}
