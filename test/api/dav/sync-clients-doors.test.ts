import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { folder, listAll, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { localFiles, NO_NEXTCLOUDCMD, nextcloudcmd, runClient, succeeded } from '../../helpers/nextcloudcmd.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer, tempDir } from '../../helpers/server.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';
import { addLibrary, cleanHostDirs, hostDir, rescan, write } from '../libraries/helpers.ts';

// rclone from Debian: `apt-get install rclone`.
const RCLONE = Bun.which('rclone');
const NO_RCLONE = skipWithout(RCLONE ? null : 'the `rclone` command is not installed (apt-get install rclone)', 'the rclone sync tests');

const logger = memoryLogger();
let t: TestServer;
let admin: seed.SeededLogin;
let dir: string;

beforeAll(async () => {
  if (NO_NEXTCLOUDCMD && NO_RCLONE) return;
  t = await startTestServer({ logger, env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });
  admin = await seed.admin(t);
  dir = tempDir('coffer-sync-clients-doors-');
});
afterAll(async () => {
  if (NO_NEXTCLOUDCMD && NO_RCLONE) return;
  await t.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  cleanHostDirs();
});

/** One run, which must succeed: the files it downloaded, by path below the login's files address. */
async function downloads(login: { id: string; email: string }, password: string, local: string): Promise<string[]> {
  const prefix = `GET /remote.php/dav/files/${login.id}/`;
  const run = await succeeded(nextcloudcmd(t.url, logger, login.email, password, local));
  return run.requests.filter((r) => r.startsWith(prefix)).map((r) => r.slice(prefix.length));
}

const text = (local: string, rel: string) => localFiles(local).get(rel)?.toString();

async function idIn(login: seed.SeededLogin, parentId: string | null, name: string): Promise<string> {
  return (await listAll(login.client, parentId ? `/api/files?parentId=${parentId}` : '/api/files')).find((i) => i.name === name)!.id;
}

function replaceForm(content: string, name: string): FormData {
  const form = new FormData();
  form.append('file', new File([content], name));
  return form;
}

describe.skipIf(NO_NEXTCLOUDCMD)('nextcloudcmd after changes made through the other doors', () => {
  test('the owner: each change comes down on the next run, and only files whose bytes changed are downloaded; a library file edited in place (same size) too', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const other = await davLogin(t, o, 'another device');
    const host = hostDir();
    write(host, 'notes.txt', 'aaaa');
    write(host, 'sub/b.txt', 'bee');
    const library = await addLibrary(admin, host, o);
    const docs = await folder(o.client, 'Docs');
    const x = await upload(o.client, 'x.txt', 'version one', { parentId: docs.id });
    await upload(o.client, 'y.txt', 'why', { parentId: docs.id });
    const local = path.join(dir, 'owner');
    fs.mkdirSync(local);
    const lib = library.name;

    expect((await downloads(o, dav.password, local)).sort()).toEqual(['Docs/x.txt', 'Docs/y.txt', `${lib}/notes.txt`, `${lib}/sub/b.txt`]);
    expect(await downloads(o, dav.password, local)).toEqual([]);

    // Another program edits a library file on the server, keeping its size; a rescan picks it up.
    await Bun.sleep(5);
    write(host, 'notes.txt', 'bbbb');
    await rescan(admin, library.id);
    expect(await downloads(o, dav.password, local)).toEqual([`${lib}/notes.txt`]);
    expect(text(local, `${lib}/notes.txt`)).toBe('bbbb');

    // Another device writes the library file through WebDAV, same size again.
    expect((await other.put(`${encodeURIComponent(lib)}/notes.txt`, 'cccc')).status).toBe(204);
    expect(await downloads(o, dav.password, local)).toEqual([`${lib}/notes.txt`]);
    expect(text(local, `${lib}/notes.txt`)).toBe('cccc');

    // The web app's tus upload over a file, then a version restored.
    const created = await createUpload(o.client, 11, { filename: 'x.txt', replaceId: x.id });
    expect((await patchUpload(o.client, created.headers.get('location')!, 0, new TextEncoder().encode('version two'))).status).toBe(204);
    expect(await downloads(o, dav.password, local)).toEqual(['Docs/x.txt']);
    expect(text(local, 'Docs/x.txt')).toBe('version two');
    const versions = (await json(await o.client.get(`/api/files/${x.id}/versions`))).versions;
    expect((await o.client.post(`/api/files/${x.id}/versions/${versions[0].id}/restore`, {})).status).toBe(200);
    expect(await downloads(o, dav.password, local)).toEqual(['Docs/x.txt']);
    expect(text(local, 'Docs/x.txt')).toBe('version one');

    // A move and a rename elsewhere are moves here: nothing is downloaded again.
    const sub = await folder(o.client, 'Sub', docs.id);
    expect((await o.client.post('/api/files/move', { ids: [x.id], parentId: sub.id })).status).toBe(200);
    expect((await o.client.post('/api/files/rename', { id: await idIn(o, docs.id, 'y.txt'), name: 'why.txt' })).status).toBe(200);
    expect(await downloads(o, dav.password, local)).toEqual([]);
    expect(text(local, 'Docs/Sub/x.txt')).toBe('version one');
    expect(text(local, 'Docs/why.txt')).toBe('why');
    expect(text(local, 'Docs/x.txt')).toBeUndefined();

    // Trashed in the web app: gone here; restored: back.
    expect((await o.client.post('/api/files/delete', { ids: [x.id] })).status).toBe(200);
    expect(await downloads(o, dav.password, local)).toEqual([]);
    expect(text(local, 'Docs/Sub/x.txt')).toBeUndefined();
    expect((await o.client.post('/api/files/trash/restore', { ids: [x.id] })).status).toBe(200);
    expect(await downloads(o, dav.password, local)).toEqual(['Docs/Sub/x.txt']);
    expect(text(local, 'Docs/Sub/x.txt')).toBe('version one');

    // A local edit of the library file goes up, to the host folder.
    await Bun.sleep(1100);
    fs.writeFileSync(path.join(local, lib, 'notes.txt'), 'dddd');
    expect(await downloads(o, dav.password, local)).toEqual([]);
    expect(fs.readFileSync(path.join(host, 'notes.txt'), 'utf8')).toBe('dddd');
    expect(await downloads(o, dav.password, local)).toEqual([]);
  }, 120_000);

  test('a member: changes by the owner in a share and by another member in a team folder come down; its own go up', async () => {
    const o = await seed.owner(t);
    const m = await seed.owner(t);
    const colleague = await seed.owner(t);
    const shared = await folder(o.client, 'Shared plans');
    await upload(o.client, 'plan.txt', 'plan', { parentId: shared.id });
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: m.email, role: 'editor' })).status).toBe(201);
    const group = await newGroup(admin, 'Nextcloudcmd team', m, colleague);
    const team = await json(
      await admin.client.post('/api/admin/team-folders', { name: 'Crew', quota: null, groups: [{ groupId: group, role: 'editor' }] }),
    );
    await upload(colleague.client, 'roster.txt', 'roster', { parentId: team.folderId });
    const dav = await davLogin(t, m, 'nextcloudcmd');
    const colleagueDav = await davLogin(t, colleague);
    const local = path.join(dir, 'member');
    fs.mkdirSync(local);

    // The team folder is at the root only (as Nextcloud shows a group folder): its bytes come down once.
    expect((await downloads(m, dav.password, local)).sort()).toEqual(['Crew/roster.txt', 'Shared with me/Shared plans/plan.txt']);
    expect(await downloads(m, dav.password, local)).toEqual([]);

    // The owner replaces a file in the share through the API.
    const plan = await idIn(o, shared.id, 'plan.txt');
    expect((await o.client.request(`/api/files/${plan}/replace`, { method: 'POST', body: replaceForm('PLAN', 'plan.txt') })).status).toBe(
      200,
    );
    expect(await downloads(m, dav.password, local)).toEqual(['Shared with me/Shared plans/plan.txt']);
    expect(text(local, 'Shared with me/Shared plans/plan.txt')).toBe('PLAN');

    // Another member of the team folder writes through WebDAV.
    expect((await colleagueDav.put('Crew/roster.txt', 'ROSTER')).status).toBe(204);
    expect((await colleagueDav.put('Crew/new.txt', 'new')).status).toBe(201);
    expect((await downloads(m, dav.password, local)).sort()).toEqual(['Crew/new.txt', 'Crew/roster.txt']);
    expect(text(local, 'Crew/roster.txt')).toBe('ROSTER');

    // The member's own edits go up, into the owner's and the team's trees.
    await Bun.sleep(1100);
    fs.writeFileSync(path.join(local, 'Crew', 'roster.txt'), 'roster, edited');
    fs.writeFileSync(path.join(local, 'Shared with me', 'Shared plans', 'mine.txt'), 'mine');
    expect(await downloads(m, dav.password, local)).toEqual([]);
    expect(await (await colleagueDav.request('GET', 'Crew/roster.txt')).text()).toBe('roster, edited');
    const mine = await idIn(o, shared.id, 'mine.txt');
    expect(await (await o.client.get(`/api/files/${mine}/download`)).text()).toBe('mine');
    // Nothing comes back down: the team folder has no other place in the tree.
    expect(await downloads(m, dav.password, local)).toEqual([]);
    expect(fs.existsSync(path.join(local, 'Shared with me', 'Crew'))).toBe(false);
  }, 120_000);
});

