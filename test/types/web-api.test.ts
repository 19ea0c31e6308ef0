import { expect, test } from 'bun:test';
import type { ItemView } from '../../src/services/item-views.ts';
import type { PublicUser, SignInMethod } from '../../src/services/accounts.ts';
import type { StorageUsage } from '../../src/services/quota.ts';
import type { Item, Profile, StorageUsage as WebStorageUsage } from '../../web/app/api-types.ts';

// The web app declares the API shapes it reads (its own compiler has the DOM, not the server's modules);
// these compile-time checks fail `tsc` when either side changes without the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const itemSame: Same<Item, ItemView> = true;
const storageSame: Same<WebStorageUsage, StorageUsage> = true;
const profileSame: Same<Omit<Profile, 'permissions' | 'signInMethods'>, PublicUser> = true;
const methodsSame: Same<Profile['signInMethods'][number], SignInMethod> = true;

test('the web app reads the API shapes the server declares (checked by tsc)', () => {
  expect([itemSame, storageSame, profileSame, methodsSame]).toEqual([true, true, true, true]);
});
