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

describe('a drop link ended while files arrive through it', () => {
  test('a form upload or the last tus PATCH still arriving when the owner stops sharing the folder is refused (404); nothing is kept', async () => {
    for (const door of ['form', 'tus'] as const) {
      const { token, folderId } = await dropLink({ mode: 'upload' });
      let release!: () => void;
      const held = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(new Uint8Array(1000));
          await new Promise<void>((r) => (release = r));
          c.enqueue(new Uint8Array(1000));
          c.close();
        },
      });
      let sent: Promise<Response>;
      if (door === 'tus') {
        const location = (await tusCreate(token, 2000)).headers.get('location')!;
        sent = fetch(t.url + location, {
          method: 'PATCH',
          headers: { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': '2000' },
          body: held,
        });
      } else {
        const boundary = 'dropboundary';
        const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
        const tail = `\r\n--${boundary}--\r\n`;
        const body = new ReadableStream<Uint8Array>({
          async start(c) {
            c.enqueue(new TextEncoder().encode(head));
            const reader = held.getReader();
            for (let r = await reader.read(); !r.done; r = await reader.read()) c.enqueue(r.value);
            c.enqueue(new TextEncoder().encode(tail));
            c.close();
          },
        });
        sent = fetch(`${t.url}/s/${token}/upload`, {
          method: 'POST',
          headers: { accept: 'application/json', 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
        });
      }
      await new Promise((r) => setTimeout(r, 50));
      expect((await owner.client.post('/api/files/share', { ids: [folderId], shared: false })).status).toBe(200);
      release();
      const res = await sent;
      expect({ door, status: res.status }).toEqual({ door, status: 404 });
      expect(await listAll(owner.client, `/api/files?parentId=${folderId}`)).toEqual([]);
    }
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
