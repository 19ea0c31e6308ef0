import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Glob } from 'bun';
import type { ItemView } from '../../src/services/files/item-views.ts';
import type { PublicUser, SignInMethod } from '../../src/services/accounts/accounts.ts';
import type { QuotaService } from '../../src/services/files/quota.ts';
import type { VersionView } from '../../src/services/files/versions.ts';
import type { ActiveClient as ServerClient } from '../../src/services/accounts/clients.ts';
import type { OrphanDeleteResult, OrphanScanReport } from '../../src/services/maintenance/orphans.ts';
import type { SessionService } from '../../src/services/accounts/sessions.ts';
import type { AppPasswordView } from '../../src/services/accounts/app-passwords.ts';
import type { PasskeyView } from '../../src/services/accounts/passkeys.ts';
import type { SubUserView } from '../../src/services/accounts/sub-users.ts';
import type { UserListEntry } from '../../src/services/accounts/users.ts';
import type { AppPassword, Profile, Session, SubUser } from '../../src/contract/accounts.ts';
import type { ActiveClient, OrphanDeletion, OrphanReport, UserEntry } from '../../src/contract/admin.ts';
import type { FileVersion, Item, StorageUsage as WebStorageUsage } from '../../src/contract/files.ts';
import type { PasskeyEntry } from '../../src/contract/passkeys.ts';

// The contract declares the API shapes the web app reads; http/route.ts checks every route's answer
// against it, and these checks go further: each shape is exactly the service's, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const itemSame: Same<Item, ItemView> = true;
const storageSame: Same<WebStorageUsage, ReturnType<QuotaService['storage']>> = true;
const versionSame: Same<FileVersion, VersionView> = true;
const profileSame: Same<Omit<Profile, 'permissions' | 'signInMethods'>, PublicUser> = true;
const methodsSame: Same<Profile['signInMethods'][number], SignInMethod> = true;
const sessionSame: Same<Session, ReturnType<SessionService['list']>['sessions'][number]> = true;
const subUserSame: Same<SubUser, SubUserView> = true;
const userSame: Same<UserEntry, UserListEntry> = true;
const orphanSame: Same<OrphanReport, OrphanScanReport> = true;
const deletionSame: Same<OrphanDeletion, OrphanDeleteResult> = true;
const clientSame: Same<ActiveClient, ServerClient> = true;
const appPasswordSame: Same<AppPassword, AppPasswordView> = true;
const passkeySame: Same<PasskeyEntry, PasskeyView> = true;

const WEB = join(import.meta.dir, '../../web');
const webFiles = () => [...new Glob('**/*.{ts,tsx}').scanSync(WEB)].map((f) => ({ file: f, text: readFileSync(join(WEB, f), 'utf8') }));

test('API paths are written in the clients of web/api/ only', () => {
  const literal = webFiles()
    .filter(({ file, text }) => !file.startsWith('api/') && /['`]\/api\//.test(text))
    .map(({ file }) => file);
  expect(literal).toEqual([]);
});

test('the web app reads the API shapes the server declares (checked by tsc)', () => {
  expect([
    itemSame,
    storageSame,
    profileSame,
    methodsSame,
    sessionSame,
    subUserSame,
    userSame,
    orphanSame,
    deletionSame,
    clientSame,
    appPasswordSame,
    versionSame,
    passkeySame,
  ]).toEqual(Array(13).fill(true));
});
