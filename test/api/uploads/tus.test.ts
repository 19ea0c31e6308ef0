import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import { downloaded, folder, listAll, readZip, upload, uploadRaw } from '../../helpers/files.ts';
import { ageObject } from '../../helpers/stored-files.ts';
import * as seed from '../../helpers/seed.ts';
import { createUpload, filesContaining, headUpload, patchUpload, stagedFiles, TUS, tusUpload } from '../../helpers/tus.ts';
import { ROUTES } from '../../../src/http/policy.ts';
import { UPLOADS_PER_LOGIN } from '../../../src/services/resumable-uploads/tus-uploads.ts';
import { eventually } from '../../helpers/eventually.ts';

let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s), { startWorker: false });

const MiB = 1024 * 1024;
const PDF = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1');

function setLimit(accountId: string, bytes: number | null) {
  t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(bytes, accountId);
}

/** Creates an upload by hand and returns its location. */
async function created(client: TestClient, length: number, meta: Record<string, string> = { filename: 'file.bin' }): Promise<string> {
  const res = await createUpload(client, length, meta);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return res.headers.get('location')!;
}

describe('OPTIONS /api/files/tus', () => {
  test('describes the server: version, extensions, the max upload size; CORS stays closed', async () => {
    const res = await t.client().request('/api/files/tus', {
      method: 'OPTIONS',
      headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'PATCH' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-resumable')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe('creation,creation-with-upload,termination,expiration');
    expect(res.headers.get('tus-max-size')).toBe(String(t.server.ctx.services.settings.get('maxUploadBytes')));
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('tus-js-client against the server', () => {
  test('one request: the file is created as POST /upload makes it (type from content, modified, event, audit) and downloads byte-exact', async () => {
    const o = await seed.owner(t);
    const data = Buffer.concat([PDF, randomBytes(3 * MiB)]);
    const at = Date.parse('2021-03-04T05:06:07Z');
    const { done } = tusUpload(t.url, o.client, data, {
      metadata: { filename: 'holiday.txt', filetype: 'text/plain', lastModified: String(at) },
    });
    const { url, itemId } = await done;
    expect(itemId).toBeTruthy();
    expect(url).toStartWith(`${t.url}/api/files/tus/`);
    expect(url.split('/').at(-1)!.length).toBeGreaterThanOrEqual(32);
    const [item] = await listAll(o.client, '/api/files');
    expect(item).toMatchObject({
      id: itemId,
      name: 'holiday.txt',
      size: data.length,
      mimeType: 'application/pdf',
      modified: new Date(at).toISOString(),
    });
    expect(await downloaded(o.client, itemId!)).toEqual(data);
    expect(t.server.ctx.services.quota.usage(o.id)).toMatchObject({ used: data.length });
    // A client that missed the last answer asks for the file.
    const result = await o.client.get(new URL(url).pathname);
    expect(result.status).toBe(200);
    expect((await json(result)).item).toMatchObject({ id: itemId, name: 'holiday.txt' });
    t.server.ctx.services.audit.flush();
    expect(t.server.ctx.services.audit.list({ action: 'file.upload', user: o.id, limit: 10 })).toMatchObject([
      { targetId: itemId, details: { name: 'holiday.txt' } },
    ]);
  });

  test('1 MiB chunks: every PATCH acknowledged, the file byte-exact; text/plain kept when the content says nothing', async () => {
    const o = await seed.owner(t);
    const data = Buffer.from('plain text line\n'.repeat(360_000));
    const accepted: number[] = [];
    const { done } = tusUpload(t.url, o.client, data, {
      chunkSize: MiB,
      metadata: { filename: 'notes.txt', filetype: 'text/plain' },
      onChunkComplete: (_size, bytesAccepted) => accepted.push(bytesAccepted),
    });
    const { itemId } = await done;
    expect(accepted).toEqual([1, 2, 3, 4, 5].map((n) => n * MiB).concat([data.length]));
    const [item] = await listAll(o.client, '/api/files');
    expect(item).toMatchObject({ name: 'notes.txt', mimeType: 'text/plain' });
    expect(await downloaded(o.client, itemId!)).toEqual(data);
    expect(stagedFiles(t.dataDir)).toEqual([]);
  });

  test('creation-with-upload, and an empty file (complete at creation)', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(200_000);
    const first = await tusUpload(t.url, o.client, data, { uploadDataDuringCreation: true, metadata: { filename: 'with-post.bin' } }).done;
    expect(await downloaded(o.client, first.itemId!)).toEqual(data);
    const empty = await tusUpload(t.url, o.client, Buffer.alloc(0), { metadata: { filename: 'empty.txt' } }).done;
    expect(empty.itemId).toBeTruthy();
    expect((await downloaded(o.client, empty.itemId!)).length).toBe(0);
  });

  test('parallel uploads of one account all arrive byte-exact', async () => {
    const o = await seed.owner(t);
    const files = Array.from({ length: 4 }, (_, i) => ({ name: `p${i}.bin`, data: randomBytes(MiB + i * 70_001) }));
    const runs = files.map((f) => tusUpload(t.url, o.client, f.data, { chunkSize: 512 * 1024, metadata: { filename: f.name } }).done);
    const results = await Promise.all(runs);
    for (const [i, r] of results.entries()) expect(await downloaded(o.client, r.itemId!)).toEqual(files[i]!.data);
  });

  test('X-HTTP-Method-Override (tus-js-client overridePatchMethod): PATCH and DELETE sent as POST do what they name', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(700_000);
    const { itemId } = await tusUpload(t.url, o.client, data, {
      overridePatchMethod: true,
      chunkSize: 256 * 1024,
      metadata: { filename: 'override.bin' },
    }).done;
    expect(await downloaded(o.client, itemId!)).toEqual(data);
    const location = await created(o.client, 10);
    const as = (method: string) => ({ method: 'POST', headers: { ...TUS, 'X-HTTP-Method-Override': method } });
    const other = await o.client.request(location, as('PUT'));
    expect(other.status).toBe(405);
    expect((await json(other)).message).toBe(
      'POST to an upload sends its bytes or ends it: name the method in X-HTTP-Method-Override: PATCH or DELETE',
    );
    // Another account: 404 for both, and the upload is untouched; a sub-user without the upload permission: 403.
    const stranger = await seed.owner(t);
    const viewer = await seed.subUser(t, o, ['files.download']);
    const patch = {
      method: 'POST',
      headers: { ...TUS, 'X-HTTP-Method-Override': 'PATCH', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: new TextEncoder().encode('0123456789'),
    };
    expect((await stranger.client.request(location, patch)).status).toBe(404);
    expect((await stranger.client.request(location, as('DELETE'))).status).toBe(404);
    expect((await viewer.client.request(location, patch)).status).toBe(403);
    expect((await headUpload(o.client, location)).headers.get('upload-offset')).toBe('0');
    expect((await o.client.request(location, as('DELETE'))).status).toBe(204);
    expect((await headUpload(o.client, location)).status).toBe(404);
  });

  test('concatenation (tus-js-client parallelUploads) is not offered: each part is refused (400) before a byte, no part becomes a file', async () => {
    const o = await seed.owner(t);
    const run = tusUpload(t.url, o.client, randomBytes(300_000), {
      parallelUploads: 2,
      metadataForPartialUploads: { filename: 'part.bin' },
      metadata: { filename: 'whole.bin' },
    });
    const err = await run.done.then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toContain('response code: 400');
    expect(err?.message).toContain('Upload-Concat');
    expect(await listAll(o.client, '/api/files')).toEqual([]);
    expect(t.server.ctx.repos.tusUploads.reserved(o.id)).toBe(0);
    const final = await o.client.request('/api/files/tus', {
      method: 'POST',
      headers: { ...TUS, 'Upload-Concat': 'final;/api/files/tus/a /api/files/tus/b', 'Upload-Metadata': 'filename eA==' },
    });
    expect(final.status).toBe(400);
    expect((await json(final)).message).toBe(
      'Concatenating uploads (Upload-Concat) is not supported: send the file as one upload, in as many PATCH requests as you like',
    );
  });

  test('relativePath recreates folders below parentId, reusing existing ones; a taken name gets `name (1).ext`', async () => {
    const o = await seed.owner(t);
    const into = await folder(o.client, 'Uploads');
    const trip = await folder(o.client, 'trip', into.id);
    await upload(o.client, 'report.pdf', 'existing', { parentId: into.id });
    const send = (name: string, relativePath: string) =>
      tusUpload(t.url, o.client, randomBytes(1000), { metadata: { filename: name, parentId: into.id, relativePath } }).done;
    await send('a.jpg', 'trip/day1/a.jpg');
    await send('b.txt', 'trip/day2/b.txt');
    await send('c.txt', 'trip/day1/c.txt');
    const { itemId } = await tusUpload(t.url, o.client, randomBytes(10), { metadata: { filename: 'report.pdf', parentId: into.id } }).done;
    const top = await listAll(o.client, `/api/files?parentId=${into.id}`);
    expect(top.map((i) => i.name).sort()).toEqual(['report (1).pdf', 'report.pdf', 'trip']);
    expect(top.find((i) => i.name === 'report (1).pdf').id).toBe(itemId);
    expect(top.find((i) => i.name === 'trip').id).toBe(trip.id);
    const days = await listAll(o.client, `/api/files?parentId=${trip.id}`);
    expect(days.map((i) => i.name).sort()).toEqual(['day1', 'day2']);
    const day1 = await listAll(o.client, `/api/files?parentId=${days.find((d) => d.name === 'day1').id}`);
    expect(day1.map((i) => i.name).sort()).toEqual(['a.jpg', 'c.txt']);
  });
});

describe('creation: every check before a byte is accepted', () => {
  test('no session → 401; a sub-user without files.upload → 403 naming it; the body is never read', async () => {
    const res = await createUpload(t.client(), 10, { filename: 'x' });
    expect(res.status).toBe(401);
    const sub = await seed.subUser(t, admin, ['files.download']);
    const denied = await createUpload(sub.client, 10, { filename: 'x' });
    expect(denied.status).toBe(403);
    expect(await json(denied)).toEqual(errors.permission('Upload & create'));
    const location = await created(admin.client, 10);
    for (const [method, headers] of [
      ['HEAD', TUS],
      ['PATCH', { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }],
      ['DELETE', TUS],
    ] as const) {
      const r = await sub.client.request(location, { method, headers, body: method === 'PATCH' ? 'abc' : undefined });
      expect(`${method} ${r.status}`).toBe(`${method} 403`);
    }
    const allowed = await seed.subUser(t, admin, ['files.upload']);
    // A sub-user works on its owner's uploads (one account).
    expect((await headUpload(allowed.client, location)).status).toBe(200);
    const { itemId } = await tusUpload(t.url, allowed.client, randomBytes(5000), { metadata: { filename: 'by-sub.bin' } }).done;
    expect(itemId).toBeTruthy();
  });

  test('a replacement needs Modify at every PATCH, not only at creation: taken away mid-upload, or another login without it, is 403 and the file stays', async () => {
    const o = await seed.owner(t);
    const target = await upload(o.client, 'report.txt', 'the original');
    const editor = await seed.subUser(t, o, ['files.upload', 'files.edit']);
    const location = await created(editor.client, 8, { filename: 'report.txt', replaceId: target.id });
    expect((await patchUpload(editor.client, location, 0, Buffer.from('repl'))).status).toBe(204);
    // Another login of the account that may upload but not modify cannot finish it.
    const uploader = await seed.subUser(t, o, ['files.upload']);
    const refused = await patchUpload(uploader.client, location, 4, Buffer.from('aced'));
    expect(refused.status).toBe(403);
    expect(await json(refused)).toEqual(errors.permission('Modify'));
    // Nor can the sender once the owner takes Modify away.
    expect((await o.client.put(`/api/user/sub-users/${editor.id}`, { permissions: ['files.upload'] })).status).toBe(200);
    expect((await patchUpload(editor.client, location, 4, Buffer.from('aced'))).status).toBe(403);
    expect((await downloaded(o.client, target.id)).toString()).toBe('the original');
    // Given back, the upload goes on where it stood.
    expect((await o.client.put(`/api/user/sub-users/${editor.id}`, { permissions: ['files.upload', 'files.edit'] })).status).toBe(200);
    expect((await patchUpload(editor.client, location, 4, Buffer.from('aced'))).status).toBe(204);
    expect((await downloaded(o.client, target.id)).toString()).toBe('replaced');
  });

  test('parentId must be a folder of the account (404); names follow the upload rules (400); filename is required', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const theirs = await folder(other.client, 'theirs');
    expect((await createUpload(o.client, 10, { filename: 'a.txt', parentId: theirs.id })).status).toBe(404);
    expect((await createUpload(o.client, 10, { filename: 'a.txt', parentId: 'no-such-folder-00000' })).status).toBe(404);
    const file = await upload(o.client, 'plain.txt', 'x');
    expect((await createUpload(o.client, 10, { filename: 'a.txt', parentId: file.id })).status).toBe(404);
    const badName = await createUpload(o.client, 10, { filename: 'what?.txt' });
    expect(badName.status).toBe(400);
    expect((await json(badName)).message).toContain('Invalid file name');
    expect((await createUpload(o.client, 10, { filename: 'a.txt', relativePath: 'ok/b*d/a.txt' })).status).toBe(400);
    const none = await createUpload(o.client, 10, {});
    expect(none.status).toBe(400);
    expect((await json(none)).message).toBe('Upload-Metadata must name the file: filename, base64-encoded');
    expect(t.server.ctx.repos.tusUploads.reserved(o.id)).toBe(0);
  });

  test('protocol: Tus-Resumable required (412), Upload-Length whole (400), deferred length refused, metadata well formed', async () => {
    const c = admin.client;
    const noVersion = await c.request('/api/files/tus', {
      method: 'POST',
      headers: { 'Upload-Length': '5', 'Upload-Metadata': 'filename eA==' },
    });
    expect(noVersion.status).toBe(412);
    expect(noVersion.headers.get('tus-version')).toBe('1.0.0');
    for (const length of ['', '-1', '1.5', 'abc', '99999999999999999']) {
      const r = await c.request('/api/files/tus', {
        method: 'POST',
        headers: { ...TUS, 'Upload-Length': length, 'Upload-Metadata': 'filename eA==' },
      });
      expect(`${length}: ${r.status}`).toBe(`${length}: 400`);
    }
    const deferred = await c.request('/api/files/tus', {
      method: 'POST',
      headers: { ...TUS, 'Upload-Defer-Length': '1', 'Upload-Metadata': 'filename eA==' },
    });
    expect(deferred.status).toBe(400);
    // Not UTF-8 (the name would have been made of replacement characters), and a base64 length no encoder gives.
    const notUtf8 = `filename ${Buffer.from([0xff, 0xfe, 0x41, 0x2e, 0x74]).toString('base64')}`;
    for (const meta of ['filename !!!', 'filename eA==,filename eQ==', 'filename a b', notUtf8, 'filename eHh4e']) {
      const r = await c.request('/api/files/tus', { method: 'POST', headers: { ...TUS, 'Upload-Length': '1', 'Upload-Metadata': meta } });
      expect(`${meta}: ${r.status}`).toBe(`${meta}: 400`);
      expect((await json(r)).message).toBe(
        'Upload-Metadata must be comma-separated pairs of a key and a base64 value (of UTF-8 text), each key once',
      );
    }
    // Unpadded base64 (some clients send it) and non-ASCII names are fine.
    const unpadded = await c.request('/api/files/tus', {
      method: 'POST',
      headers: {
        ...TUS,
        'Upload-Length': '1',
        'Upload-Metadata': `filename ${Buffer.from('Grüße.txt').toString('base64').replace(/=+$/, '')}`,
      },
    });
    expect(unpadded.status).toBe(201);
    expect(t.server.ctx.repos.tusUploads.get(unpadded.headers.get('location')!.split('/').at(-1)!)!.name).toBe('Grüße.txt');
  });

  test('Upload-Length over the max upload size → 413 before any byte; Upload-Expires is 15 minutes on until the first byte', async () => {
    const max = t.server.ctx.services.settings.get('maxUploadBytes');
    const res = await createUpload(admin.client, max + 1, { filename: 'huge.bin' });
    expect(res.status).toBe(413);
    expect((await json(res)).message).toBe(`File too large. The maximum upload size is ${max} bytes.`);
    const ok = await createUpload(admin.client, 100, { filename: 'small.bin' });
    expect(ok.status).toBe(201);
    const expires = Date.parse(ok.headers.get('upload-expires')!);
    expect(expires).toBeGreaterThan(Date.now() + 14 * 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
    expect(ok.headers.get('location')).toMatch(/^\/api\/files\/tus\/[A-Za-z0-9_-]{32}$/);
  });
});

describe('unfinished uploads per login', () => {
  test(`a login holds at most ${UPLOADS_PER_LOGIN} (429 naming the way out); another login of the account has its own; a cancelled one makes room`, async () => {
    const o = await seed.owner(t);
    const first = await created(o.client, 10);
    const repo = t.server.ctx.repos.tusUploads;
    const row = repo.get(first.split('/').at(-1)!)!;
    // The rest are copies of the first row: a thousand creations through HTTP would only take longer.
    t.server.ctx.db.$client.transaction(() => {
      for (let i = 1; i < UPLOADS_PER_LOGIN; i++) repo.insert({ ...row, id: `${row.id}-${i}`, storageKey: `${row.storageKey}-${i}` });
    })();
    const refused = await createUpload(o.client, 10, { filename: 'one-more.bin' });
    expect(refused.status).toBe(429);
    expect((await json(refused)).message).toBe(
      `You have ${UPLOADS_PER_LOGIN} unfinished resumable uploads, the most a login may have; finish or cancel some (DELETE their URLs), then try again`,
    );
    const sub = await seed.subUser(t, o, ['files.upload']);
    expect((await createUpload(sub.client, 10, { filename: 'sub.bin' })).status).toBe(201);
    expect((await o.client.request(first, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await createUpload(o.client, 10, { filename: 'one-more.bin' })).status).toBe(201);
  });
});

describe('quota: the whole Upload-Length is reserved at creation', () => {
  test('two parallel creations cannot both fit; the reservation holds off multipart uploads too and ends with the upload', async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 10 * MiB);
    const [a, b] = await Promise.all([
      createUpload(o.client, 6 * MiB, { filename: 'a' }),
      createUpload(o.client, 6 * MiB, { filename: 'b' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 413]);
    const refused = a.status === 413 ? a : b;
    expect((await json(refused)).message).toBe(`Storage limit exceeded. Required: ${6 * MiB}, available: ${4 * MiB}.`);
    const location = (a.status === 201 ? a : b).headers.get('location')!;
    const storage = await json(await o.client.get('/api/user/storage'));
    expect(storage).toEqual({ used: 0, total: 10 * MiB, free: 4 * MiB, versions: 0 });
    expect((await uploadRaw(o.client, 'five.bin', randomBytes(5 * MiB))).status).toBe(413);
    // Many creations at once: the reserved total never passes the limit.
    setLimit(o.id, 20 * MiB);
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => createUpload(o.client, 3 * MiB, { filename: `m${i}` })));
    expect(many.filter((r) => r.status === 201).length).toBe(4);
    expect(t.server.ctx.repos.tusUploads.reserved(o.id)).toBe(18 * MiB);
    for (const r of many.filter((m) => m.status === 201))
      await o.client.request(r.headers.get('location')!, { method: 'DELETE', headers: TUS });
    expect((await o.client.request(location, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect(t.server.ctx.repos.tusUploads.reserved(o.id)).toBe(0);
    expect((await uploadRaw(o.client, 'five.bin', randomBytes(5 * MiB))).status).toBe(200);
  });

  test('completion turns the reservation into usage; the limit is checked as it stands then, the upload kept when it no longer fits', async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 2 * MiB);
    const data = randomBytes(MiB + 5);
    const location = await created(o.client, data.length);
    // Lowered by the admin while the bytes arrive: the completing PATCH is refused, as a single upload would be.
    setLimit(o.id, 1000);
    const refused = await patchUpload(o.client, location, 0, data);
    expect(refused.status).toBe(413);
    expect((await json(refused)).message).toBe(`Storage limit exceeded. Required: ${data.length}, available: 1000.`);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(0);
    expect(await listAll(o.client, '/api/files')).toEqual([]);
    // Raised again: the stored bytes become the file at the client's next HEAD, nothing sent twice.
    setLimit(o.id, 2 * MiB);
    const head = await headUpload(o.client, location);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe(String(data.length));
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(data.length);
    expect(t.server.ctx.repos.tusUploads.reserved(o.id)).toBe(0);
  });
});

describe('PATCH', () => {
  test('offsets must continue where the upload stands (409 with the right offset); bytes past Upload-Length → 413', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(300_000);
    const location = await created(o.client, data.length);
    const first = await patchUpload(o.client, location, 0, data.subarray(0, 100_000));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe('100000');
    expect(first.headers.get('tus-resumable')).toBe('1.0.0');
    expect(Date.parse(first.headers.get('upload-expires')!)).toBeGreaterThan(Date.now());
    for (const wrong of [0, 99_999, 100_001, 300_000]) {
      const r = await patchUpload(o.client, location, wrong, data.subarray(wrong, wrong + 10));
      expect(r.status).toBe(409);
      expect(r.headers.get('upload-offset')).toBe('100000');
    }
    const tooMuch = await patchUpload(o.client, location, 100_000, Buffer.concat([data.subarray(100_000), Buffer.from('extra')]));
    expect(tooMuch.status).toBe(413);
    const head = await headUpload(o.client, location);
    expect(head.headers.get('upload-offset')).toBe('100000');
    expect(head.headers.get('upload-length')).toBe('300000');
    expect(head.headers.get('cache-control')).toBe('no-store');
    const rest = await patchUpload(o.client, location, 100_000, data.subarray(100_000));
    expect(rest.status).toBe(204);
    const itemId = rest.headers.get('upload-item-id')!;
    expect(rest.headers.get('upload-expires')).toBeNull();
    expect(await downloaded(o.client, itemId)).toEqual(data);
    // Once complete: HEAD reports the whole length and the file; a PATCH at the end changes nothing.
    const after = await headUpload(o.client, location);
    expect(after.headers.get('upload-offset')).toBe('300000');
    expect(after.headers.get('upload-item-id')).toBe(itemId);
    const again = await patchUpload(o.client, location, 300_000, new Uint8Array(0));
    expect(again.status).toBe(204);
    expect(again.headers.get('upload-item-id')).toBe(itemId);
  });

  test('a PATCH sent with a Content-Encoding is 415 naming it: the compressed bytes are not taken as the file, the offset stays', async () => {
    const o = await seed.owner(t);
    const data = Buffer.from('plain text, sent compressed. '.repeat(100));
    const location = await created(o.client, data.length);
    const packed = await patchUpload(o.client, location, 0, Bun.gzipSync(data), { 'Content-Encoding': 'gzip' });
    expect({ status: packed.status, body: await json(packed) }).toEqual({
      status: 415,
      body: { message: 'Content-Encoding gzip is not supported: send the request body uncompressed' },
    });
    expect((await headUpload(o.client, location)).headers.get('upload-offset')).toBe('0');
    const plain = await patchUpload(o.client, location, 0, data);
    expect(plain.status).toBe(204);
    expect(await downloaded(o.client, plain.headers.get('upload-item-id')!)).toEqual(data);
  });

  test('a HEAD while the completing PATCH creates the file waits for it and names the file, as the PATCH does', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(100_000);
    const location = await created(o.client, data.length);
    const uploads = t.server.ctx.services.uploads;
    const commit = uploads.commitResumed;
    const { promise: reached, resolve: enter } = Promise.withResolvers<void>();
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    uploads.commitResumed = async (...args) => {
      enter();
      await held;
      return commit.apply(uploads, args);
    };
    try {
      const patch = patchUpload(o.client, location, 0, data);
      await reached;
      const head = headUpload(o.client, location);
      await Bun.sleep(200);
      release();
      const [p, h] = [await patch, await head];
      expect(p.status).toBe(204);
      const itemId = p.headers.get('upload-item-id');
      expect(itemId).not.toBeNull();
      expect({ status: h.status, offset: h.headers.get('upload-offset'), item: h.headers.get('upload-item-id') }).toEqual({
        status: 200,
        offset: '100000',
        item: itemId,
      });
    } finally {
      uploads.commitResumed = commit;
    }
  });

  test('a body sent to a finished upload at its end (declared or chunked) → 413, not a 204 that drops it; the file stays as it was', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(50_000);
    const location = await created(o.client, data.length);
    const done = await patchUpload(o.client, location, 0, data);
    const itemId = done.headers.get('upload-item-id')!;
    const declared = await patchUpload(o.client, location, data.length, Buffer.from('more bytes'));
    expect({ status: declared.status, message: (await json(declared)).message }).toEqual({
      status: 413,
      message: `This request sends more bytes than the upload's Upload-Length of ${data.length}`,
    });
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(0));
        c.enqueue(Buffer.from('chunked more'));
        c.close();
      },
    });
    const chunked = await o.client.request(location, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': String(data.length), 'Content-Type': 'application/offset+octet-stream' },
      body: stream,
    });
    expect(chunked.status).toBe(413);
    expect(await downloaded(o.client, itemId)).toEqual(data);
  });

  test('a chunked body going on past Upload-Length → 413 as a declared one, not a 204 with its end cut off; the right bytes then complete it', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(200_000);
    const location = await created(o.client, data.length);
    expect((await patchUpload(o.client, location, 0, data.subarray(0, 100_000))).status).toBe(204);
    // No Content-Length: the rest arrives whole in one chunk, the surplus in the next.
    const chunked = (parts: Uint8Array[]) =>
      new ReadableStream<Uint8Array>({
        async start(controller) {
          for (const part of parts) {
            controller.enqueue(part);
            await Bun.sleep(20);
          }
          controller.close();
        },
      });
    const tooMuch = await o.client.request(location, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': '100000', 'Content-Type': 'application/offset+octet-stream' },
      body: chunked([data.subarray(100_000), Buffer.from('EXTRA')]),
    });
    expect(tooMuch.status).toBe(413);
    expect(tooMuch.headers.get('upload-item-id')).toBeNull();
    expect((await headUpload(o.client, location)).headers.get('upload-offset')).toBe('100000');
    const rest = await o.client.request(location, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': '100000', 'Content-Type': 'application/offset+octet-stream' },
      body: chunked([data.subarray(100_000)]),
    });
    expect(rest.status).toBe(204);
    expect(await downloaded(o.client, rest.headers.get('upload-item-id')!)).toEqual(data);
  });

  test('the wrong content type → 415; no Tus-Resumable → 412', async () => {
    const location = await created(admin.client, 10);
    const typed = await patchUpload(admin.client, location, 0, Buffer.from('0123456789'), { 'Content-Type': 'application/octet-stream' });
    expect(typed.status).toBe(415);
    const noVersion = await admin.client.request(location, {
      method: 'PATCH',
      headers: { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: '0123456789',
    });
    expect(noVersion.status).toBe(412);
  });

  test('a second PATCH while one is receiving gets 423 instead of interleaving; mid-request no plaintext is on disk', async () => {
    const o = await seed.owner(t);
    const marker = Buffer.from('MID-PATCH-MARKER-31c8');
    const data = Buffer.alloc(2 * MiB);
    for (let i = 0; i < data.length; i += marker.length) marker.copy(data, i);
    const location = await created(o.client, data.length);
    const key = t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!.storageKey;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(data.subarray(0, 300_000));
        await gate;
        controller.enqueue(data.subarray(300_000, MiB));
        controller.close();
      },
    });
    const first = o.client.request(location, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: slow,
    });
    await eventually(() => stagedFiles(t.dataDir).includes(key), { intervalMs: 10 });
    const second = await patchUpload(o.client, location, 0, data.subarray(0, 1000));
    expect(second.status).toBe(423);
    t.server.ctx.db.$client.exec('PRAGMA wal_checkpoint(PASSIVE)');
    expect(filesContaining(t.dataDir, marker)).toEqual([]);
    release();
    const answered = await first;
    expect(answered.status).toBe(204);
    expect(answered.headers.get('upload-offset')).toBe(String(MiB));
  });

  test('at every moment of an upload the data directory holds no plaintext, partial segments straddling PATCHes included', async () => {
    const o = await seed.owner(t);
    const marker = Buffer.from('TUS-MARKER-7f3a9c');
    const data = Buffer.alloc(700_000);
    for (let i = 0; i < data.length; i += marker.length) marker.copy(data, i);
    const location = await created(o.client, data.length, { filename: 'secret.txt' });
    // Cuts inside segments, a whole segment, and a few bytes: every PATCH ends mid-segment but the last.
    const cuts = [1000, 65_000, 65_600, 200_003, 262_144, 262_150, 500_000, data.length];
    let offset = 0;
    for (const cut of cuts) {
      const res = await patchUpload(o.client, location, offset, data.subarray(offset, cut));
      expect(res.status).toBe(204);
      offset = cut;
      t.server.ctx.db.$client.exec('PRAGMA wal_checkpoint(PASSIVE)');
      expect(filesContaining(t.dataDir, marker)).toEqual([]);
    }
    const item = (await listAll(o.client, '/api/files')).find((i) => i.name === 'secret.txt');
    expect(await downloaded(o.client, item.id)).toEqual(data);
    expect(filesContaining(t.dataDir, marker)).toEqual([]);
  });
});

