import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import * as img from '../../helpers/images.ts';
import { uploadPhoto } from '../../helpers/photos.ts';
import { ManualClock } from '../../../src/clock.ts';

let t: TestServer;
const clock = new ManualClock(Date.parse('2026-03-01T12:34:56Z'));
let owner: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ clock });
  await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

const download = (client: TestClient, id: string, headers: Record<string, string> = {}, method = 'GET') =>
  client.request(`/api/files/${id}/download`, { method, headers });
const visit = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(t.url + path, { method, headers, redirect: 'manual' });
const tokenOf = (url: string) => /\/s\/([A-Za-z0-9_-]+)/.exec(url)![1]!;

async function shareWith(id: string, options: Record<string, unknown> = {}): Promise<string> {
  const res = await owner.client.post('/api/files/share', { ids: [id], shared: true, ...options });
  expect(res.status).toBe(200);
  return tokenOf((await json(res)).links[id]);
}

async function replace(id: string, name: string, content: string): Promise<void> {
  const form = new FormData();
  form.append('file', new File([content], name));
  expect((await owner.client.request(`/api/files/${id}/replace`, { method: 'POST', body: form })).status).toBe(200);
}

/** A 304 as RFC 9110 15.4.5 has it: no body, the validators and the caching a 200 sends. */
async function expectNotModified(res: Response, etag: string) {
  expect(res.status).toBe(304);
  expect(res.headers.get('etag')).toBe(etag);
  expect(res.headers.get('cache-control')).toBe('private, no-cache');
  expect(res.headers.get('last-modified')).not.toBeNull();
  expect(await res.text()).toBe('');
}

