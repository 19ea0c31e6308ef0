import { useEffect, useState } from 'preact/hooks';
import type { ItemInfo } from '../../src/contract/files.ts';
import { onFileEvent } from '../app/events.ts';
import { ancestors, type Crumb, itemInfo, knownAncestors } from '../app/folders.ts';
import { viewingShared } from '../app/people.ts';
import { navigate } from '../app/router.ts';
import { loadAdministeredTeams } from '../app/team-folders.ts';
import { toast, toastError } from '../app/toasts.ts';
import type { BrowserKind } from './browser-views.ts';

/** What a folder view knows of the folder itself: its path (breadcrumbs) and, inside another account's share, whose it is. */
export function useFolderFacts(kind: BrowserKind, folderId: string | null, count: number) {
  // A folder opened before shows its path at once; a new one when its details arrive.
  const [crumbs, setCrumbs] = useState<Crumb[]>(() => (kind === 'folder' && folderId ? (knownAncestors(folderId) ?? []) : []));
  const [sharedWithMe, setSharedWithMe] = useState<ItemInfo['sharedWithMe']>(undefined);

  useEffect(() => {
    if (kind !== 'folder' || !folderId) return setCrumbs([]);
    let live = true;
    ancestors(folderId).then(
      (c) => live && setCrumbs(c),
      (err) => live && toastError(err),
    );
    itemInfo(folderId).then(
      (info) => {
        if (!live) return;
        setSharedWithMe(info.sharedWithMe);
        if (info.sharedWithMe) void loadAdministeredTeams();
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [kind, folderId, count]);

  useEffect(() => {
    viewingShared.value = sharedWithMe !== undefined;
    return () => void (viewingShared.value = false);
  }, [sharedWithMe]);

  // The owner stopped sharing what this page shows: leave it at once.
  useEffect(
    () =>
      onFileEvent((e) => {
        if (e.type !== 'share.removed' || !sharedWithMe || e.data?.id !== sharedWithMe.rootId) return;
        toast(`“${e.data.name}” is no longer shared with you`);
        navigate('/shared-with-me', { replace: true });
      }),
    [sharedWithMe],
  );

  return { crumbs, sharedWithMe };
}