describe('termination, ownership', () => {
  test('DELETE ends the upload, its stored bytes and its reservation; afterwards it is 404', async () => {
    const o = await seed.owner(t);
    setLimit(o.id, 10 * MiB);
    const location = await created(o.client, 4 * MiB);
    expect((await patchUpload(o.client, location, 0, randomBytes(MiB + 10))).status).toBe(204);
    const key = t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!.storageKey;
    expect(stagedFiles(t.dataDir)).toContain(key);
    expect(t.server.ctx.services.quota.usage(o.id).free).toBe(6 * MiB);
    const del = await o.client.request(location, { method: 'DELETE', headers: TUS });
    expect(del.status).toBe(204);
    expect(stagedFiles(t.dataDir)).not.toContain(key);
    expect(t.server.ctx.services.quota.usage(o.id).free).toBe(10 * MiB);
    expect((await headUpload(o.client, location)).status).toBe(404);
    expect((await patchUpload(o.client, location, MiB + 10, Buffer.from('x'))).status).toBe(404);
    expect((await o.client.request(location, { method: 'DELETE', headers: TUS })).status).toBe(404);
  });

  /** A sub-user with Upload & create and an unfinished upload of each kind (tus, Nextcloud chunked) holding 6 MiB of its owner's 10. */
  async function subUserMidUpload() {
    const o = await seed.owner(t);
    setLimit(o.id, 10 * MiB);
    const sub = await seed.subUser(t, o, ['files.upload', 'files.download']);
    const location = await created(sub.client, 4 * MiB);
    expect((await patchUpload(sub.client, location, 0, randomBytes(MiB))).status).toBe(204);
    const key = t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!.storageKey;
    const app = await sub.client.post('/api/user/app-passwords', { name: 'sync' });
    const authorization = `Basic ${Buffer.from(`${sub.email}:${(await json(app)).password}`).toString('base64')}`;
    const chunked = `${t.url}/remote.php/dav/uploads/${sub.id}/half`;
    expect((await fetch(chunked, { method: 'MKCOL', headers: { authorization, 'oc-total-length': String(2 * MiB) } })).status).toBe(201);
    expect((await fetch(`${chunked}/1`, { method: 'PUT', headers: { authorization }, body: randomBytes(1000) })).status).toBe(201);
    expect(t.server.ctx.services.quota.usage(o.id).free).toBe(4 * MiB);
    return { o, sub, key };
  }

  /** Both uploads ended: the owner's room is free again, the staged bytes and the rows gone. */
  async function expectUploadsEnded(o: seed.SeededLogin, sub: { id: string }, key: string) {
    await eventually(() => expect(t.server.ctx.services.quota.usage(o.id).free).toBe(10 * MiB));
    expect(stagedFiles(t.dataDir)).not.toContain(key);
    const rows = (table: string) =>
      t.server.ctx.db.$client.query<{ n: number }, [string]>(`SELECT COUNT(*) AS n FROM ${table} WHERE login_id = ?`).get(sub.id)!.n;
    expect([rows('tus_uploads'), rows('chunked_uploads')]).toEqual([0, 0]);
  }

  test('a sub-user deleted mid-upload: its unfinished uploads (tus, and Nextcloud chunked) end with their reservations and bytes', async () => {
    const { o, sub, key } = await subUserMidUpload();
    expect((await o.client.delete(`/api/user/sub-users/${sub.id}`)).status).toBe(200);
    await expectUploadsEnded(o, sub, key);
  });

  test('a sub-user that loses Upload & create mid-upload: its unfinished uploads (tus, and Nextcloud chunked) end with their reservations and bytes', async () => {
    const { o, sub, key } = await subUserMidUpload();
    // Another permission taken leaves them.
    expect((await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.upload'] })).status).toBe(200);
    expect(t.server.ctx.services.quota.usage(o.id).free).toBe(4 * MiB);
    expect((await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: [] })).status).toBe(200);
    await expectUploadsEnded(o, sub, key);
  });

  test('DELETE of a completed upload forgets it; the file stays', async () => {
    const o = await seed.owner(t);
    const { url, itemId } = await tusUpload(t.url, o.client, randomBytes(1000)).done;
    expect((await o.client.request(new URL(url).pathname, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await o.client.get(`/api/files/${itemId}/info`)).status).toBe(200);
  });

  test("another account's upload id is 404 for HEAD, PATCH, DELETE and GET, and nothing changes", async () => {
    const o = await seed.owner(t);
    const stranger = await seed.owner(t);
    const location = await created(o.client, 100);
    expect((await patchUpload(o.client, location, 0, Buffer.alloc(40, 1))).status).toBe(204);
    expect((await headUpload(stranger.client, location)).status).toBe(404);
    const patch = await patchUpload(stranger.client, location, 40, Buffer.alloc(60, 2));
    expect(patch.status).toBe(404);
    expect(await json(patch)).toEqual({ message: 'Upload not found' });
    expect((await stranger.client.request(location, { method: 'DELETE', headers: TUS })).status).toBe(404);
    expect((await stranger.client.get(location)).status).toBe(404);
    expect((await headUpload(o.client, location)).headers.get('upload-offset')).toBe('40');
    const unfinished = await o.client.get(location);
    expect(unfinished.status).toBe(409);
    expect(await json(unfinished)).toMatchObject({ message: 'This upload is not finished yet', offset: 40, length: 100 });
    expect((await headUpload(o.client, '/api/files/tus/no-such-upload-id-at-all-000000000')).status).toBe(404);
  });
});

describe('the same rules as other uploads', () => {
  test('policy: every tus route needs files.upload; creation and PATCH count against the upload rate limit', () => {
    for (const route of ['POST /api/files/tus', 'PATCH /api/files/tus/:uploadId'] as const) {
      // No asymmetric matcher inside toMatchObject here: Bun wrote the matcher into the shared ROUTES table,
      // and every later server in the run then refused tus creation with a 500 instead of a 403.
      const { access, limit } = ROUTES[route]!;
      expect(typeof access === 'object' && access.operation.startsWith('tus.')).toBe(true);
      expect(limit).toEqual({ limiter: 'upload', key: 'login' });
    }
    expect(ROUTES['GET /api/files/tus/:uploadId']!.access).toEqual({ operation: 'tus.status' });
    expect(ROUTES['DELETE /api/files/tus/:uploadId']!.access).toEqual({ operation: 'tus.terminate' });
  });

  test('a cookie-authenticated request from another origin is refused (403) for POST, PATCH and DELETE', async () => {
    const location = await created(admin.client, 10);
    const evil = { Origin: 'https://evil.example' };
    expect((await createUpload(admin.client, 10, { filename: 'x' }, evil)).status).toBe(403);
    expect((await patchUpload(admin.client, location, 0, Buffer.alloc(10), evil)).status).toBe(403);
    expect((await admin.client.request(location, { method: 'DELETE', headers: { ...TUS, ...evil } })).status).toBe(403);
    expect((await headUpload(admin.client, location)).headers.get('upload-offset')).toBe('0');
    // Bearer tokens (scripts, desktop clients) carry no ambient authority: no Origin check needed.
    const bearer = t.client();
    bearer.headers.authorization = `Bearer ${admin.client.cookies.get('token')}`;
    expect((await createUpload(bearer, 10, { filename: 'bearer.bin' }, evil)).status).toBe(201);
  });

  test('desktop-only access: a browser gets 403, the desktop client goes through', async () => {
    const settings = t.server.ctx.services.settings;
    settings.set('desktopOnlyAccess', true);
    try {
      const res = await createUpload(admin.client, 10, { filename: 'x' });
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.desktopOnly);
      expect((await createUpload(admin.client, 10, { filename: 'x' }, { 'X-Desktop-Client': '1' })).status).toBe(201);
    } finally {
      settings.set('desktopOnlyAccess', false);
    }
  });

  test('orphan review never reports an upload in progress; doctor counts it', async () => {
    const o = await seed.owner(t);
    const location = await created(o.client, 3 * MiB);
    expect((await patchUpload(o.client, location, 0, randomBytes(MiB))).status).toBe(204);
    const key = t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!.storageKey;
    const staged = path.join(t.dataDir, 'blobs', '.staging', key);
    const old = new Date(Date.now() - 3 * 24 * 3600_000);
    fs.utimesSync(staged, old, old);
    const report = await t.server.ctx.services.orphans.scan({ graceMinutes: 60 });
    expect(report.storageOrphans.items.map((i) => i.key)).not.toContain(key);
    const doctor = await t.server.ctx.services.doctor.check();
    expect(doctor.uploads.unfinished).toBeGreaterThanOrEqual(1);
    expect(doctor.uploads.strayStaged).toEqual([]);
  });

  test('a fully stored upload whose file was not created yet (a crash between) is created by HEAD; its object is never an orphan', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(150_000);
    const location = await created(o.client, data.length, { filename: 'crashed.bin' });
    const id = location.split('/').at(-1)!;
    const ctx = t.server.ctx;
    const row = ctx.repos.tusUploads.get(id)!;
    // Everything a completing PATCH does before it creates the file: bytes sealed, recorded, published.
    const resumable = new (await import('../../../src/storage/resumable.ts')).ResumableStore(ctx.storage);
    const obj = {
      key: row.storageKey,
      length: row.length,
      offset: 0,
      durableOffset: 0,
      wrappedKey: row.wrappedKey,
      header: row.header,
      tail: null,
    };
    const sealed = await resumable.append(
      obj,
      (async function* () {
        yield data;
      })(),
    );
    ctx.repos.tusUploads.progress(id, {
      offset: sealed.offset,
      durableOffset: sealed.durableOffset,
      tail: null,
      sealed: true,
      at: Date.now(),
      expiresAt: Date.now() + 3600_000,
    });
    await resumable.publish(obj);
    ageObject(ctx, row.storageKey, 3 * 24 * 3600_000);
    const report = await ctx.services.orphans.scan({ graceMinutes: 60 });
    expect(report.storageOrphans.items.map((i) => i.key)).not.toContain(row.storageKey);
    const head = await headUpload(o.client, location);
    expect(head.headers.get('upload-offset')).toBe(String(data.length));
    const itemId = head.headers.get('upload-item-id')!;
    expect(await downloaded(o.client, itemId)).toEqual(data);
  });
});

