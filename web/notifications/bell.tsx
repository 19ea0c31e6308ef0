import { useEffect } from 'preact/hooks';
import type { ItemInfo } from '../../src/contract/files.ts';
import type { NotificationEntry } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { onStreamLive } from '../app/events.ts';
import { formatDate } from '../app/format.ts';
import { usePages } from '../app/load.ts';
import { loadNotifications, markNotificationsRead, unreadNotifications } from '../app/people.ts';
import { folderPath, navigate } from '../app/router.ts';
import { toastError } from '../app/toasts.ts';
import { navigateToItem } from '../files/reveal.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { Icon } from '../ui/icons.tsx';
import { MoreButton } from '../ui/page.tsx';

/** Opens what a notification is about: a folder itself, a file where it is listed (a shared one under Shared with me). */
async function openNotified(n: NotificationEntry): Promise<void> {
  // Removal leaves nothing to open.
  if (n.type === 'share.removed' || !n.itemId) return;
  let info: ItemInfo;
  try {
    info = await api.files.info(n.itemId);
  } catch (err) {
    // No longer shared (or gone): what is still shared is under Shared with me.
    if (n.type.startsWith('share.')) navigate('/shared-with-me');
    else toastError(err);
    return;
  }
  if (info.type === 'folder') navigate(folderPath(info.id));
  else if (info.sharedWithMe?.rootId === info.id) navigateToItem('/shared-with-me', info.id);
  else navigateToItem(folderPath(info.parentId), info.id);
}

// The open list's reload, when it is open: a stream live again reads it (and the count with it) instead of the count alone.
let reloadOpenList: (() => void) | null = null;

function NotificationList({ close }: { close: () => void }) {
  const list = usePages(loadNotifications);
  const items = list.items;
  useEffect(() => {
    const reload = () => void list.reload();
    reloadOpenList = reload;
    return () => {
      if (reloadOpenList === reload) reloadOpenList = null;
    };
  });
  const open = (n: NotificationEntry) => {
    if (!n.readAt) void markNotificationsRead({ ids: [n.id] }).catch(toastError);
    close();
    void openNotified(n);
  };
  const readAll = async () => {
    try {
      await markNotificationsRead({ all: true });
      list.update((shown) => shown.map((n) => ({ ...n, readAt: n.readAt ?? new Date().toISOString() })));
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <>
      <div class="dialog-body notifications">
        {list.error && (
          <p class="field-error" role="alert">
            {list.error}
          </p>
        )}
        {items === null && !list.error && <p class="muted">Loading…</p>}
        {items?.length === 0 && <p class="muted">No notifications yet. You are told here when someone shares something with you.</p>}
        {items && items.length > 0 && (
          <ul class="notification-list">
            {items.map((n) => (
              <li key={n.id} class={n.readAt ? 'read' : 'unread'}>
                <button type="button" class="notification" onClick={() => open(n)}>
                  {!n.readAt && <span class="unread-dot" aria-hidden="true" />}
                  <span class="notification-text">
                    {n.text}
                    {!n.readAt && <span class="sr-only"> (unread)</span>}
                  </span>
                  <span class="muted small">{formatDate(n.createdAt)}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
        <MoreButton pages={list} label="More notifications" />
      </div>
      <div class="dialog-actions">
        <button type="button" class="button push-left" disabled={unreadNotifications.value === 0} onClick={() => void readAll()}>
          Mark all as read
        </button>
        <button type="button" class="button primary" onClick={close}>
          Done
        </button>
      </div>
    </>
  );
}

/** The header's bell: the unread count, and the notifications list. */
export function NotificationBell() {
  useEffect(() => {
    void loadNotifications().catch(() => {});
    // A notification sent while no stream was subscribed (the page loading, a reconnect) was never delivered live.
    return onStreamLive(() => (reloadOpenList ? reloadOpenList() : void loadNotifications().catch(() => {})));
  }, []);
  const unread = unreadNotifications.value;
  return (
    <button
      type="button"
      class="icon-button bell"
      aria-label={unread ? `Notifications, ${unread} unread` : 'Notifications'}
      onClick={() =>
        void openDialog<void>((close) => (
          <Dialog title="Notifications" onClose={() => close()}>
            <NotificationList close={() => close()} />
          </Dialog>
        ))
      }
    >
      <Icon name="bell" />
      {unread > 0 && (
        <span class="bell-count" aria-hidden="true">
          {unread > 99 ? '99+' : unread}
        </span>
      )}
    </button>
  );
}
