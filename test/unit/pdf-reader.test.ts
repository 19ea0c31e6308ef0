import { describe, expect, test } from 'bun:test';
import { deflateSync } from 'node:zlib';
import { extractText } from '../../src/services/search/extract.ts';
import { ownPdfText } from '../../src/services/search/pdf-reader.ts';
import { STANDARD_WIDTHS } from '../../src/services/search/pdf-tables.ts';
import { compositeFont, indexTerms, pagesPdf, pdfjsText, writePdf } from '../helpers/pdf-producers.ts';
import { hostile, searchable } from '../helpers/search-documents.ts';

const limits = { maxTextBytes: 1024 ** 2 };
const MAX_PAGES = 1000;

/** The reader reads `pdf` itself, and the index gets the same terms as from pdf.js. */
async function sameWordsAsPdfjs(pdf: Uint8Array): Promise<string[]> {
  expect(ownPdfText(pdf, limits.maxTextBytes, MAX_PAGES)).not.toBeNull();
  const terms = indexTerms(await extractText('a.pdf', pdf, limits));
  expect(terms).toEqual(indexTerms(await pdfjsText(pdf)));
  return terms;
}

/** The reader declines `pdf`, and extraction still gives pdf.js's words. */
async function leftToPdfjs(pdf: Uint8Array): Promise<void> {
  expect(ownPdfText(pdf, limits.maxTextBytes, MAX_PAGES)).toBeNull();
  expect(indexTerms(await extractText('a.pdf', pdf, limits))).toEqual(indexTerms(await pdfjsText(pdf)));
}

const times = (widths: string) =>
  `<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /FirstChar 12 /LastChar 126 /Widths [556 556${' 0'.repeat(18)} ${widths}] /Encoding << /Type /Encoding /Differences [12 /fi /fl 39 /quoteright 45 /hyphen 123 /endash] >> >>`;
const TIMES_WIDTHS =
  '250 333 408 500 500 833 778 333 333 333 500 564 250 333 250 278 500 500 500 500 500 500 500 500 500 500 278 278 564 564 564 444 921 722 667 667 722 611 556 722 722 333 389 722 611 889 722 722 556 722 667 556 611 722 722 944 722 722 611 333 278 333 469 500 333 444 500 444 500 444 333 500 500 278 278 500 278 778 500 500 500 500 333 389 278 500 500 722 500 500 444 480 200 480 541';
// Ghostscript gives each font its widths: Helvetica's for ASCII, 556 for the rest.
const HELVETICA_WIDTHS = Array.from({ length: 224 }, (_, i) => STANDARD_WIDTHS.Helvetica![i] ?? 556).join(' ');
const helveticaWinAnsi = `<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 32 /LastChar 255 /Widths [${HELVETICA_WIDTHS}] /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [140 /fi 173 /minus] >> >>`;

