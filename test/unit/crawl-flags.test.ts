/**
 * How `meguri crawl`'s flags and a scheduler settings file combine into the crawl's options
 * (services/cli/crawl-flags.ts): a flag given on the command line wins over the file, a flag's
 * default never does.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Command } from 'commander';
import { addCrawlFlags, crawlOptions, explicitOptions, loadCrawlModules } from '../../services/cli/crawl-flags.ts';
import type { CrawlFlags } from '../../services/cli/crawl-flags.ts';

const dir = mkdtempSync(join(tmpdir(), 'meguri-crawl-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function optionsFor(args: string[], settings?: Record<string, unknown>) {
  const cmd = addCrawlFlags(new Command('crawl').argument('[urls...]').exitOverride(), { minInterval: 10, dns: 'static' });
  const extra: string[] = [];
  if (settings) {
    const file = join(dir, `settings-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(settings));
    extra.push('--scheduler-config', file);
  }
  cmd.parse([...args, ...extra, 'http://a.test/'], { from: 'user' });
  const m = await loadCrawlModules();
  return crawlOptions(m, cmd.args, cmd.opts<CrawlFlags>(), explicitOptions(cmd));
}

describe('crawl flags and a settings file', () => {
  it('reads sitemaps by default, not with --no-sitemaps', async () => {
    assert.equal((await optionsFor([])).scheduler?.sitemaps, true);
    assert.equal((await optionsFor(['--no-sitemaps'])).scheduler?.sitemaps, false);
  });

  it('keeps a settings file\'s "sitemaps": false when the flag is not given', async () => {
    assert.equal((await optionsFor([], { sitemaps: false })).scheduler?.sitemaps, false);
    assert.equal((await optionsFor([], { sitemaps: true })).scheduler?.sitemaps, true);
  });

  it('lets a flag given on the command line win over the file', async () => {
    assert.equal((await optionsFor(['--no-sitemaps'], { sitemaps: true })).scheduler?.sitemaps, false);
    const depth = await optionsFor(['--max-depth', '3'], { maxDepth: 7 });
    assert.equal(depth.scheduler?.maxDepth, 3);
    assert.equal((await optionsFor([], { maxDepth: 7 })).scheduler?.maxDepth, 7);
  });

  it('reads no sitemaps in a discovery crawl, whatever the file says', async () => {
    assert.equal((await optionsFor(['--mode', 'discovery'], { sitemaps: true })).scheduler?.sitemaps, false);
  });
});
