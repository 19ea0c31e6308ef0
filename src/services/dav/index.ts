import type { AuditService } from '../administration/audit.ts';
import type { FilesServices } from '../files/index.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { DavService } from './dav.ts';
import { DavLockService } from './dav-locks.ts';
import { DavTrashbin } from './trashbin.ts';
import type { ThumbnailService } from '../thumbnails/thumbnails.ts';

export interface DavServices {
  dav: DavService;
  davTrashbin: DavTrashbin;
}

type DavDeps = { audit: AuditService; tree: Tree; thumbnails: ThumbnailService } & Pick<
  FilesServices,
  'items' | 'uploads' | 'downloads' | 'trash' | 'copy' | 'quota' | 'members'
>;

/** WebDAV over the file tree; its locks are shared with accounts, which release them when access ends. */
export function createDavServices(infra: Infrastructure, d: DavDeps) {
  const { repos } = infra;
  const davLocks = new DavLockService(infra.clock);
  d.members.onEditorEnd(({ ownerId, itemId, accountId }) => davLocks.forgetShare(ownerId, itemId, accountId));
  const dav = new DavService({
    transactions: repos.transactions,
    items: repos.items,
    properties: repos.davProperties,
    listing: d.items,
    uploads: d.uploads,
    downloads: d.downloads,
    trash: d.trash,
    copy: d.copy,
    quota: d.quota,
    locks: davLocks,
    users: repos.users,
    audit: d.audit,
    tree: d.tree,
    members: repos.members,
    previews: d.thumbnails,
  });
  const services: DavServices = {
    dav,
    davTrashbin: new DavTrashbin({ items: repos.items, trash: d.trash, dav, clock: infra.clock }),
  };
  return { services, shared: { davLocks } };
}