describe('the PDF reader gives the words pdf.js gives', () => {
  test('a composite font with a ToUnicode map, glyphs placed one run at a time on a flipped page (as Chromium writes)', async () => {
    const { font, cmap, encode } = compositeFont('abcdefghijklmnopqrstuvwxyz ,.TBCéç', { fi: 200, ffl: 201 }, 4);
    const content = `q 1 0 0 -1 0 792 cm BT /F1 12 Tf 1 0 0 -1 72 100 Tm [${encode('The office staff')} -20 ${encode(' filed 102 waffles.')}] TJ
1 0 0 -1 72 116 Tm [${encode('Besançon')}] TJ ET
BT /F1 12 Tf 1 0 0 -1 72 140 Tm ${encode('Tabs')} Tj 1 0 0 -1 101 140 Tm ${encode('apart')} Tj 1 0 0 -1 136.4 140 Tm ${encode('joined')} Tj ET Q`;
    const terms = await sameWordsAsPdfjs(pagesPdf([content], [font], { extra: [cmap] }));
    expect(terms).toEqual(expect.arrayContaining(['office', 'waffles', 'besancon', '102']));
  });

  test('object and cross-reference streams, Differences over the standard encoding, TJ kerning as word spaces (as pdfTeX writes)', async () => {
    const content = `BT /F1 10 Tf 72 700 Td [(The)-333(\\014nal)-333(sta)-20(ff)27(ed)-333(is)-250(a\\015oat)-333(in)-250(Besancon's)] TJ
0 -12 Td [(second)-333(line{\\173})-80(glued)-333(it\\047s)] TJ ET`;
    const terms = await sameWordsAsPdfjs(pagesPdf([content, content.replace('second', 'page')], [times(TIMES_WIDTHS)], { modern: true }));
    expect(terms).toEqual(expect.arrayContaining(['final', 'staffed', 'afloat', 'besancon', 'second', 'page', 'glued']));
  });

  test('WinAnsi with Differences, moves between words, letter and word spacing, horizontal scaling (as Ghostscript writes)', async () => {
    const content = `BT /F1 14 Tf 72 700 Td (Caf\\351 na\\357ve cr\\350me \\214nal \\255 x) Tj
1 0 0 1 72 680 Tm (split) Tj 40 0 Td (apart) Tj 40.5 0 Td (tight) Tj 30 0 Td (joined) Tj
1 0 0 1 72 660 Tm 4 Tc (tracked) Tj 0 Tc 10 Tw (word spaced text) Tj 0 Tw 50 Tz (scaled words here) Tj 100 Tz
1 0 0 1 72 640 Tm 16 TL (first) Tj T* (second) Tj (third) ' 2 1 (fourth line) " ET`;
    await sameWordsAsPdfjs(pagesPdf([content], [helveticaWinAnsi], { modern: false }));
  });

  test('text off the page or outside its crop box is left out as pdf.js leaves it out; q, Q and cm scale the page', async () => {
    const long = 'words running off the right edge of the page and well beyond it into nothing';
    const content = `BT /F1 18 Tf 72 740 Td (${long}) Tj 0 -30 Td (second line inside) Tj ET
BT /F1 18 Tf 72 900 Td (above the page) Tj ET q 2 0 0 2 0 0 cm BT /F1 9 Tf 36 300 Td (scaled twice ${long}) Tj ET Q`;
    await sameWordsAsPdfjs(pagesPdf([content], [helveticaWinAnsi], { cropBox: '[0 0 500 760]' }));
  });

  test("the search bench's and the tests' PDFs, and 1,000 pages of 1,001", async () => {
    await sameWordsAsPdfjs(searchable.pdf('the quick brown fox (jumps) over \\ the lazy dog '.repeat(60)));
    const pages = ownPdfText(
      searchable.pdfPages(Array.from({ length: 1001 }, (_, i) => `pageword${i + 1}`)),
      limits.maxTextBytes,
      MAX_PAGES,
    );
    expect(pages?.split('\n').at(-1)).toBe('pageword1000');
  });
});

