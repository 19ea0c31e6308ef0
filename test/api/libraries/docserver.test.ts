import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import type { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithDocserver } from '../../helpers/suite.ts';
import { addLibrary, childNamed, cleanHostDirs, hostDir, write } from './helpers.ts';

let t: TestServer;
let double: DocserverDouble;
let admin: seed.SeededLogin;

serverWithDocserver((s) => ({ t, admin, double } = s), {}, cleanHostDirs);

async function openIn(login: seed.SeededLogin, id: string): Promise<string> {
  const res = await login.client.get(`/api/docserver/config/${id}`);
  expect(res.status).toBe(200);
  const opened = await json(res);
  await double.open(opened.config, opened.token);
  return opened.config.document.key;
}

describe('document server save into a library', () => {
  test("a writable library's document is saved over its host file (same item, no temporary file left)", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Reports/q1.docx', await documents.docx('first version'));
    const library = await addLibrary(admin, root, owner);
    const reports = await childNamed(owner, library.folderId, 'Reports');
    const q1 = await childNamed(owner, reports.id, 'q1.docx');
    const key = await openIn(owner, q1.id);
    const edited = await documents.docx('second version, saved by the editor');
    double.edit(key, edited);
    const res = await double.callback(key, 2);
    expect(await json(res)).toEqual({ error: 0 });
    expect(Buffer.from(edited).equals(fs.readFileSync(path.join(root, 'Reports/q1.docx')))).toBe(true);
    expect(fs.readdirSync(path.join(root, 'Reports'))).toEqual(['q1.docx']);
    expect(await childNamed(owner, reports.id, 'q1.docx')).toMatchObject({ id: q1.id, size: edited.length });
  });

  test('a read-only library: the save is refused with "This library is read-only", the host file unchanged', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const first = await documents.docx('kept as it is');
    write(root, 'fixed.docx', first);
    const library = await addLibrary(admin, root, owner, { readOnly: true });
    const fixed = await childNamed(owner, library.folderId, 'fixed.docx');
    const key = await openIn(owner, fixed.id);
    double.edit(key, await documents.docx('an edit that cannot be saved'));
    const answer = await json(await double.callback(key, 2));
    expect(answer.error).toBe(1);
    expect(answer.message).toContain('This library is read-only');
    expect(Buffer.from(first).equals(fs.readFileSync(path.join(root, 'fixed.docx')))).toBe(true);
    expect(fs.readdirSync(root)).toEqual(['fixed.docx']);
  });

  test('a document trashed while open: its save is refused (the editor keeps it), nothing lands at its old place, and the restore brings it back as it was', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const first = await documents.docx('before the trash');
    write(root, 'Reports/q2.docx', first);
    const library = await addLibrary(admin, root, owner);
    const reports = await childNamed(owner, library.folderId, 'Reports');
    const q2 = await childNamed(owner, reports.id, 'q2.docx');
    const key = await openIn(owner, q2.id);
    expect((await owner.client.post('/api/files/delete', { ids: [q2.id] })).status).toBe(200);
    double.edit(key, await documents.docx('saved while the file was in the trash'));
    const answer = await json(await double.callback(key, 6, { forcesavetype: 1 }));
    expect(answer).toMatchObject({ error: 1, message: expect.stringContaining('The file is in the trash') });
    // Nothing was written beside the trashed file's place: no new file, no temporary one.
    expect(fs.readdirSync(path.join(root, 'Reports'))).toEqual([]);
    expect((await owner.client.post('/api/files/trash/restore', { ids: [q2.id] })).status).toBe(200);
    expect(fs.readdirSync(path.join(root, 'Reports'))).toEqual(['q2.docx']);
    expect(Buffer.from(first).equals(fs.readFileSync(path.join(root, 'Reports/q2.docx')))).toBe(true);
    expect(await childNamed(owner, reports.id, 'q2.docx')).toMatchObject({ id: q2.id, size: first.length });
    expect(Buffer.from(await (await owner.client.get(`/api/files/${q2.id}/download`)).arrayBuffer()).equals(Buffer.from(first))).toBe(true);
  });
});
