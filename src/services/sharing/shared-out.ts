import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { MembersRepo } from '../../db/repos/members.ts';

/**
 * After shares of `items` with people or by links began (`began`) or ended, in the change's transaction: each
 * that became shared out by it, or no longer is, has S added to or gone from its oc:permissions, so the ETags of
 * the folders above it move and a sync client lists them again (it reads permissions only below a moved ETag).
 */
export function sharedOutChanged(d: { members: MembersRepo; items: ItemsRepo }, items: readonly Item[], began: boolean): void {
  d.items.touchAbove(items.filter((i) => d.members.sharedOutCount(i.id) === (began ? 1 : 0)));
}
