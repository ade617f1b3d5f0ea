/**
 * Scheduler settings from a JSON file (`--scheduler-config F` or MEGURI_SCHEDULER_CONFIG): every
 * option of services/scheduler/options.ts, checked by the same strict schema, so a typo is an
 * error naming the key rather than a silently ignored setting. Flags given on the command line win
 * over the file; the file wins over flag defaults.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { schedulerOptionsSchema } from '../scheduler/options.ts';
import type { SchedulerOptionsInput } from '../scheduler/options.ts';

export function readSchedulerConfig(file: string | undefined): SchedulerOptionsInput {
  if (file === undefined || file === '') return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read scheduler config ${file}: ${(err as Error).message}`);
  }
  const checked = schedulerOptionsSchema.safeParse(raw);
  if (!checked.success) throw new Error(`scheduler config ${file}:\n${z.prettifyError(checked.error)}`);
  return raw as SchedulerOptionsInput;
}
