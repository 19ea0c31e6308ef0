import type { PhotoItem } from '../app/listings.ts';
import { displayName, familyOf, formatDuration, plural } from '../app/format.ts';
import { ItemPicture } from '../files/item-picture.tsx';
import { VideoBadge } from '../files/video-badge.tsx';
import { Icon } from '../ui/icons.tsx';
import { MARGIN, type Row } from './photo-layout.ts';

const takenFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'full' });

/** What a screen reader says of a video before its date: that it is one, and how long. */
const videoWords = (p: PhotoItem) =>
  familyOf(p) !== 'video' ? '' : p.duration === undefined ? 'Video, ' : `Video, ${formatDuration(p.duration)}, `;

/** A month's or a day's header in the grid, with how many photos it holds. */
export function PhotoHeader({ row, top }: { row: Extract<Row, { kind: 'month' | 'day' }>; top: number }) {
  return (
    <div role="none" class={row.kind === 'month' ? 'photo-month' : 'photo-day'} style={{ transform: `translateY(${top}px)` }}>
      {row.label} <span class="photo-count">{plural(row.count, 'item')}</span>
    </div>
  );
}

/** One justified row of photo tiles. */
export function PhotoRow(p: {
  row: Extract<Row, { kind: 'tiles' }>;
  top: number;
  items: PhotoItem[];
  focus: number;
  isSelected: (id: string) => boolean;
  hide: boolean;
  onPress: (index: number, e: MouseEvent) => void;
  onToggle: (index: number) => void;
  onMenu: (index: number, x: number, y: number) => void;
}) {
  const { row } = p;
  return (
    <div role="none" class="photo-row" style={{ transform: `translateY(${p.top}px)`, height: `${row.height + 2 * MARGIN}px` }}>
      {p.items.slice(row.start, row.end).map((item, n) => {
        const index = row.start + n;
        const on = p.isSelected(item.id);
        const box = Math.max(row.widths[n]!, row.height);
        return (
          <div
            key={item.id}
            role="option"
            aria-label={`${displayName(item.name, item.type, p.hide)}${item.owner ? `, shared by ${item.owner.name}` : ''}`}
            // The date a screen reader says after the name: the day headers are not in the list.
            aria-describedby={`taken-${item.id}`}
            aria-selected={on}
            data-index={index}
            style={{ width: `${row.widths[n]}px`, height: `${row.height}px` }}
            tabIndex={index === Math.min(p.focus, p.items.length - 1) ? 0 : -1}
            class={`photo ${on ? 'selected' : ''}`}
            onClick={(e) => p.onPress(index, e)}
            onContextMenu={(e) => {
              e.preventDefault();
              p.onMenu(index, e.clientX, e.clientY);
            }}
          >
            <ItemPicture item={item} box={box} icon={48} />
            <VideoBadge item={item} />
            <span id={`taken-${item.id}`} class="sr-only">
              {videoWords(item)}
              {takenFmt.format(new Date(item.takenAt))}
            </span>
            {item.owner && (
              <span class="photo-owner" aria-hidden="true" title={`Shared by ${item.owner.name}`}>
                <Icon name="users" size={12} />
                {item.owner.name}
              </span>
            )}
            <span
              class={`check ${on ? 'on' : ''}`}
              aria-hidden="true"
              onClick={(e) => {
                e.stopPropagation();
                p.onToggle(index);
              }}
            >
              <Icon name="check" size={14} />
            </span>
          </div>
        );
      })}
    </div>
  );
}
