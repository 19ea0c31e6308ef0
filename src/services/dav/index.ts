import type { AuditService } from '../administration/audit.ts';
import type { FilesServices } from '../files/index.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { DavService } from './dav.ts';
import { DavLockService } from './dav-locks.ts';

export interface DavServices {
  dav: DavService;
}

type DavDeps = { audit: AuditService; tree: Tree } & Pick<
  FilesServices,
  'items' | 'uploads' | 'downloads' | 'trash' | 'copy' | 'quota' | 'members'
>;

/** WebDAV over the file tree; its locks are shared with accounts, which release them when access ends. */
export function createDavServices(infra: Infrastructure, d: DavDeps) {
  const { repos } = infra;
  const davLocks = new DavLockService(infra.clock);
  d.members.onEditorEnd(({ ownerId, itemId, accountId }) => davLocks.forgetShare(ownerId, itemId, accountId));
  const services: DavServices = {
    dav: new DavService({
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
      teamFolders: repos.teamFolders,
    }),
  };
  return { services, shared: { davLocks } };
}
