import { createHmac } from 'node:crypto';
import type { AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { ChangeLog } from '../changes/change-log.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { ItemViews } from '../files/item-views.ts';
import type { ItemService } from '../files/items.ts';
import { PageCache } from '../files/page-cache.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { GroupService } from './groups.ts';
import { MemberService, NotificationService } from './members.ts';
import { ShareService } from './shares.ts';

export interface SharingServices {
  shares: ShareService;
  members: MemberService;
  groups: GroupService;
  notifications: NotificationService;
}

interface SharingDeps {
  audit: AuditService;
  settings: SettingsService;
  tree: Tree;
  views: ItemViews;
  events: FileEvents;
  changes: ChangeLog;
  items: ItemService;
}

/** Sharing the file tree: links (with their public pages' rules), people and groups, and the notifications they send. */
export function createSharingServices(infra: Infrastructure, { audit, settings, tree, views, events, changes, items }: SharingDeps) {
  const { clock, repos } = infra;
  const { transactions } = repos;
  const changeVersion = () => repos.database.changeVersion();
  const notifications = new NotificationService({ clock, members: repos.members, hub: infra.hub });
  const shares = new ShareService({
    views,
    notifications,
    clock,
    retentionClock: infra.retentionClock,
    transactions,
    shares: repos.shares,
    items: repos.items,
    members: repos.members,
    users: repos.users,
    tree,
    events,
    changes,
    audit,
    settings,
    pages: new PageCache(changeVersion, (page) => page.items.length),
    // A key of its own, so an unlock cookie's signature can never pass for a session token's.
    unlockKey: createHmac('sha256', infra.jwtSecret).update('coffer share unlock cookies').digest(),
  });
  const members = new MemberService(
    {
      clock,
      transactions,
      members: repos.members,
      groups: repos.groups,
      users: repos.users,
      tree,
      views,
      hub: infra.hub,
      audit,
      settings,
      changes,
    },
    notifications,
  );
  const groups = new GroupService(
    { clock, transactions, groups: repos.groups, members: repos.members, items: repos.items, users: repos.users, audit },
    members,
    notifications,
  );
  // An item moved to another folder leaves the shares that no longer reach it.
  items.onMoved((by, ids) => shares.leaveSharesOutside(by, ids));
  const services: SharingServices = { shares, members, groups, notifications };
  return { services };
}
