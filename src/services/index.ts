import type { AccountsServices } from './accounts/index.ts';
import type { AdminServices } from './admin/index.ts';
import type { DavServices } from './dav/index.ts';
import type { DocserverServices } from './docserver/index.ts';
import type { FilesServices } from './files/index.ts';
import type { MaintenanceServices } from './maintenance/index.ts';
import type { ResumableUploadServices } from './resumable-uploads/index.ts';
import type { SearchServices } from './search/index.ts';
import type { LibraryServices } from './libraries/index.ts';
import type { SharingServices } from './sharing/index.ts';
import type { SignOnServices } from './sign-on/index.ts';
import type { VersionsServices } from './versions/index.ts';
import type { ThumbnailServices } from './thumbnails/index.ts';
import type { WebhookServices } from './webhooks/index.ts';

/** The services of every domain, as routes, job handlers and CLI commands reach them (`ctx.services.items`). */
export type Services = AdminServices &
  FilesServices &
  SharingServices &
  VersionsServices &
  ThumbnailServices &
  DavServices &
  AccountsServices &
  SignOnServices &
  DocserverServices &
  ResumableUploadServices &
  MaintenanceServices &
  SearchServices &
  LibraryServices &
  WebhookServices;
