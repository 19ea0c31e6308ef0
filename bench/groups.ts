import { loadConfig } from '../src/config.ts';
import { openContext } from '../src/composition.ts';
import type { AppContext } from '../src/context.ts';
import { newId } from '../src/lib/ids.ts';
import { createLogger } from '../src/log.ts';
import { Tree } from '../src/services/files/tree.ts';
import { seedTree } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const GROUPS = 50;
const FOLDERS_PER_GROUP = 20;
const FOLDER_ITEMS = 200;
const ROUNDS = 300;
const CHECKS = 20_000;

async function account(ctx: AppContext, email: string): Promise<{ id: string; token: string }> {
  const row = ctx.repos.users.insert({
    id: newId(),
    email,
    emailKey: email,
    name: email,
    passwordHash: null,
    isAdmin: false,
    parentUserId: null,
    permissions: null,
    createdAt: Date.now(),
  });
  const { token } = await ctx.services.sessions.start(row.id, { ip: '127.0.0.1', userAgent: 'bench' });
  return { id: row.id, token };
}

async function timeGet(url: string, token: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return performance.now() - start;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const ms = (x: number) => x.toFixed(2);

/**
 * Groups: a 200-item folder shared with a group, listed by a member against its owner (alternating, same
 * run); a 200-item team folder listed by a member against the group's administrator; shared-with-me of an account in 50 groups each sharing 20 folders; and the access check itself
 * (the membership query Tree.actor runs when its cache is cold, Tree.actor warm, and Tree.actor after a write that
 * cannot change access) in process.
 */
export async function runGroupsBench(): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_MAX_CONNECTIONS_PER_IP: '0' });
  try {
    const ownerToken = await adminToken(server.url);
    const owner = (await (await fetch(`${server.url}/api/profile`, { headers: { authorization: `Bearer ${ownerToken}` } })).json()) as {
      id: string;
    };
    const ctx = openContext(loadConfig({ dataDir: server.dataDir }, {}), { mode: 'cli', logger: createLogger('silent') });
    let member: { id: string; token: string };
    let lead: { id: string; token: string };
    let folderId: string;
    let teamFolderId: string;
    let deepId: string;
    try {
      member = await account(ctx, 'member@example.test');
      folderId = seedTree(ctx, owner.id, null, 1, 'Team')[0]!;
      seedTree(ctx, owner.id, folderId, FOLDER_ITEMS, 'Photo');
      const now = Date.now();
      const cli = { cli: true } as const;
      const listed = ctx.services.groups.create(cli, { name: 'Listed' });
      ctx.repos.groups.addMember(listed.id, member.id, false, now);
      ctx.repos.groups.shareWith({
        itemId: folderId,
        ownerId: owner.id,
        groupId: listed.id,
        role: 'viewer',
        addedBy: owner.id,
        addedAt: now,
      });
      // A team folder of 200 items for the same group, whose administrator is another account.
      lead = await account(ctx, 'lead@example.test');
      ctx.repos.groups.addMember(listed.id, lead.id, true, now);
      const adminPrincipal = {
        loginId: owner.id,
        accountId: owner.id,
        sessionId: 'bench',
        ip: '127.0.0.1',
        email: 'bench@example.test',
        name: 'bench',
        isOwner: true,
        isAdmin: true,
        permissions: new Set<never>(),
      };
      const team = ctx.services.teamFolders.create(adminPrincipal, {
        name: 'Team',
        groups: [{ groupId: listed.id, role: 'editor' }],
        quota: null,
      });
      teamFolderId = team.folderId;
      seedTree(ctx, team.id, teamFolderId, FOLDER_ITEMS, 'Asset');
      // 50 groups, each with its own sharing owner and 20 shared folders; the member in every one.
      let parent: string | null = null;
      for (let g = 0; g < GROUPS; g++) {
        const group = ctx.services.groups.create(cli, { name: `Group ${g}` });
        ctx.repos.groups.addMember(group.id, member.id, false, now);
        const sharer = await account(ctx, `sharer-${g}@example.test`);
        const folders = seedTree(ctx, sharer.id, null, FOLDERS_PER_GROUP, `Shared ${g}`);
        ctx.db.$client.transaction(() => {
          folders.forEach((itemId, i) =>
            ctx.repos.groups.shareWith({
              itemId,
              ownerId: sharer.id,
              groupId: group.id,
              role: 'editor',
              addedBy: sharer.id,
              addedAt: now - g * 100 - i,
            }),
          );
        })();
        // A path 5 folders deep under the last group's first folder: what a request inside a share names.
        if (g === GROUPS - 1) {
          parent = folders[0]!;
          for (let depth = 0; depth < 5; depth++) parent = seedTree(ctx, sharer.id, parent, 1, `Level ${depth}`)[0]!;
        }
      }
      deepId = parent!;

      // The access check: the membership query alone (cache cold), then Tree.actor as requests meet it (cache warm).
      for (let i = 0; i < 1000; i++) ctx.repos.members.membershipOf(member.id, deepId);
      let start = performance.now();
      for (let i = 0; i < CHECKS; i++) ctx.repos.members.membershipOf(member.id, deepId);
      const cold = ((performance.now() - start) * 1000) / CHECKS;
      const tree = new Tree(
        ctx.repos.items,
        ctx.repos.members,
        () => true,
        () => ctx.repos.database.accessVersion(),
        ctx.repos.teamFolders,
      );
      const principal = {
        loginId: member.id,
        accountId: member.id,
        sessionId: 'bench',
        ip: '127.0.0.1',
        email: 'm',
        name: 'm',
        isOwner: true,
        isAdmin: false,
        permissions: new Set<never>(),
      };
      for (let i = 0; i < 1000; i++) tree.actor(principal, { ids: [deepId] }, 'edit');
      start = performance.now();
      for (let i = 0; i < CHECKS; i++) tree.actor(principal, { ids: [deepId] }, 'edit');
      const warm = ((performance.now() - start) * 1000) / CHECKS;
      // A write that cannot change access before each check (what a download does to its item): the cache must survive it.
      const touch = ctx.db.$client.query('UPDATE items SET accessed_at = ? WHERE id = ?');
      let afterWrites = 0;
      for (let i = 0; i < CHECKS; i++) {
        touch.run(Date.now(), deepId);
        const t = performance.now();
        tree.actor(principal, { ids: [deepId] }, 'edit');
        afterWrites += performance.now() - t;
      }
      console.log(
        `groups.access_check_us membership query ${cold.toFixed(1)} µs, Tree.actor ${warm.toFixed(2)} µs, Tree.actor after an unrelated write ${((afterWrites * 1000) / CHECKS).toFixed(2)} µs (an item 5 folders deep in a group share, account in ${GROUPS + 1} groups, ${CHECKS} checks each, goal < 50 µs)`,
      );
    } finally {
      ctx.close();
    }

    const list = `${server.url}/api/files?parentId=${folderId}&limit=${FOLDER_ITEMS}`;
    for (const token of [ownerToken, member.token]) {
      const shown = (await (await fetch(list, { headers: { authorization: `Bearer ${token}` } })).json()) as unknown[];
      if (shown.length !== FOLDER_ITEMS) throw new Error(`the group's folder lists ${shown.length} items, not ${FOLDER_ITEMS}`);
    }
    const asOwner: number[] = [];
    const asMember: number[] = [];
    for (let i = 0; i < 20; i++) {
      await timeGet(list, ownerToken);
      await timeGet(list, member.token);
    }
    for (let i = 0; i < ROUNDS; i++) {
      asOwner.push(await timeGet(list, ownerToken));
      asMember.push(await timeGet(list, member.token));
    }
    const ratio = median(asMember) / median(asOwner);
    console.log(`groups.list_200_owner_ms median ${ms(median(asOwner))} p99 ${ms(pct(asOwner, 0.99))} (${ROUNDS} requests, alternating)`);
    console.log(`groups.list_200_group_member_ms median ${ms(median(asMember))} p99 ${ms(pct(asMember, 0.99))}`);
    console.log(`groups.list_200_member_vs_owner ${((ratio - 1) * 100).toFixed(1)}% (goal: within 10%)`);

    const teamList = `${server.url}/api/files?parentId=${teamFolderId}&limit=${FOLDER_ITEMS}`;
    for (const token of [lead.token, member.token]) {
      const shown = (await (await fetch(teamList, { headers: { authorization: `Bearer ${token}` } })).json()) as unknown[];
      if (shown.length !== FOLDER_ITEMS) throw new Error(`the team folder lists ${shown.length} items, not ${FOLDER_ITEMS}`);
    }
    const asLead: number[] = [];
    const asTeamMember: number[] = [];
    for (let i = 0; i < 20; i++) {
      await timeGet(teamList, lead.token);
      await timeGet(teamList, member.token);
    }
    for (let i = 0; i < ROUNDS; i++) {
      asLead.push(await timeGet(teamList, lead.token));
      asTeamMember.push(await timeGet(teamList, member.token));
    }
    const teamRatio = median(asTeamMember) / median(asLead);
    console.log(
      `groups.team_folder_list_200_administrator_ms median ${ms(median(asLead))} p99 ${ms(pct(asLead, 0.99))} (the group's administrator)`,
    );
    console.log(`groups.team_folder_list_200_member_ms median ${ms(median(asTeamMember))} p99 ${ms(pct(asTeamMember, 0.99))}`);
    console.log(`groups.team_folder_list_200_member_vs_administrator ${((teamRatio - 1) * 100).toFixed(1)}% (goal: within 10%)`);

    const sharedUrl = `${server.url}/api/files/shared-with-me`;
    const first = (await (await fetch(`${sharedUrl}?limit=200`, { headers: { authorization: `Bearer ${member.token}` } })).json()) as {
      items: unknown[];
    };
    if (first.items.length !== 200) throw new Error(`shared-with-me lists ${first.items.length} items, not 200`);
    for (let i = 0; i < 20; i++) await timeGet(sharedUrl, member.token);
    const sharedWithMe: number[] = [];
    for (let i = 0; i < ROUNDS * 2; i++) sharedWithMe.push(await timeGet(sharedUrl, member.token));
    console.log(
      `groups.shared_with_me_50x20_ms median ${ms(median(sharedWithMe))} p99 ${ms(pct(sharedWithMe, 0.99))} (first page of 50; ${GROUPS} groups x ${FOLDERS_PER_GROUP} folders; ${ROUNDS * 2} requests; goal p99 < 10 ms)`,
    );
  } finally {
    await server.stop();
  }
}

if (import.meta.main) await runGroupsBench();
