import { onFileEvent, onStreamLive } from './events.ts';
import { forgetInfo, loadSharedFolders } from './folders.ts';
import { invalidateListings, revalidateLiveOnly } from './listings.ts';
import { liveUnread, unreadNotifications } from './people.ts';
import { refreshSession } from './session.ts';
import { loadStorage } from './storage.ts';
import { toast } from './toasts.ts';

/** The shell's part of the live updates: what every screen shares (listings, storage, shares, the bell's count) follows the stream. */
export function followLiveUpdates(): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let changed = false;
  // Bursts (a folder upload, a big move) revalidate once; a stream live again with no change meanwhile, only what the log cannot replay.
  const settle = () => {
    timer ??= setTimeout(() => {
      timer = null;
      if (changed) {
        invalidateListings();
        void loadStorage();
      } else revalidateLiveOnly();
      changed = false;
    }, 150);
  };
  const offEvents = onFileEvent((e) => {
    // Back after a short drop, the missed changes replayed: what the log does not hold is asked again, no listing.
    if (e.type === 'resumed') {
      void loadSharedFolders().catch(() => {});
      void refreshSession();
      return;
    }
    if (e.type === 'notification') {
      liveUnread(e.data?.unread ?? unreadNotifications.value + 1);
      if (e.data?.text) toast(e.data.text);
    }
    if (e.data?.id && (e.type === 'file.renamed' || e.type === 'file.moved')) forgetInfo(e.data.id);
    // What this account may reach changed: details and breadcrumbs are asked again.
    if (e.type === 'share.removed') forgetInfo();
    if (e.type === 'file.shared' || e.type === 'resync') void loadSharedFolders().catch(() => {});
    if (e.type === 'resync') void refreshSession();
    changed = true;
    settle();
  });
  const offLive = onStreamLive(settle);
  return () => {
    offEvents();
    offLive();
    if (timer) clearTimeout(timer);
  };
}
