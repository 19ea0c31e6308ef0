import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { upload } from '../../helpers/files.ts';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { loggedPath } from '../../../src/http/request-meta.ts';

const log = memoryLogger();
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ logger: log });
});
afterAll(() => t.stop());

const audited = () => {
  t.server.ctx.services.audit.flush();
  return JSON.stringify(t.server.ctx.services.audit.list({ limit: 1000 }));
};

describe('a link token never lands whole in the log or the audit events', () => {
  test("a link's pages, its management routes and a refused request are logged with the token cut to its first four characters", async () => {
    const admin = await seed.admin(t);
    const file = await upload(admin.client, 'plan.txt', 'plan');
    const { links } = await json(await admin.client.post('/api/files/share', { ids: [file.id], shared: true }));
    const token = String(links[file.id]).split('/s/')[1]!;
    const short = `${token.slice(0, 4)}…`;

    expect((await t.client().get(`/s/${token}/file/${file.id}`)).status).toBe(200);
    expect((await admin.client.get(`/api/files/share/links/${token}/qr`)).status).toBe(200);
    const viewer = await seed.subUser(t, admin, []);
    expect((await viewer.client.get(`/api/files/share/links/${token}/qr`)).status).toBe(403);

    await waitForLine(log, (l) => l.msg === 'request' && l.fields.path === `/s/${short}/file/${file.id}`);
    await waitForLine(log, (l) => l.msg === 'request' && l.fields.path === `/api/files/share/links/${short}/qr` && l.fields.status === 200);
    await waitForLine(log, (l) => l.msg === 'request' && l.fields.path === `/api/files/share/links/${short}/qr` && l.fields.status === 403);
    expect(JSON.stringify(log.lines)).not.toContain(token);
    expect(audited()).toContain(`GET /api/files/share/links/${short}/qr`);
    expect(audited()).not.toContain(token);
  });
});

describe('loggedPath', () => {
  test.each([
    ['/s/AbCdEfGh/folder/x', '/s/AbCd…/folder/x'],
    ['/s/album/AbCdEfGh/zip', '/s/album/AbCd…/zip'],
    ['/api/team-folders/t1/share/links/AbCdEfGh', '/api/team-folders/t1/share/links/AbCd…'],
    ['/connect/AbCdEfGh', '/connect/AbCd…'],
    ['/api/login-flows/AbCdEfGh/grant', '/api/login-flows/AbCd…/grant'],
    ['/api/files/share/links', '/api/files/share/links'],
    ['/api/files/abc/download', '/api/files/abc/download'],
  ])('%p is logged as %p', (path, logged) => {
    expect(loggedPath(path)).toBe(logged);
  });
});
