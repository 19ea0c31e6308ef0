import type { Clock } from '../../clock.ts';
import type { Item } from '../../db/repos/items.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import { LIBRARY_READ_ONLY } from '../../contract/libraries.ts';
import { forbidden } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { StagedHostFile } from '../../lib/staged-host-file.ts';
import { newStorageKey } from '../../storage/keys.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { LibraryRow } from '../../db/repos/libraries.ts';
import type { LibraryFiles } from './library-files.ts';
import type { UploadIntentService } from './upload-intents.ts';

/** An object of the encrypted store: its key, its data key as wrapped, and its plaintext size. */
export interface SealedObject {
  storageKey: string;
  wrappedKey: string;
  keyId: string;
  size: number;
}

/** The host side of a library write (the libraries domain's host writes, given at composition). */
export interface LibraryStaging {
  stage(library: LibraryRow, folderId: string, body: AsyncIterable<Uint8Array>, modifiedAt: number): Promise<StagedHostFile>;
  unstage(staged: StagedHostFile): void;
}

/**
 * The content Coffer writes into writable libraries, as every door needs it once its target is known: the
 * bytes of a stored object staged under a temporary name in the host folder (the commit renames them into
 * place), and a library file's current content kept in the encrypted store before Coffer overwrites it
 * (its version).
 */
export class LibraryContent {
  constructor(
    private readonly d: {
      clock: Clock;
      log: Logger;
      storage: Pick<SealedStore, 'put' | 'get' | 'delete'>;
      intents: UploadIntentService;
      libraries: LibrariesRepo;
      files: LibraryFiles;
      host: LibraryStaging;
      settings: SettingsService;
    },
  ) {}

  /**
   * When `folderId` is a folder of a writable library, the object's bytes written to a temporary file in its
   * host folder, with `modified` (else now) as its mtime; null outside libraries. A read-only library refuses.
   */
  async stage(folderId: string | null, object: Pick<SealedObject, 'storageKey' | 'wrappedKey' | 'size'>, modified: number | null) {
    const library = folderId ? this.d.libraries.ofItem(folderId) : null;
    if (!library || !folderId) return null;
    if (library.readOnly) throw forbidden(LIBRARY_READ_ONLY);
    const body = await this.d.storage.get(object.storageKey, object);
    return this.d.host.stage(library, folderId, body, modified ?? this.d.clock.now());
  }

  /**
   * The current content of the library file `row`, copied into the encrypted store to become its version when
   * Coffer overwrites it; null when versions are off (unless `always`) or the host file cannot be read.
   */
  async keep(row: Item, always = false): Promise<SealedObject | null> {
    if (!always && !this.d.settings.get('versionsEnabled')) return null;
    const location = this.d.files.locate(row);
    if (!location) return null;
    let body: ReadableStream<Uint8Array>;
    try {
      body = this.d.files.open(location, Number.MAX_SAFE_INTEGER);
    } catch (err) {
      this.d.log.warn('the content a library file had could not be kept as a version', { itemId: row.id, err: String(err) });
      return null;
    }
    const storageKey = newStorageKey();
    this.d.intents.record(storageKey);
    try {
      const info = await this.d.storage.put(storageKey, body);
      return { storageKey, ...info };
    } catch (err) {
      this.d.intents.forget(storageKey);
      throw err;
    }
  }

  /** Removes what `stage` and `keep` made for a write that was not committed. */
  async drop(staged: StagedHostFile | null | undefined, kept: SealedObject | null | undefined): Promise<void> {
    if (staged) this.d.host.unstage(staged);
    if (!kept) return;
    try {
      await this.d.storage.delete(kept.storageKey);
      this.d.intents.forget(kept.storageKey);
    } catch (err) {
      this.d.intents.abandon(kept.storageKey);
      this.d.log.warn('could not remove a kept library version', { key: kept.storageKey, err: String(err) });
    }
  }
}
