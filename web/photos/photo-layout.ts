import type { PhotoItem } from '../app/listings.ts';
import type { Month } from './month-scrubber.tsx';

const monthFmt = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' });
const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'long' });
export const MONTH_HEADER = 44;
export const DAY_HEADER = 34;
// Each tile's margin on either side (the .photo rule).
export const MARGIN = 2;
/** The row height each density aims at; a full row is scaled to the width, a day's last row keeps it. */
export const ROW_HEIGHT = { small: 110, medium: 170, large: 260 } as const;
// A row of very wide panoramas would be a sliver, a row of one tall photo a tower: tiles keep within these ratios.
const MIN_RATIO = 0.5;
const MAX_RATIO = 3;

export type Row =
  | { kind: 'month'; key: string; label: string; count: number }
  | { kind: 'day'; key: string; label: string; count: number }
  | { kind: 'tiles'; key: string; start: number; end: number; height: number; widths: number[] };

/** A photo's local day as one number (yyyymmdd), kept per item: layout runs again as every page arrives. */
const dayKeys = new WeakMap<PhotoItem, number>();
function dayOf(p: PhotoItem): number {
  let key = dayKeys.get(p);
  if (key === undefined) {
    const d = new Date(p.takenAt);
    key = d.getFullYear() * 10_000 + d.getMonth() * 100 + d.getDate();
    dayKeys.set(p, key);
  }
  return key;
}
const labels = new Map<string, string>();
/** A header's words, formatted once per month or day. */
function headerLabel(kind: 'month' | 'day', day: number): string {
  const id = `${kind}:${day}`;
  let label = labels.get(id);
  if (label === undefined) {
    const date = new Date(Math.floor(day / 10_000), Math.floor(day / 100) % 100, day % 100);
    label = (kind === 'month' ? monthFmt : dayFmt).format(date);
    labels.set(id, label);
  }
  return label;
}

const ratioOf = (p: PhotoItem) => (p.width && p.height ? Math.min(MAX_RATIO, Math.max(MIN_RATIO, p.width / p.height)) : 1);

/**
 * Month headers, day headers and justified rows (each photo at its own ratio, a full row as wide as `inner`),
 * in the photos' order (newest first, local time).
 */
export function layout(items: PhotoItem[], inner: number, target: number) {
  const rows: Row[] = [];
  const months: Month[] = [];
  const monthOfRow: number[] = [];
  const rowOf = new Int32Array(items.length);
  let i = 0;
  while (i < items.length) {
    const day = dayOf(items[i]!);
    const month = Math.floor(day / 100);
    let monthEnd = i + 1;
    while (monthEnd < items.length && Math.floor(dayOf(items[monthEnd]!) / 100) === month) monthEnd++;
    const key = String(month);
    const label = headerLabel('month', day);
    months.push({ key, label, row: rows.length });
    rows.push({ kind: 'month', key: `m:${key}`, label, count: monthEnd - i });
    monthOfRow.push(months.length - 1);
    while (i < monthEnd) {
      const today = dayOf(items[i]!);
      let dayEnd = i + 1;
      while (dayEnd < monthEnd && dayOf(items[dayEnd]!) === today) dayEnd++;
      rows.push({ kind: 'day', key: `d:${items[i]!.id}`, label: headerLabel('day', today), count: dayEnd - i });
      monthOfRow.push(months.length - 1);
      for (let s = i; s < dayEnd; ) {
        let e = s;
        let ratios = 0;
        let full = false;
        while (e < dayEnd && !full) {
          ratios += ratioOf(items[e]!);
          e++;
          full = ratios * target + (e - s) * 2 * MARGIN >= inner;
        }
        const height = full ? Math.max(1, Math.floor((inner - (e - s) * 2 * MARGIN) / ratios)) : target;
        const widths = items.slice(s, e).map((p) => Math.max(1, Math.floor(ratioOf(p) * height)));
        rowOf.fill(rows.length, s, e);
        rows.push({ kind: 'tiles', key: `t:${items[s]!.id}`, start: s, end: e, height, widths });
        monthOfRow.push(months.length - 1);
        s = e;
      }
      i = dayEnd;
    }
  }
  return { rows, months, monthOfRow, rowOf };
}

/** The tile of the next (or previous) row of tiles nearest below (above) the middle of tile `index`. */
export function verticalNeighbour(rows: Row[], rowOf: Int32Array, index: number, step: 1 | -1): number {
  const here = rows[rowOf[index]!] as Extract<Row, { kind: 'tiles' }>;
  let x = 0;
  for (let k = here.start; k < index; k++) x += here.widths[k - here.start]! + 2 * MARGIN;
  x += here.widths[index - here.start]! / 2;
  for (let r = rowOf[index]! + step; r >= 0 && r < rows.length; r += step) {
    const row = rows[r]!;
    if (row.kind !== 'tiles') continue;
    let left = 0;
    for (let k = row.start; k < row.end; k++) {
      left += row.widths[k - row.start]! + 2 * MARGIN;
      if (x < left) return k;
    }
    return row.end - 1;
  }
  return index;
}
