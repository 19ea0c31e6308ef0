import type { Database } from 'bun:sqlite';
import journal from '../../migrations/meta/_journal.json' with { type: 'json' };
import m0000 from '../../migrations/0000_initial.sql' with { type: 'text' };
import m0001 from '../../migrations/0001_search.sql' with { type: 'text' };
import m0002 from '../../migrations/0002_job_progress.sql' with { type: 'text' };
import m0003 from '../../migrations/0003_upload_intents.sql' with { type: 'text' };
import m0004 from '../../migrations/0004_docserver.sql' with { type: 'text' };
import m0005 from '../../migrations/0005_storage_location.sql' with { type: 'text' };
import m0006 from '../../migrations/0006_webdav.sql' with { type: 'text' };
import m0007 from '../../migrations/0007_idp_identities.sql' with { type: 'text' };
import m0008 from '../../migrations/0008_tus_uploads.sql' with { type: 'text' };
import m0009 from '../../migrations/0009_account_status_request_ids.sql' with { type: 'text' };
import m0010 from '../../migrations/0010_tus_durable_offset.sql' with { type: 'text' };
import m0011 from '../../migrations/0011_versions.sql' with { type: 'text' };
import m0012 from '../../migrations/0012_passkeys.sql' with { type: 'text' };
import m0013 from '../../migrations/0013_share_link_options.sql' with { type: 'text' };
import m0014 from '../../migrations/0014_backup_runs.sql' with { type: 'text' };
import m0015 from '../../migrations/0015_item_members.sql' with { type: 'text' };
import m0016 from '../../migrations/0016_thumbnails.sql' with { type: 'text' };
import m0017 from '../../migrations/0017_content_search.sql' with { type: 'text' };
import m0018 from '../../migrations/0018_photos_taken_at.sql' with { type: 'text' };
import m0019 from '../../migrations/0019_thumbnail_sources.sql' with { type: 'text' };
import m0020 from '../../migrations/0020_tus_drop_limits.sql' with { type: 'text' };
import m0021 from '../../migrations/0021_tree_versions.sql' with { type: 'text' };
import m0022 from '../../migrations/0022_tree_sizes.sql' with { type: 'text' };
import m0023 from '../../migrations/0023_chunked_uploads.sql' with { type: 'text' };
import m0024 from '../../migrations/0024_groups.sql' with { type: 'text' };
import m0025 from '../../migrations/0025_invitations_albums_photo_exif.sql' with { type: 'text' };
import m0026 from '../../migrations/0026_changes.sql' with { type: 'text' };
import m0027 from '../../migrations/0027_access_generation.sql' with { type: 'text' };
import m0028 from '../../migrations/0028_video_duration.sql' with { type: 'text' };
import m0029 from '../../migrations/0029_webhooks.sql' with { type: 'text' };
import m0030 from '../../migrations/0030_album_members.sql' with { type: 'text' };
import m0031 from '../../migrations/0031_libraries.sql' with { type: 'text' };
import m0032 from '../../migrations/0032_album_links.sql' with { type: 'text' };
import m0033 from '../../migrations/0033_library_media.sql' with { type: 'text' };
import m0034 from '../../migrations/0034_change_actors.sql' with { type: 'text' };
import m0035 from '../../migrations/0035_items_indexes.sql' with { type: 'text' };
import m0036 from '../../migrations/0036_auth_generation.sql' with { type: 'text' };
import m0037 from '../../migrations/0037_content_fts_usermerge.sql' with { type: 'text' };
import m0038 from '../../migrations/0038_upload_intents_without_rowid.sql' with { type: 'text' };
import m0039 from '../../migrations/0039_items_taken_at_unchanged.sql' with { type: 'text' };
import m0040 from '../../migrations/0040_auth_generation_app_passwords.sql' with { type: 'text' };
import m0041 from '../../migrations/0041_access_generation_libraries.sql' with { type: 'text' };
import m0042 from '../../migrations/0042_changes_item_row.sql' with { type: 'text' };
import m0043 from '../../migrations/0043_unusable_mime_types.sql' with { type: 'text' };
import m0044 from '../../migrations/0044_dav_property_lang.sql' with { type: 'text' };
import m0045 from '../../migrations/0045_dav_property_xml_prefix.sql' with { type: 'text' };
import m0046 from '../../migrations/0046_mfa_enabled_at.sql' with { type: 'text' };
import m0047 from '../../migrations/0047_content_pending_rename.sql' with { type: 'text' };
import m0048 from '../../migrations/0048_email_trusted.sql' with { type: 'text' };
import m0049 from '../../migrations/0049_unfinished_attempts.sql' with { type: 'text' };
import { formerXmlBindingsRewritten } from './data-repairs.ts';

export interface EmbeddedMigration {
  tag: string;
  sql: string;
  /** Its tags on main before a merge renumbered it, with this same SQL: a database that recorded one of them has it. */
  formerTags?: readonly string[];
  /** A data repair SQL cannot express, run after its SQL in the same transaction. */
  repair?: (sqlite: Database) => void;
}

