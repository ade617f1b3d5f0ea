/** RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled. */

export function csvField(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'number' ? (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(8)))) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(fields: readonly (string | number | boolean | null | undefined)[]): string {
  return fields.map(csvField).join(',') + '\r\n';
}

export function csv(header: readonly string[], rows: Iterable<readonly (string | number | boolean | null | undefined)[]>): string {
  let out = csvLine(header);
  for (const r of rows) out += csvLine(r);
  return out;
}
