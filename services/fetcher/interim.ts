/**
 * Tolerates stray interim responses (`100 Continue`, `102`, `103 Early Hints`) before the final one.
 *
 * RFC 9110 §15.2: a client must be able to parse one or more 1xx responses it did not expect before
 * the final one. undici 7 passes 102 and 103 through its handler and carries on, but it destroys
 * the socket on a 100 it did not ask for ("bad response"), so the page is lost. The fetcher never
 * sends `Expect: 100-continue` (GET only, no body) and uses no interim response, so this filter
 * drops their bytes before undici's parser sees them. `101 Switching Protocols` is left to undici,
 * which fails it as an upgrade nobody asked for.
 *
 * Only the start of a response is inspected: the fetcher sends one request at a time per
 * connection (pipelining 1), so the first bytes after a request is written begin its response.
 */
import type { Socket } from 'node:net';

/** What to do with the bytes received so far at the start of a response. */
export type InterimScan =
  /** Not a 100 interim response: hand everything on. */
  | { kind: 'pass' }
  /** Could still be one: wait for more bytes. */
  | { kind: 'more' }
  /** A complete interim response of `length` bytes (status line and header block): drop them. */
  | { kind: 'skip'; length: number };

/** An interim response larger than this is not ours to repair: undici will report it. */
export const MAX_INTERIM_BYTES = 16 * 1024;

// "HTTP/d.d 1dd" followed by a space or the end of the line; `#` stands for any digit.
const STATUS_TEMPLATE = 'HTTP/#.# 1##';
const SWITCHING_PROTOCOLS = Buffer.from(' 101');

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

/** Decides whether `buf`, the first bytes of a response, begins with an interim (1xx) response. */
export function scanInterim(buf: Uint8Array): InterimScan {
  const n = Math.min(buf.length, STATUS_TEMPLATE.length);
  for (let i = 0; i < n; i++) {
    const want = STATUS_TEMPLATE.charCodeAt(i);
    const got = buf[i] as number;
    if (want === 0x23 ? !isDigit(got) : got !== want) return { kind: 'pass' };
  }
  if (buf.length <= STATUS_TEMPLATE.length) return { kind: 'more' };
  const after = buf[STATUS_TEMPLATE.length] as number;
  // "HTTP/1.1 1000" is not a 1xx.
  if (after !== 0x20 && after !== 0x0d && after !== 0x0a) return { kind: 'pass' };
  if (Buffer.from(buf.buffer, buf.byteOffset + 8, 4).equals(SWITCHING_PROTOCOLS)) return { kind: 'pass' };
  // The block ends at the first empty line (CRLF CRLF, or bare LF LF as lenient parsers accept).
  for (let i = STATUS_TEMPLATE.length; i < buf.length; i++) {
    if (buf[i] !== 0x0a) continue;
    const next = buf[i + 1];
    if (next === 0x0a) return { kind: 'skip', length: i + 2 };
    if (next === 0x0d) {
      const after2 = buf[i + 2];
      if (after2 === 0x0a) return { kind: 'skip', length: i + 3 };
      if (after2 === undefined) break;
    }
    if (next === undefined) break;
  }
  return buf.length >= MAX_INTERIM_BYTES ? { kind: 'pass' } : { kind: 'more' };
}

type Push = (chunk: unknown, encoding?: BufferEncoding) => boolean;

/**
 * Installs the filter on a connected socket (plain or TLS) before undici gets it. Writes mark the
 * start of a response; incoming bytes pass through `scanInterim` until a final response begins.
 */
export function dropInterimResponses(socket: Socket): void {
  let atResponseStart = false;
  let held: Buffer | undefined;
  const write = socket.write;
  const push = socket.push as Push;
  socket.write = function (this: Socket, ...args: unknown[]): boolean {
    // Bytes still held belong to the exchange before (it cannot have ended well): undici gets them.
    if (held !== undefined) {
      const rest = held;
      held = undefined;
      push.call(this, rest);
    }
    atResponseStart = true;
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as Socket['write'];
  socket.push = function (this: Socket, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (!atResponseStart || !Buffer.isBuffer(chunk)) {
      if (chunk === null && held !== undefined) {
        const rest = held;
        held = undefined;
        push.call(this, rest);
      }
      return push.call(this, chunk, encoding);
    }
    let buf = held === undefined ? chunk : Buffer.concat([held, chunk]);
    held = undefined;
    for (;;) {
      const scan = scanInterim(buf);
      if (scan.kind === 'more') {
        held = buf;
        return true;
      }
      if (scan.kind === 'pass') {
        atResponseStart = false;
        return push.call(this, buf);
      }
      buf = buf.subarray(scan.length);
      if (buf.length === 0) return true;
    }
  } as Socket['push'];
}
