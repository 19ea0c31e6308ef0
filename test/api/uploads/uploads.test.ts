import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import { folder, listAll, rowCount, storedObjectFiles, upload, uploadRaw } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { readMultipart } from '../../../src/http/multipart.ts';
import { AppError } from '../../../src/errors.ts';
import { eventually } from '../../helpers/eventually.ts';
import { createUpload } from '../../helpers/tus.ts';
import { RELATIVE_PATH_FOLDERS } from '../../../src/contract/names.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
});
afterAll(() => t.stop());

const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15,
  0xc4, 0x89,
]);
const MiB = 1024 * 1024;

function setLimit(accountId: string, bytes: number | null) {
  t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(bytes, accountId);
}

/** Waits until the server has finished cleaning up after a request it is still handling: no temp file left. */
// An upload's object is written in place: it is gone once its intent is (removed, then the intent forgotten).
const writing = () => t.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM upload_intents').get()!.n;
const settled = () => eventually(() => storedObjectFiles(t).temp.length === 0 && writing() === 0, { intervalMs: 20 });

describe('POST /api/files/upload', () => {
  test('answers the created item; the MIME type is detected from content, else the client type is kept', async () => {
    const o = await seed.owner(t);
    const png = await upload(o.client, 'picture.txt', PNG, { type: 'text/plain' });
    expect(png).toMatchObject({
      name: 'picture.txt',
      type: 'file',
      size: PNG.length,
      mimeType: 'image/png',
      parentId: null,
      starred: false,
      shared: false,
    });
    const text = await upload(o.client, 'notes.md', '# hello', { type: 'text/markdown' });
    expect(text.mimeType).toBe('text/markdown');
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(PNG.length + 7);
    const res = await o.client.get(`/api/files/${text.id}/download`);
    expect(await res.text()).toBe('# hello');
  });

  test('a taken name gets `base (n)ext` (.bashrc has no extension); lastModifiedTimes sets modified, invalid values are ignored', async () => {
    const o = await seed.owner(t);
    expect((await upload(o.client, 'report.tar.gz', 'a')).name).toBe('report.tar.gz');
    expect((await upload(o.client, 'REPORT.tar.gz', 'b')).name).toBe('REPORT.tar (1).gz');
    expect((await upload(o.client, '.bashrc', 'c')).name).toBe('.bashrc');
    expect((await upload(o.client, '.bashrc', 'd')).name).toBe('.bashrc (1)');
    const at = Date.parse('2020-02-02T02:02:02Z');
    expect((await upload(o.client, 'old.txt', 'x', { lastModified: String(at) })).modified).toBe(new Date(at).toISOString());
    const before = Date.now();
    const bad = await upload(o.client, 'bad-time.txt', 'x', { lastModified: 'yesterday' });
    expect(Date.parse(bad.modified)).toBeGreaterThanOrEqual(before - 1000);
  });

  test('into a folder; a missing parent → 404 and nothing stays', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'in');
    expect((await upload(o.client, 'x.txt', 'x', { parentId: dir.id })).parentId).toBe(dir.id);
    const objects = storedObjectFiles(t).objects.length;
    const res = await uploadRaw(o.client, 'y.txt', 'y', { parentId: 'no-such-folder-000000' });
    expect(res.status).toBe(404);
    expect(storedObjectFiles(t).objects.length).toBe(objects);
    expect(rowCount(t, 'account_id = ? AND name = ?', o.id, 'y.txt')).toBe(0);
  });

  test('no file → 400; not multipart → 400; an invalid file name → 400', async () => {
    const o = await seed.owner(t);
    const form = new FormData();
    form.append('parentId', '');
    const none = await o.client.request('/api/files/upload', { method: 'POST', body: form });
    expect(none.status).toBe(400);
    expect(await json(none)).toEqual({ message: 'No file uploaded' });
    expect((await o.client.post('/api/files/upload', { file: 'x' })).status).toBe(400);
    const bad = await uploadRaw(o.client, 'a:b.txt', 'x');
    expect(bad.status).toBe(400);
  });

  test('a body that ends without its final boundary → 400; no object, no temp file, no row, and the server goes on', async () => {
    const o = await seed.owner(t);
    const before = storedObjectFiles(t).objects.length;
    const boundary = 'cut-short';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`;
    for (const body of [`${head}${'x'.repeat(300_000)}`, `${head}whole\r\n`]) {
      const res = await o.client.request('/api/files/upload', {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({ message: 'The upload is not a valid multipart/form-data body' });
    }
    await settled();
    expect(storedObjectFiles(t).objects.length).toBe(before);
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
    expect((await uploadRaw(o.client, 'after.txt', 'fine')).status).toBe(200);
  });

  test("a file over the quota: the 413 names the file's size, not the multipart body's around it", async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 50_000);
    const res = await uploadRaw(o.client, 'over.bin', randomBytes(60_000));
    expect(res.status).toBe(413);
    expect(await json(res)).toEqual({ message: 'Storage limit exceeded. Required: 60000, available: 50000.' });
    // Past the megabyte counted after the limit, the end is not waited for: the declared length less what came before
    // the file and the closing boundary is the file's size, as the file is the form's last part.
    const dest = await folder(o.client, 'dest');
    setLimit(o.id, 1000);
    const big = await uploadRaw(o.client, 'big.bin', randomBytes(3 * MiB), { parentId: dest.id, lastModified: '1700000000000' });
    expect(big.status).toBe(413);
    expect(await json(big)).toEqual({ message: `Storage limit exceeded. Required: ${3 * MiB}, available: 1000.` });
    // A part after the file is counted in (never more than the request's length).
    const form = new FormData();
    form.append('file', new File([randomBytes(3 * MiB)], 'first.bin'));
    form.append('lastModifiedTimes', '1700000000000');
    const after = await o.client.request('/api/files/upload', { method: 'POST', body: form });
    expect(after.status).toBe(413);
    const required = Number(/Required: (\d+),/.exec((await json(after)).message)![1]);
    expect(required).toBeGreaterThan(3 * MiB);
    expect(required).toBeLessThan(3 * MiB + 1000);
    await settled();
    expect(rowCount(t, "account_id = ? AND type = 'file'", o.id)).toBe(0);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(0);
  });

  test("a large file over the quota whose body does not end as browsers end it (no last CRLF, an epilogue, no Content-Length): the 413's Required is within the documented bounds", async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 1000);
    const file = randomBytes(3 * MiB);
    const boundary = 'coffer-bound';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const required = async (tail: string) => {
      const res = await o.client.request('/api/files/upload', {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--${tail}`)]),
      });
      expect(res.status).toBe(413);
      return Number(/Required: (\d+),/.exec((await json(res)).message)![1]);
    };
    expect(await required('\r\n')).toBe(file.length);
    // The end is not waited for, so what follows the file is taken to be the closing boundary and its CRLF.
    expect(await required('')).toBe(file.length - 2);
    expect(await required('\r\nan epilogue, which RFC 2046 lets a sender add and a reader ignore\r\n')).toBe(
      file.length + '\r\nan epilogue, which RFC 2046 lets a sender add and a reader ignore\r\n'.length - 2,
    );
    const chunked = await o.client.request('/api/files/upload', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: new ReadableStream({
        start(c) {
          c.enqueue(Buffer.from(head));
          for (let i = 0; i < 3; i++) c.enqueue(file.subarray(i * MiB, (i + 1) * MiB));
          c.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    // Without a Content-Length nothing says where the file ends: the bytes read before the server stopped, a lower bound.
    expect(chunked.status).toBe(413);
    const read = Number(/Required: (\d+),/.exec((await json(chunked)).message)![1]);
    expect(read).toBeGreaterThan(1000 + MiB);
    expect(read).toBeLessThan(file.length);
    await settled();
    expect(rowCount(t, "account_id = ? AND type = 'file'", o.id)).toBe(0);
  });

  test('quota exceeded mid-stream → 413 with the contract message; no object, no temp file, no row, usage unchanged', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'small.bin', randomBytes(1000));
    setLimit(o.id, 2 * MiB);
    const before = storedObjectFiles(t);
    const res = await uploadRaw(o.client, 'big.bin', randomBytes(3 * MiB));
    expect(res.status).toBe(413);
    expect((await json(res)).message).toMatch(/^Storage limit exceeded\. Required: \d+, available: 2096152\.$/);
    await settled();
    expect(storedObjectFiles(t).objects.length).toBe(before.objects.length);
    expect(rowCount(t, 'account_id = ? AND name = ?', o.id, 'big.bin')).toBe(0);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(1000);
  });

  test('over the max upload size → 413 while streaming; nothing stays', async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.settings.set('maxUploadBytes', MiB);
    try {
      const before = storedObjectFiles(t).objects.length;
      const res = await uploadRaw(o.client, 'huge.bin', randomBytes(MiB + 1));
      expect(res.status).toBe(413);
      expect(await json(res)).toEqual({ message: `File too large. The maximum upload size is ${MiB} bytes.` });
      await settled();
      expect(storedObjectFiles(t).objects.length).toBe(before);
      expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
      expect((await uploadRaw(o.client, 'exact.bin', randomBytes(MiB))).status).toBe(200);
    } finally {
      t.server.ctx.services.settings.set('maxUploadBytes', 10 * 1024 ** 3);
    }
  });

  test('a client that hangs up mid-body (fetch abort) leaves no object, no temp file and no row', async () => {
    const o = await seed.owner(t);
    const before = storedObjectFiles(t).objects.length;
    const boundary = 'x-boundary-abort';
    const controller = new AbortController();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 0)
          c.enqueue(new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="abort.bin"\r\n\r\n`));
        c.enqueue(randomBytes(256 * 1024));
        sent += 256 * 1024;
        if (sent >= 4 * MiB) controller.abort();
        // A paced body, so the abort lands mid-upload.
        await Bun.sleep(2);
      },
    });
    const attempt = o.client.request('/api/files/upload', {
      method: 'POST',
      body,
      signal: controller.signal,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
    } as RequestInit);
    await expect(attempt).rejects.toThrow();
    await settled();
    expect(storedObjectFiles(t).objects.length).toBe(before);
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
  });

  test('a raw socket closed mid-body leaves nothing behind either', async () => {
    const o = await seed.owner(t);
    const before = storedObjectFiles(t).objects.length;
    const token = o.client.cookies.get('token')!;
    const boundary = 'raw-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="raw.bin"\r\n\r\n`;
    const port = new URL(t.url).port;
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: token=${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${50 * MiB}\r\n\r\n${head}`,
        );
        // The hang-up comes while the server stores the bytes; with S3 there is no local temp file to wait for.
        socket.write(randomBytes(2 * MiB), () => setTimeout(() => socket.destroy(), 100));
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    await settled();
    // The check is that nothing is published late: there is no event to wait for.
    await Bun.sleep(50);
    expect(storedObjectFiles(t).objects.length).toBe(before);
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
  });

  test('the abort surfaces as 499 {error: REQUEST_ABORTED, message: Upload cancelled by client}', async () => {
    const o = await seed.owner(t);
    const controller = new AbortController();
    const boundary = 'b';
    let step = 0;
    const request = new Request('http://localhost/api/files/upload', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
      body: new ReadableStream<Uint8Array>({
        pull(c) {
          if (step++ === 0)
            c.enqueue(new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`));
          else if (step < 5) c.enqueue(randomBytes(100_000));
          else {
            controller.abort();
            c.error(new Error('connection closed'));
          }
        },
      }),
      signal: controller.signal,
    } as RequestInit);
    const principal = t.server.ctx.services.sessions.authenticate(o.client.cookies.get('token')!, { ip: '127.0.0.1' }).principal;
    const before = storedObjectFiles(t).objects.length;
    const error = await t.server.ctx.services.uploads
      .upload(principal, { parts: readMultipart(request), signal: request.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(499);
    expect((error as AppError).body()).toEqual(errors.uploadAborted);
    expect(storedObjectFiles(t).objects.length).toBe(before);
    expect(storedObjectFiles(t).temp).toEqual([]);
  });
});

