import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, hostDir, libraryServer, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s));

function replaceForm(name: string, content: string): FormData {
  const body = new FormData();
  body.append('files', new File([content], name));
  return body;
}

const versionsOf = async (login: seed.SeededLogin, id: string) =>
  (await json(await login.client.get(`/api/files/${id}/versions`))).versions;

describe('versions of library files Coffer overwrote', () => {
  test('a replace keeps the content before as a version in the store; it downloads, and its restore writes the host file back (the current content kept in turn)', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'essay.txt', 'draft one');
    const library = await addLibrary(admin, root, owner);
    const essay = await childNamed(owner, library.folderId, 'essay.txt');
    const usedBefore = t.server.ctx.services.quota.usage(owner.id).used;

    const replaced = await owner.client.request(`/api/files/${essay.id}/replace`, {
      method: 'POST',
      body: replaceForm('essay.txt', 'draft two!'),
    });
    expect(replaced.status).toBe(200);
    const dav = await davLogin(t, owner);
    expect((await dav.put(`${encodeURIComponent(library.name)}/essay.txt`, 'draft three')).status).toBe(204);
    expect(fs.readFileSync(path.join(root, 'essay.txt'), 'utf8')).toBe('draft three');

    const versions = await versionsOf(owner, essay.id);
    expect(versions.map((v: any) => v.size)).toEqual([10, 9]);
    // The versions are in Coffer's store and count as any version does; the library file itself does not.
    expect(t.server.ctx.services.quota.usage(owner.id).used).toBe(usedBefore + 19);
    const first = versions[1];
    const got = await owner.client.get(`/api/files/${essay.id}/versions/${first.id}/download`);
    expect(await got.text()).toBe('draft one');

    const restored = await owner.client.post(`/api/files/${essay.id}/versions/${first.id}/restore`, {});
    expect(restored.status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'essay.txt'), 'utf8')).toBe('draft one');
    expect(fs.readdirSync(root)).toEqual(['essay.txt']);
    expect(await (await owner.client.get(`/api/files/${essay.id}/download`)).text()).toBe('draft one');
    expect((await versionsOf(owner, essay.id)).map((v: any) => v.size)).toEqual([11, 10]);
    expect(t.server.ctx.services.quota.usage(owner.id).used).toBe(usedBefore + 21);
  });

  test('with versions off, an overwrite keeps nothing and the usage is unchanged', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'log.txt', 'one');
    const library = await addLibrary(admin, root, owner);
    const log = await childNamed(owner, library.folderId, 'log.txt');
    expect((await admin.client.put('/api/user/versions-config', { enabled: false })).status).toBe(200);
    try {
      const usedBefore = t.server.ctx.services.quota.usage(owner.id).used;
      expect(
        (await owner.client.request(`/api/files/${log.id}/replace`, { method: 'POST', body: replaceForm('log.txt', 'two') })).status,
      ).toBe(200);
      expect(fs.readFileSync(path.join(root, 'log.txt'), 'utf8')).toBe('two');
      expect(await versionsOf(owner, log.id)).toEqual([]);
      expect(t.server.ctx.services.quota.usage(owner.id).used).toBe(usedBefore);
    } finally {
      await admin.client.put('/api/user/versions-config', { enabled: true });
    }
  });
});
