import type { FileVersion, Item } from './api-types.ts';
import { api } from './api.ts';

/** The typed client of a file's versions: every path of the area, in one place. */
const base = (fileId: string) => `/api/files/${encodeURIComponent(fileId)}/versions`;
const one = (fileId: string, versionId: string) => `${base(fileId)}/${encodeURIComponent(versionId)}`;

export const versionsApi = {
  list: (fileId: string) => api<{ versions: FileVersion[] }>(base(fileId)).then((r) => r.versions),
  downloadUrl: (fileId: string, versionId: string) => `${one(fileId, versionId)}/download`,
  restore: (fileId: string, versionId: string) => api<Item>(`${one(fileId, versionId)}/restore`, { method: 'POST' }),
  remove: (fileId: string, versionId: string) => api<{ message: string }>(one(fileId, versionId), { method: 'DELETE' }),
};
