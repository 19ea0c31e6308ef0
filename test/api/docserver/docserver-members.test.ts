import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let double: DocserverDouble;
let admin: seed.SeededLogin;

beforeAll(async () => {
  double = DocserverDouble.start();
  t = await startTestServer({ startWorker: false });
  admin = await seed.admin(t);
  expect((await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret })).status).toBe(200);
});
afterAll(async () => {
  await double.settled();
  await t.stop();
  double.stop();
});

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
