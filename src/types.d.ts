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
