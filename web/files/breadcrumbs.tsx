import { Fragment } from 'preact';
import type { ItemInfo } from '../../src/contract/files.ts';
import type { Crumb } from '../app/folders.ts';
import { folderPath, navigate } from '../app/router.ts';
import { Icon } from '../ui/icons.tsx';
import { openMenu } from '../ui/menu.tsx';
import { DRAG_TYPE } from './item-pointer.ts';

type Folder = { id: string | null; name: string };

/** A path deeper than this shows its first folder, a "…" menu of the middle ones, the parent and the current folder. */
const SHOWN = 4;

/** A folder's path, the current folder as the page's heading; every folder above it takes dropped items and files. */
export function Breadcrumbs(p: {
  crumbs: Crumb[];
  /** Inside another account's share: the path starts at "Shared with me" and its owner instead of My files. */
  sharedWithMe?: ItemInfo['sharedWithMe'];
  onDrop(folder: Folder, data: DataTransfer): void;
}) {
  const shared = p.sharedWithMe;
  const all: Folder[] = shared ? p.crumbs : [{ id: null, name: 'My files' }, ...p.crumbs];
  // Every folder of a deep path in one row left each a sliver (chevrons over letters), the current one's name cut to a letter.
  const hidden = all.length > SHOWN ? all.slice(1, -2) : [];
  const shown = hidden.length ? [all[0]!, ...all.slice(-2)] : all;
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumb">
      <ol>
        {shared && (
          <>
            <li>
              <a class="crumb" href="/shared-with-me">
                Shared with me
              </a>
            </li>
            <li>
              <Icon name="chevronRight" size={16} />
              <span class="crumb owner-crumb">{shared.owner?.name || shared.owner?.email}</span>
            </li>
          </>
        )}
        {shown.map((c, n) => (
          <Fragment key={c.id ?? 'root'}>
            {n === 1 && hidden.length > 0 && (
              <li>
                <Icon name="chevronRight" size={16} />
                <button
                  type="button"
                  class={`crumb crumb-more ${shared ? '' : 'lead'}`}
                  aria-label={`${hidden.length} more folders in the path`}
                  aria-haspopup="menu"
                  title={hidden.map((h) => h.name).join(' › ')}
                  onClick={(e) => {
                    const r = e.currentTarget.getBoundingClientRect();
                    // On a phone My files gives its place to the path (file-browser.css): it heads the menu instead.
                    const lead = !shared && matchMedia('(max-width: 600px)').matches;
                    openMenu(
                      r.left,
                      r.bottom,
                      (lead ? [all[0]!, ...hidden] : hidden).map((h) => ({
                        label: h.name,
                        icon: 'folder' as const,
                        run: () => navigate(folderPath(h.id)),
                      })),
                      'Folders in the path',
                    );
                  }}
                >
                  …
                </button>
              </li>
            )}
            <li class={n === shown.length - 1 ? 'here' : undefined}>
              {(n > 0 || shared) && <Icon name="chevronRight" size={16} />}
              {n === shown.length - 1 ? (
                <h1 aria-current="page" class="crumb current">
                  {c.name}
                </h1>
              ) : (
                <a
                  class="crumb"
                  href={folderPath(c.id)}
                  onDragOver={(e) => {
                    if (e.dataTransfer?.types.includes(DRAG_TYPE) || e.dataTransfer?.types.includes('Files')) {
                      e.preventDefault();
                      e.stopPropagation();
                      (e.currentTarget as HTMLElement).classList.add('drop');
                    }
                  }}
                  onDragLeave={(e) => (e.currentTarget as HTMLElement).classList.remove('drop')}
                  onDrop={(e) => {
                    e.preventDefault();
                    e.stopPropagation();
                    (e.currentTarget as HTMLElement).classList.remove('drop');
                    p.onDrop(c, e.dataTransfer!);
                  }}
                >
                  {c.name}
                </a>
              )}
            </li>
          </Fragment>
        ))}
      </ol>
    </nav>
  );
}
