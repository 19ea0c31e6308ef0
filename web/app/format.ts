import { formatSize } from '../../src/contract/size.ts';

/** Sizes in the same binary units as the CLI and the API docs (KiB, MiB, GiB). */
export { formatSize };

/** A size as typed in a field, exactly (`50G`, `1536M`, `1000`): what parseSize reads back to the same bytes. */
export function sizeInput(bytes: number): string {
  for (const [unit, factor] of [
    ['T', 1024 ** 4],
    ['G', 1024 ** 3],
    ['M', 1024 ** 2],
    ['K', 1024],
  ] as const) {
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const dateFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const exactFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short' });
const weekdayFmt = new Intl.DateTimeFormat(undefined, { weekday: 'long' });

/** Relative within a week ("3 min ago", "Yesterday"), a plain date after that. */
export function formatDate(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const ago = now - t;
  if (ago < -MINUTE) return dateFmt.format(t);
  if (ago < MINUTE) return 'Just now';
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`;
  if (ago < 2 * DAY) return 'Yesterday';
  if (ago < 7 * DAY) return weekdayFmt.format(t);
  return dateFmt.format(t);
}

/** The exact time, for a tooltip. */
export const exactDate = (iso: string | null | undefined) => (iso ? exactFmt.format(Date.parse(iso)) : '');

/** When a share link ends, said plainly. */
export function formatExpiry(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'Never expires';
  const left = Date.parse(iso) - now;
  if (left <= 0) return 'Expired';
  if (left < HOUR) return `Expires in ${Math.max(1, Math.round(left / MINUTE))} min`;
  if (left < DAY) return `Expires in ${Math.round(left / HOUR)} h`;
  const days = Math.round(left / DAY);
  return `Expires in ${days} day${days === 1 ? '' : 's'}`;
}

export const plural = (n: number, word: string, many = `${word}s`) => `${n.toLocaleString()} ${n === 1 ? word : many}`;

/** Seconds as "8 s", "3 min", "1 h 5 min". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/** A video's length as players show it: "0:07", "4:05", "1:02:03". */
export function runningTime(seconds: number): string {
  const s = Math.round(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}

/** The extension including its dot, as the server splits names (`.bashrc` has none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}

/** A name as shown: without its extension when the administrator hides them (files only). */
export function displayName(name: string, type: 'file' | 'folder', hideExtensions: boolean): string {
  if (!hideExtensions || type === 'folder') return name;
  const ext = extensionOf(name);
  return ext ? name.slice(0, -ext.length) : name;
}

/** Long names lose their middle, keeping the start and the extension: `holiday-2024-…-final.jpg`. */
export function middleTruncate(name: string, max = 48): string {
  if (name.length <= max) return name;
  const ext = extensionOf(name);
  const tail = Math.min(ext.length + 6, Math.floor(max / 2));
  const head = max - tail - 1;
  return `${name.slice(0, head)}…${name.slice(name.length - tail)}`;
}

export type Family =
  | 'folder'
  | 'image'
  | 'video'
  | 'audio'
  | 'pdf'
  | 'document'
  | 'sheet'
  | 'slides'
  | 'archive'
  | 'code'
  | 'text'
  | 'other';

const BY_EXT: Record<string, Family> = {};
const add = (family: Family, exts: string) => {
  for (const e of exts.split(' ')) BY_EXT[e] = family;
};
add('image', 'jpg jpeg png gif webp avif bmp svg heic heif tif tiff ico');
add('video', 'mp4 m4v mov webm mkv avi wmv mpg mpeg ogv');
add('audio', 'mp3 m4a aac flac wav ogg oga opus wma');
add('pdf', 'pdf');
add('document', 'doc docx odt rtf pages');
add('sheet', 'xls xlsx ods csv tsv numbers');
add('slides', 'ppt pptx odp key');
add('archive', 'zip tar gz tgz bz2 xz 7z rar zst iso dmg');
add(
  'code',
  'js mjs cjs ts tsx jsx json py rb go rs java c h cpp hpp cs php sh bash zsh ps1 sql html htm css scss xml yml yaml toml ini swift kt lua pl r dart vue svelte',
);
add('text', 'txt md markdown log rst conf cfg env srt vtt');

/** The icon family of an item, from its MIME type, else its extension. */
export function familyOf(item: { type: string; name: string; mimeType?: string | null }): Family {
  if (item.type === 'folder') return 'folder';
  const mime = item.mimeType ?? '';
  if (mime === 'application/pdf') return 'pdf';
  const byExt = BY_EXT[extensionOf(item.name).slice(1).toLowerCase()];
  if (byExt) return byExt;
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  if (mime.startsWith('text/')) return 'text';
  return 'other';
}
