/** How a type is turned into pixels: sharp (libvips) itself, libheif (wasm) or pdfium (wasm). */
export type SourceKind = 'image' | 'heic' | 'pdf';

// Detected types (uploads detect the type from content when recognisable): what a thumbnail can be made of.
const KINDS: Record<string, SourceKind> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/webp': 'image',
  'image/gif': 'image',
  'image/avif': 'image',
  'image/heic': 'heic',
  'image/heif': 'heic',
  'image/heic-sequence': 'heic',
  'image/heif-sequence': 'heic',
  'application/pdf': 'pdf',
};

export const THUMBNAIL_TYPES: readonly string[] = Object.keys(KINDS);

export function sourceKind(mimeType: string | null): SourceKind | null {
  return (mimeType && KINDS[mimeType]) || null;
}

/** What a worker is asked to do and answers. */
export interface MakeRequest {
  kind: SourceKind;
  bytes: Uint8Array;
}

export type MakeResult =
  | { ok: true; small: Uint8Array; large: Uint8Array; width: number; height: number; takenAt: number | null }
  | { ok: false; reason: string };

export interface WorkerSetup {
  cacheDir: string;
  maxPixels: number;
}

/** libheif decodes the whole image into wasm memory (about 24 bytes a pixel), so HEIC is capped lower. */
export const HEIC_MAX_PIXELS = 16_000_000;
