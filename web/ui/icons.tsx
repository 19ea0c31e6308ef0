import type { Family } from '../app/format.ts';

// Stroke icons on a 24-unit grid, drawn for Coffer; aria-hidden because every use has a text label.
const PATHS = {
  home: 'M3 11l9-7 9 7v9a1 1 0 0 1-1 1h-5v-6H9v6H4a1 1 0 0 1-1-1z',
  folder: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  activity: 'M3 12h4l3-8 4 16 3-8h4',
  clock: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM12 7v5l3 2',
  star: 'M12 3.5l2.6 5.3 5.9.9-4.3 4.1 1 5.8-5.2-2.7-5.2 2.7 1-5.8-4.3-4.1 5.9-.9z',
  link: 'M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1',
  trash: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6',
  upload: 'M12 16V4M7 9l5-5 5 5M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3',
  uploadFolder: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM12 16v-6M9.5 12.5 12 10l2.5 2.5',
  folderPlus: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM12 10v6M9 13h6',
  download: 'M12 4v12M7 11l5 5 5-5M4 20h16',
  pencil: 'M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4',
  editDocument: 'M13 3H6a1 1 0 0 0-1 1v16a1 1 0 0 0 1 1h5M13 3l5 5v2M13 3v5h5M13 21v-2.5l5.5-5.5 2.5 2.5-5.5 5.5z',
  move: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM9 13h6M13 10.5l2.5 2.5-2.5 2.5',
  copy: 'M8 8h11v12H8zM5 16V4h11',
  info: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM12 11v6M12 7.5v.5',
  close: 'M6 6l12 12M18 6 6 18',
  check: 'M5 12.5l4.5 4.5L19 7',
  chevronRight: 'M9 5l7 7-7 7',
  chevronLeft: 'M15 5l-7 7 7 7',
  chevronDown: 'M5 9l7 7 7-7',
  search: 'M11 4a7 7 0 1 0 0 14 7 7 0 0 0 0-14zM16 16l5 5',
  menu: 'M4 6h16M4 12h16M4 18h16',
  grid: 'M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z',
  list: 'M8 6h12M8 12h12M8 18h12M4 6h.01M4 12h.01M4 18h.01',
  sun: 'M12 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4',
  moon: 'M20 14.5A8 8 0 0 1 9.5 4 8 8 0 1 0 20 14.5z',
  more: 'M12 5h.01M12 12h.01M12 19h.01',
  restore: 'M4 12a8 8 0 1 0 2.3-5.6M4 4v4h4',
  offline:
    'M2 2l20 20M8.5 16.5a5 5 0 0 1 7 0M5 12.9a10 10 0 0 1 5.2-2.8M19 12.9a10 10 0 0 0-2.6-1.9M2 8.8a15 15 0 0 1 4.2-2.7M22 8.8A15 15 0 0 0 10.5 5M12 20h.01',
  settings:
    'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM19.4 15a1.7 1.7 0 0 0 .3 1.8l.1.1a2 2 0 1 1-2.8 2.8l-.1-.1a1.7 1.7 0 0 0-2.9 1.2V21a2 2 0 0 1-4 0v-.1a1.7 1.7 0 0 0-2.9-1.2l-.1.1a2 2 0 1 1-2.8-2.8l.1-.1A1.7 1.7 0 0 0 3 15H3a2 2 0 0 1 0-4h.1a1.7 1.7 0 0 0 1.2-2.9l-.1-.1a2 2 0 1 1 2.8-2.8l.1.1A1.7 1.7 0 0 0 10 4.1V4a2 2 0 0 1 4 0v.1a1.7 1.7 0 0 0 2.9 1.2l.1-.1a2 2 0 1 1 2.8 2.8l-.1.1a1.7 1.7 0 0 0 1.2 2.9h.1a2 2 0 0 1 0 4h-.1a1.7 1.7 0 0 0-1.5 1z',
  logout: 'M15 4h4a1 1 0 0 1 1 1v14a1 1 0 0 1-1 1h-4M10 17l5-5-5-5M15 12H4',
  scissors: 'M6 4a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5zM6 15a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5zM8 8l12 10M8 16 20 6',
  clipboard: 'M9 4h6v3H9zM7 5H5v16h14V5h-2',
  keyboard: 'M3 6h18v12H3zM7 10h.01M11 10h.01M15 10h.01M7 14h10',
  zoomIn: 'M11 4a7 7 0 1 0 0 14 7 7 0 0 0 0-14zM16 16l5 5M8 11h6M11 8v6',
  zoomOut: 'M11 4a7 7 0 1 0 0 14 7 7 0 0 0 0-14zM16 16l5 5M8 11h6',
  arrowUp: 'M12 19V5M6 11l6-6 6 6',
  arrowDown: 'M12 5v14M6 13l6 6 6-6',
  alert: 'M12 3 2 20h20zM12 10v4M12 17v.01',
  file: 'M6 2h8l6 6v13a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1zM14 2v6h6',
  user: 'M12 4a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM4 21a8 8 0 0 1 16 0',
  bell: 'M6 16v-5a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0',
  users: 'M9 4a3.5 3.5 0 1 0 0 7 3.5 3.5 0 0 0 0-7zM2.5 20a6.5 6.5 0 0 1 13 0M16 4.5a3.5 3.5 0 0 1 0 6.5M18 14a6.5 6.5 0 0 1 3.5 6',
  shield: 'M12 3l8 3v6c0 4.5-3.4 8-8 9-4.6-1-8-4.5-8-9V6zM9 12l2 2 4-4',
  devices: 'M3 5h14v10H3zM1 18h18M17 9h5v11h-5z',
  palette:
    'M12 3a9 9 0 1 0 0 18c1 0 1.5-.7 1.5-1.5 0-1.2-1-1.5-1-2.5s.7-1.5 1.8-1.5H17a4 4 0 0 0 4-4c0-4.7-4-8.5-9-8.5zM7.5 12h.01M9.5 8h.01M14.5 8h.01',
  sliders: 'M4 6h10M18 6h2M4 12h4M12 12h8M4 18h12M20 18h0M14 4v4M8 10v4M16 16v4',
  server: 'M4 4h16v6H4zM4 14h16v6H4zM8 7h.01M8 17h.01',
  scan: 'M4 8V5a1 1 0 0 1 1-1h3M16 4h3a1 1 0 0 1 1 1v3M20 16v3a1 1 0 0 1-1 1h-3M8 20H5a1 1 0 0 1-1-1v-3M4 12h16',
  lock: 'M6 11h12v10H6zM8 11V7a4 4 0 0 1 8 0v4',
  key: 'M8 11a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM10.8 12.2 20 3M16 7l3 3M13.5 9.5l2 2',
  photo: 'M4 5h16v14H4zM4 16l5-5 4 4 2.5-2.5L20 17M15.5 8.5h.01',
  album: 'M7 3h14v14H7zM4 7v14h14M7 14l4-4 3 3 2-2 5 5',
  plus: 'M12 5v14M5 12h14',
  albumRemove: 'M7 3h14v14H7zM4 7v14h14M11 10h6',
  cover: 'M7 3h14v14H7zM4 7v14h14M14 6.5l1.5 3 3 .4-2.2 2.1.5 3-2.8-1.5-2.8 1.5.5-3-2.2-2.1 3-.4z',
  play: 'M8 5v14l11-7z',
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name, size = 20, class: cls }: { name: IconName; size?: number; class?: string }) {
  return (
    <svg
      class={`icon ${cls ?? ''}`}
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="1.8"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d={PATHS[name]} />
    </svg>
  );
}

