import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const clock = new ManualClock(Date.now());
let t: TestServer;
let double: DocserverDouble;

beforeAll(async () => {
  double = DocserverDouble.start();
  t = await startTestServer({ clock, startWorker: false });
  const admin = await seed.admin(t);
  expect((await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret })).status).toBe(200);
});
afterAll(async () => {
  await double.settled();
  await t.stop();
  double.stop();
});

async function download(client: TestClient, id: string): Promise<Uint8Array> {
  return new Uint8Array(await (await client.get(`/api/files/${id}/download`)).arrayBuffer());
}

describe('a save for a file moved to the trash while it was being edited', () => {
  test('is saved into the file in the trash (its content before kept as a version), not brought back; the editor is told and auto-save stops', async () => {
    const o = await seed.owner(t);
    const first = await documents.docx('first version');
    const file = await upload(o.client, 'report.docx', first);
    const opened = await json(await o.client.get(`/api/docserver/config/${file.id}`));
    await double.open(opened.config, opened.token);
    const key = opened.config.document.key as string;
    expect(t.server.ctx.schedules.get(`docserver.forcesave:${key}`)).not.toBeNull();
    expect((await o.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);

    const edited = await documents.docx('edited in the editor');
    double.edit(key, edited);
    const answer = await json(await double.callback(key, 6, { forcesavetype: 1 }));
    expect(answer).toMatchObject({ error: 1, message: expect.stringContaining('moved to the trash while it was being edited') });
    expect(t.server.ctx.schedules.get(`docserver.forcesave:${key}`)).toBeNull();
    expect((await json(await o.client.get('/api/files'))).map((i: { id: string }) => i.id)).not.toContain(file.id);
    expect((await json(await o.client.get('/api/files/trash'))).map((i: { id: string }) => i.id)).toContain(file.id);

    expect((await o.client.post('/api/files/trash/restore', { ids: [file.id] })).status).toBe(200);
    expect(await download(o.client, file.id)).toEqual(edited);
    const [kept] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    const res = await o.client.get(`/api/files/${file.id}/versions/${kept.id}/download`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(first));
  });
});
