/**
 * How pages change over time. Each page changes as a Poisson process whose mean interval is drawn
 * log-uniformly between `minIntervalMs` and `maxIntervalMs`. The process is generated lazily and
 * without state by binary splitting: the number of events in a long span is drawn once, then each
 * half-span receives Binomial(n, 1/2) of its parent's events, down to ~70-minute leaves whose event
 * times are uniform. Any count, any k-th event time and any range of events is a pure function of
 * (seed, host, page), computed in O(tree depth) without storing event lists.
 */

import { binomialHalf, hash01, poisson, rngFor } from './random.ts';

export interface ChangeOptions {
  /** Time (clock ms) at which the change processes start; before it every page is at version 0. Default: the clock's time at start. */
  epochMs?: number;
  /** Shortest mean interval between changes. Default 1 hour. */
  minIntervalMs?: number;
  /** Longest mean interval between changes. Default 365 days. */
  maxIntervalMs?: number;
  /** Share of pages whose changes only touch boilerplate (header date/ad block), never main text. Default 0.2. */
  boilerplateOnlyShare?: number;
  /** Share of pages (never a home page) that disappear at some time. Default 0.01. */
  goneShare?: number;
  /** Disappearance times are uniform in [epoch, epoch + goneWithinMs]. Default 365 days. */
  goneWithinMs?: number;
  /** Share of disappeared pages answering 410 rather than 404. Default 0.5. */
  gone410Share?: number;
  /**
   * Share of the pages whose boilerplate (the header's date line and promo box) also changes every
   * `boilerplateTickMs`, on top of their own Poisson changes (a date line, a rotating promo). Default 0.
   */
  boilerplateTickShare?: number;
  /** Period of those boilerplate ticks. Default 30 minutes. */
  boilerplateTickMs?: number;
}

/** One change of a page. `content` changes alter the main text; `boilerplate` ones only the header block. */
export interface ChangeEvent {
  t: number;
  kind: 'content' | 'boilerplate';
}

/** Everything about a page's state at one time. */
export interface PageState {
  /** Number of changes (any kind) so far; part of the ETag. */
  version: number;
  /** Number of main-content changes so far. */
  contentVersion: number;
  /** Time of the last change, or an invented creation time before the epoch if there was none. */
  lastModified: number;
  /** Whether this page only ever changes boilerplate. */
  boilerplateOnly: boolean;
  /** Mean time between changes for this page. */
  meanIntervalMs: number;
  /** Set once the page has disappeared. */
  gone?: { at: number; status: 404 | 410 };
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LEAF_BITS = 22; // ~70 minutes per leaf
const DEPTH = 19; // 2^41 ms ~ 69.7 years of simulated history
const LEAF_SPAN = 2 ** LEAF_BITS;
const SPAN = 2 ** (LEAF_BITS + DEPTH);

const P_RATE = 0xc4a1;
const P_KIND = 0xc4a2;
const P_GONE = 0xc4a3;
const P_GONE_T = 0xc4a4;
const P_GONE_S = 0xc4a5;
const P_ROOT = 0xc4a6;
const P_SPLIT = 0xc4a7;
const P_LEAF = 0xc4a8;
const P_BIRTH = 0xc4a9;
const P_TICK = 0xc4aa;

export class ChangeModel {
  readonly epochMs: number;
  private readonly minI: number;
  private readonly maxI: number;
  private readonly boilerplateOnlyShare: number;
  private readonly goneShare: number;
  private readonly goneWithinMs: number;
  private readonly gone410Share: number;
  private readonly tickShare: number;
  private readonly tickMs: number;

  constructor(
    private readonly seed: number,
    epochMs: number,
    opts: ChangeOptions = {},
  ) {
    this.epochMs = opts.epochMs ?? epochMs;
    this.minI = opts.minIntervalMs ?? HOUR;
    this.maxI = opts.maxIntervalMs ?? 365 * DAY;
    if (!(this.minI > 0 && this.maxI >= this.minI)) throw new RangeError('bad change interval range');
    this.boilerplateOnlyShare = opts.boilerplateOnlyShare ?? 0.2;
    this.goneShare = opts.goneShare ?? 0.01;
    this.goneWithinMs = opts.goneWithinMs ?? 365 * DAY;
    this.gone410Share = opts.gone410Share ?? 0.5;
    this.tickShare = opts.boilerplateTickShare ?? 0;
    this.tickMs = opts.boilerplateTickMs ?? 30 * 60_000;
    if (!(this.tickMs > 0)) throw new RangeError('bad boilerplate tick period');
  }

  /** Whether the page's boilerplate also changes every tick (see `boilerplateTickShare`). */
  boilerplateTicks(host: number, page: number): boolean {
    return this.tickShare > 0 && hash01(this.seed, P_TICK, host, page) < this.tickShare;
  }

  /** Boilerplate ticks with time <= t (0 for pages without them). */
  private ticksAt(host: number, page: number, t: number): number {
    return t < this.epochMs || !this.boilerplateTicks(host, page) ? 0 : Math.floor((t - this.epochMs) / this.tickMs);
  }

  /** Every change (Poisson changes and boilerplate ticks) with time <= t: the version in the page's ETag. */
  versionAt(host: number, page: number, t: number): number {
    return this.countAt(host, page, t) + this.ticksAt(host, page, t);
  }

  meanIntervalMs(host: number, page: number): number {
    const u = hash01(this.seed, P_RATE, host, page);
    return Math.exp(Math.log(this.minI) + u * (Math.log(this.maxI) - Math.log(this.minI)));
  }

