import { describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { json, type TestClient } from '../../helpers/client.ts';
import type { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { downloaded, folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithDocserver } from '../../helpers/suite.ts';

let t: TestServer;
let double: DocserverDouble;
let admin: seed.SeededLogin;

serverWithDocserver((s) => ({ t, admin, double } = s), { startWorker: false });

describe('the document editor on shared documents', () => {
  test('viewers open read-only, editors to edit, others 404; a removed member\u2019s file link stops answering', async () => {
    const o = await seed.owner(t);
    const viewer = await seed.owner(t);
    const editor = await seed.owner(t);
    const stranger = await seed.owner(t);
    const root = await folder(o.client, 'Reports');
    const file = await upload(o.client, 'plan.docx', await documents.docx('shared plan'), { parentId: root.id });
    for (const [m, role] of [
      [viewer, 'viewer'],
      [editor, 'editor'],
    ] as const)
      expect((await o.client.post(`/api/files/${root.id}/members`, { email: m.email, role })).status).toBe(201);

    const open = async (c: seed.SeededLogin) => c.client.get(`/api/docserver/config/${file.id}`);
    const asViewer = await json(await open(viewer));
    expect(asViewer.config.editorConfig.mode).toBe('view');
    expect((await json(await open(editor))).config.editorConfig.mode).toBe('edit');
    expect((await json(await open(o))).config.editorConfig.mode).toBe('edit');
    expect((await open(stranger)).status).toBe(404);

    // The document server fetches the file with the link handed to the viewer, until the viewer is removed.
    const link = asViewer.config.document.url as string;
    expect((await fetch(link)).status).toBe(200);
    expect((await o.client.delete(`/api/files/${root.id}/members/${viewer.id}`)).status).toBe(200);
    expect((await fetch(link)).status).toBe(404);
    expect((await open(viewer)).status).toBe(404);
    expect((await fetch((await json(await open(editor))).config.document.url)).status).toBe(200);
  });

  test("outside the share 404; a member's sub-user without Download 403; the sharing owner disabled or deleted ends it", async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const root = await folder(o.client, 'Reports');
    const file = await upload(o.client, 'plan.docx', await documents.docx('shared plan'), { parentId: root.id });
    const secret = await upload(o.client, 'secret.docx', await documents.docx('not shared'));
    expect((await o.client.post(`/api/files/${root.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const open = (c: seed.SeededLogin, id = file.id) => c.client.get(`/api/docserver/config/${id}`);
    const link = (await json(await open(member))).config.document.url as string;

    expect((await open(member, secret.id)).status).toBe(404);
    expect((await open(await seed.subUser(t, member, []))).status).toBe(403);
    expect((await open(await seed.subUser(t, member, ['files.download']))).status).toBe(200);

    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    expect((await open(member)).status).toBe(404);
    // The document server's fetch is refused as for the owner's own links of a disabled account.
    expect((await fetch(link)).status).toBe(403);
    expect((await admin.client.delete(`/api/user/${o.id}`)).status).toBeLessThan(300);
    expect((await open(member)).status).toBe(404);
  });
});

describe("a sub-user's document link", () => {
  test('stops answering once its Download is taken away (403) or the sub-user is deleted (401)', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'plan.docx', await documents.docx('the plan'));
    const linkOf = async (c: seed.SeededLogin) =>
      (await json(await c.client.get(`/api/docserver/config/${file.id}`))).config.document.url as string;
    const reader = await seed.subUser(t, o, ['files.download']);
    const removed = await seed.subUser(t, o, ['files.download']);
    const [readerLink, removedLink] = [await linkOf(reader), await linkOf(removed)];
    expect((await fetch(readerLink)).status).toBe(200);
    expect((await fetch(removedLink)).status).toBe(200);

    expect((await o.client.put(`/api/user/sub-users/${reader.id}`, { permissions: [] })).status).toBe(200);
    const refused = await fetch(readerLink);
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toContain('Download');
    expect((await o.client.delete(`/api/user/sub-users/${removed.id}`)).status).toBe(200);
    expect((await fetch(removedLink)).status).toBe(401);
    // The owner's own link still answers.
    expect((await fetch(await linkOf(o))).status).toBe(200);
  });

  test("a member's link stops answering once the member's account is disabled (403), as its sessions do", async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const root = await folder(o.client, 'Reports');
    const file = await upload(o.client, 'plan.docx', await documents.docx('shared plan'), { parentId: root.id });
    expect((await o.client.post(`/api/files/${root.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const link = (await json(await member.client.get(`/api/docserver/config/${file.id}`))).config.document.url as string;
    expect((await fetch(link)).status).toBe(200);
    expect((await admin.client.send('PATCH', `/api/user/${member.id}`, { disabled: true })).status).toBe(200);
    const refused = await fetch(link);
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe('This account is disabled: ask the administrator');
  });
});

/** An owner's document in a folder shared with `editors` as editors. */
async function sharedDocument(folderName: string, name: string, editors: seed.SeededLogin[]) {
  const o = await seed.owner(t);
  const root = await folder(o.client, folderName);
  const original = await documents.docx(`the first text of ${name}`);
  const file = await upload(o.client, name, original, { parentId: root.id });
  for (const m of editors)
    expect((await o.client.post(`/api/files/${root.id}/members`, { email: m.email, role: 'editor' })).status).toBe(201);
  return { o, root, original, file };
}

describe('saves after the right to edit ended', () => {
  test('a member removed or made a viewer, a sub-user whose Modify was taken away: its open editor saves nothing ({error: 1}); one who still may edit saves', async () => {
    const removed = await seed.owner(t);
    const demoted = await seed.owner(t);
    const { o, root, original, file } = await sharedDocument('Reports', 'plan.docx', [removed, demoted]);
    const helper = await seed.subUser(t, o, ['files.download', 'files.edit']);
    /** The editor as opened by `login` (in edit mode), then its edit saved by the document server. */
    const opened = async (login: seed.SeededLogin) => {
      const res = await json(await login.client.get(`/api/docserver/config/${file.id}`));
      expect(res.config.editorConfig.mode).toBe('edit');
      await double.open(res.config, res.token);
      return res.config.document.key as string;
    };
    const saved = async (key: string, text: string) => {
      double.edit(key, await documents.docx(text));
      return json(await double.callback(key, 6, { forcesavetype: 1 }));
    };

    let key = await opened(removed);
    expect((await o.client.delete(`/api/files/${root.id}/members/${removed.id}`)).status).toBe(200);
    expect((await saved(key, 'by a removed member')).error).toBe(1);
    key = await opened(demoted);
    expect((await o.client.send('PATCH', `/api/files/${root.id}/members/${demoted.id}`, { role: 'viewer' })).status).toBe(200);
    expect((await saved(key, 'by a viewer now')).error).toBe(1);
    key = await opened(helper);
    expect((await o.client.put(`/api/user/sub-users/${helper.id}`, { permissions: ['files.download'] })).status).toBe(200);
    expect((await saved(key, 'by a helper without Modify')).error).toBe(1);
    expect((await downloaded(o.client, file.id)).equals(original)).toBe(true);

    const edited = await documents.docx('by the owner');
    key = await opened(o);
    double.edit(key, edited);
    expect(await json(await double.callback(key, 2))).toEqual({ error: 0 });
    expect((await downloaded(o.client, file.id)).equals(edited)).toBe(true);
  });
});

describe('a save that names no editor (everyone has closed the document)', () => {
  test("is checked against the editors last named: a removed member's edit is refused ({error: 1}), the owner's is saved", async () => {
    const removed = await seed.owner(t);
    const { o, root, original, file } = await sharedDocument('Minutes', 'minutes.docx', [removed]);
    /** Opened by `login`; the document server names it editing, then nobody once it has left, then sends the save naming nobody. */
    const closedAndSaved = async (login: seed.SeededLogin, text: string, between: () => Promise<unknown>) => {
      const res = await json(await login.client.get(`/api/docserver/config/${file.id}`));
      await double.open(res.config, res.token);
      const key = res.config.document.key as string;
      expect(await json(await double.callback(key, 1, { users: [login.id] }))).toEqual({ error: 0 });
      await between();
      expect(await json(await double.callback(key, 1, { users: [] }))).toEqual({ error: 0 });
      double.edit(key, await documents.docx(text));
      return json(await double.callback(key, 2, { users: [] }));
    };

    const refused = await closedAndSaved(removed, 'by a removed member', () =>
      o.client.delete(`/api/files/${root.id}/members/${removed.id}`),
    );
    expect(refused.error).toBe(1);
    expect((await downloaded(o.client, file.id)).equals(original)).toBe(true);

    const edited = await documents.docx('by the owner');
    const res = await json(await o.client.get(`/api/docserver/config/${file.id}`));
    await double.open(res.config, res.token);
    const key = res.config.document.key as string;
    await double.callback(key, 1, { users: [o.id] });
    await double.callback(key, 1, { users: [] });
    double.edit(key, edited);
    expect(await json(await double.callback(key, 2, { users: [] }))).toEqual({ error: 0 });
    expect((await downloaded(o.client, file.id)).equals(edited)).toBe(true);
  });
});

async function versionSizes(client: TestClient, id: string): Promise<number[]> {
  const res = await client.get(`/api/files/${id}/versions`);
  if (res.status !== 200) throw new Error(`versions: ${res.status} ${await res.text()}`);
  return (await json(res)).versions.map((v: { size: number }) => v.size);
}

/** A private file of `size` bytes replaced `times` times: as many versions of `size` bytes. */
async function privateHistory(client: TestClient, size: number, times: number): Promise<string> {
  const file = await upload(client, 'diary.bin', randomBytes(size), { parentId: (await folder(client, 'Private')).id });
  for (let i = 0; i < times; i++) {
    const form = new FormData();
    form.append('file', new File([randomBytes(size)], 'diary.bin'));
    const res = await client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form });
    if (res.status !== 200) throw new Error(`replace: ${res.status} ${await res.text()}`);
  }
  return file.id;
}

describe("saves of shared documents and the owner's versions", () => {
  test("a member's save takes only the free space ({error: 1} beyond it, every version stays); the owner's own save still makes room", async () => {
    const o = await seed.owner(t);
    const editor = await seed.owner(t);
    const root = await folder(o.client, 'Reports');
    const original = await documents.docx('shared plan');
    const file = await upload(o.client, 'plan.docx', original, { parentId: root.id });
    expect((await o.client.post(`/api/files/${root.id}/members`, { email: editor.email, role: 'editor' })).status).toBe(201);
    const edited = await documents.docx(`edited by a member ${randomBytes(600).toString('hex')}`);
    const diary = await privateHistory(o.client, edited.length, 3);
    const { used } = t.server.ctx.services.quota.usage(o.id);
    // Half the edited version is free; the private file's versions hold three times it.
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(used + (edited.length >> 1), o.id);

    const asEditor = await json(await editor.client.get(`/api/docserver/config/${file.id}`));
    await double.open(asEditor.config, asEditor.token);
    const key = asEditor.config.document.key as string;
    double.edit(key, edited);
    const answer = await json(await double.callback(key, 6, { forcesavetype: 1 }));
    expect(answer.error).toBe(1);
    expect(answer.message).toStartWith('Storage limit exceeded.');
    expect(await versionSizes(o.client, diary)).toEqual([edited.length, edited.length, edited.length]);
    expect((await downloaded(o.client, file.id)).equals(original)).toBe(true);

    // The owner saving the same edit: the oldest private version goes, just enough for it.
    const asOwner = await json(await o.client.get(`/api/docserver/config/${file.id}`));
    await double.open(asOwner.config, asOwner.token);
    expect(asOwner.config.document.key).toBe(key);
    double.edit(key, edited);
    expect(await json(await double.callback(key, 2))).toEqual({ error: 0 });
    expect(await versionSizes(o.client, diary)).toEqual([edited.length, edited.length]);
    expect((await downloaded(o.client, file.id)).equals(edited)).toBe(true);
  });
});
