import { Database } from 'bun:sqlite';
import { deflateSync } from 'node:zlib';
import { indexedText } from '../../src/services/search/text.ts';

/**
 * PDFs written the ways real producers write them, small and made in the test: classic cross-reference tables
 * and Flate streams (Chromium, Ghostscript), cross-reference and object streams with PNG predictors (pdfTeX),
 * composite fonts with ToUnicode maps and glyph positioning (Chromium), simple fonts with Differences and TJ
 * kerning for word spaces (pdfTeX, Ghostscript), and the features a reader may get wrong.
 */

type Part = string | { dict: string; data: Uint8Array | string; flate?: boolean };

/** A PDF of `objects` (object 1 is the catalog); `modern`: objects in an object stream and a cross-reference stream. */
export function writePdf(objects: Part[], opts: { modern?: boolean; trailer?: string } = {}): Uint8Array {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [enc.encode('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n')];
  let length = chunks[0]!.length;
  const offsets: number[] = [];
  const push = (bytes: Uint8Array) => {
    chunks.push(bytes);
    length += bytes.length;
  };
  const streamObject = (num: number, dict: string, data: Uint8Array, flate: boolean) => {
    const body = flate ? deflateSync(data) : data;
    const filter = flate ? ' /Filter /FlateDecode' : '';
    push(enc.encode(`${num} 0 obj\n<< ${dict} /Length ${body.length}${filter} >>\nstream\n`));
    push(body);
    push(enc.encode('\nendstream\nendobj\n'));
  };
  const inStream: { num: number; text: string }[] = [];
  objects.forEach((part, i) => {
    const num = i + 1;
    if (typeof part === 'string' && opts.modern) {
      inStream.push({ num, text: part });
      return;
    }
    offsets[num] = length;
    if (typeof part === 'string') push(enc.encode(`${num} 0 obj\n${part}\nendobj\n`));
    else streamObject(num, part.dict, typeof part.data === 'string' ? enc.encode(part.data) : part.data, part.flate ?? true);
  });
  const trailerExtra = opts.trailer ?? '';
  if (!opts.modern) {
    const xrefAt = length;
    const rows = offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`);
    push(enc.encode(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows.join('')}`));
    push(enc.encode(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailerExtra} >>\nstartxref\n${xrefAt}\n%%EOF\n`));
    return Buffer.concat(chunks);
  }
  // The object stream, then the cross-reference stream: rows of type, offset or stream number, generation or index.
  const stmNum = objects.length + 1;
  const xrefNum = objects.length + 2;
  let header = '';
  let body = '';
  for (const o of inStream) {
    header += `${o.num} ${body.length} `;
    body += `${o.text}\n`;
  }
  offsets[stmNum] = length;
  streamObject(stmNum, `/Type /ObjStm /N ${inStream.length} /First ${header.length}`, enc.encode(header + body), true);
  offsets[xrefNum] = length;
  const rows: number[][] = [[0, 0, 0xffff]];
  for (let num = 1; num <= xrefNum; num++) {
    const at = inStream.findIndex((o) => o.num === num);
    rows.push(at >= 0 ? [2, stmNum, at] : [1, offsets[num]!, 0]);
  }
  // PNG "up" predictor over 1 + 4 + 2 bytes a row, as pdfTeX and others write it.
  const width = 7;
  const raw = new Uint8Array(rows.length * (width + 1));
  let previous = new Uint8Array(width);
  rows.forEach(([type, a, b], r) => {
    const row = Uint8Array.of(type!, a! >>> 24, (a! >>> 16) & 0xff, (a! >>> 8) & 0xff, a! & 0xff, b! >>> 8, b! & 0xff);
    raw[r * (width + 1)] = 2;
    for (let k = 0; k < width; k++) raw[r * (width + 1) + 1 + k] = (row[k]! - previous[k]!) & 0xff;
    previous = row;
  });
  streamObject(
    xrefNum,
    `/Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Root 1 0 R${trailerExtra} /DecodeParms << /Predictor 12 /Columns ${width} >>`,
    raw,
    true,
  );
  push(enc.encode(`startxref\n${offsets[xrefNum]}\n%%EOF\n`));
  return Buffer.concat(chunks);
}

/**
 * A catalog (1), a page tree (2) with the given fonts (3…) and `extra` objects after them (their numbers are
 * 3 + fonts.length + index), then each page and its content stream.
 */
export function pagesPdf(
  contents: string[],
  fonts: string[],
  opts: { modern?: boolean; mediaBox?: string; cropBox?: string; trailer?: string; extra?: Part[]; xobjects?: string } = {},
): Uint8Array {
  const extra = opts.extra ?? [];
  const pageBase = 3 + fonts.length + extra.length;
  const resources = `<< /Font << ${fonts.map((_, i) => `/F${i + 1} ${3 + i} 0 R`).join(' ')} >>${opts.xobjects ?? ''} >>`;
  const kids = contents.map((_, i) => `${pageBase + 2 * i} 0 R`).join(' ');
  const crop = opts.cropBox ? ` /CropBox ${opts.cropBox}` : '';
  const pages = contents.flatMap((content, i): Part[] => [
    `<< /Type /Page /Parent 2 0 R /Contents ${pageBase + 2 * i + 1} 0 R${crop} >>`,
    { dict: '', data: content },
  ]);
  return writePdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      `<< /Type /Pages /Kids [${kids}] /Count ${contents.length} /MediaBox ${opts.mediaBox ?? '[0 0 612 792]'} /Resources ${resources} >>`,
      ...fonts,
      ...extra,
      ...pages,
    ],
    opts,
  );
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');
const utf16Hex = (s: string) => [...s].map((c) => hex4(c.charCodeAt(0))).join('');

/**
 * A composite font as Chromium writes one: glyph ids as two-byte codes (Identity-H), widths in W, and a ToUnicode
 * map (object `toUnicode`) of single codes, a range (the digits 0-2) and ligature glyphs that stand for two letters.
 */
export function compositeFont(
  chars: string,
  ligatures: Record<string, number>,
  toUnicode: number,
): { font: string; cmap: Part; encode: (text: string) => string } {
  const codeOf = new Map<string, number>();
  [...chars].forEach((c, i) => codeOf.set(c, 3 + i));
  const bfchar = [...codeOf].map(([c, code]) => `<${hex4(code)}> <${utf16Hex(c)}>`);
  for (const [text, code] of Object.entries(ligatures)) bfchar.push(`<${hex4(code)}> <${utf16Hex(text)}>`);
  const cmap = `/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Adobe-Identity-UCS def
1 begincodespacerange <0000> <FFFF> endcodespacerange
${bfchar.length} beginbfchar\n${bfchar.join('\n')}\nendbfchar
1 beginbfrange <0100> <0102> <0030> endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end`;
  const widths = `[3 [${[...codeOf].map((_, i) => 450 + (i % 7) * 40).join(' ')}] 256 258 500]`;
  const font = `<< /Type /Font /Subtype /Type0 /BaseFont /AAAAAA+Sans /Encoding /Identity-H /DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /AAAAAA+Sans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 600 /W ${widths} >>] /ToUnicode ${toUnicode} 0 R >>`;
  const encode = (text: string) => {
    let out = '';
    for (let i = 0; i < text.length; i++) {
      const lig = Object.entries(ligatures).find(([t]) => text.startsWith(t, i));
      if (lig) {
        out += hex4(lig[1]);
        i += lig[0].length - 1;
      } else if (text[i]! >= '0' && text[i]! <= '2') out += hex4(0x100 + Number(text[i]));
      else out += hex4(codeOf.get(text[i]!) ?? 0);
    }
    return `<${out}>`;
  };
  return { font, cmap: { dict: '', data: cmap }, encode };
}

/** The set of terms the content index keeps for `text` (the migration's tokenizer, CJK as text.ts prepares it). */
export function indexTerms(text: string): string[] {
  const db = new Database(':memory:');
  db.run(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')`);
  db.run(`CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')`);
  db.run('INSERT INTO t(body) VALUES (?)', [indexedText(text)]);
  const terms = (db.query('SELECT term FROM v ORDER BY term').all() as { term: string }[]).map((r) => r.term);
  db.close();
  return terms;
}

/** The text of a PDF as pdf.js gives it, the way extract.ts read every PDF before its own reader. */
export async function pdfjsText(bytes: Uint8Array): Promise<string> {
  const { getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { stopAtErrors: false, verbosity: 0 });
  try {
    const pages: string[] = [];
    for (let n = 1; n <= Math.min(pdf.numPages, 1000); n++) {
      const page = await pdf.getPage(n);
      const { items } = await page.getTextContent();
      pages.push(items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join(''));
      page.cleanup();
    }
    return pages.join('\n');
  } finally {
    await pdf.cleanup();
  }
}
