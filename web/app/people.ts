import { signal } from '@preact/signals';
import { api, type ItemPage, post } from './api.ts';
import type { Member, NotificationEntry, SharedWithMeItem } from './api-types.ts';

/** Sharing with people and notifications, as the app calls them. */
const membersPath = (itemId: string) => `/api/files/${encodeURIComponent(itemId)}/members`;

export const listMembers = (itemId: string) => api<{ members: Member[] }>(membersPath(itemId)).then((r) => r.members);

export const addMember = (itemId: string, email: string, role: Member['role']) =>
  post<{ member: Member }>(membersPath(itemId), { email, role }).then((r) => r.member);

export const setMemberRole = (itemId: string, accountId: string, role: Member['role']) =>
  api<{ member: Member }>(`${membersPath(itemId)}/${encodeURIComponent(accountId)}`, { method: 'PATCH', body: { role } }).then(
    (r) => r.member,
  );

export const removeMember = (itemId: string, accountId: string) =>
  api<{ message: string }>(`${membersPath(itemId)}/${encodeURIComponent(accountId)}`, { method: 'DELETE' });

export async function sharedWithMePage(cursor: string | undefined, limit: number, signal?: AbortSignal): Promise<ItemPage> {
  const q = new URLSearchParams({ limit: String(Math.min(limit, 200)) });
  if (cursor) q.set('cursor', cursor);
  return api<{ items: SharedWithMeItem[]; nextCursor: string | null }>(`/api/files/shared-with-me?${q}`, { signal });
}

/** Whether the folder on screen is inside something another account shares: the sidebar marks Shared with me. */
export const viewingShared = signal(false);

/** The header bell's count; the event stream keeps it current. */
export const unreadNotifications = signal(0);

export async function loadNotifications(): Promise<NotificationEntry[]> {
  const r = await api<{ notifications: NotificationEntry[]; unread: number }>('/api/notifications?limit=30');
  unreadNotifications.value = r.unread;
  return r.notifications;
}

export async function markNotificationsRead(body: { ids: string[] } | { all: true }): Promise<void> {
  unreadNotifications.value = (await post<{ unread: number }>('/api/notifications/read', body)).unread;
}
