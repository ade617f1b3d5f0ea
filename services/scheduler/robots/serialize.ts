/**
 * Compact, versioned storage form of RobotsRules, for keeping one entry per host in RocksDB.
 * Groups and rules become positional arrays, so a typical file stores in little more than its
 * rule text: `{"v":1,"o":"f","g":[[["*"],1,[[0,"/private",2]],null]],"s":[],"b":40,"t":0}`.
 */
import { z } from 'zod';
import type { RobotsGroup, RobotsOrigin, RobotsRules } from './types.ts';

const ORIGIN_CODE: Record<RobotsOrigin, string> = { file: 'f', unavailable: 'u', unreachable: 'x' };
const ORIGIN_OF: Record<string, RobotsOrigin> = { f: 'file', u: 'unavailable', x: 'unreachable' };

const StoredRule = z.tuple([z.union([z.literal(0), z.literal(1)]), z.string(), z.number().int().nonnegative()]);
const StoredGroup = z.tuple([
  z.array(z.string()),
  z.number().int().nonnegative(),
  z.array(StoredRule),
  z.number().nonnegative().nullable(),
]);
const Stored = z.object({
  v: z.literal(1),
  o: z.enum(['f', 'u', 'x']),
  g: z.array(StoredGroup),
  s: z.array(z.string()),
  b: z.number().int().nonnegative(),
  t: z.union([z.literal(0), z.literal(1)]),
  a: z.string().optional(),
  r: z.string().optional(),
});
type StoredRules = z.infer<typeof Stored>;

/** The storage string for `rules`; `keepRaw: false` drops the raw body even if present. */
export function toJSON(rules: RobotsRules, opts: { keepRaw?: boolean } = {}): string {
  const stored: StoredRules = {
    v: 1,
    o: ORIGIN_CODE[rules.origin] as 'f' | 'u' | 'x',
    g: rules.groups.map((g) => [
      g.agents,
      g.line,
      g.rules.map((r) => [r.directive === 'allow' ? 1 : 0, r.pattern, r.line] as [0 | 1, string, number]),
      g.crawlDelay ?? null,
    ]),
    s: rules.sitemaps,
    b: rules.parsedBytes,
    t: rules.truncated ? 1 : 0,
  };
  if (rules.agent !== undefined) stored.a = rules.agent;
  if (rules.raw !== undefined && opts.keepRaw !== false) stored.r = rules.raw;
  return JSON.stringify(stored);
}

/** Restores rules stored by toJSON (string or already-parsed JSON). Throws on malformed input. */
export function fromJSON(stored: string | unknown): RobotsRules {
  const data = Stored.parse(typeof stored === 'string' ? JSON.parse(stored) : stored);
  const groups: RobotsGroup[] = data.g.map(([agents, line, rules, crawlDelay]) => {
    const group: RobotsGroup = {
      agents,
      line,
      rules: rules.map(([allow, pattern, ruleLine]) => ({
        directive: allow === 1 ? ('allow' as const) : ('disallow' as const),
        pattern,
        line: ruleLine,
      })),
    };
    if (crawlDelay !== null) group.crawlDelay = crawlDelay;
    return group;
  });
  const rules: RobotsRules = {
    origin: ORIGIN_OF[data.o] ?? 'file',
    groups,
    sitemaps: data.s,
    parsedBytes: data.b,
    truncated: data.t === 1,
  };
  if (data.a !== undefined) rules.agent = data.a;
  if (data.r !== undefined) rules.raw = data.r;
  return rules;
}
