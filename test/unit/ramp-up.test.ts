import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isPage, rampUp } from '../../bench/vs-peer/ramp-up.ts';
import type { ServedRequest } from '../../bench/vs-peer/ramp-up.ts';

/** Pages at `rate(t)` per second for `seconds`, spread evenly in each second, over hosts h0…h(hosts−1) in turn. */
function crawl(seconds: number, rate: (s: number) => number, hostsAt: (s: number) => number): ServedRequest[] {
  const out: ServedRequest[] = [];
  let n = 0;
  for (let s = 0; s < seconds; s++) {
    const k = rate(s);
    for (let j = 0; j < k; j++) {
      out.push({ wallMs: 10_000 + s * 1000 + (j * 1000) / k, host: `h${n % hostsAt(s)}`, path: `/p${n}.html`, status: 200 });
      n++;
    }
  }
  return out;
}

describe('ramp-up of a crawl from the access log', () => {
  it('finds full speed and the time to reach it', () => {
    // 10 s ramp from 10 to 100 pages/s, then 40 s at 100; hosts discovered over the first 8 s.
    const requests = crawl(50, (s) => (s < 10 ? 10 + 9 * s : 100), (s) => Math.min(200, 5 + 25 * s));
    const r = rampUp(requests)!;
    assert.ok(Math.abs(r.fullSpeedPagesPerS - 100) < 1, `full speed ${r.fullSpeedPagesPerS}`);
    // 90 % of 100 over a 2 s window is 180 pages in the last 2 s: seconds 8 and 9 hold 82 + 91, so
    // it is reached a third of the way into second 10.
    assert.ok(r.timeToFullSpeedS > 10 && r.timeToFullSpeedS < 10.6, `time to full speed ${r.timeToFullSpeedS}`);
    assert.equal(r.hostsReached, 200);
    assert.ok(r.timeToAllHostsS > 7 && r.timeToAllHostsS < 9, `time to all hosts ${r.timeToAllHostsS}`);
  });

  it('measures from the first request, robots.txt and sitemaps included, but counts only pages', () => {
    const pages = crawl(30, () => 50, () => 10);
    const early: ServedRequest[] = [
      { wallMs: 5_000, host: 'h0', path: '/robots.txt', status: 200 },
      { wallMs: 6_000, host: 'h0', path: '/sitemap.xml', status: 200 },
      { wallMs: 7_000, host: 'h0', path: '/missing.html', status: 404 },
    ];
    const r = rampUp([...early, ...pages])!;
    assert.equal(r.pages, pages.length);
    // Steady from its first page (10 s), which is 5 s after the crawl's first request; the first
    // full window ends 2 s after that page.
    assert.ok(r.timeToFullSpeedS >= 5 && r.timeToFullSpeedS <= 7.1, `time to full speed ${r.timeToFullSpeedS}`);
    assert.ok(!isPage(early[0]!) && !isPage(early[1]!) && !isPage(early[2]!));
  });

  it('does not call a crawl with a short burst at the start fast', () => {
    // A burst of 300 pages in the first 0.5 s, then 10 pages/s: the burst is not full speed.
    const burst: ServedRequest[] = Array.from({ length: 300 }, (_, i) => ({ wallMs: 10_000 + i, host: 'h1', path: `/b${i}.html`, status: 200 }));
    const slow = crawl(60, () => 10, () => 3).map((r) => ({ ...r, wallMs: r.wallMs + 1_000 }));
    const r = rampUp([...burst, ...slow])!;
    assert.ok(Math.abs(r.fullSpeedPagesPerS - 10) < 0.5, `full speed ${r.fullSpeedPagesPerS}`);
    // The burst fills the first window only before a whole window has passed; it does not count.
    assert.ok(r.timeToFullSpeedS >= 2, `time to full speed ${r.timeToFullSpeedS}`);
  });

  it('takes a crawl of more requests than a function call takes arguments', () => {
    const r = rampUp(crawl(400, () => 500, () => 200))!;
    assert.equal(r.pages, 200_000);
    assert.ok(Math.abs(r.fullSpeedPagesPerS - 500) < 1, `full speed ${r.fullSpeedPagesPerS}`);
  });

  it('has nothing to say about a crawl of a handful of pages', () => {
    assert.equal(rampUp([]), undefined);
    assert.equal(rampUp(crawl(1, () => 5, () => 1)), undefined);
  });
});
