import { accounts, devices, mfa, passkeys, sessions, subUsers } from './accounts.ts';
import { admin, settings } from './admin.ts';
import { albums } from './albums.ts';
import { files } from './files.ts';
import { groups, teamFolders } from './groups.ts';
import { libraries } from './libraries.ts';
import { notifications, people, sharing, teamSharing } from './sharing.ts';
import { instanceWebhooks, webhooks } from './webhooks.ts';

/** The web app's one way to the server: a typed client per area, over the contract (src/contract/api.ts). */
export const api = {
  files,
  albums,
  sharing,
  teamSharing,
  people,
  notifications,
  accounts,
  sessions,
  mfa,
  passkeys,
  devices,
  subUsers,
  settings,
  admin,
  groups,
  teamFolders,
  libraries,
  webhooks,
  instanceWebhooks,
};
