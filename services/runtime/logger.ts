/**
 * pino JSON logs on stdout (NDJSON for production). Services make child loggers per partition once,
 * not per record.
 */
import { pino } from 'pino';
import type { Logger, LevelWithSilent } from 'pino';

export type { Logger };

export function createLogger(options: { name: string; level?: LevelWithSilent; destination?: number | string }): Logger {
  const level = options.level ?? ((process.env.MEGURI_LOG_LEVEL as LevelWithSilent | undefined) ?? 'info');
  return pino(
    { name: options.name, level, base: { service: options.name, pid: process.pid } },
    pino.destination({ dest: options.destination ?? 1, sync: false }),
  );
}

/** A logger that drops everything; for tests and library use without logs. */
export const silentLogger: Logger = pino({ level: 'silent' });
