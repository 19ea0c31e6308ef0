import { describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { davLogin, NextcloudApp } from '../../helpers/dav.ts';
import { downloaded, folder, listAll, upload } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { localFiles, NO_NEXTCLOUDCMD, nextcloudcmd, nextcloudcmdServer, succeeded } from '../../helpers/nextcloudcmd.ts';
import { newGroup } from '../../helpers/groups.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';

const logger = memoryLogger();
let t: TestServer;
let dir: string;
let admin: seed.SeededLogin;

nextcloudcmdServer(logger, 'coffer-nextcloudcmd-access-', (s) => ({ t, dir, admin } = s));

const sync = (email: string, password: string, local: string) => nextcloudcmd(t.url, logger, email, password, local);

/** A run that must succeed. */
const syncOk = (email: string, password: string, local: string) => succeeded(sync(email, password, local));

/** Every file of the account's tree (below `parentId`), by path, with its bytes. */
async function serverFiles(client: seed.SeededLogin['client'], parentId?: string, prefix = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const item of await listAll(client, parentId ? `/api/files?parentId=${parentId}` : '/api/files')) {
    if (item.type === 'folder') for (const [k, v] of await serverFiles(client, item.id, `${prefix}${item.name}/`)) out.set(k, v);
    else out.set(`${prefix}${item.name}`, (await downloaded(client, item.id)).toString());
  }
  return out;
}

/** The requests of a run that move or change content. */
const transfersOf = (requests: string[]) => requests.filter((r) => /^(GET|PUT|MKCOL|DELETE|MOVE|COPY|PROPPATCH) \/remote/.test(r));

/** Local changes of every kind inside `folderPath`: a new file, an edit, a delete, a new folder. */
function changeLocally(folderPath: string) {
  fs.writeFileSync(path.join(folderPath, 'new here.txt'), 'made offline');
  fs.writeFileSync(path.join(folderPath, 'notes.txt'), 'edited offline, at length');
  fs.rmSync(path.join(folderPath, 'keep.txt'));
  fs.mkdirSync(path.join(folderPath, 'New folder'));
  fs.writeFileSync(path.join(folderPath, 'New folder', 'inside.txt'), 'inside');
}

/** After a refused sync: nothing changed on the server, and every local change is still on disk somewhere. */
function expectLocalKept(files: Map<string, Buffer>, prefix: string) {
  expect(files.get(`${prefix}new here.txt`)?.toString()).toBe('made offline');
  expect(files.get(`${prefix}New folder/inside.txt`)?.toString()).toBe('inside');
  // The server's content comes back; the local edit is kept beside it as a conflict copy.
  expect(files.get(`${prefix}notes.txt`)?.toString()).toBe('notes');
  const edits = [...files.entries()].filter(([rel]) => rel.startsWith(`${prefix}notes (conflicted copy`));
  expect(edits.map(([, content]) => content.toString())).toEqual(['edited offline, at length']);
  // A file deleted locally that may not be deleted on the server is downloaded again.
  expect(files.get(`${prefix}keep.txt`)?.toString()).toBe('keep');
}

