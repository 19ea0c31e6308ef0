// Which extractor reads a file, apart from the extractors (extract.ts): the main thread, which only picks what to
// read, then does not load fflate at start.

import { strictUtf8 } from '../../lib/utf8.ts';

type Kind = 'text' | 'html' | 'svg' | 'pdf' | 'docx' | 'xlsx' | 'pptx' | 'odf' | null;

const ZIP_KINDS: Record<string, Kind> = {
  docx: 'docx',
  xlsx: 'xlsx',
  pptx: 'pptx',
  odt: 'odf',
  ods: 'odf',
  odp: 'odf',
};

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** Text when the first bytes are valid UTF-8 (a cut last character allowed) without NUL: source code under any name. */
function looksLikeText(head: Uint8Array): boolean {
  return !head.includes(0) && strictUtf8(head.subarray(0, trimPartialUtf8(head))) !== null;
}

/** Length of `bytes` without a trailing, incomplete UTF-8 sequence. */
export function trimPartialUtf8(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = bytes[end - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? end - back : end;
  }
  return end;
}

/** Which extractor reads a file: by its leading bytes first (PDF, ZIP, text), then its name. */
export function kindOf(name: string, head: Uint8Array): Kind {
  const ext = extensionOf(name);
  if (head[0] === 0x25 && head[1] === 0x50 && head[2] === 0x44 && head[3] === 0x46) return 'pdf';
  // A ZIP's signature is PK and two control bytes: text that starts with "PK" (a CSV's key column) stays text.
  if (head[0] === 0x50 && head[1] === 0x4b && head[2]! < 0x09 && head[3]! < 0x09) return ZIP_KINDS[ext] ?? null;
  if (!looksLikeText(head.subarray(0, 8192))) return null;
  if (ext === 'svg' || SVG_START.test(new TextDecoder().decode(head.subarray(0, 4096)))) return 'svg';
  return ext === 'html' || ext === 'htm' || ext === 'xhtml' ? 'html' : 'text';
}

// An SVG under any name: its root element, after an optional XML declaration, comments and doctype.
const SVG_START = /^\uFEFF?\s*(?:<\?xml[^>]*>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)\s*)*<(?:[\w.-]+:)?svg[\s>/]/i;

/** Whether `kindOf` needs the whole file; plain text needs only the bytes that become text. */
export function needsWholeFile(kind: Kind): boolean {
  return kind !== 'text' && kind !== 'html' && kind !== 'svg';
}
