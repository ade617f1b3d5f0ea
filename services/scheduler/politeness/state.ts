/**
 * The per-host politeness record. It is stored per host in RocksDB next to HostState, so it is a
 * plain JSON object with short field names and only a handful of numbers (~150–250 bytes full).
 * Every function in this module treats it as immutable and returns a new one.
 */

/** Requests remembered for the dynamic interval (Muraoka et al.: "the last 10 requests"). */
export const RING_SIZE = 10;
const RING_MASK = (1 << RING_SIZE) - 1;

export interface PolitenessState {
  /** bytes of the last ≤10 requests, oldest first */
  b: number[];
  /** duration (ms) of the last ≤10 requests, oldest first, aligned with `b` */
  t: number[];
  /** error flags of the ring as a bit mask: bit 0 = newest request */
  x: number;
  /** consecutive failures */
  f: number;
  /** earliest start of the next request (ms) */
  n: number;
  /** parked until (ms) */
  p?: number;
  /** parkings since the last success (grows the parking time) */
  pc?: number;
  /** suspended until (ms) */
  s?: number;
  /** start of the current continuous crawl run (ms) */
  c?: number;
  /** time of the last outcome (ms) */
  w?: number;
  /** load index L = Σ 1/T_ij over the host's pages, in 1/s */
  L?: number;
  /** revisit intervals per half-octave bin (bin b ≈ 2^(b/2) s), sparse: what the delay remedy needs */
  lh?: Record<string, number>;
  /** successful fetches measured (for the mean fetch time) */
  fn?: number;
  /** sum of their durations (ms; integer, so the mean never drifts) */
  fs?: number;
  /** longest of them (ms) */
  fx?: number;
}

export function emptyPoliteness(): PolitenessState {
  return { b: [], t: [], x: 0, f: 0, n: 0 };
}

/** Appends one request to the ring, dropping the oldest beyond RING_SIZE. */
export function pushRing(state: PolitenessState, bytes: number, durationMs: number, error: boolean): PolitenessState {
  const b = [...state.b, Math.max(0, Math.round(bytes))].slice(-RING_SIZE);
  const t = [...state.t, Math.max(0, Math.round(durationMs))].slice(-RING_SIZE);
  const x = ((state.x << 1) | (error ? 1 : 0)) & RING_MASK;
  return { ...state, b, t, x };
}

/** True when the i-th ring entry (0 = oldest) was an error. */
export function ringError(state: PolitenessState, i: number): boolean {
  const age = state.t.length - 1 - i;
  return age >= 0 && ((state.x >> age) & 1) === 1;
}

/** Errors (timeouts, disconnects, send/receive errors) among the remembered requests. */
export function ringErrorCount(state: PolitenessState): number {
  let v = state.x & ((1 << state.t.length) - 1);
  let count = 0;
  while (v !== 0) {
    v &= v - 1;
    count++;
  }
  return count;
}

/**
 * Effective speed in bytes/s over the error-free requests of the ring: total bytes / total time,
 * i.e. the mean line speed weighted by time, so a tiny 304 answer does not read as a dead line.
 * undefined when no error-free request with a measurable time is remembered.
 */
/**
 * Responses smaller than this say how far away the server is, not how fast its line is (robots.txt,
 * 304s, error pages): they are left out of the speed, or a tiny robots.txt would look like a dead line.
 */
export const MIN_SPEED_SAMPLE_BYTES = 4096;

export function ringSpeedBytesPerS(state: PolitenessState): number | undefined {
  let bytes = 0;
  let ms = 0;
  for (let i = 0; i < state.t.length; i++) {
    if (ringError(state, i) || (state.b[i] ?? 0) < MIN_SPEED_SAMPLE_BYTES) continue;
    bytes += state.b[i] ?? 0;
    ms += state.t[i] ?? 0;
  }
  if (ms <= 0) return undefined;
  return bytes / (ms / 1000);
}

/** Duration (ms) of the newest error-free request: e of the k × e rule. */
export function lastFetchMs(state: PolitenessState): number | undefined {
  for (let i = state.t.length - 1; i >= 0; i--) if (!ringError(state, i)) return state.t[i];
  return undefined;
}
