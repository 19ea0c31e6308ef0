import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const CHANGE_ACTOR_KINDS = ['login', 'link', 'docserver', 'system'] as const;

/**
 * The change log: one row per change to an account's tree, appended in the change's own transaction.
 * `seq` is AUTOINCREMENT so a thinned seq is never handed out again (consumers resume after a seq).
 */
export const changes = sqliteTable(
  'changes',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    // Epoch milliseconds.
    at: integer('at').notNull(),
    // Whose tree changed (the sharing owner's when a member acts inside a share).
    accountId: text('account_id').notNull(),
    actorKind: text('actor_kind', { enum: CHANGE_ACTOR_KINDS }).notNull(),
    // The login id, or the share link's id for a link visitor; null for the document server and the system.
    actorId: text('actor_id'),
    kind: text('kind').notNull(),
    itemId: text('item_id').notNull(),
    // The item's row number (items.seq, never handed out again); null when its row was already gone at the append.
    itemRow: integer('item_row'),
    itemType: text('item_type', { enum: ['file', 'folder'] }).notNull(),
    nameBefore: text('name_before'),
    parentBefore: text('parent_before'),
    nameAfter: text('name_after'),
    parentAfter: text('parent_after'),
    // JSON: the kind's own facts (member, role, link, version, size).
    details: text('details'),
  },
  (t) => [
    index('changes_account_seq').on(t.accountId, t.seq),
    // An item's history: new items' row numbers only grow, so a new file's change appends where a random id would not.
    index('changes_item_row_seq').on(t.itemRow, t.seq).where(sql`item_row IS NOT NULL`),
    // The Activity view's person filter and its list of people: an actor's rows of an account, by seq.
    index('changes_account_actor_seq').on(t.accountId, t.actorId, t.seq),
  ],
);
