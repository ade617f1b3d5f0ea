/**
 * A small streaming XML walker over htmlparser2's tokenizer in xmlMode: no DOM, constant memory
 * beyond the open-element stack and the text of the innermost element. Sitemaps and feeds are
 * read through it.
 *
 * htmlparser2 is lenient: it closes unclosed elements silently. The walker turns that leniency back
 * into errors a crawler can report: an end tag that closes elements still open inside it (`<a><b></a>`)
 * and elements still open at the end of the document are well-formedness errors, and so is a second
 * root element or text outside the root. The first error stops the walk (later events are ignored).
 *
 * Element names are reported by their local name (namespace prefix dropped) together with the
 * prefix, so `<sm:url>` and `<url>` read alike while `<image:loc>` stays distinguishable.
 */
import { Parser } from 'htmlparser2';

export interface XmlElement {
  /** Local name as written (case kept), without the namespace prefix. */
  readonly name: string;
  /** Namespace prefix ('' when none). */
  readonly prefix: string;
  readonly attrs: Readonly<Record<string, string>>;
}

export interface XmlHandler {
  /** An element opened; `path` holds its ancestors, root first (the element itself is last). */
  open(el: XmlElement, path: readonly XmlElement[]): void;
  /** An element closed; `text` is its own text content (not that of child elements), untrimmed. */
  close(el: XmlElement, path: readonly XmlElement[], text: string): void;
}

export class XmlSyntaxError extends Error {
  override readonly name = 'XmlSyntaxError';
}

/** Longest text kept per element: a <loc> or <title> never needs more, and a huge text node costs no memory. */
const MAX_TEXT_CHARS = 64 * 1024;

function split(qname: string): { name: string; prefix: string } {
  const colon = qname.indexOf(':');
  return colon < 0 ? { name: qname, prefix: '' } : { name: qname.slice(colon + 1), prefix: qname.slice(0, colon) };
}

export class XmlStream {
  private readonly parser: Parser;
  private readonly stack: XmlElement[] = [];
  private readonly texts: string[] = [];
  /** Parser end index of each open element's start tag: a close at the same index is `<x/>`. */
  private readonly openEnds: number[] = [];
  private rootSeen = false;
  private rootClosed = false;
  private failure: XmlSyntaxError | undefined;
  private ended = false;

  constructor(private readonly handler: XmlHandler) {
    this.parser = new Parser(
      {
        onopentag: (qname, attrs) => this.onOpen(qname, attrs),
        ontext: (data) => this.onText(data),
        onclosetag: (qname, implied) => this.onClose(qname, implied),
      },
      { xmlMode: true, decodeEntities: true, recognizeCDATA: true },
    );
  }

  /** The first well-formedness error, once one was seen. */
  get error(): XmlSyntaxError | undefined {
    return this.failure;
  }

  /** Elements open right now. */
  get depth(): number {
    return this.stack.length;
  }

  write(chunk: string): void {
    if (this.failure !== undefined || this.ended) return;
    this.parser.write(chunk);
  }

  /** Ends the document; returns the first well-formedness error, if any. */
  end(): XmlSyntaxError | undefined {
    if (!this.ended) {
      this.ended = true;
      if (this.failure === undefined) this.parser.end();
      if (this.failure === undefined && !this.rootSeen) this.fail('no root element');
    }
    return this.failure;
  }

  /** Stops the walk with an error (also used by handlers that meet content they cannot accept). */
  fail(message: string): void {
    this.failure ??= new XmlSyntaxError(message);
  }

  private onOpen(qname: string, attrs: Record<string, string>): void {
    if (this.failure !== undefined) return;
    if (this.stack.length === 0) {
      if (this.rootSeen) return this.fail(`second root element <${qname}>`);
      this.rootSeen = true;
    }
    const el: XmlElement = { ...split(qname), attrs };
    this.stack.push(el);
    this.texts.push('');
    this.openEnds.push(this.parser.endIndex);
    this.handler.open(el, this.stack);
  }

  private onText(data: string): void {
    if (this.failure !== undefined) return;
    const top = this.texts.length - 1;
    if (top < 0) {
      if (data.trim() !== '') this.fail(this.rootClosed ? 'text after the root element' : 'text before the root element');
      return;
    }
    const cur = this.texts[top]!;
    if (cur.length < MAX_TEXT_CHARS) this.texts[top] = cur.length + data.length > MAX_TEXT_CHARS ? cur + data.slice(0, MAX_TEXT_CHARS - cur.length) : cur + data;
  }

  private onClose(qname: string, implied: boolean): void {
    if (this.failure !== undefined) return;
    const selfClosing = implied && this.openEnds[this.openEnds.length - 1] === this.parser.endIndex && !this.ended;
    if (implied && !selfClosing) {
      return this.fail(this.ended ? `element <${qname}> is not closed` : `element <${qname}> is closed by the end tag of an enclosing element`);
    }
    const el = this.stack[this.stack.length - 1];
    if (el === undefined) return;
    const text = this.texts.pop() ?? '';
    this.handler.close(el, this.stack, text);
    this.stack.pop();
    this.openEnds.pop();
    if (this.stack.length === 0) this.rootClosed = true;
  }
}
