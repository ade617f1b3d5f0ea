/**
 * Dates as sitemaps and feeds write them, to epoch milliseconds.
 *
 * - W3C Datetime (sitemap `<lastmod>`, Atom `<updated>`, RSS 1.0 `<dc:date>`): `YYYY`, `YYYY-MM`,
 *   `YYYY-MM-DD`, `YYYY-MM-DDThh:mm[:ss[.s…]]TZD` with TZD `Z` or `±hh:mm`. A time without a zone is
 *   read as UTC (the protocol requires one; many sites leave it out).
 * - RFC 822/1123 (RSS 2.0 `<pubDate>`): `Tue, 10 Jun 2003 04:00:00 GMT`, day name optional, zones
 *   as names or `±hhmm`, two-digit years read as 19xx/20xx.
 * Anything else, or a calendar-impossible date, gives undefined.
 */

const W3C = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|[+-]\d{2}:?\d{2})?)?)?)?$/i;

function zoneOffsetMs(zone: string | undefined): number {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
}

function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 24 || mi > 59 || s > 60) return undefined;
  const t = Date.UTC(y, mo - 1, d, h, mi, Math.min(s, 59), ms);
  // Date.UTC rolls 31 April over into May: reject dates the calendar does not have.
  if (new Date(t).getUTCDate() !== d && h < 24) return undefined;
  return t;
}

/** A W3C Datetime (ISO 8601 profile) as epoch ms; undefined when it is not one. */
export function parseW3cDate(value: string): number | undefined {
  const m = W3C.exec(value.trim());
  if (m === null) return undefined;
  const frac = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  const t = utc(Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), frac);
  return t === undefined ? undefined : t - zoneOffsetMs(m[8]);
}

const MONTHS: Readonly<Record<string, number>> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const ZONES: Readonly<Record<string, number>> = { ut: 0, utc: 0, gmt: 0, z: 0, est: -5, edt: -4, cst: -6, cdt: -5, mst: -7, mdt: -6, pst: -8, pdt: -7, jst: 9 };
const RFC822 = /^(?:[a-z]{3,9},?\s+)?(\d{1,2})\s+([a-z]{3})[a-z]*\.?\s+(\d{2,4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([a-z]{1,5}|[+-]\d{4})?$/i;

/** An RFC 822/1123 date as epoch ms; undefined when it is not one. */
export function parseRfc822Date(value: string): number | undefined {
  const m = RFC822.exec(value.trim().replace(/\s+/g, ' '));
  if (m === null) return undefined;
  const month = MONTHS[m[2]!.toLowerCase()];
  if (month === undefined) return undefined;
  let year = Number(m[3]);
  if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900;
  const t = utc(year, month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0), 0);
  if (t === undefined) return undefined;
  const zone = m[7];
  if (zone === undefined) return t;
  if (/^[+-]/.test(zone)) return t - zoneOffsetMs(zone);
  const hours = ZONES[zone.toLowerCase()];
  // Military single-letter zones and unknown names: read as UTC rather than dropping the date.
  return t - (hours ?? 0) * 3_600_000;
}

/** Either format (feeds mix them): W3C first, then RFC 822. */
export function parseFeedDate(value: string): number | undefined {
  return parseW3cDate(value) ?? parseRfc822Date(value);
}
