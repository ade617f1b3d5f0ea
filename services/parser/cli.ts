/**
 * `meguri parse FILE --url URL [--json]`: what the parser makes of one saved page — every link,
 * normalised, flagged `nofollow` when the crawler would not follow it (rel nofollow/ugc/sponsored
 * or a robots meta nofollow), plus title, language, canonical, robots noindex, MD5 and fingerprint.
 *
 * The file's bytes are decoded like a browser would without HTTP headers: a BOM wins, then the
 * charset of `contentType` when given, then `<meta charset>`/`http-equiv` in the first 1024
 * bytes, else UTF-8. The MD5 is taken over the decoded text as UTF-8, the same way the crawler
 * hashes the HTML bodies it decodes from `pages` (for a UTF-8 file without BOM: the file's MD5).
 */
import { readFile } from 'node:fs/promises';
import { getEncoding } from 'encoding-sniffer';
import iconv from 'iconv-lite';
import { extractPage, type ExtractOptions } from './extract.ts';
import { md5Hex, simhash } from '../common/fingerprint.ts';
import { normalizeUrl } from '../common/url.ts';

export interface ParseCommandArgs {
  file: string;
  url: string;
  json: boolean;
  /** Content-Type to assume (its charset parameter is honoured after a BOM). */
  contentType?: string;
  /** Extra robots meta name to honour besides `robots`; default 'meguri'. */
  botToken?: string;
}

export interface ParseReport {
  url: string;
  title: string | null;
  links: { url: string; nofollow: boolean }[];
  md5: string;
  fingerprint: string;
  canonical: string | null;
  noindex: boolean;
  lang: string | null;
}

/** Decodes page bytes: BOM, then the transport charset, then meta charset, else UTF-8. */
export function decodeHtml(bytes: Uint8Array, contentType?: string): { text: string; encoding: string } {
  const charset = contentType ? /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType)?.[1] : undefined;
  let encoding = getEncoding(bytes, {
    defaultEncoding: 'UTF-8',
    ...(charset !== undefined ? { transportLayerEncodingLabel: charset } : {}),
  });
  if (!iconv.encodingExists(encoding)) encoding = 'UTF-8';
  return { text: iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding), encoding };
}

/** Builds the report for already-decoded HTML. */
export function parseReport(html: string, pageUrl: string, opts: ExtractOptions = {}): ParseReport {
  const ex = extractPage(html, pageUrl, opts);
  return {
    url: pageUrl,
    title: ex.title,
    links: ex.links.map((l) => ({ url: l.url, nofollow: l.nofollow || ex.nofollowAll })),
    md5: md5Hex(html),
    fingerprint: simhash(ex.text),
    canonical: ex.canonical,
    noindex: ex.noindex,
    lang: ex.lang,
  };
}

/** Runs the command; returns the exit code (0 ok, 1 unreadable file, 2 bad URL). */
export async function parseCommand(args: ParseCommandArgs, out: (line: string) => void): Promise<number> {
  const norm = normalizeUrl(args.url);
  if (!norm.ok) {
    out(`error: --url ${JSON.stringify(args.url)} is not a usable http(s) URL (${norm.reason})`);
    return 2;
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(args.file);
  } catch (err) {
    out(`error: cannot read ${args.file}: ${(err as Error).message}`);
    return 1;
  }
  const { text, encoding } = decodeHtml(bytes, args.contentType);
  const opts: ExtractOptions = args.botToken !== undefined ? { botToken: args.botToken } : {};
  const report = parseReport(text, norm.url, opts);

  if (args.json) {
    out(JSON.stringify(report));
    return 0;
  }
  const nofollow = report.links.filter((l) => l.nofollow).length;
  out(`URL:         ${report.url}`);
  out(`Title:       ${report.title ?? '(none)'}`);
  out(`Language:    ${report.lang ?? '(none)'}`);
  out(`Encoding:    ${encoding}`);
  out(`Canonical:   ${report.canonical ?? '(none)'}`);
  out(`Noindex:     ${report.noindex ? 'yes' : 'no'}`);
  out(`MD5:         ${report.md5}`);
  out(`Fingerprint: ${report.fingerprint}`);
  out(`Links:       ${report.links.length} (${report.links.length - nofollow} followed, ${nofollow} nofollow)`);
  for (const l of report.links) out(`  ${l.nofollow ? '[nofollow] ' : ''}${l.url}`);
  return 0;
}
