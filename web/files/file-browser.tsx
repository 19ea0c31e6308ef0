import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { folderSource, listingFor, textMatches } from '../app/listings.ts';
import { sortBy, sortOrder, viewMode } from '../app/prefs.ts';
import { folderPath } from '../app/router.ts';
import { can } from '../app/session.ts';
import { administeredTeam, administeredTeamOfFolder, loadAdministeredTeams } from '../app/team-folders.ts';
import { toastError } from '../app/toasts.ts';
import { screenCommands } from '../palette/commands.ts';
import { SharedLinks, TeamLinks } from '../sharing/shared-links.tsx';
import { LoadError } from '../ui/page.tsx';
import { useSelection } from '../ui/use-selection.ts';
import { filesFromInput } from '../uploads/drop.ts';
import { startUploads } from '../uploads/start.tsx';
import { openActionMenu } from './action-menu.ts';
import { type Action, type ActionContext, available, labelOf, openItem } from './actions.tsx';
import { Breadcrumbs } from './breadcrumbs.tsx';
import { BrowserContent, DropOverlay, ListFoot, UploadInputs } from './browser-body.tsx';
import { dropOnFolder, useDropZone } from './browser-drop.ts';
import { onListKey, usePageKeys } from './browser-keys.ts';
import { BrowserToolbar, NewButton, ViewSwitch } from './browser-toolbar.tsx';
import { type BrowserKind, COLUMNS, isSortable, sortByColumn, sourceFor, titleOf } from './browser-views.ts';
import { useFolderFacts } from './folder-facts.ts';
import { navigateToItem, useReveal, useWatchedListing } from './reveal.ts';
import { InfoPanel } from './info-panel.tsx';
import { ItemList } from './item-list.tsx';
import type { SortKey } from './list-props.ts';
import { SharedBanners } from './shared-banners.tsx';

export interface BrowserProps {
  kind: BrowserKind;
  folderId?: string | null;
  query?: string;
}

/**
 * The file manager: one folder or view. A composition of parts: the selection model, breadcrumbs, toolbar,
 * list or grid, keys and paste, drops, the context menu, empty states and the details panel.
 */
