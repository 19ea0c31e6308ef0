import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/**
 * Chunked uploads of the Nextcloud clients (`/remote.php/dav/uploads/<login>/<transfer>`): the folder a
 * login made for one file's chunks. Its chunks are sealed objects of their own until the final MOVE
 * reads them in order into the file; an upload untouched for a day is removed with its chunks.
 */
export const chunkedUploads = sqliteTable(
  'chunked_uploads',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    loginId: text('login_id').notNull(),
    // The folder's name as the client chose it (unique per login).
    transfer: text('transfer').notNull(),
    // OC-Total-Length when the client sent it: checked up front, reserved against the quota of `roomAccountId`
    // (the account the file goes to) and counted in the free-disk reservations.
    totalLength: integer('total_length'),
    roomAccountId: text('room_account_id'),
    // With a total length the chunks are sealed straight into the file's object as they come in order (a
    // resumable object: `storageKey`, its key and header, the sealed tail of its partial segment); chunks
    // that arrive early wait as objects of their own and are appended at the final MOVE.
    storageKey: text('storage_key'),
    wrappedKey: text('wrapped_key'),
    keyId: text('key_id'),
    header: blob('header', { mode: 'buffer' }),
    tail: blob('tail', { mode: 'buffer' }),
    streamOffset: integer('stream_offset').notNull().default(0),
    durableOffset: integer('durable_offset').notNull().default(0),
    // The sort key of the last chunk sealed into the object; null before the first.
    lastStreamed: text('last_streamed'),
    // The object can no longer be appended to (bytes lost in a crash, or differing from an interrupted append's).
    broken: integer('broken', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('chunked_uploads_login_transfer_idx').on(t.loginId, t.transfer),
    index('chunked_uploads_expires_idx').on(t.expiresAt),
    index('chunked_uploads_room_idx').on(t.roomAccountId),
  ],
);

/** One chunk: a sealed object under its own key, or (keys null) part of its upload's object; `sortKey` orders the chunks (numeric names by value). */
export const uploadChunks = sqliteTable(
  'upload_chunks',
  {
    uploadId: text('upload_id')
      .notNull()
      .references(() => chunkedUploads.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    sortKey: text('sort_key').notNull(),
    size: integer('size').notNull(),
    storageKey: text('storage_key'),
    wrappedKey: text('wrapped_key'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.name] }), uniqueIndex('upload_chunks_storage_key_idx').on(t.storageKey)],
);
