import { signal } from '@preact/signals';
import type { StorageUsage } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';

/** The account's storage use and limit (a sub-user sees its owner's), shown in the sidebar and the profile. */
export const storage = signal<StorageUsage | null>(null);

export const loadStorage = () =>
  api.files.storage().then(
    (s) => (storage.value = s),
    () => {},
  );