export function FileBrowser({ kind, folderId = null, query = '' }: BrowserProps) {
  const by = sortBy.value;
  const order = sortOrder.value;
  const source = useMemo(() => sourceFor(kind, folderId, query, by, order), [kind, folderId, query, by, order]);
  const listing = listingFor(source);
  const items = listing.items.value;
  const loaded = listing.loaded.value;
  const sel = useSelection(items);
  const selected = sel.ids.value;
  const focus = sel.focus.value;
  const cols = useRef(1);
  const [infoOpen, setInfoOpen] = useState(false);
  const { crumbs, sharedWithMe } = useFolderFacts(kind, folderId, items.length);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const slow = useWatchedListing(listing);
  const reveal = useReveal(sel, listing);

  // Team folders listed: which of them this account administers decides where their links are made.
  useEffect(() => {
    if (items.some((i) => i.teamFolder)) void loadAdministeredTeams();
  }, [items]);

  const contextOf = (selection: Item[]): ActionContext => ({
    kind,
    folderId,
    selection,
    listing,
    select: sel.set,
    toggleInfo: () => setInfoOpen((o) => !o),
    pickUpload: (folder) => (folder ? folderInput : fileInput).current?.click(),
    sharedRole: sharedWithMe?.role,
    team:
      administeredTeam(sharedWithMe?.owner?.id)?.id ??
      (selection.length === 1 && selection[0]!.teamFolder ? administeredTeamOfFolder(selection[0]!.id)?.id : undefined),
  });
  const selection = sel.picked();
  const ctx = contextOf(selection);
  const actions = available(ctx);
  const run = (a: Action) => Promise.resolve(a.run(ctx)).catch(toastError);
  useEffect(() => {
    screenCommands.value = actions.map((a) => ({ label: labelOf(a, ctx), keys: a.keys, run: () => void run(a) }));
  });
  useEffect(() => () => void (screenCommands.value = []), []);

  const showMenu = (index: number, x: number, y: number) => {
    const item = items[index];
    if (!item) return;
    if (!selected.has(item.id)) sel.only(index);
    openActionMenu(x, y, ctx, selected.has(item.id) ? selection : [item]);
  };
  const parentId = crumbs.length > 1 ? crumbs[crumbs.length - 2]!.id : null;
  const onKey = (e: KeyboardEvent, c: number) => {
    cols.current = c;
    onListKey(e, c, {
      selection: sel,
      ctx,
      actions,
      run,
      infoOpen,
      closeInfo: () => setInfoOpen(false),
      up: kind === 'folder' && folderId ? () => navigateToItem(folderPath(parentId), folderId) : undefined,
      showMenu,
      acted: reveal.acted,
      alone: (item) => {
        const own = contextOf([item]);
        return { actions: available(own), run: (a) => Promise.resolve(a.run(own)).catch(toastError) };
      },
    });
  };
  usePageKeys((e) => onKey(e, cols.current), { ctx, actions, run, listing });

  const here = { items, folderId, listing };
  const prefetch = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onHover = (item: Item) => {
    if (prefetch.current) clearTimeout(prefetch.current);
    if (item.type !== 'folder') return;
    prefetch.current = setTimeout(() => {
      const l = listingFor(folderSource(item.id, by, order));
      if (!l.loaded.value) void l.refresh();
    }, 120);
  };

  const sortable = isSortable(kind);
  const title = titleOf(kind, crumbs, query);
  const info = infoOpen && selection.length === 1 ? selection[0]! : null;
  const drop = useDropZone(
    kind === 'folder' && can('files.upload'),
    (data) => void dropOnFolder({ id: folderId, name: title }, data, here),
  );
  const globals = actions.filter((a) => a.global);

  const inText = kind === 'search' && textMatches.value.q === query ? textMatches.value.hits : [];
  const list = (
    <ItemList
      items={items}
      canShare={can('files.share') && kind !== 'sharedWithMe' && kind !== 'trash' && !ctx.sharedRole}
      mode={viewMode.value}
      label={title}
      columns={COLUMNS[kind]}
      selected={selected}
      focus={Math.min(focus, Math.max(0, items.length - 1))}
      claimFocus={reveal.claimFocus}
      sort={sortable ? { by: by as SortKey, order } : null}
      onSort={sortable ? sortByColumn : undefined}
      onPress={(index, e, touch) => {
        reveal.acted();
        sel.focus.value = index;
        if (e.shiftKey) sel.range(index);
        else if (e.ctrlKey || e.metaKey || (touch && selected.size > 0)) sel.toggle(index);
        else if (touch) openItem(ctx, items[index]!);
        else sel.only(index);
      }}
      onOpen={(item) => openItem(ctx, item)}
      onToggle={sel.toggle}
      onMenu={showMenu}
      onKey={onKey}
      onNearEnd={() => void listing.loadMore()}
      onFocusIndex={(index) => {
        reveal.acted();
        sel.focus.value = index;
      }}
      onHover={onHover}
      onDropOnFolder={(folder, data) => void dropOnFolder(folder, data, here)}
      dragIds={(index) => {
        const item = items[index]!;
        return selected.has(item.id) ? [...selected] : [item.id];
      }}
      hasMore={listing.more.value}
    />
  );

  return (
    <div class={`browser ${info ? 'with-info' : ''}`} {...drop.handlers}>
      <header class="browser-head">
        {kind === 'folder' ? (
          <Breadcrumbs crumbs={crumbs} sharedWithMe={sharedWithMe} onDrop={(c, data) => void dropOnFolder(c, data, here)} />
        ) : (
          <h1 class="view-title">{title}</h1>
        )}
        <ViewSwitch infoOpen={infoOpen} setInfoOpen={setInfoOpen} />
      </header>
      <BrowserToolbar ctx={ctx} actions={actions} run={run} onClear={sel.clear} sortable={sortable} count={items.length} />
      {kind === 'shared' && can('files.share') && <SharedLinks />}
      {kind === 'shared' && can('files.share') && <TeamLinks />}
      {kind === 'folder' && <SharedBanners crumbs={crumbs} folderId={folderId} />}
      {listing.error.value && <LoadError message={listing.error.value} retry={() => listing.refresh()} />}
      <div class="browser-body">
        <BrowserContent
          kind={kind}
          query={query}
          loaded={loaded}
          slow={slow}
          failed={Boolean(listing.error.value)}
          count={items.length}
          inText={inText}
          list={list}
        />
        {info && <InfoPanel item={info} onClose={() => setInfoOpen(false)} />}
        {drop.dropping && <DropOverlay title={title} />}
      </div>
      {selection.length === 0 && globals.length > 0 && <NewButton globals={globals} ctx={ctx} run={run} />}
      {loaded && (items.length > 0 || inText.length > 0) && (
        <ListFoot count={items.length} more={listing.more.value} inText={inText.length} />
      )}
      <UploadInputs
        fileInput={fileInput}
        folderInput={folderInput}
        onFiles={(files) => void startUploads(filesFromInput(files), folderId, listing)}
      />
    </div>
  );
}
