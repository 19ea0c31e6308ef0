import type { EventHub } from '../events/hub.ts';
import type { ItemRow } from '../db/repos/items.ts';

/** The event types of COMPAT "Events (SSE)". */
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

/** Publishes file-system changes to the account's event streams. */
export class FileEvents {
  constructor(private readonly hub: EventHub) {}

  /** `{id, name, type, parentId, userId}` plus the type's own fields. */
  item(accountId: string, type: FileEventName, row: Pick<ItemRow, 'id' | 'name' | 'type' | 'parent_id'>, userId: string, extra: Record<string, unknown> = {}): void {
    this.hub.publish(accountId, type, { id: row.id, name: row.name, type: row.type, parentId: row.parent_id, userId, ...extra });
  }

  /** One event per finished background job: `{userId, action, count}`. */
  jobDone(accountId: string, type: FileEventName, data: { userId: string; action: string; count: number; jobId: string }): void {
    this.hub.publish(accountId, type, data);
  }
}
