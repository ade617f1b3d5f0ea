/**
 * Charset sniffing with a charset in Content-Type reads only the first bytes (a byte order mark is
 * the one thing that overrides the header): the answers are those of the full WHATWG prescan over
 * every combination of header label, byte order mark, <meta> and XML declaration tried here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEncoding } from 'encoding-sniffer';
import { sniffEncoding } from '../../services/parser/charset.ts';

const labels = [undefined, 'utf-8', 'UTF8', 'iso-8859-1', 'shift_jis', 'euc-kr', 'utf-16', 'utf-16be', 'x-user-defined', 'bogus', '', 'replacement'];
const starts: Buffer[] = [
  Buffer.alloc(0),
  Buffer.from([0xef, 0xbb, 0xbf]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0x3c, 0x00, 0x3f, 0x00]),
  Buffer.from([0xef, 0xbb]),
];
const documents = [
  '<html><head><meta charset="euc-jp"><title>t</title></head><body>x</body></html>',
  '<!doctype html><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
  '<?xml version="1.0" encoding="Shift_JIS"?><urlset></urlset>',
  '<?xml version="1.0"?><rss></rss>',
  'no markup at all',
  '',
];

test('a header charset decides with a glance at the first bytes, as the full prescan would', () => {
  let cases = 0;
  for (const kind of ['html', 'xml'] as const) {
    for (const label of labels) {
      for (const start of starts) {
        for (const doc of documents) {
          const buf = Buffer.concat([start, Buffer.from(doc, 'latin1')]);
          const full = getEncoding(buf, { transportLayerEncodingLabel: label, defaultEncoding: kind === 'html' ? 'windows-1252' : 'UTF-8' });
          assert.equal(sniffEncoding(buf, kind, label), full, `${kind}, label ${String(label)}, start ${start.toString('hex')}, ${doc.slice(0, 30)}`);
          cases++;
        }
      }
    }
  }
  assert.equal(cases, 2 * labels.length * starts.length * documents.length);
});
