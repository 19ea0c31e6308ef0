import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin, type DavClient } from '../../helpers/dav.ts';
import { folder, listAll, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { NO_NEXTCLOUDCMD, nextcloudcmd, nextcloudcmdServer, succeeded } from '../../helpers/nextcloudcmd.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';

const logger = memoryLogger();
let t: TestServer;
let dir: string;

nextcloudcmdServer(logger, 'coffer-nextcloudcmd-roles-', (s) => ({ t, dir } = s));

/** A sync run of `login` into its own local folder `name` (made on the first run). */
async function sync(login: seed.SeededLogin, password: string, name: string) {
  const local = path.join(dir, name);
  fs.mkdirSync(local, { recursive: true });
  return nextcloudcmd(t.url, logger, login.email, password, local);
}

/** The uploads a run made, by path below the login's files. */
const puts = (requests: string[]) =>
  requests.filter((r) => r.startsWith('PUT ')).map((r) => r.replace(/^PUT \/remote\.php\/dav\/files\/[^/]+\//, ''));

/** The ETag a Depth 0 PROPFIND reports of `rel`. */
async function etagOf(dav: DavClient, rel: string): Promise<string> {
  const res = await dav.propfind(rel, '0');
  expect(res.status).toBe(207);
  return /<D:getetag>([^<]*)<\/D:getetag>/.exec(await res.text())![1]!;
}

async function names(client: seed.SeededLogin['client'], parentId: string): Promise<string[]> {
  return (await listAll(client, `/api/files?parentId=${parentId}`)).map((i) => i.name).sort();
}

describe.skipIf(NO_NEXTCLOUDCMD)(
  'the Nextcloud desktop client (nextcloudcmd) after a change of rights: it reads oc:permissions again',
  () => {
    test("a share's member made an editor uploads what it made meanwhile; made a viewer again, it sends nothing to be refused; the owner's ETags stay", async () => {
      const o = await seed.owner(t);
      const m = await seed.owner(t);
      const team = await folder(o.client, 'Team');
      const deep = await folder(o.client, 'Deep', team.id);
      await upload(o.client, 'a.txt', 'a', { parentId: deep.id });
      expect((await o.client.post(`/api/files/${team.id}/members`, { email: m.email, role: 'viewer' })).status).toBe(201);
      const dav = await davLogin(t, m, 'nextcloudcmd');
      const ownerDav = await davLogin(t, o);
      await succeeded(sync(m, dav.password, 'member'));
      const local = path.join(dir, 'member', 'Shared with me', 'Team');
      fs.writeFileSync(path.join(local, 'Deep', 'new.txt'), 'new');
      // A viewer's client keeps what it made on its disk (it may add nothing there).
      expect(puts((await sync(m, dav.password, 'member')).requests)).toEqual([]);

      const ownerBefore = [await etagOf(ownerDav, ''), await etagOf(ownerDav, 'Team/'), await etagOf(ownerDav, 'Team/Deep/')];
      const memberBefore = [
        await etagOf(dav, ''),
        await etagOf(dav, 'Shared%20with%20me/'),
        await etagOf(dav, 'Shared%20with%20me/Team/Deep/'),
      ];
      expect((await o.client.send('PATCH', `/api/files/${team.id}/members/${m.id}`, { role: 'editor' })).status).toBe(200);
      expect([await etagOf(ownerDav, ''), await etagOf(ownerDav, 'Team/'), await etagOf(ownerDav, 'Team/Deep/')]).toEqual(ownerBefore);
      const memberAfter = [
        await etagOf(dav, ''),
        await etagOf(dav, 'Shared%20with%20me/'),
        await etagOf(dav, 'Shared%20with%20me/Team/Deep/'),
      ];
      expect(memberAfter.filter((etag, i) => etag === memberBefore[i])).toEqual([]);
      fs.writeFileSync(path.join(local, 'top.txt'), 'top');
      const upgraded = await succeeded(sync(m, dav.password, 'member'));
      expect(puts(upgraded.requests).sort()).toEqual(['Shared with me/Team/Deep/new.txt', 'Shared with me/Team/top.txt']);
      expect(await names(o.client, deep.id)).toEqual(['a.txt', 'new.txt']);
      expect(await names(o.client, team.id)).toEqual(['Deep', 'top.txt']);

      // Made a viewer again: the client learns it before it sends anything the server would refuse (403).
      expect((await o.client.send('PATCH', `/api/files/${team.id}/members/${m.id}`, { role: 'viewer' })).status).toBe(200);
      fs.writeFileSync(path.join(local, 'Deep', 'later.txt'), 'later');
      const downgraded = await sync(m, dav.password, 'member');
      expect(puts(downgraded.requests)).toEqual([]);
      expect(downgraded.output).toContain("Not allowed because you don't have permission to add files in that folder");
      expect(fs.readFileSync(path.join(local, 'Deep', 'later.txt'), 'utf8')).toBe('later');
      expect(await names(o.client, deep.id)).toEqual(['a.txt', 'new.txt']);
    }, 120_000);

    test('a sub-user given Upload & create uploads what it made meanwhile; the owner’s ETags stay', async () => {
      const o = await seed.owner(t);
      const docs = await folder(o.client, 'Docs');
      const sub = await seed.subUser(t, o, ['files.download']);
      const dav = await davLogin(t, sub, 'nextcloudcmd');
      const ownerDav = await davLogin(t, o);
      await succeeded(sync(sub, dav.password, 'sub'));
      fs.writeFileSync(path.join(dir, 'sub', 'Docs', 'mine.txt'), 'mine');
      expect(puts((await sync(sub, dav.password, 'sub')).requests)).toEqual([]);
      const ownerBefore = [await etagOf(ownerDav, ''), await etagOf(ownerDav, 'Docs/')];
      const subBefore = [await etagOf(dav, ''), await etagOf(dav, 'Docs/')];
      expect((await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.download', 'files.upload'] })).status).toBe(200);
      expect([await etagOf(ownerDav, ''), await etagOf(ownerDav, 'Docs/')]).toEqual(ownerBefore);
      // The desktop client starts a run when the root's ETag moved: the sub-user's root and folders move, each of them.
      const subAfter = [await etagOf(dav, ''), await etagOf(dav, 'Docs/')];
      expect(subAfter.filter((etag, i) => etag === subBefore[i])).toEqual([]);
      const granted = await succeeded(sync(sub, dav.password, 'sub'));
      expect(puts(granted.requests)).toEqual(['Docs/mine.txt']);
      expect(await names(o.client, docs.id)).toEqual(['mine.txt']);
    }, 120_000);

    test("a team folder's group made editor: its member's client uploads what it made meanwhile", async () => {
      const adminEmail = t.server.ctx.db.$client.query<{ email: string }, []>('SELECT email FROM users WHERE is_admin = 1').get()!.email;
      const admin = { client: await seed.login(t, adminEmail) } as seed.SeededLogin;
      const m = await seed.owner(t);
      const group = await newGroup(admin, 'Readers', m);
      const team = await json(
        await admin.client.post('/api/admin/team-folders', { name: 'Crew', quota: null, groups: [{ groupId: group, role: 'viewer' }] }),
      );
      const dav = await davLogin(t, m, 'nextcloudcmd');
      await succeeded(sync(m, dav.password, 'crew'));
      fs.writeFileSync(path.join(dir, 'crew', 'Crew', 'plan.txt'), 'plan');
      expect(puts((await sync(m, dav.password, 'crew')).requests)).toEqual([]);
      const before = [await etagOf(dav, ''), await etagOf(dav, 'Crew/')];
      const groups = { groups: [{ groupId: group, role: 'editor' }] };
      expect((await admin.client.put(`/api/admin/team-folders/${team.id}/groups`, groups)).status).toBe(200);
      const after = [await etagOf(dav, ''), await etagOf(dav, 'Crew/')];
      expect(after.filter((etag, i) => etag === before[i])).toEqual([]);
      const granted = await succeeded(sync(m, dav.password, 'crew'));
      expect(puts(granted.requests)).toEqual(['Crew/plan.txt']);
      expect(await names(m.client, team.folderId)).toEqual(['plan.txt']);
    }, 120_000);
  },
);
