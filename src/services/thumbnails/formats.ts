/** How a type is turned into pixels: sharp (libvips) itself, libheif (wasm), pdfium (wasm) or ffmpeg's first frame. */
export type SourceKind = 'image' | 'heic' | 'pdf' | 'video';

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

/** Video types uploads detect (file-type) whose first frame ffmpeg can read, when it is configured. */
export const VIDEO_TYPES: readonly string[] = [
  'video/mp4',
  'video/webm',
  'video/quicktime',
  'video/x-matroska',
  'video/matroska',
  'video/x-m4v',
  'video/3gpp',
  'video/3gpp2',
  'video/mpeg',
  'video/mp2t',
  'video/x-msvideo',
  'video/vnd.avi',
  'video/x-flv',
  'video/ogg',
];

/** Whether a type gets a thumbnail here (the `hasThumbnail` of listings): videos only when ffmpeg is configured. */
export type HasThumbnail = (mimeType: string | null) => boolean;

export function hasThumbnailWith(videos: boolean): HasThumbnail {
  return (mimeType) => {
    const kind = sourceKind(mimeType);
    return kind !== null && (videos || kind !== 'video');
  };
}

/**
 * Of these files' thumbnail states (ThumbnailsRepo.statusOfItems), those that have a thumbnail or can have
 * one made when asked (none tried yet, and the bytes at hand): one rule for listings, share pages and WebDAV.
 */
export function withThumbnails(
  rows: ReadonlyArray<{ id: string; mimeType: string | null; status: 'ready' | 'none' | null; readable: boolean }>,
  canHave: HasThumbnail,
): Set<string> {
  const out = new Set<string>();
  for (const r of rows) if (r.status === 'ready' || (r.status === null && r.readable && canHave(r.mimeType))) out.add(r.id);
  return out;
}

export function sourceKind(mimeType: string | null): SourceKind | null {
  if (mimeType && VIDEO_TYPES.includes(mimeType)) return 'video';
  return (mimeType && KINDS[mimeType]) || null;
}

/** What a worker is asked to do (a video's first frame comes as a PNG) and answers. */
export interface MakeRequest {
  kind: SourceKind;
  bytes: Uint8Array;
}

/** How to get the bytes a thumbnail is made of (a file's, or a video's first frame): run in the pool's slot. */
export type MakeSource = () => Promise<Uint8Array | Extract<MakeResult, { ok: false }>>;

/** What a photo's EXIF says: when it was taken (ms), the camera, the lens and the GPS position; null where it says nothing. */
export interface PhotoFacts {
  takenAt: number | null;
  camera: string | null;
  lens: string | null;
  latitude: number | null;
  longitude: number | null;
}

export type MakeResult =
  | ({ ok: true; small: Uint8Array; large: Uint8Array; width: number; height: number } & PhotoFacts)
  | { ok: false; reason: string };

export interface WorkerSetup {
  cacheDir: string;
  maxPixels: number;
}

/**
 * A HEIC that is one coded picture is decoded whole (about 24 bytes a pixel in wasm memory), so it is capped
 * lower; a grid (phones: 512 px tiles) is decoded a tile at a time and has only THUMBNAIL_MAX_PIXELS.
 */
export const HEIC_MAX_PIXELS = 16_000_000;
