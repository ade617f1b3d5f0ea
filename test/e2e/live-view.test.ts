/**
 * The live view in a real headless Chromium (Debian's, set up by scripts/ensure-chromium.sh, driven
 * by puppeteer-core): `meguri demo --ui PORT` runs as a user runs it; the page must show counters
 * that move and colour the countries the demo places its three loopback addresses in.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';
import { tempDir, removeDir } from '../support/transports.ts';
import { freePort } from '../support/ports.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function chromiumPath(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() !== '') return r.stdout.trim();
  }
  return undefined;
}

const chromium = chromiumPath();

describe('live view', { timeout: 180_000 }, () => {
  let child: ChildProcess | undefined;
  let browser: Browser | undefined;
  const dirs: string[] = [];
  after(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      await new Promise((r) => child!.once('exit', r));
    }
    dirs.forEach(removeDir);
  });

  it('shows moving counters and the simulated web\'s countries on the world map during a demo crawl', { skip: chromium ? false : 'Chromium is not installed and could not be (scripts/ensure-chromium.sh)' }, async () => {
    const port = await freePort();
    const data = tempDir('meguri-live-');
    dirs.push(data);
    child = spawn(
      process.execPath,
      [join(root, 'bin/meguri.js'), 'demo', '--hosts', '9', '--pages', '40', '--ips', '127.0.0.1,127.0.0.2,127.0.0.3', '--min-interval', '0.3', '--ui', String(port), '--no-progress', '--data', data],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no live view announced: ${stderr}`)), 60_000);
      child!.stderr!.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (stderr.includes(`live view: http://127.0.0.1:${port}/`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child!.once('exit', (code) => reject(new Error(`demo exited (${code}): ${stderr}`)));
    });

    browser = await puppeteer.launch({ executablePath: chromium!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    page.on('request', (r) => {
      if (!r.url().startsWith(`http://127.0.0.1:${port}/`)) failed.push(`external request: ${r.url()}`);
    });
    await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'domcontentloaded' });
    const read = async (): Promise<number> => Number(await page.$eval('#pages', (e) => e.textContent));
    // Page-side expressions as strings: they run in the browser, not under Node's types.
    await page.waitForFunction(`Number(document.getElementById('pages').textContent) > 0`, { timeout: 30_000 });
    const first = await read();
    await page.waitForFunction(`Number(document.getElementById('pages').textContent) > ${first}`, { timeout: 30_000 });
    const second = await read();
    assert.ok(second > first, `pages counter moved: ${first} → ${second}`);
    // The demo places 127.0.0.1/.2/.3 in JP, US and DE: each country's shape gets coloured.
    await page.waitForFunction(`['JP', 'US', 'DE'].every((cc) => document.querySelector('.country[data-cc="' + cc + '"][data-pages]') !== null)`, { timeout: 30_000 });
    const coloured = await page.$$eval('.country[data-pages]', (els) => els.map((e) => e.getAttribute('data-cc')));
    assert.deepEqual([...new Set(coloured)].sort(), ['DE', 'JP', 'US']);
    const countries = await page.$$eval('.country', (els) => els.length);
    assert.ok(countries > 150, `a world map of ${countries} countries`);
    assert.match(await page.$eval('#countries', (e) => e.textContent ?? ''), /JP \d+/);
    assert.ok(Number(await page.$eval('#servers', (e) => e.textContent)) > 0);
    assert.deepEqual(failed, [], 'everything is served by the process itself');

    // `meguri run dashboard` shows the same crawl from its topics once the crawl has stopped.
    child.kill('SIGINT');
    await new Promise((r) => child!.once('exit', r));
    const port2 = await freePort();
    const dashboard = spawn(process.execPath, [join(root, 'bin/meguri.js'), 'run', 'dashboard', '--data', data, '--port', String(port2), '--country', '127.0.0.2=US'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let dashErr = '';
    dashboard.stderr!.on('data', (b: Buffer) => (dashErr += b.toString()));
    try {
      let state: { pages: number; countries: Record<string, { pages: number }> } | undefined;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && dashboard.exitCode === null) {
        try {
          const res = await fetch(`http://127.0.0.1:${port2}/state`);
          state = (await res.json()) as typeof state;
          if (state!.pages >= second) break;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.ok(state && state.pages >= second, `run dashboard counted ${state?.pages} pages; exit ${dashboard.exitCode}; stderr: ${dashErr}`);
      assert.ok((state.countries.US?.pages ?? 0) > 0, 'its own --country table applies');
    } finally {
      if (dashboard.exitCode === null) {
        dashboard.kill('SIGTERM');
        await new Promise((r) => dashboard.once('exit', r));
      }
    }
  });
});
