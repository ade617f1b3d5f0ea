/** The one HTML page of the live view: counters, recent changes and the world map, updated by server-sent events. */
import { worldMapSvg } from './world-map.ts';

export function dashboardHtml(title: string): string {
  const safe = title.replace(/[<>&"]/g, '');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${safe}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:sans-serif;margin:1em;color:#222}
h1{font-size:1.2em;margin:0 0 .5em}
.counters{display:flex;flex-wrap:wrap;gap:.6em;margin-bottom:.8em}
.counter{border:1px solid #ccc;border-radius:4px;padding:.4em .7em;min-width:7em}
.counter b{display:block;font-size:1.4em}
#world{width:100%;max-width:960px;border:1px solid #ccc}
.country{fill:#d6d6d6;stroke:#fff;stroke-width:.3}
.country[data-pages]{stroke:#333;stroke-width:.5}
#changes{font-size:.85em;max-height:14em;overflow:auto}
#status{color:#888;font-size:.8em}
</style></head>
<body>
<h1>${safe}</h1>
<div class="counters">
<div class="counter">pages<b id="pages">0</b></div>
<div class="counter">pages/s<b id="pps">0</b></div>
<div class="counter">errors<b id="errors">0</b></div>
<div class="counter">servers<b id="servers">0</b></div>
<div class="counter">servers active<b id="active">0</b></div>
<div class="counter">requested<b id="requested">0</b></div>
<div class="counter">frontier in flight<b id="pending">0</b></div>
<div class="counter">MB<b id="mb">0</b></div>
</div>
${worldMapSvg()}
<div id="legend">pages by server country: <span id="countries"></span></div>
<h2>Recent changes</h2>
<ol id="changes"></ol>
<div id="status">connecting…</div>
<script>
const $ = (id) => document.getElementById(id);
function colour(pages, max) {
  const t = Math.log(1 + pages) / Math.log(1 + Math.max(1, max));
  const l = Math.round(85 - 55 * t);
  return 'hsl(210,70%,' + l + '%)';
}
function show(s) {
  $('pages').textContent = s.pages;
  $('pps').textContent = s.pagesPerSecond.toFixed(1);
  $('errors').textContent = s.errors;
  $('servers').textContent = s.servers;
  $('active').textContent = s.serversActive;
  $('requested').textContent = s.requested;
  $('pending').textContent = s.pending;
  $('mb').textContent = (s.bytes / 1e6).toFixed(1);
  const entries = Object.entries(s.countries).sort((a, b) => b[1].pages - a[1].pages);
  const max = entries.length ? entries[0][1].pages : 1;
  for (const [cc, c] of entries) {
    for (const p of document.querySelectorAll('.country[data-cc="' + cc + '"]')) {
      p.setAttribute('data-pages', String(c.pages));
      p.style.fill = colour(c.pages, max);
    }
  }
  $('countries').textContent = entries.map(([cc, c]) => cc + ' ' + c.pages + ' (' + c.servers + ' servers)').join(', ') + (s.unknown.pages ? (entries.length ? ', ' : '') + 'unknown ' + s.unknown.pages : '');
  $('changes').replaceChildren(...s.changes.map((c) => { const li = document.createElement('li'); li.textContent = new Date(c.at).toISOString().slice(11, 19) + ' ' + c.kind + ' ' + c.url; return li; }));
  $('status').textContent = 'updated ' + new Date(s.at).toISOString();
}
const events = new EventSource('events');
events.onmessage = (e) => show(JSON.parse(e.data));
events.onerror = () => { $('status').textContent = 'disconnected; retrying…'; };
</script>
</body></html>
`;
}
