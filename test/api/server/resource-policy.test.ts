import { describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { folder, upload } from '../../helpers/files.ts';
import { jpeg } from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s));

/** Each answer's status, Cross-Origin-Resource-Policy and X-Content-Type-Options, by name. */
async function headersOf(requests: Record<string, () => Promise<Response>>) {
  const seen: Record<string, { status: number; corp: string | null; nosniff: string | null }> = {};
  for (const [name, send] of Object.entries(requests)) {
    const res = await send();
    await res.arrayBuffer();
    seen[name] = {
      status: res.status,
      corp: res.headers.get('cross-origin-resource-policy'),
      nosniff: res.headers.get('x-content-type-options'),
    };
  }
  return seen;
}

describe('Cross-Origin-Resource-Policy and nosniff', () => {
  test('API answers, a login’s files and thumbnails, WebDAV and errors are same-origin; share links’ pages, files and pictures stay embeddable; all nosniff', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Box');
    const pic = await upload(o.client, 'pic.jpg', await jpeg(400, 300), { parentId: box.id });
    const text = await upload(o.client, 'a.txt', 'hello', { parentId: box.id });
    const { links } = await json(await o.client.post('/api/files/share', { ids: [box.id], shared: true }));
    const share = String(Object.values(links)[0]);
    const { album } = await json(await o.client.post('/api/albums', { name: 'Trip', ids: [pic.id] }));
    const albumLink = (await json(await o.client.post(`/api/albums/${album.id}/link`, { expiry: 'never' }))).link.url;
    const dav = await davLogin(t, o);

    const own = await headersOf({
      'API JSON': () => o.client.get('/api/files'),
      'API error': () => o.client.get('/api/files/no-such-item/info'),
      'unknown route': () => o.client.get('/api/nope'),
      'not signed in': () => fetch(`${t.url}/api/files`),
      download: () => o.client.get(`/api/files/${text.id}/download`),
      'download range': () => o.client.request(`/api/files/${text.id}/download`, { headers: { Range: 'bytes=0-1' } }),
      'picture inline': () => o.client.get(`/api/files/${pic.id}/download?inline=1`),
      'folder ZIP': () => o.client.get(`/api/files/${box.id}/download`),
      thumbnail: () => o.client.get(`/api/files/${pic.id}/thumbnail`),
      'WebDAV GET': () => dav.request('GET', '/Box/a.txt'),
      'WebDAV PROPFIND': () => dav.propfind('/Box', '1'),
      health: () => fetch(`${t.url}/health`),
      admin: () => admin.client.get('/api/admin/groups'),
    });
    for (const [name, seen] of Object.entries(own)) {
      expect({ name, corp: seen.corp, nosniff: seen.nosniff }).toEqual({ name, corp: 'same-origin', nosniff: 'nosniff' });
    }

    const html = { headers: { accept: 'text/html' } };
    const shared = await headersOf({
      'share page': () => fetch(share, html),
      'share file': () => fetch(`${share}/file/${pic.id}`),
      'share picture inline': () => fetch(`${share}/file/${pic.id}?inline=1`),
      'share thumbnail': () => fetch(`${share}/thumbnail/${pic.id}`),
      'share ZIP': () => fetch(`${share}/zip`),
      'album page': () => fetch(albumLink, html),
      'album file': () => fetch(`${albumLink}/file/${pic.id}`),
      'album thumbnail': () => fetch(`${albumLink}/thumbnail/${pic.id}`),
    });
    for (const [name, seen] of Object.entries(shared)) {
      expect({ name, status: seen.status, corp: seen.corp, nosniff: seen.nosniff }).toEqual({
        name,
        status: 200,
        corp: 'cross-origin',
        nosniff: 'nosniff',
      });
    }
  });
});
