import { describe, expect, test } from 'bun:test';
import { makeDocument } from '../../bench/search-docs.ts';
import { extractText, xmlText } from '../../src/services/search/extract.ts';

// The previous implementations (before the seventh pass), kept here as the reference the faster ones must equal.
const NOT_NAME = /[\s/>!?]/;
const DOCTYPE_SUBSET_END = /\]\s*>/g;

function referenceDecode(text: string): string {
  const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'", nbsp: ' ' };
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' ';
    }
    return named[body.toLowerCase()] ?? whole;
  });
}

function referenceXmlText(
  xml: string,
  opts: { breaks: ReadonlySet<string>; spaces?: ReadonlySet<string>; skip?: (tag: string, attrs: string) => boolean },
): string {
  const find = (what: string | RegExp, from: number) => {
    if (typeof what === 'string') return xml.indexOf(what, from);
    what.lastIndex = from;
    return what.exec(xml)?.index ?? -1;
  };
  const markupAt = (at: number) => {
    if (xml.startsWith('<![CDATA[', at)) {
      const close = find(']]>', at + 9);
      if (close >= 0) return { end: close + 3, cdata: xml.slice(at + 9, close) };
    } else if (xml.startsWith('<!--', at)) {
      const close = find('-->', at + 4);
      if (close >= 0) return { end: close + 3 };
    } else if (xml.startsWith('<!DOCTYPE', at)) {
      const gt = find('>', at);
      const bracket = find('[', at);
      if (bracket >= 0 && (gt < 0 || bracket < gt)) {
        const close = find(DOCTYPE_SUBSET_END, bracket + 1);
        if (close >= 0) return { end: xml.indexOf('>', close) + 1 };
      }
    }
    const second = xml[at + 1];
    if (second === '!' || second === '?') {
      const gt = find('>', at);
      return gt < 0 ? null : { end: gt + 1 };
    }
    const closing = second === '/';
    const nameStart = at + (closing ? 2 : 1);
    if (nameStart >= xml.length || NOT_NAME.test(xml[nameStart]!)) return null;
    const gt = find('>', nameStart);
    if (gt < 0) return null;
    let nameEnd = nameStart + 1;
    while (nameEnd < gt && !NOT_NAME.test(xml[nameEnd]!)) nameEnd++;
    const selfClosing = gt > nameEnd && xml[gt - 1] === '/';
    return {
      end: gt + 1,
      tag: { name: xml.slice(nameStart, nameEnd), attrs: xml.slice(nameEnd, selfClosing ? gt - 1 : gt), closing, selfClosing },
    };
  };
  const out: string[] = [];
  let depth = 0;
  let skipDepth = -1;
  let last = 0;
  for (let at = xml.indexOf('<'); at >= 0; at = xml.indexOf('<', at)) {
    const markup = markupAt(at);
    if (!markup) {
      at++;
      continue;
    }
    if (skipDepth < 0 && at > last) out.push(referenceDecode(xml.slice(last, at)));
    last = at = markup.end;
    if ('cdata' in markup && markup.cdata !== undefined) {
      if (skipDepth < 0) out.push(markup.cdata);
      continue;
    }
    const tag = 'tag' in markup ? markup.tag : undefined;
    if (!tag) continue;
    if (tag.closing) {
      depth--;
      if (depth === skipDepth) skipDepth = -1;
      if (skipDepth < 0 && opts.breaks.has(tag.name)) out.push('\n');
      continue;
    }
    if (skipDepth < 0 && opts.spaces?.has(tag.name)) out.push(' ');
    if (tag.selfClosing) {
      if (skipDepth < 0 && opts.breaks.has(tag.name)) out.push('\n');
      continue;
    }
    if (skipDepth < 0 && opts.skip?.(tag.name, tag.attrs)) skipDepth = depth;
    depth++;
    if (depth > 256) throw new Error('XML nested too deeply');
  }
  if (skipDepth < 0 && last < xml.length) out.push(referenceDecode(xml.slice(last)));
  return out.join('');
}

const referenceTidy = (text: string) =>
  text
    .replace(/ [^\S\n]+|[^\S\n ][^\S\n]*/g, ' ')
    .replace(/ \n\s*|\n\s+/g, '\n')
    .trim();

const OPTIONS = [
  { breaks: new Set(['w:p', 'w:br', 'w:cr', 'w:tr']), spaces: new Set(['w:tab', 'w:tc']) },
  { breaks: new Set(['si', 'row']), spaces: new Set(['c']), skip: (tag: string, attrs: string) => tag === 'c' && /\bt="s"/.test(attrs) },
];
const PIECES = [
  '<',
  '>',
  '/',
  '!',
  '?',
  'w:p',
  'c',
  't="s"',
  ' t="n"',
  ' ',
  '\n',
  '\t',
  '\r',
  '&amp;',
  '&#x41;',
  '&#0;',
  '&bogus;',
  '<![CDATA[',
  ']]>',
  '<!--',
  '-->',
  '<!DOCTYPE',
  '[',
  ']',
  'text',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  'si',
  'row',
  '<w:p>',
  '</w:p>',
  '<c t="s">',
  '</c>',
  '<si>',
  '</si>',
  '<row/>',
  '<w:br/>',
  '<w:tab/>',
  '<t>',
  '</t>',
  'x',
  '"',
  '=',
  '<?xml?>',
];

function randomText(seed: number, pieces: number): string {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  let out = '';
  for (let i = 0; i < pieces; i++) out += PIECES[Math.floor(next() * PIECES.length)];
  return out;
}

const outcome = (f: () => string) => {
  try {
    return f();
  } catch (err) {
    return `threw: ${(err as Error).message}`;
  }
};

describe('the faster XML text and blank-space passes give the text the previous ones gave', () => {
  test("the search bench's DOCX and XLSX parts, character for character", async () => {
    const { unzipSync } = await import('fflate');
    for (let i = 0; i < 8; i++) {
      for (const kind of ['docx', 'xlsx'] as const) {
        for (const [name, bytes] of Object.entries(unzipSync(makeDocument(kind, i, 100 * 1024)))) {
          if (!name.endsWith('.xml') || name.startsWith('[')) continue;
          const xml = new TextDecoder().decode(bytes);
          for (const opts of OPTIONS) expect(xmlText(xml, opts)).toBe(referenceXmlText(xml, opts));
        }
      }
    }
  });

  test('20,000 random fragments of markup, entities, CDATA, comments and blanks', () => {
    for (let seed = 1; seed <= 20_000; seed++) {
      const xml = (seed % 97 === 0 ? '<a>'.repeat(260) : '') + randomText(seed, seed % 60);
      for (const opts of OPTIONS) expect(outcome(() => xmlText(xml, opts))).toBe(outcome(() => referenceXmlText(xml, opts)));
    }
  });

  test("blank space in the bench's text documents and in random text is tidied as before", async () => {
    const limits = { maxTextBytes: 1024 ** 2 };
    const texts = [
      ...Array.from({ length: 4 }, (_, i) => new TextDecoder().decode(makeDocument('txt', i, 100 * 1024))),
      ...Array.from({ length: 5000 }, (_, seed) => randomText(seed + 1, 40)),
    ];
    for (const text of texts) expect(await extractText('a.txt', new TextEncoder().encode(text), limits)).toBe(referenceTidy(text));
  });
});
