/**
 * `meguri demo --changing` as a user runs it (bin/meguri.js in a child process), kept short with
 * --duration: a changing simulated web on a fast clock, and the comparison with a fixed interval
 * at the same fetch budget; then `meguri tail changes --diff` on its data. And `--speed` is
 * refused off the simulated web.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, removeDir } from '../support/transports.ts';
import type { ChangingDemoReport } from '../../services/cli/demo-changing.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/meguri.js');

function meguri(args: string[], timeout = 120_000): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout, env: { ...process.env, MEGURI_LOG_LEVEL: 'warn' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('meguri demo --changing', { timeout: 180_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('crawls a changing simulated web on a fast clock and compares with a fixed interval at equal budget', () => {
    const dir = tempDir();
    dirs.push(dir);
    const summary = join(dir, 'summary.json');
    // 20 wall seconds at ×10,800 are 60 simulated hours: start-up takes 2-4 wall seconds (simulated
    // hours with no fetch), and a page's second visit comes 12 h to 3 d after its first (the default
    // revisit policy), so a shorter simulated span would leave most pages unrevisited by chance; every
    // page must still get its first fetch in the window.
    const r = meguri(['demo', '--changing', '--speed', '10800', '--duration', '20', '--hosts', '4', '--pages', '10', '--no-progress', '--data', join(dir, 'data'), '--summary-json', summary]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(readFileSync(summary, 'utf8')) as ChangingDemoReport;
    assert.deepEqual(JSON.parse(r.stdout), report);
    assert.ok(report.simulatedWeb.simulatedHours >= 59 && report.simulatedWeb.simulatedHours <= 61, `${report.simulatedWeb.simulatedHours} h`);
    const m = report.meguri;
    const f = report.fixedInterval;
    // Pages robots.txt disallows (this web's seed has some, e.g. `Disallow: /p/*3.html$` beating the
    // shorter `Allow: /p/3.html`) are never fetched, so they are out of both policies' figures.
    const disallowed = report.simulatedWeb.pagesDisallowedByRobots;
    assert.ok(disallowed > 0 && disallowed < 40, `${disallowed} pages disallowed`);
    assert.equal(m.pages + disallowed, 40);
    assert.equal(f.pages, m.pages);
    assert.ok(m.fetches > m.pages, `revisits happened: ${m.fetches} fetches`);
    assert.ok(report.crawl.pagesFetched >= m.fetches * 0.9);
    // Every allowed page had its first fetch in the window.
    assert.ok(m.versionsSeen <= m.versionsExisted && m.versionsSeen >= m.pages, `${m.versionsSeen} versions seen of ${m.versionsExisted}, ${m.pages} pages`);
    assert.ok(f.fetches <= m.fetches && f.fetches >= m.fetches - m.pages, `fixed policy budget ${f.fetches} vs ${m.fetches}`);
    assert.ok(f.intervalHours > 0);
    assert.ok(m.staleness >= 0 && m.staleness <= 1 && f.staleness >= 0 && f.staleness <= 1);
    assert.ok(m.fetchesPerVersionSeen > 0 && f.fetchesPerVersionSeen > 0);
    assert.match(r.stderr, /versions seen/);
    assert.match(r.stderr, /time stale/);
    // What a subscriber sees of those changes: each changed page with what changed in its main
    // text (the simulated web rewrites an article's paragraphs when it changes).
    const tail = meguri(['tail', 'changes', '--data', join(dir, 'data'), '--diff']);
    assert.equal(tail.status, 0, tail.stderr);
    assert.match(tail.stdout, /^\S+Z new http:\/\//m);
    assert.match(tail.stdout, /^\S+Z changed http:\/\/\S+.*\n {2}paragraphs \d+ → \d+: \+[1-9]\d* -\d+.*\n {2}\+ \[\d+\] \S/m);
  });

  it('refuses --speed unless names resolve only through --resolve', () => {
    const r = meguri(['crawl', '--speed', '100', '--no-progress', 'http://example.invalid/']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /--speed is only for simulated webs/);
  });
});