describe.skipIf(NO_RCLONE)('rclone sync after changes made through the other doors', () => {
  test('down: each change comes down on the next sync and nothing else is fetched; up: a local edit of the same size goes up', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'rclone');
    const host = hostDir();
    write(host, 'notes.txt', 'aaaa');
    const library = await addLibrary(admin, host, o);
    const docs = await folder(o.client, 'Docs');
    const x = await upload(o.client, 'x.txt', 'version one', { parentId: docs.id });
    await upload(o.client, 'y.txt', 'why', { parentId: docs.id });
    const local = path.join(dir, 'rclone');
    fs.mkdirSync(local);
    const pass = (await succeeded(runClient([RCLONE!, 'obscure', dav.password], logger))).stdout.trim();
    const flags = ['--config', '/dev/null', '--low-level-retries', '1', '--retries', '1'];
    for (const [vendor, base] of [
      ['nextcloud', `/remote.php/dav/files/${o.id}/`],
      ['owncloud', '/dav/'],
    ] as const) {
      const remote = `:webdav,url='${t.url}${base}',vendor=${vendor},user='${o.email}',pass='${pass}':`;
      const into = path.join(local, vendor);
      /** rclone sync of the account into `into`: the files it fetched, by path below `base`. */
      const down = async () => {
        const run = await succeeded(runClient([RCLONE!, ...flags, 'sync', remote, into], logger));
        return run.requests.filter((r) => r.startsWith(`GET ${base}`)).map((r) => r.slice(`GET ${base}`.length));
      };
      const lib = library.name;
      expect((await down()).sort()).toEqual(['Docs/x.txt', 'Docs/y.txt', `${lib}/notes.txt`]);
      expect(await down()).toEqual([]);

      // rclone compares a WebDAV file's time to the second: an edit of the same size within the same second is not a change to it.
      await Bun.sleep(1100);
      write(host, 'notes.txt', vendor === 'nextcloud' ? 'bbbb' : 'cccc');
      await rescan(admin, library.id);
      expect(await down()).toEqual([`${lib}/notes.txt`]);
      expect(text(into, `${lib}/notes.txt`)).toBe(vendor === 'nextcloud' ? 'bbbb' : 'cccc');

      expect(
        (await o.client.request(`/api/files/${x.id}/replace`, { method: 'POST', body: replaceForm(`${vendor} edit`, 'x.txt') })).status,
      ).toBe(200);
      expect(await down()).toEqual(['Docs/x.txt']);
      expect(text(into, 'Docs/x.txt')).toBe(`${vendor} edit`);
      const versions = (await json(await o.client.get(`/api/files/${x.id}/versions`))).versions;
      const first = versions.find((v: { size: number }) => v.size === 'version one'.length);
      expect((await o.client.post(`/api/files/${x.id}/versions/${first.id}/restore`, {})).status).toBe(200);
      expect(await down()).toEqual(['Docs/x.txt']);
      expect(text(into, 'Docs/x.txt')).toBe('version one');
      expect(await down()).toEqual([]);
    }

    // Up: an edit of the same size, made locally, replaces the server's content (the owncloud vendor sends its time).
    const remote = `:webdav,url='${t.url}/dav/',vendor=owncloud,user='${o.email}',pass='${pass}':`;
    await Bun.sleep(1100);
    fs.writeFileSync(path.join(local, 'owncloud', library.name, 'notes.txt'), 'dddd');
    await succeeded(runClient([RCLONE!, ...flags, 'sync', path.join(local, 'owncloud'), remote], logger));
    expect(fs.readFileSync(path.join(host, 'notes.txt'), 'utf8')).toBe('dddd');
    expect(text(path.join(local, 'owncloud'), 'Docs/x.txt')).toBe(await (await o.client.get(`/api/files/${x.id}/download`)).text());
  }, 120_000);
});
