/**
 * Priority-determination speed of the crawl-ordering strategies (graph extension + importance,
 * excluding true PageRank) on generated web-like graphs.
 *
 *   npx tsx bench/ordering.bench.ts [nodes ...]     (default 100000 1000000)
 */
import { arch, cpus, platform, totalmem } from 'node:os';
import { generateGraph } from '../services/ordering/graph.ts';
import { replay } from '../services/ordering/simulate.ts';
import type { StrategyName } from '../services/ordering/strategies.ts';

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const nodes = sizes.length > 0 ? sizes : [100_000, 1_000_000];
const strategies: StrategyName[] = ['ipr-dl1', 'pr', 'bf', 'blc', 'ipr-pl', 'ipr-vr', 'ipr-ar', 'opic'];

const cpu = cpus();
console.log(`node ${process.version} ${platform()}/${arch()}, ${cpu.length} x ${cpu[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`);
for (const n of nodes) {
  const t0 = Date.now();
  const g = generateGraph({ nodes: n, seed: 7 });
  console.log(`\ngenerated ${n} nodes, ${g.m} edges in ${Date.now() - t0} ms (every node reachable from 0)`);
  for (const s of strategies) {
    // Best of 2 runs, so JIT warm-up does not count against the first strategy.
    let best = 0;
    for (let run = 0; run < 2; run++) {
      const { order, ms } = replay(g, s, 0);
      best = Math.max(best, order.length / (ms / 1000));
    }
    console.log(`${s.padEnd(8)} ${Math.round(best).toLocaleString('en-US').padStart(12)} pages/s`);
  }
}
