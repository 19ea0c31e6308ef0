import type { ItemsRepo } from '../../db/repos/items.ts';
import type { ListedVersion } from '../../db/repos/versions.ts';
import { Messages, notFound } from '../../errors.ts';
import type { Principal } from '../identity/principal.ts';
import type { DownloadFile } from '../files/downloads.ts';
import type { VersionService } from '../versions/versions.ts';
import type { DavService } from './dav.ts';

/** One kept version as the Nextcloud clients see it under /remote.php/dav/versions/<id>/versions/<fileid>/. */
export interface DavVersion {
  /** The Unix second its content was modified: the apps name a version by its getlastmodified. */
  name: string;
  id: string;
  size: number;
  mimeType: string | null;
  modifiedAt: number;
}

/** The version's entry name: its content's modified time in Unix seconds, as Nextcloud names its revisions. */
const nameOf = (v: Pick<ListedVersion, 'modifiedAt'>) => String(Math.floor(v.modifiedAt / 1000));

/**
 * A file's versions as the Nextcloud clients' versions tree: listed by their content's modified second,
 * downloaded and restored through the versions service, with its rules (view, download, edit).
 */
export class DavVersions {
  constructor(private readonly d: { items: ItemsRepo; versions: VersionService; dav: DavService }) {}

  /**
   * The versions of the file with this fileid, newest first; one per modified second (the newest made),
   * since that second is the name the apps restore by. 404 for a file the caller cannot see.
   */
  list(principal: Principal, fileId: number): { itemId: string; versions: DavVersion[] } {
    const itemId = this.itemIdOf(fileId);
    const seen = new Set<string>();
    const versions: DavVersion[] = [];
    for (const v of this.d.versions.rows(principal, itemId)) {
      const name = nameOf(v);
      if (seen.has(name)) continue;
      seen.add(name);
      versions.push({ name, id: v.id, size: v.size, mimeType: v.mimeType, modifiedAt: v.modifiedAt });
    }
    return { itemId, versions };
  }

  /** The version of that file with this name; 404 when there is none. */
  entry(principal: Principal, fileId: number, name: string): { itemId: string; version: DavVersion } {
    const { itemId, versions } = this.list(principal, fileId);
    const version = versions.find((v) => v.name === name);
    if (!version) throw notFound('Version not found');
    return { itemId, version };
  }

  /** A version's content to send, with the file's name; needs the Download permission. */
  download(principal: Principal, fileId: number, name: string): { file: DownloadFile; version: DavVersion } {
    const { itemId, version } = this.entry(principal, fileId, name);
    this.d.dav.allow(principal, 'versions.download');
    return { file: this.d.versions.resolveDownload(principal, itemId, version.id), version };
  }

  /** The version becomes the file's content, the current one its newest version; needs Edit (an editor member's role). */
  async restore(principal: Principal, fileId: number, name: string): Promise<void> {
    const { itemId, version } = this.entry(principal, fileId, name);
    this.d.dav.allow(principal, 'versions.restore');
    await this.d.versions.restore(principal, itemId, version.id);
  }

  private itemIdOf(fileId: number): string {
    const row = this.d.items.liveBySeq(fileId);
    if (!row) throw notFound(Messages.itemNotFound);
    return row.id;
  }
}
