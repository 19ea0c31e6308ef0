import { copyItemLink } from '../sharing/link-actions.ts';
import { Icon } from '../ui/icons.tsx';
import { Name } from '../ui/name.tsx';
import { Badges, COLUMN_TITLES, cell, rowLabel } from './item-cells.tsx';
import { ItemPicture } from './item-picture.tsx';
import { type ItemViewProps, itemView, type ViewProps } from './item-view.ts';
import type { ListProps, SortKey } from './list-props.ts';

/** The list view: a grid of rows under sortable column headers. */
export function ItemRows(g: ViewProps) {
  const { p } = g;
  return (
    <div
      class={`list-view ${p.selected.size > 0 ? 'selecting' : ''}`}
      role="grid"
      aria-label={p.label}
      aria-rowcount={p.items.length + 1}
      aria-multiselectable="true"
      onKeyDown={g.onKeyDown}
    >
      <div role="rowgroup" class="list-head">
        <div role="row" aria-rowindex={1} class="row head">
          <div role="columnheader" class="col col-check">
            <span class="sr-only">Selected</span>
          </div>
          <SortHeader p={p} title="Name" />
          {p.columns.map((c) =>
            c === 'size' || c === 'modified' ? (
              <SortHeader key={c} p={p} sortKey={c} title={COLUMN_TITLES[c]} />
            ) : (
              <div key={c} role="columnheader" class={`col col-${c}`}>
                {COLUMN_TITLES[c]}
              </div>
            ),
          )}
          <div role="columnheader" class="col col-more">
            <span class="sr-only">Actions</span>
          </div>
        </div>
      </div>
      <div ref={g.scroller} class="scroller" role="rowgroup">
        <div class="spacer" style={{ height: `${g.total}px` }} role="none">
          {g.rows.map((r) => (
            <ItemRow
              key={p.items[r.index]!.id}
              p={p}
              index={r.index}
              top={r.start}
              hide={g.hide}
              dropOn={g.dropOn}
              itemProps={g.itemProps}
            />
          ))}
        </div>
        {p.hasMore && <p class="loading-more">Loading more…</p>}
      </div>
    </div>
  );
}

/** A column header: a button that sorts by it where the view sorts, its current order said to screen readers. */
function SortHeader({ p, sortKey = 'name', title }: { p: ListProps; sortKey?: SortKey; title: string }) {
  const active = p.sort?.by === sortKey;
  const ariaSort = active ? (p.sort!.order === 'asc' ? 'ascending' : 'descending') : 'none';
  return (
    <div role="columnheader" class={`col col-${sortKey === 'name' ? 'name' : sortKey}`} aria-sort={p.sort ? ariaSort : undefined}>
      {p.onSort ? (
        <button type="button" class="sort" onClick={() => p.onSort!(sortKey)}>
          {title}
          {active && <Icon name={p.sort!.order === 'asc' ? 'arrowUp' : 'arrowDown'} size={14} />}
        </button>
      ) : (
        title
      )}
    </div>
  );
}

/** One item's row: check box, picture, name and badges (Copy link where it has one), the view's columns, More. */
function ItemRow(r: ItemViewProps & { top: number }) {
  const { p, index } = r;
  const { item, name, selected, state, toggle, more } = itemView(r);
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      aria-label={rowLabel(item, name)}
      class={`row ${state}`}
      style={{ transform: `translateY(${r.top}px)` }}
      {...r.itemProps(item, index)}
    >
      <div role="gridcell" class="col col-check">
        <span class="check">
          <input type="checkbox" tabIndex={-1} checked={selected} aria-label={`Select ${name}`} onClick={toggle} />
        </span>
      </div>
      <div role="gridcell" class="col col-name">
        <ItemPicture item={item} box={28} icon={24} />
        <Name text={name} />
        <Badges item={item} />
        {item.shared && p.canShare && (
          <button
            type="button"
            class="icon-button row-more row-copy"
            tabIndex={-1}
            aria-label={`Copy link to ${name}`}
            title="Copy link"
            onClick={(e) => {
              e.stopPropagation();
              void copyItemLink(item);
            }}
          >
            <Icon name="copy" size={18} />
          </button>
        )}
      </div>
      {p.columns.map((c) => (
        <div key={c} role="gridcell" class={`col col-${c}`}>
          {cell(item, c)}
        </div>
      ))}
      <div role="gridcell" class="col col-more">
        <button type="button" class="icon-button row-more" tabIndex={-1} aria-label={`More actions for ${name}`} onClick={more}>
          <Icon name="more" size={18} />
        </button>
      </div>
    </div>
  );
}
