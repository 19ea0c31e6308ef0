import type { ItemInfo } from '../../src/contract/files.ts';
import type { Crumb } from '../app/folders.ts';
import { folderPath } from '../app/router.ts';
import { Icon } from '../ui/icons.tsx';
import { DRAG_TYPE } from './item-pointer.ts';

/** A folder's path, the current folder as the page's heading; every folder above it takes dropped items and files. */
export function Breadcrumbs(p: {
  crumbs: Crumb[];
  /** Inside another account's share: the path starts at "Shared with me" and its owner instead of My files. */
  sharedWithMe?: ItemInfo['sharedWithMe'];
  onDrop(folder: { id: string | null; name: string }, data: DataTransfer): void;
}) {
  const shared = p.sharedWithMe;
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
        {(shared ? p.crumbs : [{ id: null as string | null, name: 'My files' }, ...p.crumbs]).map((c, n, all) => (
          <li key={c.id ?? 'root'}>
            {(n > 0 || shared) && <Icon name="chevronRight" size={16} />}
            {n === all.length - 1 ? (
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
        ))}
      </ol>
    </nav>
  );
}
