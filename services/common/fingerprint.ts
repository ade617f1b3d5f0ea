/**
 * Content fingerprints: an exact MD5 of the body and a 64-bit simhash of the page's main text,
 * which stays within a few bits when only boilerplate-like details change and moves far when the
 * content itself does.
 *
 * Simhash: the main text is lower-cased and cut into tokens — runs of letters/digits, and each
 * Han/Hiragana/Katakana character on its own (those scripts do not separate words with spaces).
 * Tokens made only of digits all hash alike: dates, counters and timestamps are the most common
 * noise inside otherwise unchanged text (the MD5 still tells any byte change apart).
 * Features are `SHINGLE` consecutive tokens; every feature gets a 64-bit hash made of two
 * independent 32-bit hashes (FNV-1a over the token with two different offset bases; the three
 * token hashes of a shingle are rotated by position, xor-ed and put through a murmur3-style
 * finaliser), so no BigInt is needed in the loop. Each of the
 * 64 bit positions sums +1/−1 over all features; the fingerprint bit is set where the sum is > 0.
 */
import { createHash } from 'node:crypto';
import { fmix32 } from './hash.ts';

/** MD5 of the body as UTF-8 bytes (or of the raw bytes), lower-case hex. */
export function md5Hex(body: string | Uint8Array): string {
  const h = createHash('md5');
  if (typeof body === 'string') h.update(body, 'utf8');
  else h.update(body);
  return h.digest('hex');
}

/** Tokens per feature (the shingle combination in simhash() is written for 3). */
export const SHINGLE = 3;

const FNV_PRIME = 0x01000193;
// `| 0` keeps the basis a small integer: 0x811c9dc5 as written is above 2^31, a double, and the
// token loop's hash would switch between double and integer at every token (a quarter slower).
const FNV_OFFSET_A = 0x811c9dc5 | 0;
const FNV_OFFSET_B = 0x050c5d1f;

// Stand-in hashes for every all-digit token.
const NUMBER_A = 0x2f6b1d3a;
const NUMBER_B = 0x61c88647;

// Character kinds: 0 separator, 1 letter, 2 digit (ASCII by table; see charKind for the rest).
const K_LETTER = 1;
const K_DIGIT = 2;
const ASCII_KIND = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_KIND[c] = K_DIGIT;
for (let c = 97; c <= 122; c++) ASCII_KIND[c] = K_LETTER;
for (let c = 65; c <= 90; c++) ASCII_KIND[c] = K_LETTER;

/** Non-ASCII characters that separate words: spaces, punctuation and symbol blocks. */
function isNonAsciiSeparator(c: number): boolean {
  return (
    (c >= 0x80 && c <= 0xbf && c !== 0xaa && c !== 0xb5 && c !== 0xba) || // Latin-1 punctuation, nbsp
    c === 0xd7 ||
    c === 0xf7 ||
    (c >= 0x2000 && c <= 0x2bff) || // general punctuation … misc symbols and arrows
    (c >= 0x3000 && c <= 0x303f) || // CJK symbols and punctuation
    (c >= 0xfe30 && c <= 0xfe4f) || // CJK compatibility forms
    (c >= 0xff00 && c <= 0xff0f) || // fullwidth punctuation
    (c >= 0xff1a && c <= 0xff20) ||
    (c >= 0xff3b && c <= 0xff40) ||
    (c >= 0xff5b && c <= 0xff65) ||
    c === 0xfeff
  );
}

/** Characters that form a token of their own. */
function isCjk(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff) || // Hiragana, Katakana
    (c >= 0x3400 && c <= 0x4dbf) || // CJK extension A
    (c >= 0x4e00 && c <= 0x9fff) || // CJK unified ideographs
    (c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
    (c >= 0xff66 && c <= 0xff9f) || // halfwidth Katakana
    (c >= 0xd840 && c <= 0xd87f) // high surrogates of the supplementary ideographic plane
  );
}

// Scratch buffers for token hashes, grown on demand and reused across calls (single-threaded).
let scratchA = new Int32Array(4096);
let scratchB = new Int32Array(4096);

function grow(): void {
  const a = new Int32Array(scratchA.length * 2);
  a.set(scratchA);
  scratchA = a;
  const b = new Int32Array(scratchB.length * 2);
  b.set(scratchB);
  scratchB = b;
}

/**
 * Tokenises `text` into scratchA/scratchB (two independent 32-bit hashes per token) and returns
 * the token count. Written as one flat loop without closures: it is the hottest code of the parser.
 */
