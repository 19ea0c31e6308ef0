/** The permission catalog, in display order (docs/compatibility.md › Permissions): what an account owner may grant a sub-user: the key the server checks, the label and description people read. */
export const PERMISSION_CATALOG = [
  { key: 'files.download', label: 'Download', description: 'Download files and folders.' },
  { key: 'files.upload', label: 'Upload & create', description: 'Upload files, create folders and make copies.' },
  { key: 'files.edit', label: 'Modify', description: 'Rename, move, star and replace items.' },
  { key: 'files.share', label: 'Share', description: 'Create and remove public share links.' },
  { key: 'files.delete', label: 'Move to trash', description: 'Move items to the trash.' },
  { key: 'files.trash', label: 'Manage trash', description: 'Restore items from the trash, delete them permanently and empty it.' },
] as const;

export type Permission = (typeof PERMISSION_CATALOG)[number]['key'];
export const ALL_PERMISSIONS: readonly Permission[] = PERMISSION_CATALOG.map((p) => p.key);
