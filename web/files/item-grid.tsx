import type { VirtualItem } from '@tanstack/virtual-core';
import type { RefObject } from 'preact';
import { displayName, formatDate, formatSize, middleTruncate } from '../app/format.ts';
import { Icon } from '../ui/icons.tsx';
import { Badges } from './item-cells.tsx';
import type { ListProps } from './list-props.ts';
import { ItemPicture } from './item-picture.tsx';
import type { ItemProps } from './item-pointer.ts';
import { VideoBadge, VideoWords } from './video-badge.tsx';

/** The grid view: rows of tiles, `cols` to a row. */
export function ItemGrid(g: {
  p: ListProps;
  scroller: RefObject<HTMLDivElement | null>;
  rows: VirtualItem[];
  total: number;
  cols: number;
  /** How many characters of a name a tile has room for. */
  tileChars: number;
  hide: boolean;
  dropOn: string | null;
  itemProps: ItemProps;
  onKeyDown: (e: KeyboardEvent) => void;
}) {
  const { p, cols } = g;
  return (
    <div
      ref={g.scroller}
      class={`scroller grid-view ${p.selected.size > 0 ? 'selecting' : ''}`}
      role="listbox"
      aria-label={p.label}
      aria-multiselectable="true"
      aria-orientation="vertical"
      onKeyDown={g.onKeyDown}
    >
      <div class="spacer" style={{ height: `${g.total}px` }} role="none">
        {g.rows.map((r) => (
          <div
            key={r.key}
            role="none"
            class="tile-row"
            style={{ transform: `translateY(${r.start}px)`, gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))` }}
          >
            {p.items.slice(r.index * cols, r.index * cols + cols).map((item, n) => (
              <ItemTile
                key={item.id}
                p={p}
                index={r.index * cols + n}
                tileChars={g.tileChars}
                hide={g.hide}
                dropOn={g.dropOn}
                itemProps={g.itemProps}
              />
            ))}
          </div>
        ))}
      </div>
      {p.hasMore && <p class="loading-more">Loading more…</p>}
    </div>
  );
}

/** One item's tile: check mark, picture, name (losing its middle to fit) with badges and size or date, More. */
function ItemTile({
  p,
  index,
  tileChars,
  hide,
  dropOn,
  itemProps,
}: {
  p: ListProps;
  index: number;
  tileChars: number;
  hide: boolean;
  dropOn: string | null;
  itemProps: ItemProps;
}) {
  const item = p.items[index]!;
  const name = displayName(item.name, item.type, hide);
  return (
    <div
      role="option"
      aria-posinset={index + 1}
      aria-setsize={p.items.length}
      class={`tile ${p.selected.has(item.id) ? 'selected' : ''} ${dropOn === item.id ? 'drop' : ''}`}
      {...itemProps(item, index)}
    >
      <span
        class={`check tile-check ${p.selected.has(item.id) ? 'on' : ''}`}
        aria-hidden="true"
        onClick={(e) => {
          e.stopPropagation();
          p.onToggle(index);
        }}
      >
        <Icon name="check" size={14} />
      </span>
      <ItemPicture item={item} box={96} icon={64} />
      <VideoBadge item={item} />
      <span class="tile-name" title={name}>
        {middleTruncate(name, tileChars)}
      </span>
      <span class="tile-meta">
        <VideoWords item={item} />
        <Badges item={item} />
        {item.type === 'folder' ? formatDate(item.modified) : formatSize(item.size ?? 0)}
      </span>
      <span
        class="icon-button row-more"
        aria-hidden="true"
        onClick={(e) => {
          e.stopPropagation();
          const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
          p.onMenu(index, r.left, r.bottom);
        }}
      >
        <Icon name="more" size={18} />
      </span>
    </div>
  );
}