describe('the finished object is an ordinary sealed object', () => {
  test('Range, a folder ZIP and master key rotation treat it like any other file; an upload in progress finishes under the new key', async () => {
    const o = await seed.owner(t);
    const clip = await folder(o.client, 'Clip');
    const data = randomBytes(300_000);
    const { itemId } = await tusUpload(t.url, o.client, data, { chunkSize: 100_000, metadata: { filename: 'a.bin', parentId: clip.id } })
      .done;
    const range = await o.client.get(`/api/files/${itemId}/download`, { Range: 'bytes=65530-131080' });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer())).toEqual(data.subarray(65530, 131081));
    const zip = await o.client.get(`/api/files/${clip.id}/download`);
    expect(readZip(Buffer.from(await zip.arrayBuffer())).find((e) => e.name === 'Clip/a.bin')!.data).toEqual(data);

    const later = randomBytes(200_000);
    const location = await created(o.client, later.length, { filename: 'b.bin' });
    expect((await patchUpload(o.client, location, 0, later.subarray(0, 100_000))).status).toBe(204);
    const rotation = await t.server.ctx.services.keys.rotate();
    expect(rotation.completed).toBe(true);
    const done = await patchUpload(o.client, location, 100_000, later.subarray(100_000));
    expect(done.status).toBe(204);
    const keyOf = (id: string) =>
      t.server.ctx.db.$client.query<{ key_id: string }, [string]>('SELECT key_id FROM items WHERE id = ?').get(id)!.key_id;
    expect(keyOf(done.headers.get('upload-item-id')!)).toBe(rotation.keyId);
    expect(keyOf(itemId!)).toBe(rotation.keyId);
    expect(await downloaded(o.client, done.headers.get('upload-item-id')!)).toEqual(later);
    expect(await downloaded(o.client, itemId!)).toEqual(data);
  });
});