describe('GET /api/files/:id/download: validators and conditional requests', () => {
  test('a strong ETag and Last-Modified, the same ETag WebDAV serves for the file; HEAD sends the same', async () => {
    const file = await upload(owner.client, 'validated.txt', '0123456789');
    const res = await download(owner.client, file.id);
    expect(await res.text()).toBe('0123456789');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(res.headers.get('last-modified')).toBe(new Date(Date.parse(file.modified)).toUTCString());
    const dav = await davLogin(t, owner);
    expect((await dav.request('GET', 'validated.txt')).headers.get('etag')).toBe(etag);
    // One rule for both doors: WebDAV answers If-Modified-Since as the API does.
    const lastModified = res.headers.get('last-modified')!;
    expect((await dav.request('GET', 'validated.txt', { headers: { 'if-modified-since': lastModified } })).status).toBe(304);
    const head = await download(owner.client, file.id, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect([head.headers.get('etag'), head.headers.get('last-modified')]).toEqual([etag, res.headers.get('last-modified')]);
  });

  test('If-None-Match (strong, weak, in a list, `*`) → 304 with no body, on GET and HEAD; another tag → 200', async () => {
    const file = await upload(owner.client, 'inm.txt', 'hello');
    const etag = (await download(owner.client, file.id)).headers.get('etag')!;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      await expectNotModified(await download(owner.client, file.id, { 'if-none-match': inm }), etag);
      await expectNotModified(await download(owner.client, file.id, { 'if-none-match': inm }, 'HEAD'), etag);
    }
    const other = await download(owner.client, file.id, { 'if-none-match': '"not-this-one"' });
    expect({ status: other.status, body: await other.text() }).toEqual({ status: 200, body: 'hello' });
  });

  test('If-Modified-Since → 304 at or after Last-Modified, 200 before it; ignored beside an If-None-Match (RFC 9110 13.1.3)', async () => {
    const file = await upload(owner.client, 'ims.txt', 'dated');
    const first = await download(owner.client, file.id);
    const lastModified = first.headers.get('last-modified')!;
    const etag = first.headers.get('etag')!;
    await expectNotModified(await download(owner.client, file.id, { 'if-modified-since': lastModified }), etag);
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    expect((await download(owner.client, file.id, { 'if-modified-since': earlier })).status).toBe(200);
    expect((await download(owner.client, file.id, { 'if-modified-since': 'not a date' })).status).toBe(200);
    const both = await download(owner.client, file.id, { 'if-modified-since': lastModified, 'if-none-match': '"stale"' });
    expect({ status: both.status, body: await both.text() }).toEqual({ status: 200, body: 'dated' });
  });

  test('If-Range: the current ETag keeps the Range (206); a stale ETag or a date gets the whole file (200)', async () => {
    const file = await upload(owner.client, 'resume.txt', '0123456789');
    const etag = (await download(owner.client, file.id)).headers.get('etag')!;
    const kept = await download(owner.client, file.id, { range: 'bytes=4-', 'if-range': etag });
    expect({ status: kept.status, range: kept.headers.get('content-range'), body: await kept.text() }).toEqual({
      status: 206,
      range: 'bytes 4-9/10',
      body: '456789',
    });
    expect(kept.headers.get('etag')).toBe(etag);
    await replace(file.id, 'resume.txt', 'abcdefghijkl');
    for (const ifRange of [etag, new Date(clock.now() + 3600_000).toUTCString()]) {
      const stale = await download(owner.client, file.id, { range: 'bytes=4-', 'if-range': ifRange });
      expect({ status: stale.status, range: stale.headers.get('content-range'), body: await stale.text() }).toEqual({
        status: 200,
        range: null,
        body: 'abcdefghijkl',
      });
    }
  });

  test('If-Match: another ETag → 412 with a message, the current one or `*` → 200', async () => {
    const file = await upload(owner.client, 'if-match.txt', 'match me');
    const etag = (await download(owner.client, file.id)).headers.get('etag')!;
    const failed = await download(owner.client, file.id, { 'if-match': '"old"' });
    expect(failed.status).toBe(412);
    expect((await json(failed)).message).toBe('If-Match failed: the resource changed');
    for (const im of [etag, '*', `"old", ${etag}`]) expect((await download(owner.client, file.id, { 'if-match': im })).status).toBe(200);
    const since = new Date(Date.parse(file.modified) - 60_000).toUTCString();
    expect((await download(owner.client, file.id, { 'if-unmodified-since': since })).status).toBe(412);
  });

  test('the ETag moves with the content (replace, a version restored) and not with a rename, a move or a star', async () => {
    const file = await upload(owner.client, 'moving.txt', 'one');
    const etagNow = async () => (await download(owner.client, file.id)).headers.get('etag')!;
    const first = await etagNow();
    const dir = await folder(owner.client, 'elsewhere');
    expect((await owner.client.post('/api/files/rename', { id: file.id, name: 'moved.txt' })).status).toBe(200);
    expect((await owner.client.post('/api/files/move', { ids: [file.id], parentId: dir.id })).status).toBe(200);
    expect((await owner.client.post('/api/files/star', { ids: [file.id], starred: true })).status).toBe(200);
    expect(await etagNow()).toBe(first);
    await expectNotModified(await download(owner.client, file.id, { 'if-none-match': first }), first);

    await replace(file.id, 'moved.txt', 'two');
    const second = await etagNow();
    expect(second).not.toBe(first);
    const fresh = await download(owner.client, file.id, { 'if-none-match': first });
    expect({ status: fresh.status, body: await fresh.text() }).toEqual({ status: 200, body: 'two' });

    // The oldest version is the first content, 'one'.
    const older = (await json(await owner.client.get(`/api/files/${file.id}/versions`))).versions.at(-1);
    expect((await owner.client.post(`/api/files/${file.id}/versions/${older.id}/restore`)).status).toBe(200);
    const restored = await download(owner.client, file.id, { 'if-none-match': second });
    expect({ status: restored.status, body: await restored.text() }).toEqual({ status: 200, body: 'one' });
    // The restored version's object is current again: the very bytes the first ETag named, so that one is current too.
    expect(restored.headers.get('etag')).toBe(first);
  });

  test('a GET answered 304 still marks the file read (Recent), as the download it stands for; a HEAD does not', async () => {
    const file = await upload(owner.client, 'reread.txt', 'read me again');
    const first = await download(owner.client, file.id);
    const etag = first.headers.get('etag')!;
    await first.text();
    const accessedAt = async () => {
      t.server.ctx.services.access.flush();
      return (await json(await owner.client.get(`/api/files/${file.id}/info`))).accessedAt;
    };
    const before = await accessedAt();
    clock.advance(2 * 3600_000);
    expect((await download(owner.client, file.id, { 'if-none-match': etag }, 'HEAD')).status).toBe(304);
    expect(await accessedAt()).toBe(before);
    expect((await download(owner.client, file.id, { 'if-none-match': etag })).status).toBe(304);
    expect(await accessedAt()).toBe(new Date(clock.now()).toISOString());
  });

  test('conditions never pass a check first: no session 401, another account 404, a sub-user without Download 403', async () => {
    const file = await upload(owner.client, 'guarded.txt', 'secret');
    const etag = (await download(owner.client, file.id)).headers.get('etag')!;
    const lastModified = (await download(owner.client, file.id)).headers.get('last-modified')!;
    const conditional = { 'if-none-match': etag, 'if-modified-since': lastModified };
    expect((await download(owner.client.fresh(), file.id, conditional)).status).toBe(401);
    const stranger = await seed.owner(t);
    expect((await download(stranger.client, file.id, conditional)).status).toBe(404);
    const viewer = await seed.subUser(t, owner, []);
    expect((await download(viewer.client, file.id, conditional)).status).toBe(403);
    expect((await download(viewer.client, file.id, { 'if-modified-since': lastModified })).status).toBe(403);
    const reader = await seed.subUser(t, owner, ['files.download']);
    await expectNotModified(await download(reader.client, file.id, conditional), etag);
    // WebDAV likewise: the permission first, then the conditions.
    const viewerDav = await davLogin(t, viewer);
    expect((await viewerDav.request('GET', 'guarded.txt', { headers: conditional })).status).toBe(403);
    expect((await viewerDav.request('GET', 'guarded.txt', { headers: { 'if-match': '"old"' } })).status).toBe(403);
    const readerDav = await davLogin(t, reader);
    expect((await readerDav.request('GET', 'guarded.txt', { headers: conditional })).status).toBe(304);
  });
});

