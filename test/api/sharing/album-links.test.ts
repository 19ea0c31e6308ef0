import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { folder, readZip } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import { uploadPhoto } from '../../helpers/photos.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { holdOpens } from '../../helpers/hold-opens.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const photo = async (o: seed.SeededLogin, name: string) => uploadPhoto(o.client, name, await img.jpeg(24, 16), 24);

const JSON_ACCEPT = { headers: { accept: 'application/json' } };
const tokenOf = (url: string) => url.split('/s/album/')[1]!;

describe('album links', () => {
  test('the gallery shows only the album’s live files through the link’s door; removed files and a deleted album are gone', async () => {
    const o = await seed.owner(t, undefined, 'Ada Lovelace');
    const [a, b, outside] = [await photo(o, 'a.jpg'), await photo(o, 'b.jpg'), await photo(o, 'outside.jpg')];
    const { album } = await json(await o.client.post('/api/albums', { name: 'Lisbon', ids: [a.id, b.id] }));
    expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link).toBeNull();

    const created = await o.client.post(`/api/albums/${album.id}/link`, { expiry: 'never' });
    expect(created.status).toBe(201);
    const { link } = await json(created);
    expect(link).toMatchObject({ expiresAt: null, hasPassword: false, maxDownloads: null, downloads: 0 });
    expect(link.url).toBe(`${t.url}/s/album/${link.token}`);
    expect((await o.client.post(`/api/albums/${album.id}/link`, {})).status).toBe(409);
    const token = tokenOf(link.url);

    const listed = await json(await fetch(`${t.url}/s/album/${token}`, JSON_ACCEPT));
    expect(listed.name).toBe('Lisbon');
    expect(listed.items.map((i: { id: string }) => i.id).sort()).toEqual([a.id, b.id].sort());
    expect(Object.keys(listed.items[0]).sort()).toEqual(['height', 'id', 'mimeType', 'name', 'size', 'takenAt', 'width']);
    const html = await (await fetch(`${t.url}/s/album/${token}`, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('Lisbon');
    expect(html).toContain('Shared by <bdi>Ada Lovelace</bdi>');
    expect(html).toContain(`/s/album/${token}/thumbnail/${a.id}`);

    const thumb = await fetch(`${t.url}/s/album/${token}/thumbnail/${a.id}`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    // The link may end: the browser asks again each time rather than keeping it for a year.
    expect(thumb.headers.get('cache-control')).toBe('private, no-cache');
    const file = await fetch(`${t.url}/s/album/${token}/file/${a.id}`);
    expect(file.status).toBe(200);
    expect((await file.arrayBuffer()).byteLength).toBe(a.size);
    // A file of the owner's not in the album is not behind the link; nor is a made-up id.
    expect((await fetch(`${t.url}/s/album/${token}/file/${outside.id}`)).status).toBe(404);
    expect((await fetch(`${t.url}/s/album/${token}/thumbnail/${outside.id}`)).status).toBe(404);
    expect((await fetch(`${t.url}/s/album/${token}/file/nope`)).status).toBe(404);
    // Nor does the album's link open a file link's door, or the other way round.
    expect((await fetch(`${t.url}/s/${token}`, JSON_ACCEPT)).status).toBe(404);

    // A file taken out of the album disappears from the link; a trashed one too.
    await o.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [b.id] });
    expect((await fetch(`${t.url}/s/album/${token}/file/${b.id}`)).status).toBe(404);
    expect((await json(await fetch(`${t.url}/s/album/${token}`, JSON_ACCEPT))).items.map((i: { id: string }) => i.id)).toEqual([a.id]);
    expect((await o.client.post('/api/files/delete', { ids: [a.id] })).status).toBe(200);
    expect((await fetch(`${t.url}/s/album/${token}/thumbnail/${a.id}`)).status).toBe(404);
    expect((await json(await fetch(`${t.url}/s/album/${token}`, JSON_ACCEPT))).items).toEqual([]);

    // Removing the link ends it at once; a new one has a new token; deleting the album ends that one.
    expect((await o.client.send('DELETE', `/api/albums/${album.id}/link`)).status).toBe(200);
    expect((await fetch(`${t.url}/s/album/${token}`, JSON_ACCEPT)).status).toBe(404);
    expect((await o.client.send('DELETE', `/api/albums/${album.id}/link`)).status).toBe(404);
    const again = tokenOf((await json(await o.client.post(`/api/albums/${album.id}/link`, {}))).link.url);
    expect(again).not.toBe(token);
    expect((await fetch(`${t.url}/s/album/${again}`, JSON_ACCEPT)).status).toBe(200);
    expect((await o.client.send('DELETE', `/api/albums/${album.id}`)).status).toBe(200);
    expect((await fetch(`${t.url}/s/album/${again}`, JSON_ACCEPT)).status).toBe(404);
    expect((await fetch(`${t.url}/s/album/${again}`, { headers: { accept: 'text/html' } })).status).toBe(404);
  });

  test('downloads count against the cap; a password locks the gallery, its files and thumbnails until unlocked', async () => {
    const o = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Capped', ids: [a.id] }));
    const { link } = await json(await o.client.post(`/api/albums/${album.id}/link`, { maxDownloads: 2 }));
    expect(link.expiresAt).not.toBeNull();
    const token = tokenOf(link.url);
    expect((await fetch(`${t.url}/s/album/${token}/file/${a.id}`)).status).toBe(200);
    // Thumbnails and the page are not downloads.
    expect((await fetch(`${t.url}/s/album/${token}/thumbnail/${a.id}`)).status).toBe(200);
    expect((await fetch(`${t.url}/s/album/${token}/file/${a.id}`)).status).toBe(200);
    expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(2);
    expect((await fetch(`${t.url}/s/album/${token}/file/${a.id}`)).status).toBe(410);
    expect((await fetch(`${t.url}/s/album/${token}`, JSON_ACCEPT)).status).toBe(410);

    const patched = await json(
      await o.client.send('PATCH', `/api/albums/${album.id}/link`, { maxDownloads: null, password: 'secret-words' }),
    );
    expect(patched.link).toMatchObject({ maxDownloads: null, hasPassword: true });
    for (const path of ['', `/file/${a.id}`, `/thumbnail/${a.id}`])
      expect((await fetch(`${t.url}/s/album/${token}${path}`, JSON_ACCEPT)).status, path).toBe(401);
    const locked = await fetch(`${t.url}/s/album/${token}`, { headers: { accept: 'text/html' } });
    expect(locked.status).toBe(401);
    expect(await locked.text()).toContain(`action="/s/album/${token}/unlock"`);
    expect(
      (
        await fetch(`${t.url}/s/album/${token}/unlock`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ password: 'wrong-words' }),
        })
      ).status,
    ).toBe(401);
    const unlocked = await fetch(`${t.url}/s/album/${token}/unlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'secret-words' }),
    });
    expect(unlocked.status).toBe(204);
    const cookie = unlocked.headers.get('set-cookie')!;
    expect(cookie).toContain(`Path=/s/album/${token}`);
    const value = cookie.split(';')[0]!;
    expect((await fetch(`${t.url}/s/album/${token}/file/${a.id}`, { headers: { cookie: value } })).status).toBe(200);

    // Bad options are a clear 4xx.
    expect((await o.client.send('PATCH', `/api/albums/${album.id}/link`, { expiresAt: '2001-01-01T00:00:00Z' })).status).toBe(400);
    expect((await o.client.send('PATCH', `/api/albums/${album.id}/link`, { maxDownloads: 0 })).status).toBe(422);
    expect((await o.client.send('PATCH', `/api/albums/${album.id}/link`, { password: 'abc' })).status).toBe(422);
  });

  test('wrong passwords: 10 per album and address, then 429; every attempt is in the audit log, the refused ones too', async () => {
    const o = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Guarded', ids: [a.id] }));
    const { link } = await json(await o.client.post(`/api/albums/${album.id}/link`, { password: 'secret-words' }));
    const guess = () =>
      fetch(`${link.url}/unlock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: 'wrong' }),
      });
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await guess()).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
    const audit = t.server.ctx.services.audit;
    audit.flush();
    const failed = audit.list({ action: 'share.unlock_failed', limit: 1000 }).filter((e) => e.targetId === album.id);
    expect([failed.filter((e) => e.status === 'failure').length, failed.filter((e) => e.status === 'denied').length]).toEqual([10, 2]);
  });

  test('the door: the owner only; a member 403, a sub-user without Share 403, another account 404', async () => {
    const o = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Door', ids: [a.id] }));
    const member = await seed.owner(t, undefined, 'Member');
    await o.client.post(`/api/albums/${album.id}/members`, { accountId: member.id, role: 'editor' });
    const stranger = await seed.owner(t, undefined, 'Stranger');
    const looker = await seed.subUser(t, { id: o.id }, ['files.download', 'files.edit']);
    const sharer = await seed.subUser(t, { id: o.id }, ['files.share']);
    const calls = [
      ['GET', undefined, ''],
      ['POST', {}, ''],
      ['PATCH', { expiry: 'never' }, ''],
      ['DELETE', undefined, ''],
      ['GET', undefined, '/qr'],
    ] as const;
    for (const [method, body, tail] of calls) {
      const path = `/api/albums/${album.id}/link${tail}`;
      expect((await stranger.client.send(method, path, body)).status, `stranger ${method} ${path}`).toBe(404);
      expect((await member.client.send(method, path, body)).status, `member ${method} ${path}`).toBe(403);
      expect((await looker.client.send(method, path, body)).status, `sub-user ${method} ${path}`).toBe(403);
    }
    // A sub-user with Share manages its account's album link.
    expect((await sharer.client.post(`/api/albums/${album.id}/link`, {})).status).toBe(201);
    expect((await sharer.client.get(`/api/albums/${album.id}/link/qr`)).status).toBe(200);
    expect((await stranger.client.get(`/api/albums/${album.id}/link/qr`)).status).toBe(404);
    expect((await stranger.client.get(`/api/albums/${album.id}/link`)).status).toBe(404);
    expect((await o.client.get(`/api/albums/${album.id}/link`)).status).toBe(200);
    expect((await fetch(`${t.url}/s/album/not-a-token`, JSON_ACCEPT)).status).toBe(404);
  });

  test('the link as a QR code: a PNG of its URL for the owner; 404 while the album has no link', async () => {
    const o = await seed.owner(t);
    const { album } = await json(await o.client.post('/api/albums', { name: 'Coded' }));
    const none = await o.client.get(`/api/albums/${album.id}/link/qr`);
    expect(none.status).toBe(404);
    expect((await json(none)).message).toBe('This album has no link.');
    await o.client.post(`/api/albums/${album.id}/link`, {});
    const { qrCode } = await json(await o.client.get(`/api/albums/${album.id}/link/qr`));
    expect(qrCode).toStartWith('data:image/png;base64,');
    const png = Buffer.from(qrCode.slice('data:image/png;base64,'.length), 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // A new link is a new code.
    await o.client.send('DELETE', `/api/albums/${album.id}/link`);
    expect((await o.client.get(`/api/albums/${album.id}/link/qr`)).status).toBe(404);
    await o.client.post(`/api/albums/${album.id}/link`, {});
    expect((await json(await o.client.get(`/api/albums/${album.id}/link/qr`))).qrCode).not.toBe(qrCode);
  });

  test('"Download all": one ZIP of the album’s live files, whoever added them, counted as one download against the cap, behind the password', async () => {
    const o = await seed.owner(t);
    const editor = await seed.owner(t, undefined, 'Editor');
    const [a, b, gone] = [await photo(o, 'same.jpg'), await photo(o, 'b.jpg'), await photo(o, 'gone.jpg')];
    const theirs = await photo(editor, 'same.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Porto', ids: [a.id, b.id, gone.id] }));
    await o.client.post(`/api/albums/${album.id}/members`, { accountId: editor.id, role: 'editor' });
    expect((await editor.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] })).status).toBe(200);
    await o.client.post('/api/files/delete', { ids: [gone.id] });
    const { link } = await json(await o.client.post(`/api/albums/${album.id}/link`, { maxDownloads: 2 }));
    const token = tokenOf(link.url);
    const html = await (await fetch(`${t.url}/s/album/${token}`, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain(`href="/s/album/${token}/zip">Download all (ZIP)</a>`);

    const res = await fetch(`${t.url}/s/album/${token}/zip`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toContain('filename="Porto.zip"');
    const entries = readZip(Buffer.from(await res.arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual(['b.jpg', 'same (1).jpg', 'same.jpg']);
    const sizes = entries.map((e) => e.data.length).sort();
    expect(sizes).toEqual([a.size, b.size, theirs.size].sort());
    expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(1);
    // HEAD asks without spending a download, nor is it one in the audit log.
    const audit = t.server.ctx.services.audit;
    const audited = () => {
      audit.flush();
      return audit.list({ action: 'share.download', limit: 1000 }).filter((e) => e.targetId === album.id).length;
    };
    expect(audited()).toBe(1);
    expect((await fetch(`${t.url}/s/album/${token}/zip`, { method: 'HEAD' })).status).toBe(200);
    expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(1);
    expect(audited()).toBe(1);
    expect((await fetch(`${t.url}/s/album/${token}/zip`)).status).toBe(200);
    // The cap is spent: the ZIP, like the page, is gone.
    expect((await fetch(`${t.url}/s/album/${token}/zip`)).status).toBe(410);
    expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(2);

    await o.client.send('PATCH', `/api/albums/${album.id}/link`, { maxDownloads: null, password: 'secret-words' });
    expect((await fetch(`${t.url}/s/album/${token}/zip`, JSON_ACCEPT)).status).toBe(401);
    await o.client.send('DELETE', `/api/albums/${album.id}/link`);
    expect((await fetch(`${t.url}/s/album/${token}/zip`)).status).toBe(404);
  });

  test('the viewer zooms into the original only on a link without a download cap (else the large thumbnail)', async () => {
    const o = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Zoom', ids: [a.id] }));
    const { link } = await json(await o.client.post(`/api/albums/${album.id}/link`, {}));
    const token = tokenOf(link.url);
    const page = async (url: string) => (await fetch(url, { headers: { accept: 'text/html' } })).text();
    expect(await page(link.url)).toContain(`data-full="/s/album/${token}/file/${a.id}?inline=1"`);
    await o.client.send('PATCH', `/api/albums/${album.id}/link`, { maxDownloads: 3 });
    const capped = await page(link.url);
    expect(capped).toContain(`/s/album/${token}/thumbnail/${a.id}?size=large`);
    expect(capped).not.toContain('data-full');

    // A folder link's gallery alike.
    const dir = await folder(o.client, 'Pictures');
    await o.client.post('/api/files/move', { ids: [a.id], parentId: dir.id });
    const shared = await json(await o.client.post('/api/files/share', { ids: [dir.id], shared: true }));
    const folderUrl = shared.links[dir.id];
    const folderToken = new URL(folderUrl).pathname.split('/s/')[1]!;
    const open = await page(folderUrl);
    expect(open).toContain(`data-full="/s/${folderToken}/file/${a.id}?inline=1"`);
    const links = await json(await o.client.get('/api/files/share/links?limit=100'));
    const folderLink = links.links.find((l: { itemId: string }) => l.itemId === dir.id);
    await o.client.send('PATCH', `/api/files/share/links/${folderLink.token}`, { maxDownloads: 3 });
    expect(await page(folderUrl)).not.toContain('data-full');
  });
});

describe('an editor’s photos in another account’s album', () => {
  test('its account disabled: its photos leave the album’s link and the owner’s view until it is enabled again', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const mine = await photo(o, 'mine.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Together', ids: [mine.id] }));
    expect((await o.client.post(`/api/albums/${album.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const theirs = await photo(member, 'theirs.jpg');
    expect((await json(await member.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] }))).added).toBe(1);
    const token = tokenOf((await json(await o.client.post(`/api/albums/${album.id}/link`, { expiry: 'never' }))).link.url);
    const shown = async () => ({
      link: (await json(await fetch(`${t.url}/s/album/${token}`, JSON_ACCEPT))).items.map((i: { id: string }) => i.id).sort(),
      owner: (await json(await o.client.get(`/api/albums/${album.id}`))).items.map((i: { id: string }) => i.id).sort(),
      file: (await fetch(`${t.url}/s/album/${token}/file/${theirs.id}`)).status,
      thumbnail: (await fetch(`${t.url}/s/album/${token}/thumbnail/${theirs.id}`)).status,
      download: (await o.client.get(`/api/albums/${album.id}/items/${theirs.id}/download`)).status,
      zip: readZip(Buffer.from(await (await fetch(`${t.url}/s/album/${token}/zip`)).arrayBuffer()))
        .map((e) => e.name)
        .sort(),
    });
    expect(await shown()).toEqual({
      link: [mine.id, theirs.id].sort(),
      owner: [mine.id, theirs.id].sort(),
      file: 200,
      thumbnail: 200,
      download: 200,
      zip: ['mine.jpg', 'theirs.jpg'],
    });
    const users = t.server.ctx.services.users;
    users.setDisabled(member.id, true, 'cli');
    expect(await shown()).toEqual({ link: [mine.id], owner: [mine.id], file: 404, thumbnail: 404, download: 404, zip: ['mine.jpg'] });
    users.setDisabled(member.id, false, 'cli');
    expect((await shown()).link).toEqual([mine.id, theirs.id].sort());
  });
});

describe('a ZIP refused for want of a slot', () => {
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startTestServer({ env: { COFFER_MAX_ZIPS: '4', COFFER_MAX_ZIPS_PER_ACCOUNT: '1' } });
  });
  afterAll(() => capped.stop());

  test('spends none of the link’s downloads: a 429 is not a download, and the visitor gets the ZIP once a slot is free', async () => {
    const o = await seed.owner(capped);
    const [a, b] = [await photo(o, 'a.jpg'), await photo(o, 'b.jpg')];
    const { album } = await json(await o.client.post('/api/albums', { name: 'Busy', ids: [a.id, b.id] }));
    const { link } = await json(await o.client.post(`/api/albums/${album.id}/link`, { maxDownloads: 2 }));
    const release = holdOpens(capped, { pass: 1 });
    try {
      const first = await fetch(`${link.url}/zip`);
      expect(first.status).toBe(200);
      const refused = await fetch(`${link.url}/zip`);
      expect(refused.status).toBe(429);
      expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(1);
      release();
      await first.arrayBuffer();
      const second = await fetch(`${link.url}/zip`);
      expect(second.status).toBe(200);
      expect(
        readZip(Buffer.from(await second.arrayBuffer()))
          .map((e) => e.name)
          .sort(),
      ).toEqual(['a.jpg', 'b.jpg']);
      expect((await json(await o.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(2);
    } finally {
      release();
    }
  });
});
