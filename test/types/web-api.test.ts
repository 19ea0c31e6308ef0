import { expect, test } from 'bun:test';
import type { ItemView } from '../../src/services/files/item-views.ts';
import type { PublicUser, SignInMethod } from '../../src/services/accounts/accounts.ts';
import type { StorageUsage } from '../../src/services/files/quota.ts';
import type { ActiveClient as ServerClient } from '../../src/services/accounts/clients.ts';
import type { OrphanDeleteResult, OrphanScanReport } from '../../src/services/maintenance/orphans.ts';
import type { SessionService } from '../../src/services/accounts/sessions.ts';
import type { AppPasswordView } from '../../src/services/accounts/app-passwords.ts';
import type { SubUserView } from '../../src/services/accounts/sub-users.ts';
import type { UserListEntry } from '../../src/services/accounts/users.ts';
import type { MemberView, NotificationView, SharedWithMeItem as ServerShared } from '../../src/services/files/members.ts';
import type {
  ActiveClient,
  AppPassword,
  Item,
  Member,
  NotificationEntry,
  OrphanDeletion,
  OrphanReport,
  Profile,
  Session,
  SharedWithMeItem,
  SubUser,
  UserEntry,
  StorageUsage as WebStorageUsage,
} from '../../web/app/api-types.ts';

// The web app declares the API shapes it reads (its own compiler has the DOM, not the server's modules);
// these compile-time checks fail `tsc` when either side changes without the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const itemSame: Same<Item, ItemView> = true;
const storageSame: Same<WebStorageUsage, StorageUsage> = true;
const profileSame: Same<Omit<Profile, 'permissions' | 'signInMethods'>, PublicUser> = true;
const methodsSame: Same<Profile['signInMethods'][number], SignInMethod> = true;
const sessionSame: Same<Session, ReturnType<SessionService['list']>['sessions'][number]> = true;
const subUserSame: Same<SubUser, Omit<SubUserView, 'permissions'> & { permissions: string[] }> = true;
const userSame: Same<UserEntry, UserListEntry> = true;
const orphanSame: Same<OrphanReport, OrphanScanReport> = true;
const deletionSame: Same<OrphanDeletion, OrphanDeleteResult> = true;
const clientSame: Same<ActiveClient, ServerClient> = true;
const appPasswordSame: Same<AppPassword, AppPasswordView> = true;
const memberSame: Same<Member, MemberView> = true;
const sharedWithMeSame: Same<SharedWithMeItem, ServerShared> = true;
const notificationSame: Same<NotificationEntry, NotificationView> = true;

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
    memberSame,
    sharedWithMeSame,
    notificationSame,
  ]).toEqual(Array(14).fill(true));
});