// File-type icons by family: a sheet with a coloured band and a glyph, readable at 20 px and at 64 px.
const FAMILY: Record<Exclude<Family, 'folder'>, { color: string; glyph: string }> = {
  image: { color: '#d9534f', glyph: 'M8 17l3-4 2 2.5 1.5-2L17 17zM9.5 10.5a1.2 1.2 0 1 0 0-.1' },
  video: { color: '#8e5bd8', glyph: 'M10 11v5l4.5-2.5z' },
  audio: { color: '#e0803a', glyph: 'M11 17a1.5 1.5 0 1 1-1.5-1.5H11V10l4-1v5.5' },
  pdf: { color: '#c9302c', glyph: 'M8 16h8M8 13h8M8 10h5' },
  document: { color: '#2f6fde', glyph: 'M8 16h8M8 13h8M8 10h8' },
  sheet: { color: '#1f9d55', glyph: 'M8 10h8v7H8zM8 13.5h8M12 10v7' },
  slides: { color: '#e09b1a', glyph: 'M8 10h8v5H8zM12 15v2' },
  archive: { color: '#7a6a53', glyph: 'M12 9v1M12 11v1M12 13v1M11 15h2v2h-2z' },
  code: { color: '#0f8b8d', glyph: 'M10 11l-2 2.5 2 2.5M14 11l2 2.5-2 2.5' },
  text: { color: '#6b7a90', glyph: 'M8 10h8M8 13h8M8 16h5' },
  other: { color: '#8a94a6', glyph: '' },
};

export function FileIcon({ family, size = 24 }: { family: Family; size?: number }) {
  if (family === 'folder') {
    return (
      <svg class="ficon" width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
        <path fill="var(--folder)" d="M2.5 6.5a2 2 0 0 1 2-2h4.3l2 2h8.7a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2h-15a2 2 0 0 1-2-2z" />
        <path fill="var(--folder-front)" d="M2.5 9a1.5 1.5 0 0 1 1.5-1.5h16a1.5 1.5 0 0 1 1.5 1.5v9.5a2 2 0 0 1-2 2h-15a2 2 0 0 1-2-2z" />
      </svg>
    );
  }
  const f = FAMILY[family];
  return (
    <svg class="ficon" width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        fill="var(--sheet)"
        stroke="var(--sheet-line)"
        stroke-width="0.8"
        d="M6 2.5h8l5 5V20a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 5 20V4a1.5 1.5 0 0 1 1-1.5z"
      />
      <path fill="var(--sheet-line)" d="M14 2.5v5h5z" />
      {f.glyph && <path d={f.glyph} fill="none" stroke={f.color} stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round" />}
      <rect x="5" y="19" width="14" height="2.5" rx="0.8" fill={f.color} />
    </svg>
  );
}
