/**
 * Hoshino et al.'s figures as files: per-depth rows as CSV, and the load-ratio and yield-ratio curves
 * over depth as a small hand-written SVG line chart (one line per series).
 */
import type { DepthRow } from './discovery.ts';

export interface Series {
  readonly name: string;
  readonly rows: readonly DepthRow[];
}

export function depthCsv(series: readonly Series[]): string {
  const lines = ['series,depth,pagesCrawled,externalServersFound,loadRatio,yieldRatio'];
  for (const s of series) {
    for (const r of s.rows) lines.push([JSON.stringify(s.name), r.depth, r.pagesCrawled, r.externalServersFound, r.loadRatio, r.yieldRatio].join(','));
  }
  return lines.join('\n') + '\n';
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Two panels side by side: load ratio by depth, external-server yield ratio by depth. */
export function depthChartSvg(series: readonly Series[], title: string): string {
  const pw = 380;
  const ph = 260;
  const m = { l: 46, r: 14, t: 28, b: 34 };
  const legendH = 18 * series.length + 10;
  const width = 2 * pw;
  const height = ph + legendH + 30;
  const maxDepth = Math.max(1, ...series.flatMap((s) => s.rows.map((r) => r.depth)));
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`, `<rect width="100%" height="100%" fill="white"/>`, `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14">${esc(title)}</text>`];
  const panels: { title: string; value: (r: DepthRow) => number }[] = [
    { title: 'load ratio (pages crawled by depth n / all)', value: (r) => r.loadRatio },
    { title: 'yield ratio (servers found by depth n / all)', value: (r) => r.yieldRatio },
  ];
  panels.forEach((panel, i) => {
    const x0 = i * pw + m.l;
    const y0 = 30 + m.t;
    const w = pw - m.l - m.r;
    const h = ph - m.t - m.b;
    const px = (d: number): number => x0 + (d / maxDepth) * w;
    const py = (v: number): number => y0 + h - v * h;
    out.push(`<text x="${x0 + w / 2}" y="${y0 - 8}" text-anchor="middle">${esc(panel.title)}</text>`);
    out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
    for (const v of [0, 0.25, 0.5, 0.75, 1]) out.push(`<text x="${x0 - 4}" y="${py(v) + 4}" text-anchor="end">${v}</text><line x1="${x0}" x2="${x0 + w}" y1="${py(v)}" y2="${py(v)}" stroke="#eee"/>`);
    for (let d = 0; d <= maxDepth; d += Math.max(1, Math.ceil(maxDepth / 10))) out.push(`<text x="${px(d)}" y="${y0 + h + 14}" text-anchor="middle">${d}</text>`);
    out.push(`<text x="${x0 + w / 2}" y="${y0 + h + 28}" text-anchor="middle">depth</text>`);
    series.forEach((s, k) => {
      const points = s.rows.map((r) => `${px(r.depth).toFixed(1)},${py(panel.value(r)).toFixed(1)}`).join(' ');
      out.push(`<polyline points="${points}" fill="none" stroke="${COLORS[k % COLORS.length]}" stroke-width="1.8"/>`);
    });
  });
  series.forEach((s, k) => {
    const y = 30 + ph + 14 + k * 18;
    out.push(`<line x1="${m.l}" x2="${m.l + 24}" y1="${y - 4}" y2="${y - 4}" stroke="${COLORS[k % COLORS.length]}" stroke-width="2"/><text x="${m.l + 30}" y="${y}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
