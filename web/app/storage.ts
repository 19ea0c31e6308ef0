import { signal } from '@preact/signals';
import { api } from './api.ts';
import type { StorageUsage } from './api-types.ts';

/** The account's storage use and limit (a sub-user sees its owner's), shown in the sidebar and the profile. */
export const storage = signal<StorageUsage | null>(null);

export const loadStorage = () =>
  api<StorageUsage>('/api/user/storage').then(
    (s) => (storage.value = s),
    () => {},
  );
