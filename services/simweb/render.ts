/**
 * Bytes of the simulated web: HTML pages built from a precomputed pool of filler paragraphs (cheap
 * to assemble, sized exactly to the configured page size), and the bodies of the special pages
 * (PNG, PDF, binary, 10 MB, gzip bomb, charsets).
 */

import { createGzip } from 'node:zlib';
import { deflateSync } from 'node:zlib';
import { hashInts, hashString, Rng, rngFor } from './random.ts';
import { relativeRef, type Link, type SimWebModel } from './model.ts';
import type { PageState } from './changes.ts';

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an ' +
  'they you were their one all we can her has there been if more when will would who so no time year ' +
  'people way day man thing woman life child world school state family student group country problem ' +
  'hand part place case week company system program question work government number night point home ' +
  'water room mother area money story fact month lot right study book eye job word business issue side ' +
  'kind head house service friend father power hour game line end member law car city community name ' +
  'president team minute idea kid body information back parent face others level office door health ' +
  'person art war history party result change morning reason research girl guy moment air teacher force ' +
  'education crawler index archive revisit freshness frontier schedule queue polite server network page ' +
  'link harvest corpus signal market river garden winter summer bridge station harbor island village'
).split(' ');

const LATIN1_WORDS = 'café naïve über façade crème déjà señor façon öffentlich größe élève année garçon'.split(' ');
const HIRAGANA_WORDS = 'あさひ こころ さくら ともだち ひかり みらい やまなみ ゆめ はなび かぜ'.split(' ');

function sentence(rng: Rng, words: readonly string[]): string {
  const n = 6 + rng.int(14);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(rng.pick(words));
  const s = parts.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1) + '.';
}

function paragraph(rng: Rng, words: readonly string[]): string {
  const n = 3 + rng.int(5);
  const ss: string[] = [];
  for (let i = 0; i < n; i++) ss.push(sentence(rng, words));
  return ss.join(' ');
}

const POOL_SIZE = 512;
/** Filler paragraphs, built once; pages pick from them by seeded indexes. */
const POOL: string[] = (() => {
  const rng = new Rng(0x5eed);
  const out: string[] = [];
  for (let i = 0; i < POOL_SIZE; i++) out.push(paragraph(rng, WORDS));
  return out;
})();

const ADS = [
  'Spring sale: 20% off all umbrellas',
  'Subscribe to our weekly newsletter',
  'New: extended opening hours',
  'Local weather: light rain expected',
  'Join our community forum today',
  'Tickets for the summer festival now available',
  'Free shipping on orders over 50',
  'Try our new mobile app',
];

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

