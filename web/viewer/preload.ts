import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { BROWSER_IMAGES, kindOf } from './kinds.ts';

// Pictures kept decoded: the neighbours on either side of the one shown, and the last few seen.
const KEEP = 8;
const decoded = new Map<string, HTMLImageElement>();

/** What the stage shows of an image first: its large thumbnail (a fraction of the bytes; HEIC too), else the original. */
export function fittedUrl(item: Item): string {
  return item.hasThumbnail ? api.files.thumbnailUrl(item, 'large') : originalUrl(item);
}

export const originalUrl = (item: Item) => `${api.files.downloadUrl(item)}?inline=1`;

/** Whether the original can replace the fitted picture when zoomed in: only types the browser shows itself. */
export const showsOriginal = (item: Item) => BROWSER_IMAGES.has(item.mimeType ?? '');

/** Fetches and decodes `url` ahead of time, so putting it on screen costs a paint, not a download. */
export function decode(url: string): Promise<void> {
  let img = decoded.get(url);
  if (img) {
    decoded.delete(url);
    decoded.set(url, img);
  } else {
    img = new Image();
    img.decoding = 'async';
    img.src = url;
    decoded.set(url, img);
    while (decoded.size > KEEP) decoded.delete(decoded.keys().next().value!);
  }
  return img.decode().catch(() => {});
}

/** Decodes the pictures next to `at` (the next one first), so ← and → show them at once. */
export function preloadAround(files: readonly Item[], at: number): void {
  for (const i of [at + 1, at - 1, at + 2]) {
    const item = files[i];
    if (item && kindOf(item) === 'image') void decode(fittedUrl(item));
  }
}
