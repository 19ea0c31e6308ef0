import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { folder, readZip, upload } from '../../helpers/files.ts';
import { admin, owner, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { storeFile } from '../../helpers/stored-files.ts';

let t: TestServer;
let o: SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  await admin(t);
  o = await owner(t);
});
afterAll(() => t.stop());

const RLO = '\u202e';
// Reads as "exe.png" in a right-to-left override: a program dressed as a picture.
const DISGUISED = `photo-${RLO}gnp.exe`;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('names with bidirectional control characters (issue 13, defect 10)', () => {
  test('a new folder name with one is refused: 422 naming the field', async () => {
    for (const name of [DISGUISED, `a\u2066b\u2069`, `x\u200fy`]) {
      const res = await o.client.post('/api/files/folder', { name });
      expect(res.status).toBe(422);
      const body = await json(res);
      expect(body.details[0].field).toBe('name');
      expect(body.details[0].message).toContain('bidirectional');
    }
  });

  test('a rename to one is refused: 422 naming the field', async () => {
    const f = await folder(o.client, 'plain');
    const res = await o.client.post('/api/files/rename', { id: f.id, name: DISGUISED });
    expect(res.status).toBe(422);
    expect((await json(res)).details[0].field).toBe('name');
  });

  test('uploaded file names and folder paths lose them', async () => {
    const item = await upload(o.client, DISGUISED, 'MZ not really');
    expect(item.name).toBe('photo-gnp.exe');
    const form = new FormData();
    form.append('relativePaths', `trip${RLO}/a.txt`);
    form.append('files', new File(['a'], `a${RLO}.txt`));
    const res = await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
    const bulk = await json(res);
    expect(bulk.files[0].name).toBe('a.txt');
    const list = await json(await o.client.get(`/api/files?parentId=${bulk.files[0].parentId}`));
    expect(list[0].name).toBe('a.txt');
    const parent = await json(await o.client.get(`/api/files/${bulk.files[0].parentId}/info`));
    expect(parent.name).toBe('trip');
  });

  describe('a name stored before this rule (an older version) is never shown raw', () => {
    let fileId: string;
    let folderId: string;
    beforeAll(async () => {
      const box = await folder(o.client, 'box');
      folderId = box.id;
      fileId = (await storeFile(t.server.ctx, o.id, { name: DISGUISED, parentId: box.id, content: Buffer.from('bytes') })).id;
    });

    test('Content-Disposition of the download', async () => {
      const res = await o.client.get(`/api/files/${fileId}/download`);
      const cd = res.headers.get('content-disposition')!;
      expect(cd).toBe(`attachment; filename="photo-gnp.exe"; filename*=UTF-8''photo-gnp.exe`);
      expect(await res.text()).toBe('bytes');
    });

    test('ZIP entry names', async () => {
      const res = await o.client.get(`/api/files/${folderId}/download`);
      const entries = readZip(Buffer.from(await res.arrayBuffer()));
      expect(entries.map((e) => e.name)).toContain('box/photo-gnp.exe');
      expect(entries.some((e) => BIDI.test(e.name))).toBe(false);
    });

    test('share pages isolate the name in <bdi> and keep it out of the title', async () => {
      const links = (await json(await o.client.post('/api/files/share', { ids: [folderId, fileId], shared: true }))).links;
      const listing = await (await fetch(links[folderId], { headers: { accept: 'text/html' } })).text();
      expect(listing).toContain(`<bdi>${DISGUISED}</bdi>`);
      expect(listing.replaceAll(`<bdi>${DISGUISED}</bdi>`, '')).not.toMatch(BIDI);
      const page = await (await fetch(links[fileId], { headers: { accept: 'text/html' } })).text();
      expect(page).toContain(`<bdi>${DISGUISED}</bdi>`);
      expect(/<title>([^<]*)<\/title>/.exec(page)![1]).toBe('photo-gnp.exe');
      expect(page.replaceAll(`<bdi>${DISGUISED}</bdi>`, '')).not.toMatch(BIDI);
    });
  });
});