/** The SQL migrations, embedded into the executable. Add one line per file drizzle-kit generates. */
export const embeddedMigrations: ReadonlyArray<EmbeddedMigration> = [
  { tag: '0000_initial', sql: m0000 },
  // Hand-written: FTS5 and triggers, which drizzle-kit cannot express.
  { tag: '0001_search', sql: m0001 },
  { tag: '0002_job_progress', sql: m0002 },
  { tag: '0003_upload_intents', sql: m0003 },
  { tag: '0004_docserver', sql: m0004 },
  { tag: '0005_storage_location', sql: m0005 },
  { tag: '0006_webdav', sql: m0006 },
  { tag: '0007_idp_identities', sql: m0007 },
  { tag: '0008_tus_uploads', sql: m0008 },
  {
    tag: '0009_account_status_request_ids',
    sql: m0009,
    formerTags: [
      '0004_account_status_request_ids',
      '0005_account_status_request_ids',
      '0006_account_status_request_ids',
      '0007_account_status_request_ids',
      '0008_account_status_request_ids',
    ],
  },
  { tag: '0010_tus_durable_offset', sql: m0010 },
  { tag: '0011_versions', sql: m0011 },
  { tag: '0012_passkeys', sql: m0012 },
  { tag: '0013_share_link_options', sql: m0013 },
  { tag: '0014_backup_runs', sql: m0014 },
  { tag: '0015_item_members', sql: m0015 },
  { tag: '0016_thumbnails', sql: m0016 },
  // Generated, then the FTS5 table, its settings and its triggers added by hand.
  { tag: '0017_content_search', sql: m0017, formerTags: ['0013_content_search', '0015_content_search', '0016_content_search'] },
  // Generated (its expression index written back by hand: drizzle-kit quotes it apart), then the backfill and triggers.
  { tag: '0018_photos_taken_at', sql: m0018 },
  { tag: '0019_thumbnail_sources', sql: m0019 },
  { tag: '0020_tus_drop_limits', sql: m0020 },
  { tag: '0021_tree_versions', sql: m0021 },
  { tag: '0022_tree_sizes', sql: m0022 },
  { tag: '0023_chunked_uploads', sql: m0023 },
  { tag: '0024_groups', sql: m0024 },
  { tag: '0025_invitations_albums_photo_exif', sql: m0025 },
  { tag: '0026_changes', sql: m0026 },
  // Generated, then its one row and the triggers that move it added by hand.
  { tag: '0027_access_generation', sql: m0027 },
  { tag: '0028_video_duration', sql: m0028 },
  { tag: '0029_webhooks', sql: m0029 },
  { tag: '0030_album_members', sql: m0030 },
  // Generated, then the trigger that removes a library entry with its item added by hand.
  { tag: '0031_libraries', sql: m0031 },
  { tag: '0032_album_links', sql: m0032 },
  // Generated, then the content keys of earlier entries and the triggers that follow them added by hand.
  { tag: '0033_library_media', sql: m0033 },
  { tag: '0034_change_actors', sql: m0034 },
  { tag: '0035_items_indexes', sql: m0035 },
  // Generated, then its one row and the triggers that move it added by hand.
  { tag: '0036_auth_generation', sql: m0036 },
  // Hand-written: an FTS5 setting of the content index.
  { tag: '0037_content_fts_usermerge', sql: m0037 },
  // Hand-written: the intents table WITHOUT ROWID.
  { tag: '0038_upload_intents_without_rowid', sql: m0038 },
  // Hand-written: the taken-at triggers write only a changed value.
  { tag: '0039_items_taken_at_unchanged', sql: m0039 },
  // Hand-written: the triggers that move the auth generation when an app password goes or changes.
  { tag: '0040_auth_generation_app_passwords', sql: m0040 },
  // Hand-written: the triggers that move the access generation when a library is added or removed.
  { tag: '0041_access_generation_libraries', sql: m0041 },
  // Generated, with a hand-written backfill: the change log's item index keyed by the item's row number.
  { tag: '0042_changes_item_row', sql: m0042 },
  // Hand-written: file types stored before client-sent types were checked, that no header can carry, become none.
  { tag: '0043_unusable_mime_types', sql: m0043 },
  { tag: '0044_dav_property_lang', sql: m0044 },
  // Hand-written: comments only, its repair is code.
  { tag: '0045_dav_property_xml_prefix', sql: m0045, repair: formerXmlBindingsRewritten },
  { tag: '0046_mfa_enabled_at', sql: m0046 },
  { tag: '0047_content_pending_rename', sql: m0047 },
  { tag: '0048_email_trusted', sql: m0048 },
  { tag: '0049_unfinished_attempts', sql: m0049 },
];

/** Whether a database whose last migration is `tag` is one this Coffer can open (and upgrade). */
export const knownMigration = (tag: string): boolean => embeddedMigrations.some((m) => m.tag === tag || m.formerTags?.includes(tag));

export const journalTags: readonly string[] = journal.entries.map((e) => e.tag);
