import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { davLogin } from '../../helpers/dav.ts';
import { eventually } from '../../helpers/eventually.ts';
import { downloaded, folder, listAll, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { localFiles, NO_NEXTCLOUDCMD, nextcloudcmd, nextcloudcmdServer, succeeded } from '../../helpers/nextcloudcmd.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';

const logger = memoryLogger();
let t: TestServer;
let dir: string;
let admin: seed.SeededLogin;

nextcloudcmdServer(logger, 'coffer-nextcloudcmd-sync-', (s) => ({ t, dir, admin } = s));

/** One sync run that must succeed; its requests under /remote.php, with the account's prefix cut off. */
const sync = async (email: string, password: string, local: string) =>
  (await succeeded(nextcloudcmd(t.url, logger, email, password, local))).requests
    .filter((r) => r.includes(' /remote.php/'))
    .map((r) => r.replace(/\/remote\.php\/dav\/files\/[^/]+/, ''));

/** The oc:permissions the client's journal holds for each synced path: what it shows (a shared item's icon) and acts on. */
function journalPermissions(local: string): Record<string, string> {
  const file = fs.readdirSync(local).find((n) => /^\.sync_.*\.db$/.test(n))!;
  const db = new Database(path.join(local, file), { readonly: true });
  try {
    const rows = db.query<{ path: string; remotePerm: string }, []>('SELECT path, remotePerm FROM metadata ORDER BY path').all();
    return Object.fromEntries(rows.map((r) => [r.path, r.remotePerm]));
  } finally {
    db.close();
  }
}

describe.skipIf(NO_NEXTCLOUDCMD)(
  'the Nextcloud desktop client (nextcloudcmd): what it learns of changes below the root, and decomposed names',
  () => {
    test('sharing an item deep in the tree (by a link or with a person) and ending it reaches the client: S in its permissions, one branch listed, nothing downloaded', async () => {
      const o = await seed.owner(t);
      const member = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const a = await folder(o.client, 'A');
      const b = await folder(o.client, 'B', a.id);
      const x = await upload(o.client, 'x.txt', 'x', { parentId: b.id });
      await folder(o.client, 'Other');
      const local = path.join(dir, 'shared-deep');
      fs.mkdirSync(local);
      await sync(o.email, dav.password, local);
      expect(journalPermissions(local)['A/B/x.txt']).not.toContain('S');

      expect((await o.client.post('/api/files/share', { ids: [x.id], shared: true })).status).toBe(200);
      // The folders above the item list it again, and only they: its content did not change.
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /A', 'PROPFIND /A/B']);
      expect(journalPermissions(local)['A/B/x.txt']).toContain('S');

      expect((await o.client.post(`/api/files/${b.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
      // The client lists a folder whose permissions changed again itself.
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /A', 'PROPFIND /A/B']);
      expect(journalPermissions(local)['A/B']).toContain('S');
      // A link on an item shared already changes nothing the client sees.
      expect((await o.client.post('/api/files/share', { ids: [b.id], shared: true })).status).toBe(200);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);

      expect((await o.client.post('/api/files/share', { ids: [x.id], shared: false })).status).toBe(200);
      expect((await o.client.request(`/api/files/${b.id}/members/${member.id}`, { method: 'DELETE' })).status).toBe(200);
      expect((await o.client.post('/api/files/share', { ids: [b.id], shared: false })).status).toBe(200);
      await sync(o.email, dav.password, local);
      const after = journalPermissions(local);
      expect([after['A/B'], after['A/B/x.txt']].filter((p) => p?.includes('S'))).toEqual([]);
      // Nothing changed since: one PROPFIND.
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
    });

    test('a folder shared with a group shows S like one shared with a person, and the client learns it when the share comes and goes, or the group is deleted', async () => {
      const o = await seed.owner(t);
      const member = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const a = await folder(o.client, 'A');
      const team = await folder(o.client, 'Team', a.id);
      await upload(o.client, 'plan.txt', 'plan', { parentId: team.id });
      const group = await newGroup(admin, 'Planners', member);
      const local = path.join(dir, 'group-shared');
      fs.mkdirSync(local);
      await sync(o.email, dav.password, local);
      expect(journalPermissions(local)['A/Team']).not.toContain('S');

      expect((await o.client.post(`/api/files/${team.id}/members`, { groupId: group, role: 'editor' })).status).toBe(201);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /A', 'PROPFIND /A/Team']);
      expect(journalPermissions(local)['A/Team']).toContain('S');

      expect((await o.client.request(`/api/files/${team.id}/groups/${group}`, { method: 'DELETE' })).status).toBe(200);
      await sync(o.email, dav.password, local);
      expect(journalPermissions(local)['A/Team']).not.toContain('S');
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);

      // The group deleted ends its shares: the same.
      expect((await o.client.post(`/api/files/${team.id}/members`, { groupId: group, role: 'viewer' })).status).toBe(201);
      await sync(o.email, dav.password, local);
      expect(journalPermissions(local)['A/Team']).toContain('S');
      expect((await admin.client.request(`/api/admin/groups/${group}`, { method: 'DELETE' })).status).toBe(200);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /A', 'PROPFIND /A/Team']);
      expect(journalPermissions(local)['A/Team']).not.toContain('S');
    });

    test('the only person an item was shared with deleted: the client learns it is no longer shared', async () => {
      const o = await seed.owner(t);
      const member = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const a = await folder(o.client, 'A');
      const b = await folder(o.client, 'B', a.id);
      expect((await o.client.post(`/api/files/${b.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
      const local = path.join(dir, 'member-deleted');
      fs.mkdirSync(local);
      await sync(o.email, dav.password, local);
      expect(journalPermissions(local)['A/B']).toContain('S');
      expect((await admin.client.delete(`/api/user/${member.id}`)).status).toBe(202);
      await eventually(() => expect(t.server.ctx.repos.users.byId(member.id)).toBeNull());
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /A', 'PROPFIND /A/B']);
      expect(journalPermissions(local)['A/B']).not.toContain('S');
    });

    test('names written decomposed (NFD, as macOS writes them) are kept in NFC once, with no upload again; a rename on the server arrives as a move', async () => {
      const o = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const local = path.join(dir, 'decomposed');
      fs.mkdirSync(path.join(local, 'Cafe\u0301'), { recursive: true });
      fs.writeFileSync(path.join(local, 'Cafe\u0301', 're\u0301sume\u0301.txt'), 'résumé');
      fs.writeFileSync(path.join(local, 'nai\u0308ve.txt'), 'naïve');
      await sync(o.email, dav.password, local);
      await sync(o.email, dav.password, local);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
      const root = await listAll(o.client, '/api/files');
      expect(root.map((i) => i.name).sort()).toEqual(['Café', 'naïve.txt']);
      const cafe = root.find((i) => i.name === 'Café')!;
      expect((await listAll(o.client, `/api/files?parentId=${cafe.id}`)).map((i) => i.name)).toEqual(['résumé.txt']);

      expect((await o.client.post('/api/files/rename', { id: cafe.id, name: 'Café renamed' })).status).toBe(200);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /Café renamed']);
      expect(new Map([...localFiles(local)].map(([rel, content]) => [rel, content.toString()]))).toEqual(
        new Map([
          ['Café renamed/résumé.txt', 'résumé'],
          ['naïve.txt', 'naïve'],
        ]),
      );
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
    });

    test('a folder trashed or moved on the server while the client changed files in it: nothing made locally is lost, and the runs after settle', async () => {
      const o = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const local = path.join(dir, 'changed-below');
      const write = (rel: string, content: string) => {
        fs.mkdirSync(path.dirname(path.join(local, rel)), { recursive: true });
        fs.writeFileSync(path.join(local, rel), content);
      };
      write('Gone/x.txt', 'x');
      write('Gone/inner/deep.txt', 'deep');
      write('Moved/z.txt', 'z');
      fs.mkdirSync(path.join(local, 'Into'));
      await sync(o.email, dav.password, local);
      await sync(o.email, dav.password, local);
      const root = await listAll(o.client, '/api/files');
      const id = (name: string) => root.find((i) => i.name === name)!.id as string;
      expect((await o.client.post('/api/files/delete', { ids: [id('Gone')] })).status).toBe(200);
      expect((await o.client.post('/api/files/move', { ids: [id('Moved')], parentId: id('Into') })).status).toBe(200);
      write('Gone/x.txt', 'x, edited offline');
      write('Gone/inner/new.txt', 'made offline');
      write('Moved/z.txt', 'z, edited offline');
      await sync(o.email, dav.password, local);
      const expected = new Map([
        ['Gone/x.txt', 'x, edited offline'],
        ['Gone/inner/new.txt', 'made offline'],
        ['Into/Moved/z.txt', 'z, edited offline'],
      ]);
      expect(new Map([...localFiles(local)].map(([rel, content]) => [rel, content.toString()]))).toEqual(expected);
      await sync(o.email, dav.password, local);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
      const into = await listAll(o.client, `/api/files?parentId=${id('Into')}`);
      const moved = await listAll(o.client, `/api/files?parentId=${into[0].id}`);
      expect(moved.map((i) => i.name)).toEqual(['z.txt']);
      expect((await downloaded(o.client, moved[0].id)).toString()).toBe('z, edited offline');
      const gone = (await listAll(o.client, '/api/files')).find((i) => i.name === 'Gone')!;
      expect(gone.id).not.toBe(id('Gone'));
    });

    test('a local rename from NFC to NFD (the same name on the server): the run after is quiet, the file keeps its id, no 403', async () => {
      const o = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const local = path.join(dir, 'renamed-nfd');
      fs.mkdirSync(path.join(local, 'Docs'), { recursive: true });
      fs.writeFileSync(path.join(local, 'Docs', 'caf\u00e9.txt'), 'café');
      await sync(o.email, dav.password, local);
      await sync(o.email, dav.password, local);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
      const [docs] = await listAll(o.client, '/api/files');
      const [before] = await listAll(o.client, `/api/files?parentId=${docs.id}`);
      fs.renameSync(path.join(local, 'Docs', 'caf\u00e9.txt'), path.join(local, 'Docs', 'cafe\u0301.txt'));
      // The client sends a MOVE whose Destination is the same name in NFD: once 403, and the client failed the run.
      const run = await succeeded(nextcloudcmd(t.url, logger, o.email, dav.password, local));
      expect(run.output).not.toContain('403 Forbidden');
      expect(run.requests.filter((r) => /^(PUT|GET|DELETE) \/remote\.php\//.test(r))).toEqual([]);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
      const after = await listAll(o.client, `/api/files?parentId=${docs.id}`);
      expect(after.map((i) => [i.id, i.name])).toEqual([[before.id, 'caf\u00e9.txt']]);
    });

    test("a PROPPATCH of DAV:lastmodified (rclone's touch) reaches another device as the new time alone: the folder is listed again, nothing downloaded", async () => {
      const o = await seed.owner(t);
      const dav = await davLogin(t, o, 'nextcloudcmd');
      const docs = await folder(o.client, 'Docs');
      await upload(o.client, 'notes.txt', 'same bytes', { parentId: docs.id });
      const local = path.join(dir, 'touched');
      fs.mkdirSync(local);
      await sync(o.email, dav.password, local);
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
      const touched = 1_686_125_350;
      const res = await dav.request('PROPPATCH', 'Docs/notes.txt', {
        headers: { 'content-type': 'application/xml' },
        body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:lastmodified>${touched}</D:lastmodified></D:prop></D:set></D:propertyupdate>`,
      });
      expect(res.status).toBe(207);
      // The file's ETag names its content, which did not change: the client updates the time from the listing (a new ETag would cost a download).
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /', 'PROPFIND /Docs']);
      expect(Math.floor(fs.statSync(path.join(local, 'Docs', 'notes.txt')).mtimeMs / 1000)).toBe(touched);
      expect(fs.readFileSync(path.join(local, 'Docs', 'notes.txt'), 'utf8')).toBe('same bytes');
      expect(await sync(o.email, dav.password, local)).toEqual(['PROPFIND /']);
    });
  },
);
