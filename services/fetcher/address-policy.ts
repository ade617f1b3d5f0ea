/**
 * Which server addresses the fetcher may connect to (docs/politeness.md, "Address policy").
 *
 * A page on the web chooses the URLs the crawler fetches, so without a gate any page (or a DNS
 * answer, or a redirect) could steer the crawler into the operator's own network: loopback
 * services, RFC 1918 hosts, the cloud metadata endpoint at 169.254.169.254. The policy refuses
 * every address outside the public unicast space, including IPv6 forms that carry such an IPv4
 * address inside them (IPv4-mapped, NAT64, 6to4, Teredo), unless the operator allowed it with an
 * `--allow-address` range or reached it through a `--resolve` entry. Pure logic: the fetcher asks
 * it about the exact address it is about to dial.
 */
import { isIP } from 'node:net';

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
export interface IpBytes {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

export interface Cidr extends IpBytes {
  readonly prefix: number;
  /** As given, for messages. */
  readonly text: string;
}

function parseIpv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** Parses an IPv4 or IPv6 address (IPv6 brackets allowed, zone ids are not); undefined if invalid. */
export function parseIp(text: string): IpBytes | undefined {
  const t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const family = isIP(t);
  if (family === 4) return { family: 4, bytes: parseIpv4Bytes(t) };
  if (family !== 6 || t.includes('%')) return undefined;
  // isIP accepted it, so the shape is valid: at most one "::", an optional trailing dotted quad.
  let head = t;
  const tail: number[] = [];
  const lastColon = t.lastIndexOf(':');
  if (t.indexOf('.', lastColon) >= 0) {
    const quad = parseIpv4Bytes(t.slice(lastColon + 1));
    tail.push(((quad[0] as number) << 8) | (quad[1] as number), ((quad[2] as number) << 8) | (quad[3] as number));
    head = t.slice(0, lastColon + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const gap = head.indexOf('::');
  let words: number[];
  if (gap < 0) {
    words = [...groups(head), ...tail];
  } else {
    const left = groups(head.slice(0, gap));
    const right = [...groups(head.slice(gap + 2)), ...tail];
    words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  }
  if (words.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return { family: 6, bytes };
}

/**
 * Parses `a.b.c.d/n`, `x:y::/n` or a single address (a /32 or /128). Throws a RangeError naming
 * the bad part. Host bits below the prefix are ignored (`10.1.2.3/8` is 10.0.0.0/8).
 */
export function parseCidr(text: string): Cidr {
  const spec = text.trim();
  const slash = spec.indexOf('/');
  const addr = slash < 0 ? spec : spec.slice(0, slash);
  const ip = parseIp(addr);
  if (ip === undefined) throw new RangeError(`${JSON.stringify(text)} is not an IP address or CIDR range (e.g. 10.0.0.0/8, fd00::/8, 192.0.2.7)`);
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = spec.slice(slash + 1);
    prefix = /^\d{1,3}$/.test(p) ? Number(p) : NaN;
    if (!(prefix >= 0 && prefix <= max)) throw new RangeError(`${JSON.stringify(text)}: prefix length must be 0..${max}`);
  }
  return { ...ip, prefix, text: spec };
}

/** Whether `ip` lies in `range` (same family only). */
export function cidrContains(range: Cidr, ip: IpBytes): boolean {
  if (range.family !== ip.family) return false;
  const full = range.prefix >> 3;
  for (let i = 0; i < full; i++) if (range.bytes[i] !== ip.bytes[i]) return false;
  const rest = range.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (((range.bytes[full] as number) ^ (ip.bytes[full] as number)) & mask) === 0;
}

export function formatIp(ip: IpBytes): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((ip.bytes[i] as number) << 8) | (ip.bytes[i + 1] as number));
  // RFC 5952: the longest run of two or more zero groups (the first of equals) becomes "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = (ws: number[]): string => ws.map((w) => w.toString(16)).join(':');
  if (best < 0) return hex(words);
  return `${hex(words.slice(0, best))}::${hex(words.slice(best + bestLen))}`;
}

interface Range {
  readonly cidr: Cidr;
  readonly label: string;
}

function ranges(rows: readonly (readonly [string, string])[]): Range[] {
  return rows.map(([cidr, label]) => ({ cidr: parseCidr(cidr), label }));
}

/** IPv4 space a public web crawler has no business connecting to. */
const FORBIDDEN_V4 = ranges([
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private (RFC 1918)'],
  ['100.64.0.0/10', 'carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata lives at 169.254.169.254)'],
  ['172.16.0.0/12', 'private (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.88.99.0/24', '6to4 relay anycast (deprecated)'],
  ['192.168.0.0/16', 'private (RFC 1918)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved or broadcast'],
]);

/** IPv6 ranges refused outright (the forms that embed an IPv4 address are handled apart). */
const FORBIDDEN_V6 = ranges([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'local-use NAT64 (RFC 8215)'],
  ['100::/64', 'discard-only (RFC 6666)'],
  ['2001:2::/48', 'benchmarking (RFC 5180)'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation (RFC 9637)'],
  ['fc00::/7', 'unique local (ULA)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
]);

const V4_MAPPED = parseCidr('::ffff:0:0/96');
const V4_COMPATIBLE = parseCidr('::/96');
const NAT64 = parseCidr('64:ff9b::/96');
const SIX_TO_FOUR = parseCidr('2002::/16');
const TEREDO = parseCidr('2001::/32');
const RESERVED_V6 = parseCidr('::/8');

export interface EmbeddedIpv4 {
  /** How the IPv6 address carries it. */
  readonly form: 'IPv4-mapped' | 'IPv4-compatible' | 'NAT64' | '6to4' | 'Teredo server' | 'Teredo client';
  readonly v4: IpBytes;
  /** The connection ends at that very IPv4 host (mapped, compatible, NAT64), not at a gateway to it. */
  readonly sameHost: boolean;
}

function v4At(bytes: Uint8Array, offset: number, xor = 0): IpBytes {
  return { family: 4, bytes: Uint8Array.from(bytes.subarray(offset, offset + 4), (b) => b ^ xor) };
}

/** IPv4 addresses carried inside an IPv6 address. */
export function embeddedIpv4(ip: IpBytes): EmbeddedIpv4[] {
  if (ip.family !== 6) return [];
  const b = ip.bytes;
  if (cidrContains(V4_MAPPED, ip)) return [{ form: 'IPv4-mapped', v4: v4At(b, 12), sameHost: true }];
  if (cidrContains(NAT64, ip)) return [{ form: 'NAT64', v4: v4At(b, 12), sameHost: true }];
  if (cidrContains(SIX_TO_FOUR, ip)) return [{ form: '6to4', v4: v4At(b, 2), sameHost: false }];
  if (cidrContains(TEREDO, ip)) {
    return [
      { form: 'Teredo server', v4: v4At(b, 4), sameHost: false },
      { form: 'Teredo client', v4: v4At(b, 12, 0xff), sameHost: false },
    ];
  }
  // ::/96 minus :: and ::1, which are refused as such before this is asked.
  if (cidrContains(V4_COMPATIBLE, ip)) return [{ form: 'IPv4-compatible', v4: v4At(b, 12), sameHost: true }];
  return [];
}

/** Why an address is not public, or undefined for public unicast space. */
export function nonPublicReason(ip: IpBytes): string | undefined {
  if (ip.family === 4) return FORBIDDEN_V4.find((r) => cidrContains(r.cidr, ip))?.label;
  const direct = FORBIDDEN_V6.find((r) => cidrContains(r.cidr, ip));
  if (direct !== undefined) return direct.label;
  const embedded = embeddedIpv4(ip);
  for (const e of embedded) {
    const inner = FORBIDDEN_V4.find((r) => cidrContains(r.cidr, e.v4));
    if (inner !== undefined) return `${e.form} form of ${formatIp(e.v4)}, ${inner.label}`;
  }
  // IETF-reserved space, IPv4-compatible forms (deprecated) included; IPv4-mapped and the NAT64
  // prefix (0064:ff9b::/96) lie in it too and are in use.
  if (cidrContains(RESERVED_V6, ip) && !cidrContains(V4_MAPPED, ip) && !cidrContains(NAT64, ip)) return 'reserved (::/8)';
  return undefined;
}

/** True for addresses outside the public unicast space (see nonPublicReason). */
export function isNonPublicAddress(text: string): boolean {
  const ip = parseIp(text);
  return ip === undefined || nonPublicReason(ip) !== undefined;
}

export interface AddressPolicyOptions {
  /** `--allow-address` ranges: CIDR strings or single addresses. */
  allow?: Iterable<string>;
  /**
   * Static DNS: only addresses reached through the `--resolve` map (or allowed) are dialled, public
   * or not, so nothing leaves the machine that the operator did not name.
   */
  onlyAllowed?: boolean;
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** How the dialled address was found. */
export type AddressSource = 'resolve-map' | 'literal' | 'dns';

export class AddressPolicy {
  private readonly allow: Cidr[];
  private readonly onlyAllowed: boolean;

  constructor(opts: AddressPolicyOptions = {}) {
    this.allow = [...(opts.allow ?? [])].map((c) => {
      try {
        return parseCidr(c);
      } catch (err) {
        throw new RangeError(`--allow-address: ${(err as Error).message}`);
      }
    });
    this.onlyAllowed = opts.onlyAllowed ?? false;
  }

  /** The allowed ranges as given. */
  get allowed(): readonly string[] {
    return this.allow.map((c) => c.text);
  }

  /**
   * Whether the fetcher may connect to `address`, found for `host` by `source`. An address reached
   * through the operator's `--resolve` map is trusted for the names mapped to it; the same address
   * in an IP-literal URL or a DNS answer is not, unless an `--allow-address` range covers it.
   */
  check(address: string, source: AddressSource, host = address): AddressVerdict {
    if (source === 'resolve-map') return { allowed: true };
    const ip = parseIp(address);
    if (ip === undefined) return { allowed: false, reason: `${host}: ${JSON.stringify(address.slice(0, 100))} is not an IP address` };
    if (this.allowListed(ip)) return { allowed: true };
    const shown = source === 'literal' ? formatIp(ip) : `${host} resolves to ${formatIp(ip)}`;
    if (this.onlyAllowed) {
      const what = source === 'literal' ? `IP-literal URL host ${formatIp(ip)}` : shown;
      return { allowed: false, reason: `${what} is not dialled under --dns static: only --resolve names and --allow-address ranges are` };
    }
    const why = nonPublicReason(ip);
    if (why === undefined) return { allowed: true };
    return { allowed: false, reason: `${shown}, which is not a public address (${why}); allow it with --allow-address` };
  }

  private allowListed(ip: IpBytes): boolean {
    if (this.allow.length === 0) return false;
    if (this.allow.some((c) => cidrContains(c, ip))) return true;
    // ::ffff:10.0.0.1 and 64:ff9b::a00:1 end at 10.0.0.1: allowing that host allows these forms.
    return embeddedIpv4(ip).some((e) => e.sameHost && this.allow.some((c) => cidrContains(c, e.v4)));
  }
}
