// Preloaded with `node --import` into each contender of bench:vs-peer: when the process exits it
// writes its own CPU time and peak RSS (worker threads included) to the file named by
// MEGURI_BENCH_USAGE_FILE, so the figures cover the whole process from its first instruction.
import { writeFileSync } from 'node:fs';

const file = process.env.MEGURI_BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: u.maxRSS, uptimeMs: Math.round(process.uptime() * 1000) }));
  });
}