function titleWords(seed: number, host: number, key: number, count: number): string {
  const rng = rngFor(seed, 0x71e, host, key);
  const ws: string[] = [];
  for (let i = 0; i < count; i++) ws.push(rng.pick(WORDS));
  const s = ws.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The href text of a link as written on the page at `fromPath`. */
export function renderHref(model: SimWebModel, fromHost: number, fromPath: string, link: Link): string {
  let href: string;
  const crossHost = link.host !== fromHost;
  const form = crossHost && (link.form === 'root' || link.form === 'relative') ? 'absolute' : link.form;
  switch (form) {
    case 'root':
      href = link.path;
      break;
    case 'relative':
      href = relativeRef(fromPath, link.path);
      break;
    case 'absolute':
    case 'protocol': {
      const origin = model.origin(link.host);
      const o = link.upperHost === true ? origin.replace(/\/\/[^:/]+/, (m) => m.toUpperCase()) : origin;
      href = form === 'absolute' ? o + link.path : o.slice('http:'.length) + link.path;
      break;
    }
  }
  return link.fragment === undefined ? href : `${href}#${link.fragment}`;
}

function anchorTag(model: SimWebModel, fromHost: number, fromPath: string, link: Link, sloppy: boolean): string {
  const href = renderHref(model, fromHost, fromPath, link);
  const text = titleWords(model.seed, link.host, hashString(link.path), 2 + (hashString(link.path) % 3));
  const rel = link.nofollow ? (link.relVariant === 1 ? ' rel="noopener nofollow"' : ' rel="nofollow"') : '';
  if (sloppy && !/[\s"'=<>`]/.test(href) && !link.nofollow) return `<A HREF=${href} class=lnk>${text}`;
  if (sloppy) return `<a href='${escapeAttr(href)}'${rel}>${text}</A>`;
  return `<a href="${escapeAttr(href)}"${rel}>${text}</a>`;
}

const INVALID_HREFS = [
  'http://[::1',
  'javascript:void(0)',
  'mailto:webmaster@example.invalid',
  'tel:+15555550100',
  'http://',
  'http://exa mple.invalid/',
  'ftp://files.example.invalid/pub/',
  'data:text/html,hello',
];

export interface RenderedPage {
  body: Buffer;
  contentType: string;
}

/**
 * Renders an HTML page. Main text depends on (page, contentVersion); the header stamp on
 * (version, lastModified), so boilerplate-only changes alter bytes but not the article.
 */
export function renderPage(
  model: SimWebModel,
  r: { host: number; page: number; kind: 'html' | 'malformed' | 'latin1' | 'sjis'; path: string; links: Link[]; invalidLinks: boolean; state: PageState },
  pageBytes: number,
): RenderedPage {
  const { host, page, kind, path, links, state } = r;
  const seed = model.seed;
  const sloppy = kind === 'malformed';
  const site = model.hostName(host);
  const title = titleWords(seed, host, page, 3) + (page === 0 ? ' home' : ` ${page}`);
  const declRng = rngFor(seed, 0xdec1, host, page);
  const decl = declRng.int(3); // 0: header only, 1: <meta charset>, 2: http-equiv
  let charsetName = 'utf-8';
  let words: readonly string[] = WORDS;
  if (kind === 'latin1') {
    charsetName = 'ISO-8859-1';
    words = [...WORDS, ...LATIN1_WORDS, ...LATIN1_WORDS];
  } else if (kind === 'sjis') {
    charsetName = 'Shift_JIS';
    words = [...HIRAGANA_WORDS, ...WORDS.slice(0, 20)];
  }
  const special = kind === 'latin1' || kind === 'sjis';
  let metaCharset = `<meta charset="utf-8">`;
  if (special && decl === 0) metaCharset = '';
  else if (special && decl === 1) metaCharset = `<meta charset="${charsetName.toLowerCase()}">`;
  else if (special) metaCharset = `<meta http-equiv="Content-Type" content="text/html; charset=${charsetName}">`;
  const contentType = special && decl !== 0 ? 'text/html' : `text/html; charset=${charsetName}`;

  const ad = ADS[hashInts(seed, host, page, state.version) % ADS.length] ?? '';
  // Fixed width so boilerplate changes never shift the byte budget of the main text.
  const stamp = `Edition ${state.version} of ${new Date(state.lastModified).toISOString().slice(0, 10)} &middot; ${ad}`.padEnd(112, ' ');

  const navLinks: Link[] = [];
  const childLinks: Link[] = [];
  const bodyLinks: Link[] = [];
  for (const l of links) {
    if (l.role === 'nav') navLinks.push(l);
    else if (l.role === 'child') childLinks.push(l);
    else bodyLinks.push(l);
  }

  const head =
    `<!DOCTYPE html>\n<html lang="${kind === 'sjis' ? 'ja' : 'en'}">\n<head>\n${metaCharset}\n` +
    `<title>${title} - ${site}</title>\n<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<meta name="description" content="${title}">\n<style>body{font-family:sans-serif;max-width:48em;margin:auto}</style>\n</head>\n` +
    `<body>\n<header class="site-header">\n<a class="skip" href="#main">Skip to content</a>\n` +
    `<div class="brand">${site}</div>\n<div class="stamp">${stamp}</div>\n<nav>` +
    navLinks.map((l) => anchorTag(model, host, path, l, sloppy)).join(' | ') +
    (sloppy ? '\n<ul><li>Menu<li>About</ul>\n' : '') +
    `</nav>\n</header>\n<main id="main">\n<h1 id="top">${title}</h1>\n<article>\n`;

  const childrenHtml =
    childLinks.length === 0
      ? ''
      : `</article>\n<section class="children"><h2 id="sec-1">Sections</h2>\n<ul>\n` +
        childLinks.map((l) => `<li>${anchorTag(model, host, path, l, sloppy)}${sloppy ? '' : '</li>'}`).join('\n') +
        `\n</ul>\n</section>\n`;
  const invalidHtml = r.invalidLinks
    ? `<p class="misc">${INVALID_HREFS.map((h, i) => `<a href="${escapeAttr(h)}">odd link ${i}</a>`).join(' ')}</p>\n`
    : '';
  const scriptTrap = sloppy ? `<script>var s='<a href="/p/999999.html">not a link</a>';</script>\n` : '';
  const foot =
    (childLinks.length === 0 ? '</article>\n' : '') +
    `</main>\n<footer><p>&copy; ${site}. All rights reserved. <a href="#top">Back to top</a></p></footer>\n` +
    (sloppy ? '<div><b><i>unclosed and misnested</b></i>\n<p>stray < sign & ampersand\n<!-- unterminated comment' : '</body>\n</html>\n');

  const linkParas = bodyLinks.map((l, i) => `<p class="rel">${i % 2 === 0 ? 'Related' : 'See also'}: ${anchorTag(model, host, path, l, sloppy)}${sloppy ? '' : '</p>'}\n`);
  const fixed = head.length + childrenHtml.length + invalidHtml.length + scriptTrap.length + foot.length + linkParas.reduce((a, p) => a + p.length, 0);

  // Filler up to the byte budget; ASCII so length == bytes (charset pages are approximate).
  let budget = pageBytes - fixed;
  const rng = rngFor(seed, 0xf111, host, page, state.contentVersion);
  const paras: string[] = [];
  const specialWords = kind === 'latin1' || kind === 'sjis';
  while (budget > 8) {
    const text = specialWords ? paragraph(rng, words) : (POOL[rng.int(POOL_SIZE)] ?? '');
    const wrapped = `<p>${text}</p>\n`;
    if (wrapped.length <= budget) {
      paras.push(wrapped);
      budget -= wrapped.length;
    } else {
      paras.push(`<p>${text.slice(0, budget - 8)}</p>\n`);
      budget = 0;
    }
  }
  // Interleave link paragraphs evenly with filler.
  const parts: string[] = [head];
  const every = linkParas.length === 0 ? Infinity : Math.max(1, Math.floor(paras.length / linkParas.length));
  let li = 0;
  for (let i = 0; i < paras.length; i++) {
    parts.push(paras[i] ?? '');
    if ((i + 1) % every === 0 && li < linkParas.length) parts.push(linkParas[li++] ?? '');
  }
  while (li < linkParas.length) parts.push(linkParas[li++] ?? '');
  parts.push(invalidHtml, scriptTrap, childrenHtml, foot);
  const html = parts.join('');
  let body: Buffer;
  if (kind === 'latin1') body = Buffer.from(html, 'latin1');
  else if (kind === 'sjis') body = encodeShiftJis(html);
  else body = Buffer.from(html, 'utf8');
  return { body, contentType };
}

/** Shift_JIS for ASCII and hiragana (the only non-ASCII text we generate); others become '?'. */
export function encodeShiftJis(s: string): Buffer {
  const out = Buffer.allocUnsafe(s.length * 2);
  let j = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) out[j++] = c;
    else if (c >= 0x3041 && c <= 0x3093) {
      const code = 0x829f + (c - 0x3041);
      out[j++] = code >> 8;
      out[j++] = code & 0xff;
    } else out[j++] = 0x3f;
  }
  return out.subarray(0, j);
}

/** A calendar trap page: each day links to the previous and next day. */
export function renderCalendar(model: SimWebModel, host: number, date: string, path: string, links: Link[]): Buffer {
  const site = model.hostName(host);
  const a = links.map((l, i) => `<li><a href="${escapeAttr(renderHref(model, host, path, l))}">${['Previous day', 'Next day', 'Home'][i] ?? 'Link'}</a></li>`);
  return Buffer.from(
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Events on ${date} - ${site}</title></head>\n` +
      `<body><h1>Events on ${date}</h1>\n<p>No events scheduled.</p>\n<ul>\n${a.join('\n')}\n</ul>\n</body></html>\n`,
  );
}

/** Small HTML for errors and notices. */
export function smallHtml(title: string, text: string): Buffer {
  return Buffer.from(`<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>\n`);
}

/** The body of every `duplicate` page: the same bytes on every host, so exact-duplicate detection has work. */
export function duplicateHtml(): Buffer {
  return smallHtml('Terms of use', 'These terms apply to every page of this site and of its partner sites. By reading on, you accept the terms of use of the network.');
}

// ------------------------------------------------------------------ binary bodies

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

function crc32(buf: Buffer): number {
  let c = -1;
  for (let i = 0; i < buf.length; i++) c = (CRC_TABLE[(c ^ (buf[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A valid 32x32 RGB PNG with pixels derived from `key`. */
export function pngBytes(key: number): Buffer {
  const w = 32;
  const h = 32;
  const rng = new Rng(key);
  const raw = Buffer.alloc(h * (1 + w * 3));
  for (let y = 0; y < h; y++) {
    raw[y * (1 + w * 3)] = 0;
    for (let x = 0; x < w * 3; x++) raw[y * (1 + w * 3) + 1 + x] = rng.int(256);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A small one-page PDF. */
export function pdfBytes(title: string): Buffer {
  const text = title.replace(/[()\\]/g, '');
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    '',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const stream = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  objs[3] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** Random bytes (never '<', so no parser finds tags in them), to be served as text/html. */
export function binaryBytes(key: number, size = 8192): Buffer {
  const rng = new Rng(key);
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) {
    const x = rng.int(256);
    b[i] = x === 0x3c ? 0x00 : x;
  }
  return b;
}

/** A chunk of filler HTML used to stream the huge page. */
export const HUGE_CHUNK: Buffer = Buffer.from(
  (() => {
    let s = '';
    let i = 0;
    while (s.length < 65536) s += `<p>${POOL[i++ % POOL_SIZE] ?? ''}</p>\n`;
    return s.slice(0, 65536);
  })(),
);

const bombCache = new Map<number, Promise<Buffer>>();

/** gzip of an HTML document padded with spaces to `decompressedBytes`; built once per size. */
export function gzipBomb(decompressedBytes: number): Promise<Buffer> {
  let p = bombCache.get(decompressedBytes);
  if (p === undefined) {
    p = new Promise<Buffer>((resolve, reject) => {
      const gz = createGzip({ level: 9 });
      const chunks: Buffer[] = [];
      gz.on('data', (c: Buffer) => chunks.push(c));
      gz.on('end', () => resolve(Buffer.concat(chunks)));
      gz.on('error', reject);
      const headHtml = Buffer.from('<!DOCTYPE html><html><head><title>Bomb</title></head><body>');
      const tailHtml = Buffer.from('</body></html>\n');
      const block = Buffer.alloc(1 << 20, 0x20);
      let left = Math.max(0, decompressedBytes - headHtml.length - tailHtml.length);
      gz.write(headHtml);
      const pump = (): void => {
        while (left > 0) {
          const n = Math.min(left, block.length);
          left -= n;
          if (!gz.write(n === block.length ? block : block.subarray(0, n))) {
            gz.once('drain', pump);
            return;
          }
        }
        gz.end(tailHtml);
      };
      pump();
    });
    bombCache.set(decompressedBytes, p);
  }
  return p;
}
