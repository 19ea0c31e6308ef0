import { MARK_CLOSE, MARK_OPEN } from '../../db/repos/content.ts';

// Han ideographs and kana are written without spaces: each becomes a token of its own (U+200B is a separator
// to the unicode61 tokenizer), and a CJK query becomes the phrase of its characters, which matches it anywhere.
const CJK = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])/gu;
const ZWSP = '\u200B';

/** Text as it is stored in the index: CJK characters split into tokens, the snippet markers impossible. */
export function indexedText(text: string): string {
  // Nothing above U+2000 means neither markers nor CJK: one scan instead of two.
  if (!/[^\0-\u2000]/.test(text)) return text;
  return text.replace(/[\u200B\uE000\uE001]/g, '').replace(CJK, `${ZWSP}$1${ZWSP}`);
}

const utf8 = new TextEncoder();

/** indexedText(text) in UTF-8: an ASCII text (as many bytes as UTF-16 units) has nothing to prepare and is not scanned for it. */
export function indexedBytes(text: string): Uint8Array<ArrayBuffer> {
  const bytes = utf8.encode(text);
  if (bytes.length === text.length) return bytes;
  const prepared = indexedText(text);
  return prepared === text ? bytes : utf8.encode(prepared);
}

/**
 * The FTS5 query for what a person typed: words and `"quoted phrases"`, all required; a word ending in `*`
 * matches as a prefix. Every term is quoted, so FTS5 operators in the input are plain text. Null when
 * nothing searchable is left.
 */
export function matchExpression(query: string): string | null {
  const terms: string[] = [];
  for (const m of query.normalize('NFC').matchAll(/"([^"]*)"?|(\S+)/g)) {
    const word = m[2];
    const prefix = word !== undefined && /[\p{L}\p{N}]\*+$/u.test(word);
    const text = indexedText((m[1] ?? word ?? '').replace(/["*]/g, ' ').trim());
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    terms.push(`"${text}"${prefix ? '*' : ''}`);
  }
  return terms.length > 0 ? terms.join(' ') : null;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** A snippet from FTS5 as HTML: the document's text escaped, matches in `<mark>`, the CJK separators gone. */
export function snippetHtml(raw: string): string {
  return raw
    .replaceAll(ZWSP, '')
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    .replaceAll(MARK_OPEN, '<mark>')
    .replaceAll(MARK_CLOSE, '</mark>');
}
