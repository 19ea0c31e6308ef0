import { accounts, devices, mfa, sessions, subUsers } from './accounts.ts';
import { admin, settings } from './admin.ts';
import { files } from './files.ts';
import { sharing } from './sharing.ts';

/** The web app's one way to the server: a typed client per area, over the contract (src/contract/api.ts). */
export const api = { files, sharing, accounts, sessions, mfa, devices, subUsers, settings, admin };
