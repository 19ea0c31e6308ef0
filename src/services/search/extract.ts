import { inflateRawSync } from 'node:zlib';
// Documents are read with fflate; archiver, which writes the downloads, cannot read (docs/development.md › ZIP).
import { Unzip, type UnzipDecoder, type UnzipFile } from 'fflate';
import { kindOf, trimPartialUtf8 } from './document-kind.ts';
import { ownPdfText } from './pdf-reader.ts';

/** What one extraction may produce and read: text is cut at `maxTextBytes`; archives are capped entry by entry. */
export interface ExtractLimits {
  maxTextBytes: number;
}

// A document with more parts than this, or parts that inflate past these sizes, is treated as hostile.
const ZIP_MAX_ENTRIES = 10_000;
const ZIP_MAX_ENTRY_BYTES = 64 * 1024 ** 2;
const ZIP_MAX_TOTAL_BYTES = 256 * 1024 ** 2;
const ZIP_MAX_RATIO = 200;
// Below this much inflated text the ratio is not looked at: small parts of XML compress well.
const ZIP_RATIO_GRACE = 1024 ** 2;
const XML_MAX_DEPTH = 256;
const PDF_MAX_PAGES = 1000;

export class HostileDocumentError extends Error {}

/** Cuts text to at most `max` UTF-8 bytes, on a character boundary. */
export function capText(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  return new TextDecoder().decode(bytes.subarray(0, trimPartialUtf8(bytes.subarray(0, max))));
}

const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' ';
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

/**
 * Searches one text for the ends of markup, remembering each answer: a later search for the same end from
 * further on never reads the same characters again, so a page of unclosed `<script` or `<a<b<c` is read once.
 */
class Scanner {
  private readonly found = new Map<string | RegExp, { from: number; at: number }>();

  constructor(readonly text: string) {}

  /** The first index at or after `from` where `what` (a string, or a global regex) occurs; -1 when none. */
  find(what: string | RegExp, from: number): number {
    const known = this.found.get(what);
    if (known && known.from <= from && (known.at < 0 || known.at >= from)) return known.at;
    let at: number;
    if (typeof what === 'string') at = this.text.indexOf(what, from);
    else {
      what.lastIndex = from;
      at = what.exec(this.text)?.index ?? -1;
    }
    this.found.set(what, { from, at });
    return at;
  }
}

type Markup = { end: number; cdata?: string };

const DOCTYPE_SUBSET_END = /\]\s*>/g;

