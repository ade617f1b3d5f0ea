/** Hand-written SVG line charts of the simulator's curves (one panel per criterion). */
import type { CurvePoint, SimulationResult } from './simulate.ts';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];

interface Panel {
  title: string;
  value: (p: CurvePoint) => number;
}

const PANELS: Panel[] = [
  { title: 'A: top 0.1 % fetched', value: (p) => p.top['0.001'] },
  { title: 'A: top 1 % fetched', value: (p) => p.top['0.01'] },
  { title: 'A: top 10 % fetched', value: (p) => p.top['0.1'] },
  { title: 'B: sum of true PageRank fetched', value: (p) => p.prSum },
  { title: 'C: ordering error so far (lower is better)', value: (p) => p.cPartial },
];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function chartSvg(results: SimulationResult[], title: string): string {
  const pw = 340;
  const ph = 230;
  const cols = 3;
  const margin = { l: 44, r: 12, t: 26, b: 30 };
  const rows = Math.ceil((PANELS.length + 1) / cols);
  const width = cols * pw;
  const height = rows * ph + 30;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="white"/>`);
  out.push(`<text x="${width / 2}" y="18" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  PANELS.forEach((panel, i) => {
    const ox = (i % cols) * pw;
    const oy = 30 + Math.floor(i / cols) * ph;
    const w = pw - margin.l - margin.r;
    const h = ph - margin.t - margin.b;
    const x0 = ox + margin.l;
    const y0 = oy + margin.t;
    let ymax = 0;
    for (const r of results) for (const p of r.curve) ymax = Math.max(ymax, panel.value(p));
    ymax = ymax <= 0 ? 1 : ymax > 0.9 && ymax <= 1 ? 1 : ymax * 1.05;
    out.push(`<text x="${ox + pw / 2}" y="${oy + 16}" text-anchor="middle">${esc(panel.title)}</text>`);
    out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
    for (let k = 0; k <= 4; k++) {
      const gy = y0 + h - (k / 4) * h;
      const gx = x0 + (k / 4) * w;
      out.push(`<line x1="${x0}" y1="${gy}" x2="${x0 + w}" y2="${gy}" stroke="#eee"/>`);
      out.push(`<text x="${x0 - 4}" y="${gy + 4}" text-anchor="end">${((k / 4) * ymax).toFixed(2)}</text>`);
      out.push(`<text x="${gx}" y="${y0 + h + 14}" text-anchor="middle">${k * 25}%</text>`);
    }
    out.push(`<text x="${x0 + w / 2}" y="${y0 + h + 27}" text-anchor="middle" fill="#555">pages fetched</text>`);
    results.forEach((r, j) => {
      const pts = [`${x0},${y0 + h}`];
      for (const p of r.curve) pts.push(`${(x0 + p.fraction * w).toFixed(1)},${(y0 + h - (panel.value(p) / ymax) * h).toFixed(1)}`);
      out.push(`<polyline fill="none" stroke="${COLORS[j % COLORS.length]}" stroke-width="1.4" points="${pts.join(' ')}"/>`);
    });
  });
  // Legend in the last cell.
  const li = PANELS.length;
  const lx = (li % cols) * pw + 40;
  const ly = 30 + Math.floor(li / cols) * ph + 30;
  results.forEach((r, j) => {
    const y = ly + j * 18;
    const s = r.summary;
    out.push(`<line x1="${lx}" y1="${y}" x2="${lx + 24}" y2="${y}" stroke="${COLORS[j % COLORS.length]}" stroke-width="3"/>`);
    out.push(`<text x="${lx + 30}" y="${y + 4}">${esc(s.strategy)} (C=${s.criterionC.toFixed(3)})</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
