import type { Item } from '../../src/contract/files.ts';
import { familyOf, formatSize } from '../app/format.ts';

export const TEXT_LIMIT = 1024 * 1024;
const PDF_LIMIT = 200 * 1024 * 1024;

export type Kind = 'image' | 'video' | 'audio' | 'pdf' | 'text' | 'none';

// Types a browser shows by itself: the original is loaded for them when zoomed in.
export const BROWSER_IMAGES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);

const textLike = (item: Item) => ['text', 'code'].includes(familyOf(item)) || (item.mimeType ?? '').startsWith('text/');

/** Why a file of a previewable kind is not previewed: its size, said with the limit. */
export function tooLarge(item: Item): string | null {
  const size = item.size ?? 0;
  if (familyOf(item) === 'pdf' && size > PDF_LIMIT)
    return `PDFs over ${formatSize(PDF_LIMIT)} are not previewed; this one is ${formatSize(size)}.`;
  if (textLike(item) && size > TEXT_LIMIT)
    return `Text files over ${formatSize(TEXT_LIMIT)} are not previewed; this one is ${formatSize(size)}.`;
  return null;
}

export function kindOf(item: Item): Kind {
  const f = familyOf(item);
  if (f === 'image') return 'image';
  if (f === 'video') return 'video';
  if (f === 'audio') return 'audio';
  if (f === 'pdf') return (item.size ?? 0) <= PDF_LIMIT ? 'pdf' : 'none';
  if (textLike(item) && (item.size ?? 0) <= TEXT_LIMIT) return 'text';
  return 'none';
}
