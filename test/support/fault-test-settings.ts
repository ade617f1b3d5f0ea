/**
 * The fault scenarios at test size: small enough that each crawl takes a minute or two on a loaded
 * 2-core machine, large enough that every service owns partitions and faults land mid-crawl.
 * TEST_FAULT_LOGS=<dir> keeps every service log there; TEST_CHILD_LOG sets their level.
 */
import type { ScenarioSettings } from './fault-scenarios.ts';

export function faultTestSettings(overrides: Partial<ScenarioSettings> = {}): ScenarioSettings {
  return {
    hosts: 10,
    pagesPerHost: 12,
    partitions: 4,
    kills: 3,
    completionTimeoutMs: 360_000,
    childLogLevel: process.env.TEST_CHILD_LOG ?? 'info',
    verbose: Boolean(process.env.TEST_FAULT_VERBOSE),
    ...(process.env.TEST_FAULT_LOGS ? { logDir: process.env.TEST_FAULT_LOGS, keepLogs: true } : {}),
    ...overrides,
  };
}
