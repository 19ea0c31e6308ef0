import { signal } from '@preact/signals';
import type { NotificationEntry } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import type { ItemPage } from './api.ts';

/** One page of Shared with me, as a listing reads it. */
export async function sharedWithMePage(cursor: string | undefined, limit: number, signal?: AbortSignal): Promise<ItemPage> {
  return api.people.sharedWithMe({ limit: Math.min(limit, 200), cursor }, { signal });
}

/** Whether the folder on screen is inside something another account shares: the sidebar marks Shared with me. */
export const viewingShared = signal(false);

/** The header bell's count; the event stream keeps it current. */
export const unreadNotifications = signal(0);
// Counts sent live: a list asked for before the latest of them must not put an older count back.
let liveCounts = 0;

/** A count the event stream sent with a new notification. */
export function liveUnread(unread: number): void {
  liveCounts++;
  unreadNotifications.value = unread;
}

/** One page of the bell's list (the first without a cursor); each page brings the unread count too. */
export async function loadNotifications(cursor?: string): Promise<{ items: NotificationEntry[]; nextCursor: string | null }> {
  const before = liveCounts;
  const r = await api.notifications.list(30, cursor);
  if (liveCounts === before) unreadNotifications.value = r.unread;
  return { items: r.notifications, nextCursor: r.nextCursor };
}

export async function markNotificationsRead(body: { ids: string[] } | { all: true }): Promise<void> {
  unreadNotifications.value = (await api.notifications.read(body)).unread;
}
