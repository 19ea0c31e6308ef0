import { useEffect, useState } from 'preact/hooks';
import type { ItemInfo } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { ApiError } from '../app/api.ts';
import { onFileEvent, onStreamLive } from '../app/events.ts';
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
  useEffect(() => {
    if (!sharedWithMe) return;
    const leave = (text: string) => {
      toast(text);
      navigate('/shared-with-me', { replace: true });
    };
    const offEvents = onFileEvent((e) => {
      if (e.type === 'share.removed' && e.data?.id === sharedWithMe.rootId) leave(`“${e.data.name}” is no longer shared with you`);
    });
    // Ended while no stream was subscribed (its share.removed is not replayed): the share is asked again once live.
    const offLive = onStreamLive(() =>
      api.files.info(sharedWithMe.rootId).catch((err) => {
        if (err instanceof ApiError && err.status === 404) leave('This folder is no longer shared with you');
      }),
    );
    return () => {
      offEvents();
      offLive();
    };
  }, [sharedWithMe]);

  return { crumbs, sharedWithMe };
}
