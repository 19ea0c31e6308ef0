import { describe, expect, test } from 'bun:test';
import { capText, extractText, htmlText, kindOf, xmlText } from '../../src/services/search/extract.ts';
import { indexedText, matchExpression, snippetHtml } from '../../src/services/search/text.ts';
import { hostile, searchable } from '../helpers/search-documents.ts';

const limits = { maxTextBytes: 1024 ** 2 };
const enc = (s: string) => new TextEncoder().encode(s);

describe('extraction', () => {
  test('kinds by content first: a PDF or a ZIP under any name, text without NUL, binary refused', () => {
    expect(kindOf('notes', enc('%PDF-1.7'))).toBe('pdf');
    expect(kindOf('x.docx', enc('PK\x03\x04'))).toBe('docx');
    expect(kindOf('x.zip', enc('PK\x03\x04'))).toBeNull();
    expect(kindOf('Makefile', enc('all:\n\techo é'))).toBe('text');
    expect(kindOf('a.htm', enc('<p>x</p>'))).toBe('html');
    expect(kindOf('a.txt', new Uint8Array([0x66, 0, 0x67]))).toBeNull();
    expect(kindOf('a.txt', new Uint8Array([0xff, 0xfe, 0xfd]))).toBeNull();
  });

  test('XML nested past 256 levels is hostile; entities are decoded but never expanded from a DTD', () => {
    expect(() => xmlText('<a>'.repeat(300), { breaks: new Set() })).toThrow('nested too deeply');
    expect(xmlText('<!DOCTYPE x [<!ENTITY e "boom">]><p>&e; &amp; &#233;</p>', { breaks: new Set(['p']) })).toBe('&e; & é\n');
  });

  test('HTML: scripts, styles and comments are not text', () => {
    expect(htmlText('<style>a{}</style><!-- hidden --><script>x()</script><p>A &lt;b&gt;</p>').trim()).toBe('A <b>');
  });

  test('text is cut on a character boundary', () => {
    expect(capText('ééé', 5)).toBe('éé');
  });

  test('a deeply nested DOCX that compresses poorly still gives no text', async () => {
    const { strToU8, zipSync } = await import('fflate');
    // Random attribute values keep the ratio low, so the XML depth cap (not the ZIP ratio cap) stops it.
    const deep = Array.from({ length: 400 }, (_, i) => `<w:p r="${Math.random().toString(36)}${i}">`).join('');
    const doc = zipSync({ 'word/document.xml': strToU8(`<w:document>${deep}words</w:document>`) }, { level: 0 });
    await expect(extractText('deep.docx', doc, limits)).rejects.toThrow('nested too deeply');
    await expect(extractText('bomb.docx', hostile.zipBomb(), limits)).rejects.toThrow('inflates past its caps');
  }, 30_000);

  test('each office format gives its words, runs joined', async () => {
    expect(await extractText('a.docx', searchable.docx('Radiator leaks'), limits)).toBe('Radiator leaks');
    expect(await extractText('a.pptx', searchable.pptx('One', 'Two'), limits)).toBe('One\nTwo');
    expect(await extractText('a.pdf', searchable.pdf('Boiler repair'), limits)).toBe('Boiler repair');
  });
});

describe('queries and snippets', () => {
  test('every term is quoted, so operators are words; a trailing * is a prefix; CJK becomes a phrase of characters', () => {
    expect(matchExpression('boiler "heat pump" inv* NOT')).toBe('"boiler" "heat pump" "inv"* "NOT"');
    expect(matchExpression('*** "" ()')).toBeNull();
    expect(matchExpression('東京')).toBe('"\u200B東\u200B\u200B京\u200B"');
  });

  test('snippets: the document escaped, only the match marked, the CJK separators gone', () => {
    expect(snippetHtml(`<script>\uE000boiler\uE001 & ${indexedText('東京')}`)).toBe('&lt;script&gt;<mark>boiler</mark> &amp; 東京');
    expect(indexedText('a\uE000b')).toBe('ab');
  });
});
