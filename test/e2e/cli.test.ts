/**
 * The `meguri` command as a user runs it (bin/meguri.js in a child process): demo, parse,
 * robots check, crawl with static DNS, and --help on every command.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, removeDir, openTransport } from '../support/transports.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/meguri.js');

function meguri(args: string[], timeout = 120_000): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout, env: { ...process.env, MEGURI_LOG_LEVEL: 'warn' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('meguri CLI', { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('has --help on every command', () => {
    for (const cmd of [[], ['crawl'], ['demo'], ['run'], ['seed'], ['parse'], ['topics', 'create'], ['topics', 'describe'], ['robots', 'check'], ['simulate'], ['stats', 'hosts'], ['stats', 'crawl'], ['config'], ['tail'], ['replay']]) {
      const r = meguri([...cmd, '--help']);
      assert.equal(r.status, 0, `${cmd.join(' ')} --help: ${r.stderr}`);
      assert.match(r.stdout, /Usage: meguri/);
    }
  });

  it('prints every scheduler setting and takes a settings file, rejecting unknown keys', () => {
    const defaults = meguri(['config', 'scheduler']);
    assert.equal(defaults.status, 0, defaults.stderr);
    const settings = JSON.parse(defaults.stdout) as Record<string, unknown> & { politeness: Record<string, unknown>; revisitPolicy: Record<string, unknown> };
    assert.equal(settings.minIntervalMs, 10_000);
    assert.equal(settings.revisitKnownShare, 0.5);
    assert.equal(settings.politeness.maxPerIp, 2);
    assert.equal(settings.revisitPolicy.allocation, 'goal');
    assert.equal(settings.revisitGoal, 'freshness');
    const dir = tempDir();
    dirs.push(dir);
    // The printed defaults are themselves a valid settings file.
    const good = join(dir, 'scheduler.json');
    writeFileSync(good, JSON.stringify({ ...settings, minIntervalMs: 0, politeness: { ...settings.politeness, kFactor: 0 } }));
    const ok = meguri(['demo', '--hosts', '2', '--pages', '4', '--no-progress', '--data', join(dir, 'data'), '--scheduler-config', good]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.ok((JSON.parse(ok.stdout) as { pagesFetched: number }).pagesFetched >= 4);
    // What a subscriber sees: one "new" change per page, each with the pages record it points at.
    const tail = meguri(['tail', 'changes', '--data', join(dir, 'data'), '--with-page', '--limit', '3']);
    assert.equal(tail.status, 0, tail.stderr);
    const lines = tail.stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; url: string; pageRecord: { status: number; request: { url: string }; body?: string } });
    assert.equal(lines.length, 3);
    for (const c of lines) {
      assert.equal(c.kind, 'new');
      assert.equal(c.pageRecord.status, 200);
      assert.equal(c.pageRecord.request.url, c.url);
      assert.match(c.pageRecord.body ?? '', /<html/i);
    }
    const missing = meguri(['tail', 'nosuchtopic', '--data', join(dir, 'data')]);
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /does not exist/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ minIntervalMs: 0, revisitShare: 1 }));
    const r = meguri(['demo', '--hosts', '2', '--pages', '4', '--no-progress', '--scheduler-config', bad]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /revisitShare/);
    const noFile = meguri(['demo', '--hosts', '2', '--pages', '4', '--no-progress', '--scheduler-config', join(dir, 'nope.json')]);
    assert.notEqual(noFile.status, 0);
    assert.match(noFile.stderr, /cannot read scheduler config .*nope\.json/);
  });

  it('reports a crawl\'s counters and replays its topics: records with positions, the parser again over stored pages, a summary, and a consumer group reset', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const data = join(dir, 'data');
    const demo = meguri(['demo', '--hosts', '3', '--pages', '5', '--no-progress', '--data', data]);
    assert.equal(demo.status, 0, demo.stderr);
    const lines = (r: { stdout: string }): Record<string, unknown>[] => r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

    // The crawl's own counters, per partition and in total, agree with its summary.
    const summaryOfDemo = JSON.parse(demo.stdout) as { pagesFetched: number; urlsKnown: number; robotsFetched: number; hosts: number };
    const stats = meguri(['stats', 'crawl', '--data', data, '--json']);
    assert.equal(stats.status, 0, stats.stderr);
    const report = JSON.parse(stats.stdout) as { partitions: { partition: number; pagesFetched: number }[]; total: Record<string, number> };
    assert.equal(report.partitions.length, 4);
    assert.equal(report.total.pagesFetched, summaryOfDemo.pagesFetched);
    assert.equal(report.partitions.reduce((a, p) => a + p.pagesFetched, 0), summaryOfDemo.pagesFetched);
    assert.equal(report.total.urlsKnown, summaryOfDemo.urlsKnown);
    assert.equal(report.total.robotsFetched, summaryOfDemo.robotsFetched);
    assert.equal(report.total.hosts, summaryOfDemo.hosts);
    assert.equal(report.total.queued, 0, 'an idle crawl has nothing queued');
    const text = meguri(['stats', 'crawl', '--data', data]);
    assert.match(text.stdout, new RegExp(`^pagesFetched\\t${summaryOfDemo.pagesFetched}\\t`, 'm'));

    // The records, with positions; a later --since gives the tail of the same sequence.
    const changes = lines(meguri(['replay', 'changes', '--data', data])) as { partition: number; offset: number; timestamp: number; value: { url: string; kind: string; md5?: string } }[];
    assert.ok(changes.length >= 5);
    assert.ok(changes.every((c) => c.value.kind === 'new' && Number.isInteger(c.offset)));
    const times = changes.map((c) => c.timestamp).sort((a, b) => a - b);
    const cut = times[Math.floor(times.length / 2)]!;
    const later = lines(meguri(['replay', 'changes', '--data', data, '--since', new Date(cut).toISOString()])) as typeof changes;
    assert.deepEqual(later.map((c) => `${c.partition}@${c.offset}`).sort(), changes.filter((c) => c.timestamp >= cut).map((c) => `${c.partition}@${c.offset}`).sort());
    const earlier = lines(meguri(['replay', 'changes', '--data', data, '--until', String(cut)])) as typeof changes;
    assert.equal(earlier.length + later.length, changes.length);

    // The parser again over stored pages gives the hashes the crawl reported.
    const parsed = lines(meguri(['replay', 'pages', '--data', data, '--into', 'parse'])) as { url: string; reason: string; md5?: string; links: string[]; page: { partition: number } }[];
    const pages = parsed.filter((p) => p.reason !== 'robots');
    assert.equal(pages.length, (JSON.parse(demo.stdout) as { pagesFetched: number }).pagesFetched);
    const md5ByUrl = new Map(changes.map((c) => [c.value.url, c.value.md5]));
    for (const p of pages) if (md5ByUrl.has(p.url)) assert.equal(p.md5, md5ByUrl.get(p.url), p.url);
    assert.ok(pages.some((p) => p.links.length > 0));

    const summary = lines(meguri(['replay', 'pages', '--data', data, '--into', 'summary']))[0] as { records: number; byField: Record<string, number>; topKeys: { key: string; records: number }[] };
    assert.equal(summary.records, parsed.length);
    const statuses: Record<string, number> = {};
    for (const p of parsed as unknown as { status: number }[]) statuses[String(p.status)] = (statuses[String(p.status)] ?? 0) + 1;
    assert.deepEqual(summary.byField, statuses);
    assert.equal(summary.topKeys.reduce((a, k) => a + k.records, 0), parsed.length);

    // A downstream group set back to a time re-reads from there.
    const reset = lines(meguri(['replay', 'changes', '--data', data, '--group', 'subscriber', '--since', String(cut)])) as { partition: number; offset: number }[];
    const transport = await openTransport('embedded', data);
    try {
      const committed = await transport.committedOffsets('subscriber', 'changes');
      assert.deepEqual(
        committed.map((o) => [o.partition, o.offset]).sort(),
        reset.map((o) => [o.partition, o.offset]).sort(),
      );
      const described = await transport.describeTopic('changes');
      const fromCut = committed.reduce((a, o) => a + ((described?.partitions.find((p) => p.partition === o.partition)?.high ?? 0) - o.offset), 0);
      assert.equal(fromCut, later.length, 'the group has exactly the records from --since on left to read');
      // While another process holds the embedded log (as a running crawl does), it says so.
      const locked = meguri(['replay', 'changes', '--data', data]);
      assert.notEqual(locked.status, 0);
      assert.match(locked.stderr, /in use by a running crawl/);
      // A record that is not JSON is reported and skipped; the rest is still replayed.
      await transport.send([{ topic: 'pages', key: 'junk', value: Buffer.from('{not json') }]);
    } finally {
      await transport.close();
    }
    const withJunk = meguri(['replay', 'pages', '--data', data, '--into', 'parse']);
    assert.equal(withJunk.status, 1);
    assert.match(withJunk.stderr, /not JSON/);
    assert.equal(lines(withJunk).length, parsed.length);

    // A data directory without a crawl is an error, and stays without one.
    const nowhere = join(dir, 'no-crawl-here');
    for (const cmd of ['replay', 'tail']) {
      const r = meguri([cmd, 'changes', '--data', nowhere]);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /no embedded crawl in/);
    }
    assert.equal(existsSync(nowhere), false, 'nothing created where no crawl was');

    const wrongTopic = meguri(['replay', 'changes', '--data', data, '--into', 'parse']);
    assert.notEqual(wrongTopic.status, 0);
    assert.match(wrongTopic.stderr, /pages topic/);
    const backwards = meguri(['replay', 'changes', '--data', data, '--since', '2026-01-02', '--until', '2026-01-01']);
    assert.notEqual(backwards.status, 0);
    assert.match(backwards.stderr, /--until must be later/);
  });

  it('demo crawls a simulated web offline and writes the summary', () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, 'summary.json');
    const r = meguri(['demo', '--hosts', '6', '--pages', '12', '--min-interval', '0', '--no-progress', '--no-sitemaps', '--data', join(dir, 'data'), '--summary-json', file]);
    assert.equal(r.status, 0, r.stderr);
    const summary = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number | string | Record<string, number>>;
    for (const key of ['pagesFetched', 'uniqueUrlsFetched', 'duplicateFetches', 'robotsDisallowedSkipped', 'errors', 'bytes', 'elapsedS', 'pagesPerS', 'hosts']) {
      assert.equal(typeof summary[key], 'number', `summary has ${key}`);
    }
    assert.equal(summary.stoppedBecause, 'idle');
    assert.equal(summary.pagesFetched, (summary.simulatedWeb as Record<string, number>).reachableAllowedPages);
    assert.equal(summary.duplicateFetches, 0);
    assert.deepEqual(JSON.parse(r.stdout), summary);

    const stats = meguri(['stats', 'hosts', '--data', join(dir, 'data'), '--json', '--top', '100']);
    assert.equal(stats.status, 0, stats.stderr);
    const rows = JSON.parse(stats.stdout) as { host: string; fetched: number; queued: number; meanFetchS: number | null; overloaded: boolean }[];
    assert.equal(rows.length, 6, 'one row per host');
    assert.equal(rows.reduce((s, r) => s + r.fetched, 0), summary.pagesFetched);
    assert.ok(rows.every((r) => r.queued === 0 && r.meanFetchS !== null && r.overloaded === false));
  });

  it('crawl with --dns static fails an unmapped name at once, without asking a resolver', () => {
    const dir = tempDir();
    dirs.push(dir);
    const started = Date.now();
    const r = meguri(['crawl', 'http://no-such-host.meguri.invalid/', '--dns', 'static', '--until-idle', '--no-progress', '--min-interval', '0', '--data', dir]);
    assert.equal(r.status, 0, r.stderr);
    const summary = JSON.parse(r.stdout) as Record<string, number>;
    assert.equal(summary.pagesFetched, 0);
    assert.equal(summary.errors, 1, 'the seed URL is given up');
    // Generous for a loaded machine: a resolver's retries would take minutes, not seconds.
    assert.ok(Date.now() - started < 90_000);
  });

  it('parse prints links, nofollow flags, title and md5 as JSON', () => {
    const r = meguri(['parse', 'test/fixtures/pages/article.html', '--url', 'http://example.test/news/a.html', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { url: string; title: string; md5: string; links: { url: string; nofollow: boolean }[] };
    assert.equal(out.url, 'http://example.test/news/a.html');
    assert.ok(out.title.length > 0);
    assert.match(out.md5, /^[0-9a-f]{32}$/);
    assert.ok(out.links.length > 10);
    assert.ok(out.links.every((l) => l.url.startsWith('http') && typeof l.nofollow === 'boolean'));
  });

  it('robots check explains each verdict in input order', () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, 'robots.txt');
    writeFileSync(file, 'User-agent: *\nDisallow: /private\nAllow: /private/open$\nDisallow: /*.cgi$\n');
    const r = meguri(['robots', 'check', '--robots-file', file, '--agent', 'meguri/0.1', '--json', '/private/x', '/private/open', '/a.cgi', '/public']);
    assert.equal(r.status, 1, 'exit 1 when something is blocked');
    const verdicts = JSON.parse(r.stdout) as { url: string; allowed: boolean; rule: string | null }[];
    assert.deepEqual(verdicts.map((v) => [v.url, v.allowed]), [['/private/x', false], ['/private/open', true], ['/a.cgi', false], ['/public', true]]);
    assert.match(verdicts[0]!.rule ?? '', /Disallow: \/private/);
    assert.equal(verdicts[3]!.rule, null);
  });
});
