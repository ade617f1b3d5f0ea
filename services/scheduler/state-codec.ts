/**
 * The scheduler's records as the logic reads them (state.ts) and as they are stored: the `urls`
 * and `hosts` stores go through these codecs, which give fields their short on-disk keys on every
 * write and their names back on every read. The keys are the ones every earlier version wrote,
 * so state directories and changelogs load as they are; a key this version does not know passes
 * through both ways, so what a newer version wrote survives.
 */
import type { StoreCodec } from '../runtime/index.ts';
import { STATS_KEY } from './state.ts';
import type { HostOverload, HostState, UrlState } from './state.ts';

/** The key each field of a URL record has on disk. A new field needs one here (the type checks it). */
export const URL_KEYS = {
  status: 'st',
  depth: 'd',
  cgiHops: 'c',
  score: 's',
  queueKey: 'q',
  lastFetchAt: 'f',
  httpStatus: 'h',
  md5: 'm',
  etag: 'e',
  lastModified: 'l',
  fingerprint: 'p',
  paragraphHashes: 'tp',
  paragraphCount: 'tn',
  estimator: 'r',
  nextRevisitAt: 'n',
  revisitIntervalMs: 'w',
  queuedAsRevisit: 'v',
  scoreToPass: 'y',
  unreachableRevisits: 'x',
  retries: 't',
  redirectChain: 'rc',
  startSite: 'o',
  source: 'k',
  sitemapPriority: 'a',
  listedModifiedAt: 'lm',
  changeFreq: 'cf',
} as const satisfies { readonly [F in keyof Required<UrlState>]: string };

/** The host fields stored under a short key; the others are stored under their names. */
export const HOST_KEYS = {
  addressAskedAt: 'ia',
  politeness: 'pol',
  knownCredit: 'ks',
  alias: 'al',
  distinctPages: 'pg',
  templateSkipped: 'tk',
  overload: 'ov',
  sitemapsKnown: 'sm',
  revisitFactor: 'mk',
  pooledRates: 'rp',
} as const satisfies { readonly [F in keyof HostState]?: string };

export const OVERLOAD_KEYS = {
  allowedIntervalMs: 'a',
  remedy: 'k',
  factor: 'f',
  delayMs: 'd',
} as const satisfies { readonly [F in keyof HostOverload]: string };

type Fields = Record<string, unknown>;

/**
 * Renames an object's fields by `keys` (field → stored key) and back. `flags`: fields that are
 * `true` in memory and 1 on disk.
 */
function renaming(keys: Readonly<Record<string, string>>, flags: readonly string[] = []): { encode(o: Fields): Fields; decode(o: Fields): Fields } {
  const fields = new Map(Object.entries(keys).map(([field, key]) => [key, field]));
  const toKey = new Map(Object.entries(keys));
  const flagSet = new Set(flags);
  return {
    encode(o) {
      const out: Fields = {};
      for (const field in o) {
        const value = o[field];
        if (value === undefined) continue;
        out[toKey.get(field) ?? field] = flagSet.has(field) ? 1 : value;
      }
      return out;
    },
    decode(o) {
      const out: Fields = {};
      for (const key in o) {
        const field = fields.get(key) ?? key;
        out[field] = flagSet.has(field) ? true : o[key];
      }
      return out;
    },
  };
}

function objectOf(stored: unknown, what: string): Fields {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) throw new TypeError(`a stored ${what} is an object, not ${JSON.stringify(stored)}`);
  return stored as Fields;
}

const urlFields = renaming(URL_KEYS, ['queuedAsRevisit']);
const hostFields = renaming(HOST_KEYS, ['sitemapsKnown']);
const overloadFields = renaming(OVERLOAD_KEYS);

/** A URL record as it is stored. */
export function encodeUrlState(u: UrlState): Fields {
  return urlFields.encode(u as unknown as Fields);
}

/** A stored URL record under its fields' names. */
export function decodeUrlState(stored: unknown): UrlState {
  return urlFields.decode(objectOf(stored, 'URL record')) as unknown as UrlState;
}

/** A host record as it is stored. */
export function encodeHostState(h: HostState): Fields {
  const out = hostFields.encode(h as unknown as Fields);
  if (h.overload !== undefined) out[HOST_KEYS.overload] = overloadFields.encode(h.overload as unknown as Fields);
  return out;
}

/** A stored host record under its fields' names. */
export function decodeHostState(stored: unknown): HostState {
  const h = hostFields.decode(objectOf(stored, 'host record'));
  if (h.overload !== undefined) h.overload = overloadFields.decode(objectOf(h.overload, 'host overload'));
  return h as unknown as HostState;
}

/** The `urls` store's codec. */
export const urlStateCodec: StoreCodec<UrlState> = { encode: encodeUrlState, decode: decodeUrlState };

/** The `hosts` store's codec; the partition's counters (STATS_KEY) are stored as they are. */
export const hostStateCodec: StoreCodec<unknown> = {
  encode: (value, key) => (key === STATS_KEY ? value : encodeHostState(value as HostState)),
  decode: (stored, key) => (key === STATS_KEY ? stored : decodeHostState(stored)),
};

const CODECS: ReadonlyMap<string, StoreCodec<unknown>> = new Map([
  ['urls', urlStateCodec as StoreCodec<unknown>],
  ['hosts', hostStateCodec],
]);

/** The scheduler's stores as a task opens them: `urls` and `hosts` through their codecs. */
export function withStateCodecs<S extends { readonly name: string }>(stores: readonly S[]): (S & { codec?: StoreCodec<unknown> })[] {
  return stores.map((s) => {
    const codec = CODECS.get(s.name);
    return codec === undefined ? s : { ...s, codec };
  });
}
