type Detected = { mime: string } | undefined;
type Parser = new () => { fromBuffer(bytes: Uint8Array): Promise<Detected> };

let parser: Promise<Parser> | undefined;

/** The type file-type recognises in `bytes`, or null; the library is loaded at the first call, so an idle server does not hold it. */
export async function detectMimeType(bytes: Uint8Array): Promise<string | null> {
  const FileTypeParser = await (parser ??= heldSignatures());
  // A parser per call: it keeps the buffer it is reading in its own fields, and calls may overlap.
  return (await new FileTypeParser().fromBuffer(bytes))?.mime ?? null;
}

/** The bytes file-type's `stringToBytes` makes of a signature string, in the encodings its checks name. */
function signatureBytes(text: string, encoding: string | undefined): number[] {
  const bytes: number[] = [];
  if (encoding === 'utf-16le' || encoding === 'utf-16be') {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (encoding === 'utf-16le') bytes.push(code & 0xff, (code >> 8) & 0xff);
      else bytes.push((code >> 8) & 0xff, code & 0xff);
    }
    return bytes;
  }
  for (const character of text) bytes.push(character.charCodeAt(0));
  return bytes;
}

interface CheckOptions {
  offset?: number;
  mask?: ArrayLike<number>;
  encoding?: string;
}

/**
 * file-type's parser, with each signature string turned into bytes once: the library converts the same
 * strings at every check, over a third of its time on 4 KiB of random bytes (docs/performance.md, the sixth pass).
 * Its byte comparison is the library's own loop without the options object it copies and the iterator it
 * builds at every check, which were half of what was left (docs/performance.md, the eleventh pass).
 */
async function heldSignatures(): Promise<Parser> {
  const { FileTypeParser } = await import('file-type');
  const held = new Map<string, number[]>();
  class HeldSignatures extends FileTypeParser {
    declare buffer: Uint8Array;

    check(header: ArrayLike<number>, options?: CheckOptions): boolean {
      const buffer = this.buffer;
      // As the library's `{ offset: 0, ...options }`: an offset given as undefined stays undefined and matches nothing.
      const offset = options !== undefined && Object.hasOwn(options, 'offset') ? (options.offset as number) : 0;
      const mask = options?.mask;
      for (let i = 0; i < header.length; i++) {
        const byte = buffer[i + offset];
        if (mask ? header[i] !== (mask[i]! & byte!) : header[i] !== byte) return false;
      }
      return true;
    }

    checkString(text: string, options?: CheckOptions): boolean {
      const key = options?.encoding ? `${options.encoding}\0${text}` : text;
      let bytes = held.get(key);
      if (!bytes) held.set(key, (bytes = signatureBytes(text, options?.encoding)));
      return this.check(bytes, options);
    }
  }
  return HeldSignatures;
}
