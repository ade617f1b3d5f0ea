/** The fault campaign's table (markdown), as bench:faults prints it and docs/reliability.md quotes it. */
import type { ScenarioFigures } from './fault-figures.ts';

export function figuresTable(rows: readonly ScenarioFigures[]): string {
  const header = ['scenario', 'URLs per scheduler partition', 'reachable pages', 'fetched', 'lost', 'duplicate fetches (scheduler / in-flight re-fetch)', 'URLs with two `new`', 'dead letters', 'after the fault: restores (records)', 'rebalances', 'generations lost', 'recovery (s, worst)', 'completed', 'wall time'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const r of rows) {
    lines.push(
      `| ${[
        r.scenario,
        (r.prefillUrlsPerPartition + Math.round(r.reachable / Math.max(1, r.partitions))).toLocaleString('en-US'),
        r.reachable.toLocaleString('en-US'),
        r.fetched.toLocaleString('en-US'),
        r.lost.toLocaleString('en-US'),
        `${r.schedulerDuplicates} / ${r.refetches} (≤ ${r.inFlightAtKills} in flight)`,
        String(r.urlsWithTwoNew),
        String(r.deadLetters),
        `${r.eventsAfterFault.restores} (${r.eventsAfterFault.restoredRecords.toLocaleString('en-US')})`,
        String(r.eventsAfterFault.rebalances),
        String(r.eventsAfterFault.generationsLost),
        r.recoveryS.length === 0 ? '–' : r.recoveryS.some((x) => x === null) ? '**never**' : String(Math.max(...(r.recoveryS as number[]))),
        r.completed ? 'yes' : '**no**',
        `${(r.wallMs / 1000).toFixed(0)} s`,
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