describe('the PDF reader leaves to pdf.js what it does not fully understand', () => {
  test('Type3 fonts, rotated text, raised text, forms, fonts without widths, encryption', async () => {
    const type3 = `<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /a 4 0 R >> /Encoding << /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [500] >>`;
    await leftToPdfjs(pagesPdf(['BT /F1 12 Tf 72 700 Td (aaa) Tj ET'], [type3], { extra: [{ dict: '', data: '500 0 d0' }] }));
    await leftToPdfjs(pagesPdf(['BT /F1 12 Tf 0 1 -1 0 300 300 Tm (sideways words) Tj ET'], [helveticaWinAnsi]));
    await leftToPdfjs(pagesPdf(['BT /F1 12 Tf 72 700 Td (x) Tj 5 Ts (squared) Tj ET'], [helveticaWinAnsi]));
    await leftToPdfjs(
      pagesPdf(['q /X1 Do Q'], [helveticaWinAnsi], {
        xobjects: ' /XObject << /X1 4 0 R >>',
        extra: [
          {
            dict: '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>',
            data: 'BT /F1 12 Tf 72 700 Td (in a form) Tj ET',
          },
        ],
      }),
    );
    await leftToPdfjs(
      pagesPdf(['BT /F1 12 Tf 72 700 Td (no widths known) Tj ET'], ['<< /Type /Font /Subtype /TrueType /BaseFont /Arial >>']),
    );
    const encrypted = pagesPdf(['BT /F1 12 Tf 72 700 Td (secret) Tj ET'], [helveticaWinAnsi], {
      trailer: ' /Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>',
    });
    expect(ownPdfText(encrypted, limits.maxTextBytes, MAX_PAGES)).toBeNull();
  });

  test('hostile files end the reader at once and go to pdf.js under the worker caps: loops, a stream bomb, lies, deep nesting', () => {
    const own = (pdf: Uint8Array) => ownPdfText(pdf, limits.maxTextBytes, MAX_PAGES);
    expect(own(hostile.loopingPdf())).toBeNull();
    const onePage = (contents: Parameters<typeof writePdf>[0][number]) =>
      writePdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        '<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>',
        contents,
      ]);
    // 200 MiB of content from 200 KB: the reader stops at its 64 MiB stream cap.
    expect(own(onePage({ dict: '/Filter /FlateDecode', data: deflateSync(new Uint8Array(200 * 1024 ** 2)), flate: false }))).toBeNull();
    // A cross-reference table whose previous one is itself.
    const latin1 = new TextDecoder('latin1').decode(searchable.pdf('looping words'));
    const xrefAt = /startxref\n(\d+)/.exec(latin1)![1];
    expect(own(Buffer.from(latin1.replace('/Root 1 0 R >>', `/Root 1 0 R /Prev ${xrefAt} >>`), 'latin1'))).toBeNull();
    expect(own(pagesPdf([`BT /F1 12 Tf 72 700 Td ${'['.repeat(10_000)}(deep)${']'.repeat(10_000)} TJ ET`], [helveticaWinAnsi]))).toBeNull();
    const count = pagesPdf(['BT /F1 12 Tf 72 700 Td (one) Tj ET'], [helveticaWinAnsi]);
    expect(own(new TextEncoder().encode(new TextDecoder('latin1').decode(count).replace('/Count 1', '/Count 2')))).toBeNull();
    const truncated = searchable.pdf('truncated words');
    expect(own(truncated.subarray(0, truncated.length - 40))).toBeNull();
    // A cross-reference stream of rows 0 bytes wide: a billion rows would read no data at all.
    const empty = '<< /Type /XRef /W [0 0 0] /Size 1000000000 /Index [0 1000000000] /Length 0 >>';
    const zeroWidth = `%PDF-1.5\n1 0 obj\n${empty}\nstream\n\nendstream\nendobj\nstartxref\n9\n%%EOF\n`;
    expect(own(Buffer.from(zeroWidth, 'latin1'))).toBeNull();
    // A ToUnicode map of 2,000 ranges of 65,536 four-byte codes: 131 million entries from 70 KB.
    const hex8 = (n: number) => n.toString(16).padStart(8, '0');
    const ranges = Array.from({ length: 2000 }, (_, i) => `<${hex8(i * 0x10000)}> <${hex8(i * 0x10000 + 0xffff)}> <0041>`);
    const { font, encode } = compositeFont('ab', {}, 4);
    const huge = { dict: '', data: `begincmap 2000 beginbfrange\n${ranges.join('\n')}\nendbfrange endcmap` };
    expect(own(pagesPdf([`BT /F1 12 Tf 72 700 Td ${encode('ab')} Tj ET`], [font], { extra: [huge] }))).toBeNull();
    // Widths of the same shape: 2,000 ranges of 65,536 glyphs each.
    const { font: sane, cmap } = compositeFont('ab', {}, 4);
    const wide = sane.replace(
      /\/W \[.*\] >>\]/,
      `/W [${Array.from({ length: 2000 }, (_, i) => `${i * 0x10000} ${i * 0x10000 + 0xffff} 500`).join(' ')}] >>]`,
    );
    expect(wide).not.toBe(sane);
    expect(own(pagesPdf([`BT /F1 12 Tf 72 700 Td ${encode('ab')} Tj ET`], [wide], { extra: [cmap] }))).toBeNull();
  });

  test('text stops at the cap a page at a time: 8,000 pages drawing one stream read as far as the cap', () => {
    const text = ownPdfText(hostile.sharedStreamPdf(), 64 * 1024, MAX_PAGES);
    expect(text).not.toBeNull();
    const pages = text!.split('\n').filter((l) => l.startsWith('line 0 ')).length;
    // Each page is about 2,100 characters: the page that crosses 64 KiB is the last read.
    expect(text!.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(pages).toBe(Math.ceil((64 * 1024) / (text!.length / pages)));
  });
});