describe('POST /api/files/upload/bulk', () => {
  test('relativePaths recreate folders (reusing existing ones), clientIds are echoed, lastModifiedTimes apply per file', async () => {
    const o = await seed.owner(t);
    const root = await folder(o.client, 'dest');
    const existing = await folder(o.client, 'album', root.id);
    const at = Date.parse('2021-03-04T05:06:07Z');
    const form = new FormData();
    form.append('parentId', root.id);
    for (const [name, rel, cid, lm] of [
      ['a.txt', 'album/a.txt', 'c1', String(at)],
      ['b.txt', 'album/2020/b.txt', 'c2', 'garbage'],
      ['c.png', 'c.png', 'c3', ''],
    ]) {
      form.append('files', new File([name === 'c.png' ? PNG : name!], name!));
      form.append('relativePaths', rel!);
      form.append('clientIds', cid!);
      form.append('lastModifiedTimes', lm!);
    }
    const res = await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ total: 3, successful: 3, failedCount: 0, failed: [] });
    expect(body.files.map((f: any) => [f.name, f.clientId])).toEqual([
      ['a.txt', 'c1'],
      ['b.txt', 'c2'],
      ['c.png', 'c3'],
    ]);
    expect(body.files[0].parentId).toBe(existing.id);
    expect(body.files[0].modified).toBe(new Date(at).toISOString());
    expect(body.files[2]).toMatchObject({ parentId: root.id, mimeType: 'image/png' });
    const albums = await listAll(o.client, `/api/files?parentId=${root.id}`);
    expect(albums.filter((i) => i.type === 'folder').map((i) => i.name)).toEqual(['album']);
    const inner = await listAll(o.client, `/api/files?parentId=${existing.id}&sortBy=name&order=asc`);
    expect(inner.map((i) => i.name)).toEqual(['2020', 'a.txt']);
    expect(body.files[1].parentId).toBe(inner[0].id);
  });

  test(`a relative path naming more than ${RELATIVE_PATH_FOLDERS} folders fails alone, before any folder is made; at the limit the folders are made`, async () => {
    const o = await seed.owner(t);
    const form = new FormData();
    form.append('files', new File(['too deep'], 'far.txt'));
    form.append('relativePaths', `${'b/'.repeat(RELATIVE_PATH_FOLDERS + 1)}far.txt`);
    form.append('files', new File(['deep enough'], 'near.txt'));
    form.append('relativePaths', `${'a/'.repeat(RELATIVE_PATH_FOLDERS)}near.txt`);
    const tooDeep = `A relative path may name at most ${RELATIVE_PATH_FOLDERS} folders; upload what lies deeper from a folder further down`;
    const before = rowCount(t, "type = 'folder'");
    const body = await json(await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
    expect(body).toMatchObject({ total: 2, successful: 1, failedCount: 1 });
    expect(body.failed).toEqual([{ fileName: 'far.txt', error: tooDeep, clientId: null }]);
    expect(rowCount(t, "type = 'folder'")).toBe(before + RELATIVE_PATH_FOLDERS);
    const tus = await createUpload(o.client, 1, { filename: 'far.txt', relativePath: `${'b/'.repeat(RELATIVE_PATH_FOLDERS + 1)}far.txt` });
    expect(tus.status).toBe(400);
    expect(await json(tus)).toEqual({ message: tooDeep });
  });

  test('a file over the limit fails alone and is reported in failed; the others are stored', async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.settings.set('maxUploadBytes', MiB);
    try {
      const before = storedObjectFiles(t).objects.length;
      const form = new FormData();
      form.append('files', new File(['fine'], 'ok.txt'));
      form.append('clientIds', 'one');
      form.append('files', new File([randomBytes(MiB + 10)], 'too-big.bin'));
      form.append('clientIds', 'two');
      form.append('files', new File(['bad'], 'bad|name.txt'));
      form.append('clientIds', 'three');
      form.append('files', new File(['also fine'], 'ok2.txt'));
      form.append('clientIds', 'four');
      const body = await json(await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
      expect(body).toMatchObject({ total: 4, successful: 2, failedCount: 2 });
      expect(body.files.map((f: any) => f.clientId)).toEqual(['one', 'four']);
      expect(body.failed).toEqual([
        { fileName: 'too-big.bin', error: `File too large. The maximum upload size is ${MiB} bytes.`, clientId: 'two' },
        { fileName: 'bad|name.txt', error: expect.stringContaining('Invalid file name'), clientId: 'three' },
      ]);
      await settled();
      expect(storedObjectFiles(t).objects.length).toBe(before + 2);
    } finally {
      t.server.ctx.services.settings.set('maxUploadBytes', 10 * 1024 ** 3);
    }
  });

  test('quota runs out part-way: later files fail with 413 messages, earlier ones stay', async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 1500);
    const form = new FormData();
    for (let i = 0; i < 3; i++) form.append('files', new File([randomBytes(600)], `f${i}.bin`));
    const body = await json(await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
    expect(body).toMatchObject({ total: 3, successful: 2, failedCount: 1 });
    expect(body.failed[0].error).toBe('Storage limit exceeded. Required: 600, available: 300.');
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(1200);
  });

  test("a large file over the quota, not the last part: the 413 names that file's size, and the next file still arrives", async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 1000);
    const form = new FormData();
    form.append('files', new File([randomBytes(3 * MiB)], 'big.bin'));
    form.append('files', new File([randomBytes(500)], 'small.bin'));
    const body = await json(await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
    expect(body).toMatchObject({ total: 2, successful: 1, failedCount: 1 });
    expect(body.failed[0]).toMatchObject({ fileName: 'big.bin', error: `Storage limit exceeded. Required: ${3 * MiB}, available: 1000.` });
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(500);
  });
});

