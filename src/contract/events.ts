/** The event types of docs/compatibility.md › Events. */
export const FileEventType = {
  uploaded: 'file.uploaded',
  deleted: 'file.deleted',
  renamed: 'file.renamed',
  moved: 'file.moved',
  copied: 'file.copied',
  folderCreated: 'folder.created',
  restored: 'file.restored',
  permanentlyDeleted: 'file.permanently_deleted',
  starred: 'file.starred',
  shared: 'file.shared',
  updated: 'file.updated',
} as const;

export type FileEventName = (typeof FileEventType)[keyof typeof FileEventType];
