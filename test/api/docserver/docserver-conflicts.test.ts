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

async function editing() {
  const o = await seed.owner(t);
  const bytes = await documents.docx('first version');
  const file = await upload(o.client, 'report.docx', bytes);
  const res = await o.client.get(`/api/docserver/config/${file.id}`);
  const opened = await json(res);
  await double.open(opened.config, opened.token);
  return { o, file, bytes, key: opened.config.document.key as string };
}

function replace(client: TestClient, id: string, content: Uint8Array): Promise<Response> {
  const form = new FormData();
  form.append('file', new File([content], 'ignored.bin'));
  return client.request(`/api/files/${id}/replace`, { method: 'POST', body: form });
}

describe('a save after another client replaced the file', () => {
  test('with versions off it is refused ({error: 1}) and the other content stays; with versions on it saves and keeps that content as a version', async () => {
    t.server.ctx.services.settings.update('versionsEnabled', false);
    try {
      const { o, file, key } = await editing();
      const other = await documents.docx('uploaded by another client meanwhile');
      expect((await replace(o.client, file.id, other)).status).toBe(200);
      double.edit(key, await documents.docx('edited in the editor'));
      const answer = await json(await double.callback(key, 6, { forcesavetype: 1 }));
      expect(answer).toMatchObject({ error: 1, message: expect.stringContaining('replaced by another client') });
      expect(await download(o.client, file.id)).toEqual(other);
    } finally {
      t.server.ctx.services.settings.update('versionsEnabled', true);
    }

    const { o, file, key } = await editing();
    const other = await documents.docx('uploaded by another client meanwhile');
    expect((await replace(o.client, file.id, other)).status).toBe(200);
    const edited = await documents.docx('edited in the editor');
    double.edit(key, edited);
    expect(await json(await double.callback(key, 6, { forcesavetype: 1 }))).toEqual({ error: 0 });
    expect(await download(o.client, file.id)).toEqual(edited);
    const [newest] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    const kept = await o.client.get(`/api/files/${file.id}/versions/${newest.id}/download`);
    expect(new Uint8Array(await kept.arrayBuffer())).toEqual(new Uint8Array(other));
  });

  test('two saves under one key out of order: no conflict with versions off, and the older, committing last, does not overwrite the newer', async () => {
    t.server.ctx.services.settings.update('versionsEnabled', false);
    try {
      const { o, file, key } = await editing();
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let reached!: () => void;
      const midway = new Promise<void>((r) => (reached = r));
      const slowUrl = double.edit(key, await documents.docx('an auto-save, slow to download'), async () => {
        reached();
        await held;
      });
      const slow = double.callback(key, 6, { forcesavetype: 2 });
      await midway;
      const newer = await documents.docx('saved with Ctrl+S meanwhile');
      double.edit(key, newer);
      expect(await json(await double.callback(key, 6, { forcesavetype: 1 }))).toEqual({ error: 0 });
      release();
      expect(await json(await slow)).toEqual({ error: 0 });
      expect(await download(o.client, file.id)).toEqual(newer);
      // The older callback repeated later is not applied either.
      expect(await json(await double.callback(key, 6, { forcesavetype: 2, url: slowUrl, filetype: 'docx' }))).toEqual({ error: 0 });
      expect(await download(o.client, file.id)).toEqual(newer);

      // Saves that do not overlap still each land.
      const later = await documents.docx('a later auto-save');
      double.edit(key, later);
      expect(await json(await double.callback(key, 6, { forcesavetype: 0 }))).toEqual({ error: 0 });
      expect(await download(o.client, file.id)).toEqual(later);
    } finally {
      t.server.ctx.services.settings.update('versionsEnabled', true);
    }
  });
});