describe('album doors: the same validators', () => {
  test("an album's download and its link's answer the file's ETag; a 304 through the link spends no download", async () => {
    const pic = await uploadPhoto(owner.client, 'album-pic.jpg', await img.jpeg(24, 16), 24);
    const etag = (await download(owner.client, pic.id)).headers.get('etag')!;
    const { album } = await json(await owner.client.post('/api/albums', { name: 'Validated', ids: [pic.id] }));
    await expectNotModified(await owner.client.get(`/api/albums/${album.id}/items/${pic.id}/download`, { 'if-none-match': etag }), etag);
    const { link } = await json(await owner.client.post(`/api/albums/${album.id}/link`, { expiry: 'never', maxDownloads: 1 }));
    const path = `/s/album/${link.url.split('/s/album/')[1]}/file/${pic.id}`;
    await expectNotModified(await visit(path, { 'if-none-match': etag }), etag);
    const got = await visit(path);
    expect([got.status, got.headers.get('etag'), (await got.arrayBuffer()).byteLength]).toEqual([200, etag, pic.size]);
    expect((await visit(path)).status).toBe(410);
  });
});

describe('share links: validators and conditional requests', () => {
  test('a file link: the API ETag and Last-Modified, 304 on If-None-Match and If-Modified-Since; a 304 spends no download', async () => {
    const file = await upload(owner.client, 'linked.txt', 'shared bytes');
    const api = await download(owner.client, file.id);
    const etag = api.headers.get('etag')!;
    const token = await shareWith(file.id, { maxDownloads: 1 });
    await expectNotModified(await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag }), etag);
    await expectNotModified(await visit(`/s/${token}/file/${file.id}`, { 'if-modified-since': api.headers.get('last-modified')! }), etag);
    expect((await visit(`/s/${token}/file/${file.id}`, { 'if-match': '"old"' })).status).toBe(412);
    const head = await visit(`/s/${token}/file/${file.id}`, {}, 'HEAD');
    expect([head.status, head.headers.get('etag'), head.headers.get('last-modified')]).toEqual([
      200,
      etag,
      api.headers.get('last-modified'),
    ]);
    // None of those sent bytes: the one download the link allows is still there.
    const got = await visit(`/s/${token}/file/${file.id}`);
    expect({ status: got.status, etag: got.headers.get('etag'), body: await got.text() }).toEqual({
      status: 200,
      etag,
      body: 'shared bytes',
    });
    expect((await visit(`/s/${token}/file/${file.id}`)).status).toBe(410);
    // Used up, the link answers 410 to a conditional request too.
    expect((await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag })).status).toBe(410);
  });

  test('a file inside a folder link: 304, If-Range kept by the ETag (206, no download counted), stale If-Range → 200 whole, counted', async () => {
    const dir = await folder(owner.client, 'shared-dir');
    const file = await upload(owner.client, 'inner.txt', '0123456789', { parentId: dir.id });
    const token = await shareWith(dir.id, { maxDownloads: 2 });
    const first = await visit(`/s/${token}/file/${file.id}`);
    expect(await first.text()).toBe('0123456789');
    const etag = first.headers.get('etag')!;
    expect(etag).toBe((await download(owner.client, file.id)).headers.get('etag')!);
    await expectNotModified(await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag }), etag);
    const resumed = await visit(`/s/${token}/file/${file.id}`, { range: 'bytes=6-', 'if-range': etag });
    expect({ status: resumed.status, body: await resumed.text() }).toEqual({ status: 206, body: '6789' });
    await replace(file.id, 'inner.txt', 'ABCDEFGHIJ');
    const stale = await visit(`/s/${token}/file/${file.id}`, { range: 'bytes=6-', 'if-range': etag });
    expect({ status: stale.status, range: stale.headers.get('content-range'), body: await stale.text() }).toEqual({
      status: 200,
      range: null,
      body: 'ABCDEFGHIJ',
    });
    expect(stale.headers.get('etag')).not.toBe(etag);
    // Two whole downloads counted (the first and the stale resume), so the cap of 2 is reached.
    expect((await visit(`/s/${token}/file/${file.id}`)).status).toBe(410);
  });

  test("a link's ETag stays through a rename and a re-share's new expiry, and moves with the content", async () => {
    const file = await upload(owner.client, 'steady.txt', 'steady');
    const token = await shareWith(file.id);
    const etag = (await visit(`/s/${token}/file/${file.id}`)).headers.get('etag')!;
    expect((await owner.client.post('/api/files/rename', { id: file.id, name: 'renamed.txt' })).status).toBe(200);
    expect(await shareWith(file.id, { expiry: '30d' })).toBe(token);
    await expectNotModified(await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag }), etag);
    await replace(file.id, 'renamed.txt', 'changed');
    const changed = await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag });
    expect({ status: changed.status, body: await changed.text() }).toEqual({ status: 200, body: 'changed' });
  });

  test('a password-protected link: a conditional request without the unlock cookie is 401, with it 304', async () => {
    const file = await upload(owner.client, 'locked.txt', 'behind a password');
    const etag = (await download(owner.client, file.id)).headers.get('etag')!;
    const token = await shareWith(file.id, { password: 'correct horse' });
    expect((await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag })).status).toBe(401);
    const res = await fetch(`${t.url}/s/${token}/unlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'correct horse' }),
    });
    expect(res.status).toBe(204);
    const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
    await expectNotModified(await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag, cookie }), etag);
    const got = await visit(`/s/${token}/file/${file.id}`, { cookie });
    expect({ status: got.status, etag: got.headers.get('etag'), body: await got.text() }).toEqual({
      status: 200,
      etag,
      body: 'behind a password',
    });
  });

  test('a removed or expired link answers 404 / 410 to a conditional request, never 304', async () => {
    const other = await upload(owner.client, 'unshared.txt', 'gone');
    const otherEtag = (await download(owner.client, other.id)).headers.get('etag')!;
    const otherToken = await shareWith(other.id);
    expect((await owner.client.post('/api/files/share', { ids: [other.id], shared: false })).status).toBe(200);
    expect((await visit(`/s/${otherToken}/file/${other.id}`, { 'if-none-match': otherEtag })).status).toBe(404);

    // Last: the clock passes the owner's session too.
    const file = await upload(owner.client, 'short-lived.txt', 'brief');
    const etag = (await download(owner.client, file.id)).headers.get('etag')!;
    const token = await shareWith(file.id, { expiry: '7d' });
    await expectNotModified(await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag }), etag);
    clock.advance(8 * 24 * 3600_000);
    expect((await visit(`/s/${token}/file/${file.id}`, { 'if-none-match': etag })).status).toBe(410);
  });
});
