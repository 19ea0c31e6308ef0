import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * What was made from one stored object (by its key, so a replaced file's new content gets its own row
 * and a copy that shares nothing gets its own): `ready` with the two sealed thumbnail objects beside it
 * (`<key>_thumb_small`, `<key>_thumb_large`), or `none` when it cannot have one (malformed, too large).
 * Width, height (upright) and the time the photo was taken feed the Photos view; the camera, lens and
 * GPS position (read from EXIF with the time) the photo's details, a video's duration its tile and details.
 */
export const thumbnails = sqliteTable(
  'thumbnails',
  {
    storageKey: text('storage_key').primaryKey(),
    // `failed`: the first try failed and is retried once (RETRY_AFTER_MS in services/thumbnails); `none`: it will never have one.
    status: text('status', { enum: ['ready', 'failed', 'none'] }).notNull(),
    smallSize: integer('small_size'),
    largeSize: integer('large_size'),
    width: integer('width'),
    height: integer('height'),
    takenAt: integer('taken_at'),
    // "Make Model" as the camera writes them; NULL when the photo does not say.
    camera: text('camera'),
    lens: text('lens'),
    // Degrees, WGS 84 (north and east positive); both or neither.
    latitude: real('latitude'),
    longitude: real('longitude'),
    // A video's length in seconds, from its container (MP4, QuickTime); NULL for pictures and other videos.
    duration: real('duration'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('thumbnails_status_idx').on(t.status)],
);
