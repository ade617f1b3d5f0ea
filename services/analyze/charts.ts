/** Small self-contained SVG charts for the analysis jobs (no script, no external resources). */

const INK = '#222';
const GRID = '#ddd';
const BAR = '#1f77b4';
const AREA = 'rgba(31,119,180,0.35)';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function open(width: number, height: number, title: string): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14">${esc(title)}</text>`,
  ];
}

/** Points on log–log axes (both coordinates > 0; others are left out). */
export function logLogChart(points: readonly { x: number; y: number }[], o: { title: string; xLabel: string; yLabel: string }): string {
  const width = 560;
  const height = 400;
  const m = { l: 60, r: 20, t: 34, b: 46 };
  const pts = points.filter((p) => p.x > 0 && p.y > 0);
  const out = open(width, height, o.title);
  const w = width - m.l - m.r;
  const h = height - m.t - m.b;
  const lx = pts.map((p) => Math.log10(p.x));
  const ly = pts.map((p) => Math.log10(p.y));
  const x0 = Math.floor(Math.min(0, ...lx));
  const x1 = Math.max(x0 + 1, Math.ceil(Math.max(...lx, 1)));
  const y0 = Math.floor(Math.min(...ly, 0));
  const y1 = Math.max(y0 + 1, Math.ceil(Math.max(...ly, 1)));
  const sx = (v: number): number => m.l + ((v - x0) / (x1 - x0)) * w;
  const sy = (v: number): number => m.t + h - ((v - y0) / (y1 - y0)) * h;
  for (let e = x0; e <= x1; e++) {
    out.push(`<line x1="${sx(e)}" y1="${m.t}" x2="${sx(e)}" y2="${m.t + h}" stroke="${GRID}"/>`);
    out.push(`<text x="${sx(e)}" y="${m.t + h + 14}" text-anchor="middle">${fmt(10 ** e)}</text>`);
  }
  for (let e = y0; e <= y1; e++) {
    out.push(`<line x1="${m.l}" y1="${sy(e)}" x2="${m.l + w}" y2="${sy(e)}" stroke="${GRID}"/>`);
    out.push(`<text x="${m.l - 4}" y="${sy(e) + 4}" text-anchor="end">${fmt(10 ** e)}</text>`);
  }
  out.push(`<rect x="${m.l}" y="${m.t}" width="${w}" height="${h}" fill="none" stroke="${INK}"/>`);
  for (let i = 0; i < pts.length; i++) out.push(`<circle cx="${sx(lx[i]!).toFixed(1)}" cy="${sy(ly[i]!).toFixed(1)}" r="2.5" fill="${BAR}"/>`);
  out.push(`<text x="${m.l + w / 2}" y="${height - 10}" text-anchor="middle">${esc(o.xLabel)}</text>`);
  out.push(`<text transform="translate(14 ${m.t + h / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** Horizontal bars, one per item, in the given order. */
export function barChart(items: readonly { label: string; value: number }[], o: { title: string; valueLabel: string }): string {
  const rowH = 20;
  const m = { l: 150, r: 70, t: 34, b: 30 };
  const width = 600;
  const height = m.t + m.b + Math.max(1, items.length) * rowH;
  const out = open(width, height, o.title);
  const w = width - m.l - m.r;
  const max = Math.max(1e-12, ...items.map((i) => i.value));
  items.forEach((it, i) => {
    const y = m.t + i * rowH;
    const bw = (it.value / max) * w;
    out.push(`<text x="${m.l - 6}" y="${y + rowH * 0.7}" text-anchor="end">${esc(it.label)}</text>`);
    out.push(`<rect x="${m.l}" y="${y + 3}" width="${bw.toFixed(1)}" height="${rowH - 6}" fill="${BAR}"/>`);
    out.push(`<text x="${m.l + bw + 4}" y="${y + rowH * 0.7}">${esc(fmt(it.value))}</text>`);
  });
  out.push(`<text x="${m.l + w / 2}" y="${height - 8}" text-anchor="middle">${esc(o.valueLabel)}</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** A radar (spider) chart of scores 0–100, with the 50 ring (the mean) drawn heavier. */
export function radarChart(axes: readonly { label: string; score: number; value: number }[], o: { title: string }): string {
  const size = 460;
  const cx = size / 2;
  const cy = size / 2 + 14;
  const radius = 150;
  const out = open(size, size + 20, o.title);
  const n = axes.length;
  const at = (i: number, r: number): [number, number] => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  };
  for (const ring of [25, 50, 75, 100]) {
    const pts = axes.map((_, i) => at(i, (radius * ring) / 100).map((v) => v.toFixed(1)).join(',')).join(' ');
    out.push(`<polygon points="${pts}" fill="none" stroke="${ring === 50 ? '#999' : GRID}" stroke-width="${ring === 50 ? 1.5 : 1}"/>`);
  }
  axes.forEach((ax, i) => {
    const [x, y] = at(i, radius);
    out.push(`<line x1="${cx}" y1="${cy}" x2="${x.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${GRID}"/>`);
    const [lx, ly] = at(i, radius + 22);
    const anchor = Math.abs(lx - cx) < 10 ? 'middle' : lx > cx ? 'start' : 'end';
    out.push(`<text x="${lx.toFixed(1)}" y="${ly.toFixed(1)}" text-anchor="${anchor}">${esc(ax.label)} ${Math.round(ax.score)}</text>`);
  });
  const poly = axes.map((ax, i) => at(i, (radius * Math.max(0, Math.min(100, ax.score))) / 100).map((v) => v.toFixed(1)).join(',')).join(' ');
  out.push(`<polygon class="site" points="${poly}" fill="${AREA}" stroke="${BAR}" stroke-width="2"/>`);
  out.push(`<text x="${cx}" y="${size + 10}" text-anchor="middle" fill="#666">rings 25/50/75/100; 50 = mean of all sites</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
