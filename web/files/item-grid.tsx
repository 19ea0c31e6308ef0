import { formatDate, formatSize, middleTruncate } from '../app/format.ts';
import { Icon } from '../ui/icons.tsx';
import { Badges } from './item-cells.tsx';
import { ItemPicture } from './item-picture.tsx';
import { type ItemViewProps, itemView, type ViewProps } from './item-view.ts';
import { VideoBadge, VideoWords } from './video-badge.tsx';

/** The grid view: rows of tiles, `cols` to a row. */
export function ItemGrid(
  g: ViewProps & {
    cols: number;
    /** How many characters of a name a tile has room for. */
    tileChars: number;
  },
) {
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
function ItemTile(t: ItemViewProps & { tileChars: number }) {
  const { p, index } = t;
  const { item, name, selected, state, toggle, more } = itemView(t);
  return (
    <div role="option" aria-posinset={index + 1} aria-setsize={p.items.length} class={`tile ${state}`} {...t.itemProps(item, index)}>
      <span class={`check tile-check ${selected ? 'on' : ''}`} aria-hidden="true" onClick={toggle}>
        <Icon name="check" size={14} />
      </span>
      <ItemPicture item={item} box={96} icon={64} />
      <VideoBadge item={item} />
      <span class="tile-name" title={name}>
        {middleTruncate(name, t.tileChars)}
      </span>
      <span class="tile-meta">
        <VideoWords item={item} />
        <Badges item={item} />
        {item.type === 'folder' ? formatDate(item.modified) : formatSize(item.size ?? 0)}
      </span>
      <span class="icon-button row-more" aria-hidden="true" onClick={more}>
        <Icon name="more" size={18} />
      </span>
    </div>
  );
}
