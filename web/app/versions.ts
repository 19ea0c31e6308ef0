import type { FileVersion, Item } from './api-types.ts';
import { api } from './api.ts';

/** The typed client of file versions and their instance settings: every path of the area, in one place. */
const base = (fileId: string) => `/api/files/${encodeURIComponent(fileId)}/versions`;
const one = (fileId: string, versionId: string) => `${base(fileId)}/${encodeURIComponent(versionId)}`;

export interface VersionsConfig {
  enabled: boolean;
  retentionDays: number;
  maxPerFile: number;
}

const CONFIG = '/api/user/versions-config';

export const versionsApi = {
  config: CONFIG,
  saveConfig: (change: Partial<VersionsConfig>) => api<VersionsConfig>(CONFIG, { method: 'PUT', body: change }),
  list: (fileId: string) => api<{ versions: FileVersion[] }>(base(fileId)).then((r) => r.versions),
  downloadUrl: (fileId: string, versionId: string) => `${one(fileId, versionId)}/download`,
  restore: (fileId: string, versionId: string) => api<Item>(`${one(fileId, versionId)}/restore`, { method: 'POST' }),
  remove: (fileId: string, versionId: string) => api<{ message: string }>(one(fileId, versionId), { method: 'DELETE' }),
};
