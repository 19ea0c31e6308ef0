/** The type file-type recognises in `bytes`, or null; the library is loaded at the first call, so an idle server does not hold it. */
export async function detectMimeType(bytes: Uint8Array): Promise<string | null> {
  const { fileTypeFromBuffer } = await import('file-type');
  return (await fileTypeFromBuffer(bytes))?.mime ?? null;
}
