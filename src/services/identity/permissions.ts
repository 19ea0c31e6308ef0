import type { Permission } from '../../contract/permissions.ts';

/**
 * What each file operation needs of a sub-user (owners hold every permission). Listing, searching and
 * reading details need none (docs/api.md › Permissions). The route guard reads this table; a new
 * operation is added here, not in a route's options.
 */
const OPERATION_PERMISSIONS = {
  'downloads.file': 'files.download',
  'downloads.zip': 'files.download',
  // A thumbnail shows the content: whoever may not download a file may not see its picture either.
  'thumbnails.view': 'files.download',
  // Reading a document in the editor reads its content; files.edit decides whether it opens for editing.
  'docserver.open': 'files.download',
  'items.createFolder': 'files.upload',
  'uploads.check': 'files.upload',
  'uploads.upload': 'files.upload',
  'uploads.bulk': 'files.upload',
  'uploads.derive': 'files.upload',
  'tus.create': 'files.upload',
  'tus.status': 'files.upload',
  'tus.append': 'files.upload',
  'tus.terminate': 'files.upload',
  'copy.start': 'files.upload',
  'items.rename': 'files.edit',
  'items.move': 'files.edit',
  'items.star': 'files.edit',
  'albums.edit': 'files.edit',
  'albums.share': 'files.share',
  'uploads.replace': 'files.edit',
  'shares.share': 'files.share',
  'shares.links': 'files.share',
  // A link's upload modes let visitors create files: only a login that may upload gives them.
  'shares.uploadMode': 'files.upload',
  'shares.linkParent': 'files.share',
  'shares.list': 'files.share',
  'shares.update': 'files.share',
  'members.manage': 'files.share',
  'trash.trash': 'files.delete',
  'versions.download': 'files.download',
  'versions.restore': 'files.edit',
  'versions.delete': 'files.delete',
  'trash.restore': 'files.trash',
  'trash.delete': 'files.trash',
  'trash.empty': 'files.trash',
} as const satisfies Record<string, Permission>;

export type Operation = keyof typeof OPERATION_PERMISSIONS;

export function permissionFor(operation: Operation): Permission {
  return OPERATION_PERMISSIONS[operation];
}

/**
 * What a sub-user must itself hold to make a person or group an editor of an item (upload, modify and trash
 * there): a share never gives more than its giver may do, or a sub-user could hand its own other account what it lacks.
 */
export const EDITOR_PERMISSIONS = ['files.upload', 'files.edit', 'files.delete'] as const satisfies readonly Permission[];
