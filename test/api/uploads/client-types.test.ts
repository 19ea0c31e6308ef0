import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { json } from '../../helpers/client.ts';
import { readZip, upload } from '../../helpers/files.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';

let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s), { startWorker: false });

/** A tus upload of `text` with `filetype`; the created file's id. */
async function tusFile(name: string, filetype: string, text: string, replaceId?: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const created = await createUpload(admin.client, bytes.byteLength, { filename: name, filetype, ...(replaceId ? { replaceId } : {}) });
  expect(created.status).toBe(201);
  const patched = await patchUpload(admin.client, created.headers.get('location')!, 0, bytes);
  expect(patched.status).toBe(204);
  return patched.headers.get('upload-item-id')!;
}

const typeOf = async (id: string) => (await json(await admin.client.get(`/api/files/${id}/info`))).mimeType;

describe("the client's type of an unrecognised content", () => {
  test('a tus filetype with a line break is no type: stored as application/octet-stream, and the file downloads through every door', async () => {
    const id = await tusFile('notes.txt', 'text/html\r\nX-Injected: 1', 'plain words');
    expect(await typeOf(id)).toBe('application/octet-stream');
    const api = await admin.client.get(`/api/files/${id}/download`);
    expect(api.status).toBe(200);
    expect(api.headers.get('content-type')).toBe('application/octet-stream');
    expect(api.headers.get('x-injected')).toBeNull();
    expect(await api.text()).toBe('plain words');
    const dav = await davLogin(t, admin);
    const viaDav = await dav.request('GET', 'notes.txt');
    expect(viaDav.status).toBe(200);
    expect(await viaDav.text()).toBe('plain words');
    const { links } = await json(await admin.client.post('/api/files/share', { ids: [id], shared: true }));
    const token = String(links[id]).split('/s/')[1];
    const viaLink = await t.client().get(`/s/${token}/file/${id}`);
    expect(viaLink.status).toBe(200);
    expect(await viaLink.text()).toBe('plain words');
  });

  test('a type that is not `type/subtype` (words, a NUL, more than 255 characters) is no type; a well-formed one is kept with its parameters', async () => {
    for (const sent of ['not a type', 'text/plain\u0000', `application/${'x'.repeat(260)}`, 'täxt/plain'])
      expect(await typeOf(await tusFile('odd.bin', sent, 'bytes'))).toBe('application/octet-stream');
    expect(await typeOf(await tusFile('kept.txt', 'text/plain; charset=utf-8', 'bytes'))).toBe('text/plain; charset=utf-8');
    const multipart = await upload(admin.client, 'form.bin', 'bytes', { type: 'application/x-coffer-test' });
    expect(multipart.mimeType).toBe('application/x-coffer-test');
  });

  test('replacing content with an unusable type keeps the type the file had', async () => {
    const id = await tusFile('kept.csv', 'text/csv', 'a,b');
    expect(await tusFile('kept.csv', 'text/csv\nbroken', 'c,d', id)).toBe(id);
    expect(await typeOf(id)).toBe('text/csv');
  });
});

describe('a file stored with a type a header cannot carry, before client types were checked', () => {
  const BROKEN = 'text/html\r\nX-Injected: 1';
  /** Writes `type` into the file's row and its versions' with the server stopped, as an older Coffer stored it. */
  async function storeType(ids: string[], type: string, alsoForget?: string): Promise<void> {
    const dbPath = t.server.ctx.paths.database;
    await t.restart({
      samePort: true,
      whileDown: async () => {
        const db = new Database(dbPath);
        for (const id of ids) {
          db.query('UPDATE items SET mime_type = ? WHERE id = ?').run(type, id);
          db.query('UPDATE file_versions SET mime_type = ? WHERE item_id = ?').run(type, id);
        }
        if (alsoForget) db.query('DELETE FROM coffer_migrations WHERE tag = ?').run(alsoForget);
        db.close();
      },
    });
    admin.client = await seed.login(t, admin.email);
  }

  test('downloads through every door as application/octet-stream, never a 500 (API, inline, WebDAV GET and HEAD, share link, version, ZIP)', async () => {
    const file = await upload(admin.client, 'old.txt', 'first words');
    const dav = await davLogin(t, admin);
    expect((await dav.put('old.txt', 'second words')).status).toBe(204);
    const { links } = await json(await admin.client.post('/api/files/share', { ids: [file.id], shared: true }));
    const token = String(links[file.id]).split('/s/')[1];
    await storeType([file.id], BROKEN);
    const versions = await json(await admin.client.get(`/api/files/${file.id}/versions`));
    const versionId = (versions.versions ?? versions)[0].id;
    const answers: Array<[string, Response]> = [
      ['api', await admin.client.get(`/api/files/${file.id}/download`)],
      ['inline', await admin.client.get(`/api/files/${file.id}/download?inline=1`)],
      ['dav GET', await dav.request('GET', 'old.txt')],
      ['dav HEAD', await dav.request('HEAD', 'old.txt')],
      ['link', await t.client().get(`/s/${token}/file/${file.id}`)],
      ['version', await admin.client.get(`/api/files/${file.id}/versions/${versionId}/download`)],
    ];
    for (const [door, res] of answers) {
      expect({ door, status: res.status }).toEqual({ door, status: 200 });
      expect({ door, type: res.headers.get('content-type') }).toEqual({ door, type: 'application/octet-stream' });
      expect(res.headers.get('x-injected')).toBeNull();
    }
    expect(await answers[0]![1].text()).toBe('second words');
    expect(await answers[5]![1].text()).toBe('first words');
    const zip = await admin.client.post('/api/files/download/bulk', { ids: [file.id] });
    expect(zip.status).toBe(200);
    expect(readZip(Buffer.from(await zip.arrayBuffer())).map((e) => e.data.toString())).toEqual(['second words']);
    expect((await dav.propfind('old.txt', '0')).status).toBe(207);
    expect((await admin.client.get(`/api/files/${file.id}/info`)).status).toBe(200);
  });

  test('the upgrade that brings this check repairs the stored rows: their type is application/octet-stream', async () => {
    const file = await upload(admin.client, 'older.txt', 'words');
    await storeType([file.id], BROKEN, '0043_unusable_mime_types');
    expect(await typeOf(file.id)).toBe('application/octet-stream');
  });
});