describe('POST /api/files/upload/check', () => {
  test('{allowed: true} when it fits; 413 over the quota or the max upload size; 422 for a bad size', async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 1000);
    expect(await json(await o.client.post('/api/files/upload/check', { fileSize: 1000 }))).toEqual({ allowed: true });
    const over = await o.client.post('/api/files/upload/check', { fileSize: 1001 });
    expect(over.status).toBe(413);
    expect(await json(over)).toEqual({ message: 'Storage limit exceeded. Required: 1001, available: 1000.' });
    setLimit(o.id, null);
    expect((await o.client.post('/api/files/upload/check', { fileSize: 11 * 1024 ** 3 })).status).toBe(413);
    for (const body of [{}, { fileSize: -1 }, { fileSize: 'big' }, { fileSize: 1.5 }]) {
      expect((await o.client.post('/api/files/upload/check', body)).status).toBe(422);
    }
  });
});

describe('POST /api/files/:id/replace and /:id/derived', () => {
  test('replace keeps id and name, updates size, modified and access time, re-detects the type and keeps the old object as a version', async () => {
    const o = await seed.owner(t);
    const original = await upload(o.client, 'doc.txt', 'version one', { type: 'text/plain' });
    const before = storedObjectFiles(t).objects.length;
    const form = new FormData();
    form.append('file', new File([PNG], 'whatever.bin'));
    const res = await o.client.request(`/api/files/${original.id}/replace`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const replaced = await json(res);
    expect(replaced).toMatchObject({ id: original.id, name: 'doc.txt', size: PNG.length, mimeType: 'image/png' });
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(PNG.length + 11);
    expect(new Uint8Array(await (await o.client.get(`/api/files/${original.id}/download`)).arrayBuffer())).toEqual(PNG);
    await t.server.worker.drain();
    expect(storedObjectFiles(t).objects.length).toBe(before + 1);

    const folderItem = await folder(o.client, 'dir');
    const onFolder = await o.client.request(`/api/files/${folderItem.id}/replace`, { method: 'POST', body: form });
    expect(onFolder.status).toBe(400);
    const empty = new FormData();
    empty.append('note', 'no file');
    expect((await o.client.request(`/api/files/${original.id}/replace`, { method: 'POST', body: empty })).status).toBe(400);
    expect((await o.client.request('/api/files/missing-file-id-000000/replace', { method: 'POST', body: form })).status).toBe(404);
  });

  test('derived creates a sibling (colliding names get (n)); quota applies; the original is unchanged', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'docs');
    const source = await upload(o.client, 'draft.txt', 'source', { parentId: dir.id });
    const form = new FormData();
    form.append('file', new File(['derived content'], 'draft.txt'));
    const res = await o.client.request(`/api/files/${source.id}/derived`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const derived = await json(res);
    expect(derived).toMatchObject({ name: 'draft (1).txt', parentId: dir.id, size: 15 });
    expect(await (await o.client.get(`/api/files/${source.id}/download`)).text()).toBe('source');
    setLimit(o.id, 25);
    const over = await o.client.request(`/api/files/${source.id}/derived`, { method: 'POST', body: form });
    expect(over.status).toBe(413);
    const badName = new FormData();
    badName.append('file', new File(['x'], 'a*b.txt'));
    expect((await o.client.request(`/api/files/${source.id}/derived`, { method: 'POST', body: badName })).status).toBe(400);
  });
});
