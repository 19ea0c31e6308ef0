import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { folder, listAll, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { TUS } from '../../helpers/tus.ts';

let t: TestServer;
let owner: seed.SeededLogin;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

async function dropLink(options: Record<string, unknown>): Promise<{ token: string; folderId: string }> {
  const drop = await folder(owner.client, `Drop ${Math.random().toString(36).slice(2)}`);
  const res = await owner.client.post('/api/files/share', { ids: [drop.id], shared: true, ...options });
  expect(res.status).toBe(200);
  return { token: /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[drop.id])![1]!, folderId: drop.id };
}

/** An anonymous request under the link. */
function visit(path: string, init: { method?: string; headers?: Record<string, string>; body?: string | FormData | Uint8Array } = {}) {
  return fetch(t.url + path, { method: init.method ?? 'GET', headers: init.headers, body: init.body, redirect: 'manual' });
}

function tusCreate(token: string, length: number) {
  const metadata = `filename ${Buffer.from('scan.pdf').toString('base64')}`;
  return visit(`/s/${token}/tus`, { method: 'POST', headers: { ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': metadata } });
}

function tusPatch(location: string, bytes: Uint8Array) {
  return visit(location, {
    method: 'PATCH',
    headers: { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    body: bytes,
  });
}

function dropForm(): FormData {
  const form = new FormData();
  form.append('file', new File(['dropped'], 'dropped.txt'));
  return form;
}

describe("a drop link's download cap", () => {
  test('once its downloads are used up, the link takes no more uploads (410); a started tus upload can still be deleted', async () => {
    const { token, folderId } = await dropLink({ mode: 'view_upload', maxDownloads: 1 });
    const file = await upload(owner.client, 'brief.txt', 'the brief', { parentId: folderId });
    const started = await tusCreate(token, 5);
    expect(started.status).toBe(201);
    const location = started.headers.get('location')!;
    expect((await visit(`/s/${token}/file/${file.id}`)).status).toBe(200);

    const dropped = () => visit(`/s/${token}/upload`, { method: 'POST', headers: { accept: 'application/json' }, body: dropForm() });
    const form = await dropped();
    expect(form.status).toBe(410);
    expect((await json(form)).message).toMatch(/download/i);
    expect((await tusCreate(token, 5)).status).toBe(410);
    expect((await tusPatch(location, new TextEncoder().encode('hello'))).status).toBe(410);
    expect((await visit(location, { method: 'HEAD', headers: TUS })).status).toBe(200);
    expect((await visit(location, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await listAll(owner.client, `/api/files?parentId=${folderId}`)).map((i) => i.name)).toEqual(['brief.txt']);

    // Raising the cap opens the link again, uploads included.
    expect((await owner.client.send('PATCH', `/api/files/share/links/${token}`, { maxDownloads: 2 })).status).toBe(200);
    expect((await dropped()).status).toBe(201);
  });
});

describe('X-HTTP-Method-Override through a link', () => {
  test('a PATCH sent as POST to a drop upload stores its bytes and makes the file, as a PATCH does', async () => {
    const { token, folderId } = await dropLink({ mode: 'view_upload' });
    const started = await tusCreate(token, 5);
    expect(started.status).toBe(201);
    const sent = await visit(started.headers.get('location')!, {
      method: 'POST',
      headers: { ...TUS, 'X-HTTP-Method-Override': 'PATCH', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: new TextEncoder().encode('%PDF-'),
    });
    expect([sent.status, sent.headers.get('upload-offset')]).toEqual([204, '5']);
    expect((await listAll(owner.client, `/api/files?parentId=${folderId}`)).map((i) => i.name)).toEqual(['scan.pdf']);
  });

  test('past the download cap, a DELETE sent as POST still ends the upload (as a DELETE does) and a PATCH sent as POST is 410', async () => {
    const { token, folderId } = await dropLink({ mode: 'view_upload', maxDownloads: 1 });
    const file = await upload(owner.client, 'brief.txt', 'the brief', { parentId: folderId });
    const location = (await tusCreate(token, 5)).headers.get('location')!;
    expect((await visit(`/s/${token}/file/${file.id}`)).status).toBe(200);
    const posted = (method: string, body?: Uint8Array) =>
      visit(location, {
        method: 'POST',
        headers: { ...TUS, 'X-HTTP-Method-Override': method, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
        body,
      });
    expect((await posted('PATCH', new TextEncoder().encode('hello'))).status).toBe(410);
    expect((await posted('delete')).status).toBe(204);
    expect((await visit(location, { method: 'HEAD', headers: TUS })).status).toBe(404);
  });
});