function hashTokens(text: string): number {
  const s = text.toLowerCase();
  const n = s.length;
  // upper bound of the token count: at most one token per character
  while (scratchA.length < n + 1) grow();
  const A = scratchA;
  const B = scratchB;
  let count = 0;
  let a = FNV_OFFSET_A;
  let b = FNV_OFFSET_B;
  // OR of the kinds seen in the current token: 0 none yet, K_DIGIT digits only, else has letters
  let kind = 0;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    const k = c < 128 ? ASCII_KIND[c]! : isCjk(c) || isNonAsciiSeparator(c) ? 0 : K_LETTER;
    if (k !== 0) {
      a = Math.imul(a ^ c, FNV_PRIME);
      b = Math.imul(b ^ c, FNV_PRIME);
      kind |= k;
      continue;
    }
    if (kind !== 0) {
      A[count] = kind === K_DIGIT ? NUMBER_A : a;
      B[count] = kind === K_DIGIT ? NUMBER_B : b;
      count++;
      a = FNV_OFFSET_A;
      b = FNV_OFFSET_B;
      kind = 0;
    }
    if (c >= 128 && isCjk(c)) {
      let ca = Math.imul(FNV_OFFSET_A ^ c, FNV_PRIME);
      let cb = Math.imul(FNV_OFFSET_B ^ c, FNV_PRIME);
      // keep a surrogate pair together
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        c = s.charCodeAt(++i);
        ca = Math.imul(ca ^ c, FNV_PRIME);
        cb = Math.imul(cb ^ c, FNV_PRIME);
      }
      A[count] = ca;
      B[count] = cb;
      count++;
    }
  }
  if (kind !== 0) {
    A[count] = kind === K_DIGIT ? NUMBER_A : a;
    B[count] = kind === K_DIGIT ? NUMBER_B : b;
    count++;
  }
  return count;
}

/** Number of tokens simhash() sees in `text` (for tests and diagnostics). */
export function countTokens(text: string): number {
  return hashTokens(text);
}

const EMPTY_FINGERPRINT = '0000000000000000';

function hex8(x: number): string {
  return (x >>> 0).toString(16).padStart(8, '0');
}

// Feature counts per byte value of each of the 8 bytes of the 64-bit feature hash: 8 branch-free
// increments per feature instead of 64 per-bit updates; per-bit totals are summed up once at the
// end from the 8 × 256 table.
const byteCounts = new Int32Array(8 * 256);

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function countFeature(lo: number, hi: number): void {
  const c = byteCounts;
  c[lo & 255]!++;
  c[256 + ((lo >>> 8) & 255)]!++;
  c[512 + ((lo >>> 16) & 255)]!++;
  c[768 + (lo >>> 24)]!++;
  c[1024 + (hi & 255)]!++;
  c[1280 + ((hi >>> 8) & 255)]!++;
  c[1536 + ((hi >>> 16) & 255)]!++;
  c[1792 + (hi >>> 24)]!++;
}

/** 64-bit simhash of `text` as 16 lower-case hex characters (all zero for text without tokens). */
export function simhash(text: string): string {
  const count = hashTokens(text);
  if (count === 0) return EMPTY_FINGERPRINT;
  const A = scratchA;
  const B = scratchB;
  byteCounts.fill(0);
  let features = 0;
  if (count < SHINGLE) {
    // texts shorter than a shingle still deserve a fingerprint
    for (let k = 0; k < count; k++) {
      countFeature(fmix32(A[k]!), fmix32(B[k]!));
      features++;
    }
  } else {
    for (let i = SHINGLE - 1; i < count; i++) {
      // order-sensitive: each position of the shingle is rotated differently before mixing
      countFeature(
        fmix32(A[i - 2]! ^ rotl(A[i - 1]!, 11) ^ rotl(A[i]!, 22)),
        fmix32(B[i - 2]! ^ rotl(B[i - 1]!, 13) ^ rotl(B[i]!, 26)),
      );
      features++;
    }
  }
  // per-bit totals; bit set where more than half of the features have it (+1/−1 sum positive)
  const ones = new Int32Array(64);
  for (let chunk = 0; chunk < 8; chunk++) {
    const base = chunk * 256;
    for (let bit = 0; bit < 8; bit++) {
      // The byte values with this bit set come in runs of `step`, one run every 2 × step.
      const step = 1 << bit;
      let sum = 0;
      for (let v = step; v < 256; v += 2 * step) for (let j = 0; j < step; j++) sum += byteCounts[base + v + j]!;
      ones[chunk * 8 + bit] = sum;
    }
  }
  let lo = 0;
  let hi = 0;
  for (let bit = 0; bit < 32; bit++) {
    if (ones[bit]! * 2 > features) lo |= 1 << bit;
    if (ones[bit + 32]! * 2 > features) hi |= 1 << bit;
  }
  return hex8(hi) + hex8(lo);
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

const FP_RE = /^[0-9a-f]{16}$/i;

/** Number of differing bits between two 16-hex-character fingerprints. */
export function hammingDistance(a: string, b: string): number {
  if (!FP_RE.test(a) || !FP_RE.test(b)) throw new RangeError(`not a 64-bit hex fingerprint: ${a} / ${b}`);
  const hi = parseInt(a.slice(0, 8), 16) ^ parseInt(b.slice(0, 8), 16);
  const lo = parseInt(a.slice(8), 16) ^ parseInt(b.slice(8), 16);
  return popcount32(hi) + popcount32(lo);
}

/** Near-duplicate test: at most `threshold` differing bits. */
export function isSameContent(fpA: string, fpB: string, threshold = 3): boolean {
  return hammingDistance(fpA, fpB) <= threshold;
}