  boilerplateOnly(host: number, page: number): boolean {
    return hash01(this.seed, P_KIND, host, page) < this.boilerplateOnlyShare;
  }

  goneInfo(host: number, page: number): { at: number; status: 404 | 410 } | undefined {
    if (page === 0 || hash01(this.seed, P_GONE, host, page) >= this.goneShare) return undefined;
    const at = this.epochMs + Math.floor(hash01(this.seed, P_GONE_T, host, page) * this.goneWithinMs);
    return { at, status: hash01(this.seed, P_GONE_S, host, page) < this.gone410Share ? 410 : 404 };
  }

  private rootCount(host: number, page: number): number {
    return poisson(rngFor(this.seed, P_ROOT, host, page), SPAN / this.meanIntervalMs(host, page));
  }

  private leftCount(host: number, page: number, level: number, index: number, count: number): number {
    return binomialHalf(rngFor(this.seed, P_SPLIT, host, page, level, index), count);
  }

  /** Sorted event offsets within one leaf. */
  private leafTimes(host: number, page: number, index: number, count: number): number[] {
    const rng = rngFor(this.seed, P_LEAF, host, page, index);
    const ts: number[] = [];
    for (let i = 0; i < count; i++) ts.push(rng.int(LEAF_SPAN));
    return ts.sort((a, b) => a - b);
  }

  /** Number of changes with time <= t. */
  countAt(host: number, page: number, t: number): number {
    if (t < this.epochMs) return 0;
    const off = t - this.epochMs;
    let c = this.rootCount(host, page);
    if (off >= SPAN) return c;
    let acc = 0;
    let start = 0;
    let index = 0;
    let span = SPAN;
    for (let level = 0; level < DEPTH; level++) {
      if (c === 0) return acc;
      const left = this.leftCount(host, page, level, index, c);
      span /= 2;
      if (off < start + span) {
        c = left;
        index = index * 2;
      } else {
        acc += left;
        c -= left;
        start += span;
        index = index * 2 + 1;
      }
    }
    if (c === 0) return acc;
    for (const x of this.leafTimes(host, page, index, c)) {
      if (start + x <= off) acc++;
      else break;
    }
    return acc;
  }

  /** Time of the k-th change (1-based). */
  eventTime(host: number, page: number, k: number): number {
    let c = this.rootCount(host, page);
    if (k < 1 || k > c) throw new RangeError(`no change #${k}`);
    let start = 0;
    let index = 0;
    let span = SPAN;
    for (let level = 0; level < DEPTH; level++) {
      const left = this.leftCount(host, page, level, index, c);
      span /= 2;
      if (k <= left) {
        c = left;
        index = index * 2;
      } else {
        k -= left;
        c -= left;
        start += span;
        index = index * 2 + 1;
      }
    }
    const ts = this.leafTimes(host, page, index, c);
    return this.epochMs + start + (ts[k - 1] ?? 0);
  }

  /** A made-up creation time before the epoch, used as Last-Modified while a page has not changed yet. */
  birthTime(host: number, page: number): number {
    return this.epochMs - Math.floor((0.05 + hash01(this.seed, P_BIRTH, host, page)) * 365 * DAY);
  }

  stateAt(host: number, page: number, t: number): PageState {
    const count = this.countAt(host, page, t);
    const ticks = this.ticksAt(host, page, t);
    const version = count + ticks;
    const boilerplateOnly = this.boilerplateOnly(host, page);
    const changedAt = count === 0 ? this.birthTime(host, page) : this.eventTime(host, page, count);
    const state: PageState = {
      version,
      contentVersion: boilerplateOnly ? 0 : count,
      lastModified: ticks > 0 ? Math.max(changedAt, this.epochMs + ticks * this.tickMs) : changedAt,
      boilerplateOnly,
      meanIntervalMs: this.meanIntervalMs(host, page),
    };
    const gone = this.goneInfo(host, page);
    if (gone !== undefined && t >= gone.at) state.gone = gone;
    return state;
  }

  /** Changes with from < t <= to, in time order. Walks only the subtrees overlapping the range. */
  changes(host: number, page: number, from: number, to: number): ChangeEvent[] {
    const kind = this.boilerplateOnly(host, page) ? 'boilerplate' : 'content';
    const out: ChangeEvent[] = [];
    const lo = from - this.epochMs;
    const hi = to - this.epochMs;
    if (hi < 0 || hi <= lo) return out;
    const visit = (level: number, index: number, start: number, span: number, count: number): void => {
      if (count === 0 || start > hi || start + span - 1 <= lo) return;
      if (level === DEPTH) {
        for (const x of this.leafTimes(host, page, index, count)) {
          const off = start + x;
          if (off > lo && off <= hi) out.push({ t: this.epochMs + off, kind });
        }
        return;
      }
      const left = this.leftCount(host, page, level, index, count);
      const half = span / 2;
      visit(level + 1, index * 2, start, half, left);
      visit(level + 1, index * 2 + 1, start + half, half, count - left);
    };
    visit(0, 0, 0, SPAN, this.rootCount(host, page));
    if (!this.boilerplateTicks(host, page)) return out;
    for (let k = Math.max(1, this.ticksAt(host, page, from) + 1), t = this.epochMs + k * this.tickMs; t <= to; k++, t += this.tickMs) {
      if (t > from) out.push({ t, kind: 'boilerplate' });
    }
    return out.sort((a, b) => a.t - b.t);
  }
}