describe.skipIf(NO_NEXTCLOUDCMD)('the Nextcloud desktop client (nextcloudcmd): odd names, permissions, revoked passwords', () => {
  test('a first sync of 200 files in nested folders with spaces, accents and emoji in their names is byte-exact on Coffer', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'many');
    const names = ['plain', 'with spaces', 'Accents éàü ñ', 'emoji 🎉🌍', 'Ünïcödé – dash', "quote's & amp"];
    const tree = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      const folderName = names[i % names.length]!;
      const sub = i % 3 === 0 ? `${folderName}/deeper ${names[(i + 1) % names.length]}/` : `${folderName}/`;
      tree.set(`${sub}file ${i} ${names[(i + 2) % names.length]}.txt`, `content of ${i} ${'é🎉'.repeat(i % 7)}`);
    }
    for (const [rel, content] of tree) {
      fs.mkdirSync(path.dirname(path.join(local, rel)), { recursive: true });
      fs.writeFileSync(path.join(local, rel), content);
    }
    await syncOk(o.email, dav.password, local);
    const onServer = await serverFiles(o.client);
    expect(onServer.size).toBe(200);
    expect(new Map([...onServer].sort())).toEqual(new Map([...tree].sort()));
  });

  test('names Coffer refuses: the client says why, keeps them on disk and syncs the rest', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'refused-names');
    fs.mkdirSync(local);
    const long = `${'x'.repeat(101)}.txt`;
    for (const name of ['fine.txt', 'what?.txt', long]) fs.writeFileSync(path.join(local, name), `content of ${name}`);
    const run = await sync(o.email, dav.password, local);
    expect(run.exitCode).not.toBe(0);
    expect(run.output).toContain(`(Name must be at most 100 characters: \\"${long}\\")`);
    expect(run.output).toContain('Name must not contain control characters or any of');
    expect([...(await serverFiles(o.client)).keys()]).toEqual(['fine.txt']);
    expect([...localFiles(local).keys()].sort()).toEqual([long, 'fine.txt', 'what?.txt'].sort());
  });

  test('names beginning or ending with a blank other than a space (no-break, ideographic): refused, not trimmed, so the next runs end and change nothing', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'blank-edges');
    fs.mkdirSync(path.join(local, 'dir\u2003'), { recursive: true });
    fs.writeFileSync(path.join(local, 'dir\u2003', 'in.txt'), 'in the em-space folder');
    fs.writeFileSync(path.join(local, 'nbsp\u00a0'), 'no-break space after');
    fs.writeFileSync(path.join(local, '\u3000ideographic.txt'), 'ideographic space before');
    fs.writeFileSync(path.join(local, 'fine.txt'), 'fine');
    const first = await sync(o.email, dav.password, local);
    expect(first.exitCode).not.toBe(0);
    expect(first.output).toContain('Name must not begin or end with a space or another blank character');
    expect([...(await serverFiles(o.client)).keys()]).toEqual(['fine.txt']);
    // Trimmed, they were stored under other names and the client hung at every later run; refused, it skips them until it tries again.
    for (let i = 0; i < 2; i++) expect(transfersOf((await sync(o.email, dav.password, local)).requests)).toEqual([]);
    expect([...(await serverFiles(o.client)).keys()]).toEqual(['fine.txt']);
    expect(new Map([...localFiles(local)].map(([rel, content]) => [rel, content.toString()]))).toEqual(
      new Map([
        ['dir\u2003/in.txt', 'in the em-space folder'],
        ['nbsp\u00a0', 'no-break space after'],
        ['\u3000ideographic.txt', 'ideographic space before'],
        ['fine.txt', 'fine'],
      ]),
    );
    // Such a path names nothing: the item a trimmed name would find is not it.
    const app = new NextcloudApp(dav, o.id);
    expect((await app.files('PROPFIND', 'fine.txt%C2%A0', { depth: '0' })).status).toBe(404);
    expect((await app.files('GET', '%E3%80%80fine.txt')).status).toBe(404);
  });

  test('a sub-user without Upload cannot change anything, and its local changes stay on its disk', async () => {
    const o = await seed.owner(t);
    const work = await folder(o.client, 'Work');
    await upload(o.client, 'notes.txt', 'notes', { parentId: work.id });
    await upload(o.client, 'keep.txt', 'keep', { parentId: work.id });
    const before = await serverFiles(o.client);
    const sub = await seed.subUser(t, o, ['files.download']);
    const dav = await davLogin(t, sub, 'nextcloudcmd');
    const local = path.join(dir, 'sub-user');
    fs.mkdirSync(local);
    await syncOk(sub.email, dav.password, local);
    expect(localFiles(local).get('Work/notes.txt')?.toString()).toBe('notes');

    changeLocally(path.join(local, 'Work'));
    const run = await sync(sub.email, dav.password, local);
    expect(run.requests.filter((r) => /^(PUT|MKCOL|DELETE|MOVE|PROPPATCH) /.test(r))).toEqual([]);
    expect(await serverFiles(o.client)).toEqual(before);
    expectLocalKept(localFiles(local), 'Work/');
  });

  test('a viewer member cannot change anything in the share, and its local changes stay on its disk', async () => {
    const o = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await upload(o.client, 'notes.txt', 'notes', { parentId: family.id });
    await upload(o.client, 'keep.txt', 'keep', { parentId: family.id });
    const before = await serverFiles(o.client);
    const member = await seed.owner(t);
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'viewer');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    const inShare = 'Shared with me/Family/';
    expect(localFiles(local).get(`${inShare}notes.txt`)?.toString()).toBe('notes');

    changeLocally(path.join(local, 'Shared with me', 'Family'));
    const run = await sync(member.email, dav.password, local);
    expect(run.requests.filter((r) => /^(PUT|MKCOL|DELETE|MOVE|PROPPATCH) /.test(r))).toEqual([]);
    expect(await serverFiles(o.client)).toEqual(before);
    expectLocalKept(localFiles(local), inShare);
  });

  test('an editor made viewer between two runs: the next run learns it, uploads nothing and keeps the local changes; made editor again, it uploads them', async () => {
    const o = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await upload(o.client, 'notes.txt', 'notes', { parentId: family.id });
    await upload(o.client, 'keep.txt', 'keep', { parentId: family.id });
    const member = await seed.owner(t);
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'role-changed');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    await syncOk(member.email, dav.password, local);
    const before = await serverFiles(o.client);

    expect((await o.client.send('PATCH', `/api/files/${family.id}/members/${member.id}`, { role: 'viewer' })).status).toBe(200);
    changeLocally(path.join(local, 'Shared with me', 'Family'));
    const run = await sync(member.email, dav.password, local);
    expect(run.requests.filter((r) => /^(PUT|MKCOL|DELETE|MOVE|PROPPATCH) /.test(r))).toEqual([]);
    expect(await serverFiles(o.client)).toEqual(before);
    expectLocalKept(localFiles(local), 'Shared with me/Family/');

    expect((await o.client.send('PATCH', `/api/files/${family.id}/members/${member.id}`, { role: 'editor' })).status).toBe(200);
    await sync(member.email, dav.password, local);
    const after = await serverFiles(o.client);
    expect(after.get('Family/new here.txt')).toBe('made offline');
    expect(after.get('Family/New folder/inside.txt')).toBe('inside');
  });

  test('an editor member’s edit of a file inside the share large enough to go up in chunks arrives (its final MOVE names the file by its path under Shared with me)', async () => {
    const o = await seed.owner(t);
    const docs = await folder(o.client, 'Docs');
    const big = await upload(o.client, 'big.bin', randomBytes(12 * 1024 * 1024), { parentId: docs.id });
    const member = await seed.owner(t);
    expect((await o.client.post(`/api/files/${docs.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'big-edit');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);

    const edited = randomBytes(12 * 1024 * 1024 + 5);
    fs.writeFileSync(path.join(local, 'Shared with me', 'Docs', 'big.bin'), edited);
    const run = await syncOk(member.email, dav.password, local);
    expect(run.requests.filter((r) => r.startsWith('MOVE ')).map((r) => r.replace(/uploads\/.*\//, 'uploads/…/'))).toEqual([
      'MOVE /remote.php/dav/uploads/…/.file',
    ]);
    expect((await downloaded(o.client, big.id)).equals(edited)).toBe(true);
  });

  test('an editor of shared files (not a folder) uploads its edits of them, whole and in chunks', async () => {
    const o = await seed.owner(t);
    const plan = await upload(o.client, 'plan.txt', 'plan v1');
    const big = await upload(o.client, 'big.bin', randomBytes(300_000));
    const member = await seed.owner(t);
    for (const f of [plan, big])
      expect((await o.client.post(`/api/files/${f.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'shared-files');
    fs.mkdirSync(local);
    // Chunks of 100 kB: the 300 kB file goes up in chunks.
    const chunks = { OWNCLOUD_CHUNK_SIZE: '100000', OWNCLOUD_MIN_CHUNK_SIZE: '100000', OWNCLOUD_MAX_CHUNK_SIZE: '100000' };
    const run = () => nextcloudcmd(t.url, logger, member.email, dav.password, local, chunks);
    await succeeded(run());
    const edited = randomBytes(300_001);
    fs.writeFileSync(path.join(local, 'Shared with me', 'plan.txt'), 'plan v2, edited by the member');
    fs.writeFileSync(path.join(local, 'Shared with me', 'big.bin'), edited);
    const up = await succeeded(run());
    expect(up.requests.filter((r) => r.startsWith('MOVE ')).length).toBe(1);
    expect((await downloaded(o.client, plan.id)).toString()).toBe('plan v2, edited by the member');
    expect((await downloaded(o.client, big.id)).equals(edited)).toBe(true);
    expect(transfersOf((await succeeded(run())).requests)).toEqual([]);
  });

  test('an editor of a shared file made viewer: the next run learns it, sends nothing and keeps the local edit as a conflict copy', async () => {
    const o = await seed.owner(t);
    const plan = await upload(o.client, 'plan.txt', 'plan v1');
    const member = await seed.owner(t);
    expect((await o.client.post(`/api/files/${plan.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'shared-file-viewer');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);

    expect((await o.client.send('PATCH', `/api/files/${plan.id}/members/${member.id}`, { role: 'viewer' })).status).toBe(200);
    fs.writeFileSync(path.join(local, 'Shared with me', 'plan.txt'), 'plan v2, the viewer keeps it');
    const run = await sync(member.email, dav.password, local);
    expect(transfersOf(run.requests).filter((r) => !r.startsWith('GET '))).toEqual([]);
    expect((await downloaded(o.client, plan.id)).toString()).toBe('plan v1');
    const files = localFiles(local);
    expect(files.get('Shared with me/plan.txt')?.toString()).toBe('plan v1');
    const copies = [...files].filter(([rel]) => rel.startsWith('Shared with me/plan (conflicted copy'));
    expect(copies.map(([, content]) => content.toString())).toEqual(['plan v2, the viewer keeps it']);
  });

  test('a share that ends while the member has changes in it: they stay on its disk, not in a folder of its own that the next share would hide', async () => {
    const o = await seed.owner(t);
    const docs = await folder(o.client, 'Docs');
    await upload(o.client, 'notes.txt', 'notes', { parentId: docs.id });
    const member = await seed.owner(t);
    await upload(member.client, 'mine.txt', 'mine');
    expect((await o.client.post(`/api/files/${docs.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'share-ended');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    const inShare = path.join(local, 'Shared with me', 'Docs');
    fs.writeFileSync(path.join(inShare, 'notes.txt'), 'notes, edited offline');
    fs.writeFileSync(path.join(inShare, 'new here.txt'), 'made offline');

    expect((await o.client.delete(`/api/files/${docs.id}/members/${member.id}`)).status).toBe(200);
    await sync(member.email, dav.password, local);
    expect((await listAll(member.client, '/api/files')).map((i) => i.name)).toEqual(['mine.txt']);
    const other = await folder(o.client, 'Other');
    await upload(o.client, 'other.txt', 'other', { parentId: other.id });
    expect((await o.client.post(`/api/files/${other.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    await sync(member.email, dav.password, local);
    const files = localFiles(local);
    expect(files.get('Shared with me/Other/other.txt')?.toString()).toBe('other');
    expect(files.get('Shared with me/Docs/notes.txt')?.toString()).toBe('notes, edited offline');
    expect(files.get('Shared with me/Docs/new here.txt')?.toString()).toBe('made offline');
  });

  test('an own folder named Shared with me syncs as "Shared with me (1)" beside the shares, before and after one comes, and local changes there reach it', async () => {
    const member = await seed.owner(t);
    const own = await folder(member.client, 'Shared with me');
    await upload(member.client, 'mine.txt', 'my own', { parentId: own.id });
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'namesake');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    expect(localFiles(local).get('Shared with me (1)/mine.txt')?.toString()).toBe('my own');

    const o = await seed.owner(t);
    const docs = await folder(o.client, 'Docs');
    await upload(o.client, 'notes.txt', 'notes', { parentId: docs.id });
    expect((await o.client.post(`/api/files/${docs.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    fs.writeFileSync(path.join(local, 'Shared with me (1)', 'added.txt'), 'added offline');
    await syncOk(member.email, dav.password, local);
    const files = localFiles(local);
    expect(files.get('Shared with me/Docs/notes.txt')?.toString()).toBe('notes');
    expect(files.get('Shared with me (1)/mine.txt')?.toString()).toBe('my own');
    expect((await listAll(member.client, '/api/files')).map((i) => i.name)).toEqual(['Shared with me']);
    const inOwn = await listAll(member.client, `/api/files?parentId=${own.id}`);
    expect(inOwn.map((i) => i.name).sort()).toEqual(['added.txt', 'mine.txt']);
    expect((await downloaded(member.client, inOwn.find((i) => i.name === 'added.txt').id)).toString()).toBe('added offline');
  });

  test('a viewer of a team folder at the root uploads nothing into it: its new local file stays on its disk', async () => {
    const member = await seed.owner(t);
    const group = await newGroup(admin, 'Readers', member);
    const made = await admin.client.post('/api/admin/team-folders', {
      name: 'Team',
      quota: null,
      groups: [{ groupId: group, role: 'viewer' }],
    });
    expect(made.status).toBe(201);
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'team-viewer');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    fs.writeFileSync(path.join(local, 'Team', 'mine.txt'), 'made offline');
    const run = await sync(member.email, dav.password, local);
    expect(run.requests.filter((r) => /^(PUT|MKCOL|DELETE|MOVE|PROPPATCH) /.test(r))).toEqual([]);
    expect(localFiles(local).get('Team/mine.txt')?.toString()).toBe('made offline');
  });

  test('two shares of one name whose owners’ names hold a slash or other characters no name may hold both sync, each to its own folder, and edits go up', async () => {
    const member = await seed.owner(t);
    const owners = [
      await seed.owner(t, seed.uniqueEmail('sales'), 'Sales/Marketing'),
      await seed.owner(t, seed.uniqueEmail('bea'), 'Bea: "the boss"?'),
    ];
    const notes: string[] = [];
    for (const o of owners) {
      const docs = await folder(o.client, 'Docs');
      notes.push((await upload(o.client, 'note.txt', `from ${o.email}`, { parentId: docs.id })).id);
      expect((await o.client.post(`/api/files/${docs.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    }
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'owner-names');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    const names = ['Docs (Sales Marketing)', 'Docs (Bea the boss)'];
    const files = localFiles(local);
    expect(names.map((n) => files.get(`Shared with me/${n}/note.txt`)?.toString())).toEqual(owners.map((o) => `from ${o.email}`));

    for (const n of names) fs.writeFileSync(path.join(local, 'Shared with me', n, 'note.txt'), `edited in ${n}, at length`);
    await syncOk(member.email, dav.password, local);
    for (const [i, o] of owners.entries())
      expect((await downloaded(o.client, notes[i]!)).toString()).toBe(`edited in ${names[i]}, at length`);
  });

  test('shared files of one name keep their extension in the names that tell them apart, so they still open by type', async () => {
    const member = await seed.owner(t);
    const owners = [
      await seed.owner(t, seed.uniqueEmail('ada'), 'Ada'),
      await seed.owner(t, seed.uniqueEmail('ada'), 'Ada'),
      await seed.owner(t, seed.uniqueEmail('bo'), 'Bo'),
    ];
    for (const o of owners) {
      const plan = await upload(o.client, 'plan.txt', `plan of ${o.email}`);
      expect((await o.client.post(`/api/files/${plan.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    }
    const dav = await davLogin(t, member, 'nextcloudcmd');
    const local = path.join(dir, 'shared-file-names');
    fs.mkdirSync(local);
    await syncOk(member.email, dav.password, local);
    const files = localFiles(local);
    // The oldest share of a name keeps it; the newer is numbered.
    expect(new Map([...files].map(([rel, content]) => [rel, content.toString()]))).toEqual(
      new Map([
        ['Shared with me/plan (Ada).txt', `plan of ${owners[0]!.email}`],
        ['Shared with me/plan (Ada) (1).txt', `plan of ${owners[1]!.email}`],
        ['Shared with me/plan (Bo).txt', `plan of ${owners[2]!.email}`],
      ]),
    );
  });

  test('a revoked app password stops the next run with an authentication error, and nothing local is touched', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'revoked');
    fs.mkdirSync(local);
    fs.writeFileSync(path.join(local, 'mine.txt'), 'mine');
    await syncOk(o.email, dav.password, local);
    expect((await o.client.request(`/api/user/app-passwords/${dav.id}`, { method: 'DELETE' })).status).toBe(200);
    fs.writeFileSync(path.join(local, 'later.txt'), 'later');
    const run = await sync(o.email, dav.password, local);
    expect(run.exitCode).not.toBe(0);
    expect(run.output).toMatch(/authentication|credentials|401|Host requires authentication/i);
    expect(run.requests.filter((r) => r.startsWith('PUT '))).toEqual([]);
    expect([...localFiles(local).keys()].sort()).toEqual(['later.txt', 'mine.txt']);
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual(['mine.txt']);
  });
});