/** Whether a UTF-16 code unit is blank space as `\s` reads it. */
function isBlank(c: number): boolean {
  if (c < 0xa0) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Whether a code unit ends an element's name: blank space, `/`, `>`, `!` or `?`. */
function endsName(c: number): boolean {
  return c === 0x2f || c === 0x3e || c === 0x21 || c === 0x3f || isBlank(c);
}

/** The markup other than an element that starts at `at` (a `<!` or `<?`), or null when that `<` is text. */
function xmlDeclarationAt(scan: Scanner, at: number): Markup | null {
  const xml = scan.text;
  if (xml.startsWith('<![CDATA[', at)) {
    const close = scan.find(']]>', at + 9);
    if (close >= 0) return { end: close + 3, cdata: xml.slice(at + 9, close) };
  } else if (xml.startsWith('<!--', at)) {
    const close = scan.find('-->', at + 4);
    if (close >= 0) return { end: close + 3 };
  } else if (xml.startsWith('<!DOCTYPE', at)) {
    const gt = scan.find('>', at);
    const bracket = scan.find('[', at);
    if (bracket >= 0 && (gt < 0 || bracket < gt)) {
      const close = scan.find(DOCTYPE_SUBSET_END, bracket + 1);
      if (close >= 0) return { end: xml.indexOf('>', close) + 1 };
    }
  }
  const gt = scan.find('>', at);
  return gt < 0 ? null : { end: gt + 1 };
}

/**
 * Text of an XML document: character data joined as written, a line break after the elements named in
 * `breaks`, a space for those in `spaces`, nothing from those in `skip`. Only the five XML entities and
 * character references are decoded (no DTD, so no entity expansion); nesting deeper than 256 is hostile.
 * One pass over the characters, elements read in place: a spreadsheet of short cells is mostly tags.
 */
export function xmlText(
  xml: string,
  opts: { breaks: ReadonlySet<string>; spaces?: ReadonlySet<string>; skip?: (tag: string, attrs: string) => boolean },
): string {
  const scan = new Scanner(xml);
  const decode = xml.includes('&') ? decodeEntities : (text: string) => text;
  const out: string[] = [];
  let depth = 0;
  let skipDepth = -1;
  let last = 0;
  // The last search for a '>': from where, and what it found (-1: none to the end), so `<a<b<c` is read once.
  let gtFrom = -1;
  let gtAt = -1;
  for (let at = xml.indexOf('<'); at >= 0; at = xml.indexOf('<', at)) {
    const second = xml.charCodeAt(at + 1);
    if (second === 0x21 || second === 0x3f) {
      const markup = xmlDeclarationAt(scan, at);
      if (!markup) {
        at++;
        continue;
      }
      if (skipDepth < 0 && at > last) out.push(decode(xml.slice(last, at)));
      last = at = markup.end;
      if (markup.cdata !== undefined && skipDepth < 0) out.push(markup.cdata);
      continue;
    }
    const closing = second === 0x2f;
    const nameStart = at + (closing ? 2 : 1);
    if (nameStart >= xml.length || endsName(xml.charCodeAt(nameStart))) {
      at++;
      continue;
    }
    if (!(gtFrom >= 0 && gtFrom <= nameStart && (gtAt < 0 || gtAt >= nameStart))) {
      gtFrom = nameStart;
      gtAt = xml.indexOf('>', nameStart);
    }
    const gt = gtAt;
    if (gt < 0) {
      at++;
      continue;
    }
    let nameEnd = nameStart + 1;
    while (nameEnd < gt && !endsName(xml.charCodeAt(nameEnd))) nameEnd++;
    const selfClosing = gt > nameEnd && xml.charCodeAt(gt - 1) === 0x2f;
    if (skipDepth < 0 && at > last) out.push(decode(xml.slice(last, at)));
    last = at = gt + 1;
    const name = xml.slice(nameStart, nameEnd);
    if (closing) {
      depth--;
      if (depth === skipDepth) skipDepth = -1;
      if (skipDepth < 0 && opts.breaks.has(name)) out.push('\n');
      continue;
    }
    if (skipDepth < 0 && opts.spaces?.has(name)) out.push(' ');
    if (selfClosing) {
      if (skipDepth < 0 && opts.breaks.has(name)) out.push('\n');
      continue;
    }
    if (skipDepth < 0 && opts.skip?.(name, xml.slice(nameEnd, gt))) skipDepth = depth;
    depth++;
    if (depth > XML_MAX_DEPTH) throw new HostileDocumentError('XML nested too deeply');
  }
  if (skipDepth < 0 && last < xml.length) out.push(decode(xml.slice(last)));
  return out.join('');
}

const RAW_TEXT = /(script|style|template|noscript)\b/iy;
const RAW_TEXT_END: Record<string, RegExp> = {
  script: /<\/script\s*>/gi,
  style: /<\/style\s*>/gi,
  template: /<\/template\s*>/gi,
  noscript: /<\/noscript\s*>/gi,
};
const BLOCK_END = /^(?:<\/(p|div|li|tr|h[1-6]|section|article|pre|blockquote)\s*>|<br\s*\/?>)$/i;

/** Text of an HTML page: scripts, styles and markup dropped, block ends as line breaks. */
export function htmlText(html: string): string {
  const scan = new Scanner(html);
  const out: string[] = [];
  let last = 0;
  for (let at = html.indexOf('<'); at >= 0; at = html.indexOf('<', at)) {
    let end = -1;
    let replacement = ' ';
    RAW_TEXT.lastIndex = at + 1;
    const raw = RAW_TEXT.exec(html)?.[1];
    if (html.startsWith('<!--', at)) {
      const close = scan.find('-->', at + 4);
      if (close >= 0) end = close + 3;
    } else if (raw !== undefined) {
      // An element left open runs to the end of the page, as a browser reads it.
      const close = scan.find(RAW_TEXT_END[raw.toLowerCase()]!, at + 1);
      end = close < 0 ? html.length : html.indexOf('>', close) + 1;
    }
    if (end < 0) {
      const gt = scan.find('>', at);
      if (gt < 0) break;
      end = gt + 1;
      if (BLOCK_END.test(html.slice(at, end))) replacement = '\n';
    }
    out.push(html.slice(last, at), replacement);
    last = at = end;
  }
  out.push(html.slice(last));
  return decodeEntities(out.join(''));
}

// What an SVG shows as words is in <text> (and its <tspan>s), <title> and <desc>; styles, scripts and metadata are not.
const SVG_HIDDEN = new Set(['style', 'script', 'metadata']);
const SVG_BREAKS = new Set(['text', 'title', 'desc']);
const localName = (tag: string) => tag.slice(tag.indexOf(':') + 1);

/** Text of an SVG: its character data (text, titles, descriptions), never its tags or attributes. */
function svgText(svg: string): string {
  const breaks = new Set([...SVG_BREAKS].flatMap((n) => [n, `svg:${n}`]));
  return xmlText(svg, { breaks, skip: (tag) => SVG_HIDDEN.has(localName(tag).toLowerCase()) });
}

/**
 * The entries of a ZIP whose names `want` accepts, inflated with caps on the number of entries, each
 * entry's size, the total and the compression ratio: past a cap the document is hostile (a zip bomb).
 * The ratio holds for each entry whose local header gives its size, and for the total against the bytes
 * read so far, which no header can lie about (a part streamed with a data descriptor says size 0).
 */
function unzipEntries(bytes: Uint8Array, want: (name: string) => boolean): Map<string, Uint8Array> {
  const found = new Map<string, Uint8Array>();
  let entries = 0;
  let total = 0;
  let consumed = 0;
  let failure: Error | null = null;
  /**
   * Deflate through the runtime's zlib (about ten times fflate's JavaScript inflate), the entry's compressed
   * bytes at once: the output is bounded by the caps before it is allocated, so a bomb stops at them.
   */
  class NativeInflate implements UnzipDecoder {
    static readonly compression = 8;
    private readonly chunks: Uint8Array[] = [];
    private compressed = 0;
    ondata: UnzipDecoder['ondata'] = () => {};
    constructor(
      private readonly name: string,
      _compressedSize?: number,
      private readonly originalSize?: number,
    ) {}
    push(chunk: Uint8Array, final: boolean): void {
      this.chunks.push(chunk.slice());
      this.compressed += chunk.length;
      if (!final) return;
      const cap = Math.min(
        ZIP_MAX_ENTRY_BYTES,
        ZIP_MAX_TOTAL_BYTES - total,
        Math.max(ZIP_RATIO_GRACE, this.compressed * ZIP_MAX_RATIO),
        Math.max(ZIP_RATIO_GRACE, consumed * ZIP_MAX_RATIO) - total,
      );
      let out: Uint8Array<ArrayBuffer>;
      try {
        // One output buffer a byte past the size the header gives, within the caps: not 16 KiB pieces joined after, nor a spare one for an exact fit.
        const chunkSize = Math.min(Math.max(64 * 1024, (this.originalSize ?? 0) + 1), Math.max(64 * 1024, cap + 1));
        out = inflateRawSync(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks), {
          maxOutputLength: Math.max(1, cap),
          chunkSize,
        }) as Uint8Array<ArrayBuffer>;
      } catch (err) {
        failure ??= err instanceof RangeError ? new HostileDocumentError(`ZIP entry ${this.name} inflates past its caps`) : (err as Error);
        return;
      }
      this.ondata(null, out, true);
    }
  }
  const unzip = new Unzip((file: UnzipFile) => {
    entries++;
    if (entries > ZIP_MAX_ENTRIES) failure ??= new HostileDocumentError('too many ZIP entries');
    if (failure || !want(file.name)) return;
    const chunks: Uint8Array[] = [];
    let size = 0;
    file.ondata = (err, chunk, final) => {
      if (failure) return;
      if (err) {
        failure = err;
        return;
      }
      size += chunk.length;
      total += chunk.length;
      const compressed = file.size ?? 0;
      if (
        size > ZIP_MAX_ENTRY_BYTES ||
        total > ZIP_MAX_TOTAL_BYTES ||
        (compressed > 0 && size > ZIP_RATIO_GRACE && size > compressed * ZIP_MAX_RATIO) ||
        (total > ZIP_RATIO_GRACE && total > consumed * ZIP_MAX_RATIO)
      ) {
        failure = new HostileDocumentError(`ZIP entry ${file.name} inflates past its caps`);
        file.terminate();
        return;
      }
      chunks.push(chunk);
      if (final) found.set(file.name, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    file.start();
  });
  unzip.register(NativeInflate);
  // Fed in slices so the total is held to the ratio of the bytes read so far, entry by entry.
  const slice = 64 * 1024;
  for (let at = 0; at < bytes.length && !failure; at += slice) {
    consumed = Math.min(bytes.length, at + slice);
    unzip.push(bytes.subarray(at, consumed), consumed === bytes.length);
  }
  if (failure) throw failure;
  return found;
}

const utf8 = new TextDecoder();
const naturalOrder = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

const DOCX_BREAKS = new Set(['w:p', 'w:br', 'w:cr', 'w:tr']);
const DOCX_SPACES = new Set(['w:tab', 'w:tc']);
const PPTX_BREAKS = new Set(['a:p', 'a:br']);
const SHEET_BREAKS = new Set(['si', 'row']);
const SHEET_SPACES = new Set(['c']);
const ODF_BREAKS = new Set(['text:p', 'text:h', 'text:line-break', 'table:table-row']);
const ODF_SPACES = new Set(['text:s', 'text:tab', 'table:table-cell']);

function officeText(kind: 'docx' | 'xlsx' | 'pptx' | 'odf', bytes: Uint8Array): string {
  if (kind === 'odf') {
    const parts = unzipEntries(bytes, (n) => n === 'content.xml');
    return xmlText(utf8.decode(parts.get('content.xml') ?? new Uint8Array()), { breaks: ODF_BREAKS, spaces: ODF_SPACES });
  }
  if (kind === 'docx') {
    const parts = unzipEntries(bytes, (n) => /^word\/(document|footnotes|endnotes|header\d*|footer\d*)\.xml$/.test(n));
    const order = [...parts.keys()].sort((a, b) => (a === 'word/document.xml' ? -1 : b === 'word/document.xml' ? 1 : naturalOrder(a, b)));
    return order.map((n) => xmlText(utf8.decode(parts.get(n)), { breaks: DOCX_BREAKS, spaces: DOCX_SPACES })).join('\n');
  }
  if (kind === 'pptx') {
    const parts = unzipEntries(bytes, (n) => /^ppt\/(slides\/slide|notesSlides\/notesSlide)\d+\.xml$/.test(n));
    return [...parts.keys()]
      .sort(naturalOrder)
      .map((n) => xmlText(utf8.decode(parts.get(n)), { breaks: PPTX_BREAKS }))
      .join('\n');
  }
  const parts = unzipEntries(bytes, (n) => n === 'xl/sharedStrings.xml' || /^xl\/worksheets\/sheet\d+\.xml$/.test(n));
  const strings = xmlText(utf8.decode(parts.get('xl/sharedStrings.xml') ?? new Uint8Array()), { breaks: SHEET_BREAKS });
  // A cell of type "s" holds an index into the shared strings (already above), not text of its own.
  const sharedRef = (tag: string, attrs: string) => tag === 'c' && /\bt="s"/.test(attrs);
  const sheets = [...parts.keys()]
    .filter((n) => n.startsWith('xl/worksheets/'))
    .sort(naturalOrder)
    .map((n) => xmlText(utf8.decode(parts.get(n)), { breaks: SHEET_BREAKS, spaces: SHEET_SPACES, skip: sharedRef }));
  return [strings, ...sheets].join('\n');
}

/**
 * The text layer of a PDF, page by page, until `maxTextBytes` of text or PDF_MAX_PAGES pages: each page is
 * let go before the next is read, so pages drawing one shared stream cost one page's memory at a time.
 */
async function pdfText(bytes: Uint8Array, maxTextBytes: number): Promise<string> {
  // A file this reader fully understands gives pdf.js's words for a fifth of its CPU; any other goes to pdf.js.
  const own = ownPdfText(bytes, maxTextBytes, PDF_MAX_PAGES);
  if (own !== null) return own;
  const { getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { stopAtErrors: false, verbosity: 0 });
  try {
    const pages: string[] = [];
    let length = 0;
    for (let n = 1; n <= Math.min(pdf.numPages, PDF_MAX_PAGES) && length < maxTextBytes; n++) {
      const page = await pdf.getPage(n);
      const { items } = await page.getTextContent();
      const text = items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
      page.cleanup();
      pages.push(text);
      length += text.length;
    }
    return pages.join('\n');
  } finally {
    await pdf.cleanup();
  }
}

/** Collapses runs of blank space, keeping single line breaks, so snippets read naturally. */
function tidy(text: string): string {
  // One pass, matching only what changes: a run of blanks becomes a line break when it holds one, else a space.
  return text.replace(/\s\s+|[^\S \n]/g, (run) => (run.includes('\n') ? '\n' : ' ')).trim();
}

/** The searchable text of a document, or '' when it has none Coffer can read. Hostile input throws. */
export async function extractText(name: string, bytes: Uint8Array, limits: ExtractLimits): Promise<string> {
  const kind = kindOf(name, bytes.subarray(0, 8192));
  let text: string;
  switch (kind) {
    case null:
      return '';
    case 'text':
      text = utf8.decode(bytes.subarray(0, trimPartialUtf8(bytes.subarray(0, limits.maxTextBytes))));
      break;
    case 'html':
      text = htmlText(utf8.decode(bytes));
      break;
    case 'svg':
      text = svgText(utf8.decode(bytes));
      break;
    case 'pdf':
      text = await pdfText(bytes, limits.maxTextBytes);
      break;
    default:
      text = officeText(kind, bytes);
  }
  return capText(tidy(text), limits.maxTextBytes);
}
