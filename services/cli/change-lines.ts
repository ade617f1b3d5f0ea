/**
 * `meguri tail changes --diff`: a `changes` record as a reader takes it in — one line with the time,
 * the kind and the URL, and for a `changed` record with a diff the counts, the added paragraphs
 * quoted (`+`) and the positions of the removed ones (`-`). Pure.
 */
import type { ChangeRecord } from '../../schemas/index.ts';

/** Lines of one `changes` record; a record that is not one (unreadable) is printed as JSON. */
export function changeLines(record: Record<string, unknown>): string[] {
  const c = record as Partial<ChangeRecord>;
  if (typeof c.kind !== 'string' || typeof c.url !== 'string' || typeof c.time !== 'number') return [JSON.stringify(record)];
  const head = `${new Date(c.time).toISOString()} ${c.kind} ${c.url}${c.title ? `  "${c.title}"` : ''}`;
  const d = c.diff;
  if (d === undefined) return c.kind === 'changed' ? [head, '  (no diff: the previous version was reported before paragraph hashes were kept)'] : [head];
  const counts = `  paragraphs ${d.previousParagraphs} → ${d.paragraphs}: +${d.added} -${d.removed}${d.moved > 0 ? ` ~${d.moved} moved` : ''}${d.partial ? ' (the first 64 of each compared)' : ''}`;
  const lines = [head, counts];
  for (const a of d.addedParagraphs) lines.push(`  + [${a.at}] ${a.text}`);
  if (d.added > d.addedParagraphs.length) lines.push(`  + … ${d.added - d.addedParagraphs.length} more added`);
  if (d.removedAt.length > 0) lines.push(`  - removed at ${d.removedAt.join(', ')}${d.removed > d.removedAt.length ? ` and ${d.removed - d.removedAt.length} more` : ''} (positions in the previous version)`);
  return lines;
}
