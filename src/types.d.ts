declare module '*.sql' {
  const text: string;
  export default text;
}

// busboy's own header and parameter parsers, used by the multipart parser (http/multipart.ts).
declare module 'busboy/lib/utils.js' {
  export function parseContentType(
    value: string,
  ): { type: string; subtype: string; params: Record<string, string | undefined> } | undefined;
  export function parseDisposition(
    value: string,
    decoder: (text: string, hint: number) => string | undefined,
  ): { type: string; params: Record<string, string | undefined> } | undefined;
  export function getDecoder(charset: string): (text: string, hint: number) => string | undefined;
  export function convertToUTF8(data: Uint8Array, charset: string, hint: number): string | undefined;
  export function basename(path: string): string;
}

// heic-decode ships no types: its default export decodes the first image, `all` lists them (dimensions first).
declare module 'heic-decode' {
  interface DecodedHeic {
    width: number;
    height: number;
    data: Uint8ClampedArray;
  }
  interface HeicImage {
    width: number;
    height: number;
    decode(): Promise<DecodedHeic>;
  }
  function decode(input: { buffer: Uint8Array }): Promise<DecodedHeic>;
  namespace decode {
    function all(input: { buffer: Uint8Array }): Promise<HeicImage[] & { dispose(): void }>;
  }
  export default decode;
}

// Imported `with { type: 'file' }`: the path of the file (inside the executable once compiled).
declare module '*.wasm' {
  const path: string;
  export default path;
}
