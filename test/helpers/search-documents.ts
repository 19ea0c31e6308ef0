import { strToU8, Zip, ZipDeflate, zipSync } from 'fflate';

const zip = (entries: Record<string, string>) =>
  zipSync(Object.fromEntries(Object.entries(entries).map(([name, text]) => [name, strToU8(text)])), { level: 6 });

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const odf = (mime: string, body: string) =>
  zip({
    mimetype: mime,
    'content.xml': `<?xml version="1.0" encoding="UTF-8"?><office:document-content><office:body>${body}</office:body></office:document-content>`,
  });

/**
 * Real, minimal documents of every format content search reads, carrying the given text (as paragraphs,
 * cells or slides), so each extractor is exercised on what the format really looks like inside.
 */
export const searchable = {
  docx: (...paragraphs: string[]) =>
    zip({
      '[Content_Types].xml': '<Types/>',
      // Each paragraph split across two runs, as Word does around an edit: the words must join again.
      'word/document.xml': `<?xml version="1.0"?><w:document><w:body>${paragraphs
        .map(
          (p) =>
            `<w:p><w:r><w:t>${xmlEscape(p.slice(0, 3))}</w:t></w:r><w:r><w:t xml:space="preserve">${xmlEscape(p.slice(3))}</w:t></w:r></w:p>`,
        )
        .join('')}</w:body></w:document>`,
    }),
  xlsx: (...cells: string[]) =>
    zip({
      '[Content_Types].xml': '<Types/>',
      'xl/sharedStrings.xml': `<sst>${cells.map((c) => `<si><t>${xmlEscape(c)}</t></si>`).join('')}</sst>`,
      'xl/worksheets/sheet1.xml': `<worksheet><sheetData><row r="1">${cells
        .map((_, i) => `<c r="A${i + 1}" t="s"><v>${i}</v></c>`)
        .join('')}<c r="B1"><v>4242</v></c></row></sheetData></worksheet>`,
    }),
  pptx: (...slides: string[]) =>
    zip({
      '[Content_Types].xml': '<Types/>',
      ...Object.fromEntries(
        slides.map((s, i) => [
          `ppt/slides/slide${i + 1}.xml`,
          `<p:sld><p:txBody><a:p><a:r><a:t>${xmlEscape(s)}</a:t></a:r></a:p></p:txBody></p:sld>`,
        ]),
      ),
    }),
  odt: (text: string) => odf('application/vnd.oasis.opendocument.text', `<office:text><text:p>${xmlEscape(text)}</text:p></office:text>`),
  ods: (text: string) =>
    odf(
      'application/vnd.oasis.opendocument.spreadsheet',
      `<office:spreadsheet><table:table><table:table-row><table:table-cell><text:p>${xmlEscape(text)}</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`,
    ),
  odp: (text: string) =>
    odf(
      'application/vnd.oasis.opendocument.presentation',
      `<office:presentation><draw:page><draw:frame><draw:text-box><text:p>${xmlEscape(text)}</text:p></draw:text-box></draw:frame></draw:page></office:presentation>`,
    ),
  /** A PDF with `text` drawn in Helvetica (ASCII only), 90 characters a line, 35 lines a page, with a correct cross-reference table. */
  pdf: (text: string) => {
    const lines = text.match(/.{1,90}(\s|$)/g) ?? [];
    const pages: string[][] = [];
    for (let i = 0; i < Math.max(1, lines.length); i += 35) pages.push(lines.slice(i, i + 35));
    return pdfOf(pages);
  },
  /** A PDF of one page per text. */
  pdfPages: (texts: string[]) => pdfOf(texts.map((t) => [t])),
};

/**
 * A PDF of the given pages, each a list of lines drawn in Helvetica (ASCII only), with a correct cross-reference
 * table; with `sharedPages`, that many pages all draw the one content stream of `pages[0]`.
 */
function pdfOf(pages: string[][], sharedPages?: number): Uint8Array {
  const streamOf = (lines: string[]) =>
    `BT /F1 18 Tf 20 TL 72 740 Td ${lines.map((l) => `(${l.trim().replace(/[()\\]/g, '\\$&')}) Tj T*`).join(' ')} ET`;
  const page = (contents: number) =>
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contents} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`;
  const stream = (text: string) => `<< /Length ${text.length} >>\nstream\n${text}\nendstream`;
  // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content stream for each page (or the one stream, then the pages).
  const body =
    sharedPages === undefined
      ? pages.flatMap((lines, i) => [page(5 + 2 * i), stream(streamOf(lines))])
      : [stream(streamOf(pages[0] ?? [])), ...Array.from({ length: sharedPages }, () => page(4))];
  const pageNumbers = sharedPages === undefined ? pages.map((_, i) => 4 + 2 * i) : Array.from({ length: sharedPages }, (_, i) => 5 + i);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageNumbers.map((n) => `${n} 0 R`).join(' ')}] /Count ${pageNumbers.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...body,
  ];
  const out: string[] = ['%PDF-1.4\n'];
  let length = out[0]!.length;
  const offsets = objects.map((o, i) => {
    const at = length;
    const text = `${i + 1} 0 obj\n${o}\nendobj\n`;
    out.push(text);
    length += text.length;
    return at;
  });
  out.push(
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`,
  );
  out.push(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`);
  return strToU8(out.join(''));
}

/** Documents built to hurt a reader: each must give no text, without a crash or unbounded memory. */
export const hostile = {
  /** A DOCX whose document.xml inflates to 300 MiB from a few hundred KiB. */
  zipBomb: () =>
    zipSync({ '[Content_Types].xml': strToU8('<Types/>'), 'word/document.xml': new Uint8Array(300 * 1024 ** 2) }, { level: 9 }),
  /**
   * A DOCX of four 16 MiB parts written as a stream: each local header says size 0 (the sizes follow in a
   * data descriptor), so a reader that takes the ratio from the local header sees no compressed size.
   */
  descriptorBomb: () => {
    const chunks: Uint8Array[] = [];
    const zip = new Zip((err, chunk) => {
      if (err) throw err;
      chunks.push(chunk);
    });
    for (const name of ['word/document.xml', 'word/header1.xml', 'word/header2.xml', 'word/header3.xml']) {
      const part = new ZipDeflate(name, { level: 9 });
      zip.add(part);
      part.push(new Uint8Array(16 * 1024 ** 2), true);
    }
    zip.end();
    return new Uint8Array(Buffer.concat(chunks));
  },
  /** A DOCX nested 100,000 elements deep. */
  deepXml: () => zip({ 'word/document.xml': `<w:document>${'<w:p>'.repeat(100_000)}secret words${'</w:p>'.repeat(100_000)}</w:document>` }),
  /** 8,000 pages that all draw one content stream: 1.2 MB that reads as 8,000 pages of text. */
  sharedStreamPdf: () =>
    pdfOf([Array.from({ length: 35 }, (_, i) => `line ${i} of the page that every page draws, again and again`)], 8000),
  /** A PDF whose page tree points at itself and whose cross-reference table lies. */
  loopingPdf: () =>
    strToU8(
      '%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [2 0 R] /Count 1 >>\nendobj\n' +
        'xref\n0 3\n0000000000 65535 f \n0000000999 00000 n \n0000000001 00000 n \ntrailer\n<< /Size 3 /Root 1 0 R /Prev 9 >>\nstartxref\n9\n%%EOF\n',
    ),
};
