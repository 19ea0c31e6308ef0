import type { Item } from '../../src/contract/files.ts';
import { type Crumb, peopleFolders, sharedFolders } from '../app/folders.ts';
import { can } from '../app/session.ts';
import { openShareDialog } from '../sharing/share-dialog.tsx';
import { LinkScope } from '../sharing/shared-links.tsx';
import { Icon } from '../ui/icons.tsx';

/** Inside a folder shared by link or with people (this one or one above it): a banner saying so, with its manager. */
export function SharedBanners({ crumbs, folderId }: { crumbs: Crumb[]; folderId: string | null }) {
  const sharedRoot = [...crumbs].reverse().find((c) => sharedFolders.value.has(c.id));
  // Shared with people only (no link above it either): said so, and never managed as a link.
  const peopleRoot = !sharedRoot ? [...crumbs].reverse().find((c) => peopleFolders.value.has(c.id)) : undefined;
  return (
    <>
      {sharedRoot && (
        <div class="banner shared-banner" role="note">
          <Icon name="link" size={18} />
          <span>
            {sharedRoot.id === folderId ? 'This folder is shared by link' : `Inside “${sharedRoot.name}”, which is shared by link`}:{' '}
            <LinkScope folderId={sharedRoot.id} canAsk={can('files.share')} />
          </span>
          {can('files.share') && (
            <button
              type="button"
              class="button small"
              onClick={() =>
                openShareDialog(
                  [
                    {
                      id: sharedRoot.id,
                      name: sharedRoot.name,
                      type: 'folder',
                      shared: true,
                      expiresAt: sharedFolders.value.get(sharedRoot.id) ?? null,
                    } as Item,
                  ],
                  { part: 'link' },
                )
              }
            >
              Manage link
            </button>
          )}
        </div>
      )}

      {peopleRoot && (
        <div class="banner shared-banner" role="note">
          <Icon name="users" size={18} />
          <span>
            {peopleRoot.id === folderId ? 'This folder is shared with people' : `Inside “${peopleRoot.name}”, which is shared with people`}:
            only the people you added can see it, and it has no public link.
          </span>
          {can('files.share') && (
            <button
              type="button"
              class="button small"
              onClick={() =>
                openShareDialog([{ id: peopleRoot.id, name: peopleRoot.name, type: 'folder', shared: false, expiresAt: null } as Item], {
                  part: 'people',
                })
              }
            >
              Manage sharing
            </button>
          )}
        </div>
      )}
    </>
  );
}
