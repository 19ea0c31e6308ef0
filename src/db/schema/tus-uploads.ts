import { blob, index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/**
 * Resumable (tus) uploads in progress, and finished ones until they expire. The row is the upload's
 * intent: it names the object key before a byte is written, and the staged bytes belong to it until the
 * completing transaction turns it into an item. Its `length` is reserved against the account's quota
 * while it is not completed.
 */
export const tusUploads = sqliteTable(
  'tus_uploads',
  {
    // Unguessable: 192 random bits, base64url; it is the whole of the upload's URL.
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // The login that created it: events and audit name it, whoever finishes the upload.
    loginId: text('login_id').notNull(),
    storageKey: text('storage_key').notNull(),
    // Upload-Length, and the plaintext bytes acknowledged so far (in the page cache: they survive the
    // process, kill -9 included).
    length: integer('length').notNull(),
    offset: integer('offset').notNull().default(0),
    // The bytes known to be on the disk itself (fsynced); a power loss can take what lies between this
    // and `offset`, so after a restart those segments are authenticated before the offset is trusted.
    durableOffset: integer('durable_offset').notNull().default(0),
    // The object's data key (wrapped by the master key) and its 16-byte sealed header, fixed at creation.
    wrappedKey: text('wrapped_key').notNull(),
    keyId: text('key_id').notNull(),
    header: blob('header', { mode: 'buffer' }).notNull(),
    // The acknowledged bytes of a segment not yet full, sealed under a key of their own (never plaintext).
    tail: blob('tail', { mode: 'buffer' }),
    // Upload-Metadata, checked at creation.
    name: text('name').notNull(),
    parentId: text('parent_id'),
    relativePath: text('relative_path'),
    modifiedAt: integer('modified_at'),
    clientId: text('client_id'),
    clientType: text('client_type'),
    // The file whose content this upload replaces (Upload-Metadata replaceId); null for a new file.
    replaceId: text('replace_id'),
    // receiving → sealed (every byte stored, the item not yet created) → completed (item_id set).
    state: text('state', { enum: ['receiving', 'sealed', 'completed'] }).notNull(),
    itemId: text('item_id'),
    // Sent through a drop folder's link (its /s/<token>/tus): only that link reaches it, and the file
    // records who sent it (the visit, and the name the visitor gave) like a drop through the page.
    shareLinkId: text('share_link_id'),
    shareVisitId: text('share_visit_id'),
    shareUploader: text('share_uploader'),
    // The visitor's address: a link, and an address, may hold only a few unfinished uploads at once.
    shareIp: text('share_ip'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('tus_uploads_storage_key_idx').on(t.storageKey),
    index('tus_uploads_account_state_idx').on(t.accountId, t.state),
    index('tus_uploads_expires_idx').on(t.expiresAt),
    index('tus_uploads_share_link_idx').on(t.shareLinkId, t.state),
    index('tus_uploads_share_ip_idx').on(t.shareIp, t.state),
  ],
);
