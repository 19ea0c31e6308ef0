import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { jwtVerify } from 'jose';
import { ManualClock } from '../../../src/clock.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { errors } from '../../helpers/errors.ts';
import { blobFiles, SseReader, upload } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const MINUTE = 60_000;
const clock = new ManualClock(Date.now());
let t: TestServer;
let double: DocserverDouble;
let admin: seed.SeededLogin;

beforeAll(async () => {
  double = DocserverDouble.start();
  t = await startTestServer({ clock, startWorker: false, env: { DOCSERVER_AUTOSAVE_INTERVAL_MS: String(MINUTE) } });
  admin = await seed.admin(t);
  await configure();
});
afterAll(async () => {
  // A forcesave a test started may still be calling back.
  await double.settled();
  await t.stop();
  double.stop();
});

async function configure(url = double.url, jwtSecret = double.secret) {
  const res = await admin.client.put('/api/user/docserver-config', { url, jwtSecret });
  expect(res.status).toBe(200);
}

const secret = () => new TextEncoder().encode(double.secret);
const drain = () => t.server.worker.drain();
const schedule = (key: string) => t.server.ctx.schedules.get(`docserver.forcesave:${key}`);

interface Opened {
  config: any;
  token: string;
  docserverJsUrl: string;
}

async function openConfig(client: TestClient, id: string): Promise<Opened> {
  const res = await client.get(`/api/docserver/config/${id}`);
  if (res.status !== 200) throw new Error(`config ${id}: ${res.status} ${await res.text()}`);
  return json(res);
}

async function download(client: TestClient, id: string): Promise<Uint8Array> {
  return new Uint8Array(await (await client.get(`/api/files/${id}/download`)).arrayBuffer());
}

/** An owner with a .docx open in the double's editor. */
async function editing(name = 'report.docx', content?: Uint8Array<ArrayBuffer>) {
  const o = await seed.owner(t);
  const bytes = content ?? (await documents.docx('first version'));
  const file = await upload(o.client, name, bytes);
  const opened = await openConfig(o.client, file.id);
  await double.open(opened.config, opened.token);
  return { o, file, bytes, opened, key: opened.config.document.key as string };
}

function auditEntries(action: string, targetId: string) {
  t.server.ctx.services.audit.flush();
  return t.server.ctx.services.audit.list({ action, limit: 1000 }).filter((e) => e.targetId === targetId);
}

describe('GET /api/docserver/config/:id', () => {
  test('answers the editor config, signed as a whole with the shared secret (HS256)', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'Quarterly report.docx', await documents.docx('hello'));
    const res = await o.client.get(`/api/docserver/config/${file.id}`, { 'accept-language': 'de-DE,de;q=0.9' });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['config', 'docserverJsUrl', 'token']);
    expect(body.docserverJsUrl).toBe(`${double.url}/web-apps/apps/api/documents/api.js`);
    const { config } = body;
    expect(config.document).toMatchObject({ fileType: 'docx', title: 'Quarterly report.docx' });
    expect(config.document.key).toMatch(/^[0-9A-Za-z._=-]{1,128}$/);
    expect(config.document.url).toStartWith(`${t.url}/api/docserver/file/${file.id}?t=`);
    expect(config.documentType).toBe('word');
    expect(config.editorConfig).toEqual({
      mode: 'edit',
      callbackUrl: `${t.url}/api/docserver/callback`,
      lang: 'de-DE',
      user: { id: o.id, name: 'Owner' },
      customization: { forcesave: true, autosave: true },
    });
    const { payload, protectedHeader } = await jwtVerify(body.token, secret(), { algorithms: ['HS256'] });
    expect(protectedHeader.alg).toBe('HS256');
    const { iat: _iat, ...signed } = payload;
    expect(signed).toEqual(config);
    await expect(jwtVerify(body.token, new TextEncoder().encode('another secret'))).rejects.toThrow();
  });

  test('the key is stable while the content is, so people editing together share one session', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download', 'files.edit']);
    const file = await upload(o.client, 'shared.xlsx', await documents.xlsx('a'));
    const first = await openConfig(o.client, file.id);
    const second = await openConfig(sub.client, file.id);
    expect(second.config.document.key).toBe(first.config.document.key);
    expect(second.config.documentType).toBe('cell');
    expect(second.config.editorConfig.user.id).toBe(sub.id);
    // New content (a replace through the API): a new key, so the editor never opens stale bytes.
    const form = new FormData();
    form.append('file', new File([await documents.xlsx('b')], 'shared.xlsx'));
    expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    expect((await openConfig(o.client, file.id)).config.document.key).not.toBe(first.config.document.key);
  });

  test('mode: edit for editable formats with files.edit; view for PDF, old binary formats and logins without files.edit', async () => {
    const o = await seed.owner(t);
    const viewer = await seed.subUser(t, o, ['files.download']);
    const editor = await seed.subUser(t, o, ['files.download', 'files.edit']);
    const docx = await upload(o.client, 'a.docx', await documents.docx('x'));
    const pdf = await upload(o.client, 'a.pdf', documents.pdf('x'));
    const doc = await upload(o.client, 'old.doc', documents.cfb('x'));
    const csv = await upload(o.client, 'table.csv', 'a,b\n1,2\n');
    const mode = async (c: TestClient, id: string) => (await openConfig(c, id)).config.editorConfig.mode;
    expect(await mode(o.client, docx.id)).toBe('edit');
    expect(await mode(editor.client, docx.id)).toBe('edit');
    expect(await mode(viewer.client, docx.id)).toBe('view');
    expect(await mode(o.client, pdf.id)).toBe('view');
    expect(await mode(o.client, doc.id)).toBe('view');
    expect(await mode(o.client, csv.id)).toBe('edit');
    const viewed = await openConfig(viewer.client, docx.id);
    expect(viewed.config.document.permissions.edit).toBe(false);
    expect((await openConfig(o.client, pdf.id)).config.documentType).toBe('pdf');
  });

  test('a sub-user without files.download gets 403 (reading a document is downloading it)', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.edit', 'files.upload']);
    const file = await upload(o.client, 'a.docx', await documents.docx('x'));
    const res = await sub.client.get(`/api/docserver/config/${file.id}`);
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual(errors.permission('Download'));
  });

  test("another account's file, a missing id and a trashed file are 404", async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const file = await upload(other.client, 'theirs.docx', await documents.docx('x'));
    expect((await o.client.get(`/api/docserver/config/${file.id}`)).status).toBe(404);
    expect((await o.client.get('/api/docserver/config/no-such-file-00000000')).status).toBe(404);
    expect((await other.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    expect((await other.client.get(`/api/docserver/config/${file.id}`)).status).toBe(404);
  });

  test('400: an extension the editor does not open, a folder, and content that does not match its extension', async () => {
    const o = await seed.owner(t);
    const png = new Uint8Array([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0,
    ]);
    const image = await upload(o.client, 'photo.png', png);
    const disguised = await upload(o.client, 'notes.txt', png);
    const fakeDocx = await upload(o.client, 'letter.docx', 'just text, not a document');
    const sheetAsDoc = await upload(o.client, 'sheet.docx', await documents.xlsx('x'));
    const dir = await json(await o.client.post('/api/files/folder', { name: 'Docs.docx' }));
    for (const id of [image.id, disguised.id, fakeDocx.id, sheetAsDoc.id, dir.id]) {
      const res = await o.client.get(`/api/docserver/config/${id}`);
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBeString();
    }
    expect((await json(await o.client.get(`/api/docserver/config/${sheetAsDoc.id}`))).message).toBe(
      "The file's content does not match its extension, so it is not opened in the editor",
    );
  });

  test('424 when no document server is configured', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'a.docx', await documents.docx('x'));
    await configure('', '');
    try {
      const res = await o.client.get(`/api/docserver/config/${file.id}`);
      expect(res.status).toBe(424);
      expect((await json(res)).message).toContain('No document server');
      expect(await json(await o.client.get('/api/user/docserver-configured'))).toMatchObject({ configured: false });
    } finally {
      await configure();
    }
    expect(await json(await o.client.get('/api/user/docserver-configured'))).toMatchObject({
      configured: true,
      extensions: expect.arrayContaining(['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'csv', 'txt', 'pdf', 'doc', 'xls', 'ppt']),
    });
  });
});

describe('GET /api/docserver/viewer/:id', () => {
  test('a page that loads api.js from the document server and opens the editor; its CSP allows only that origin', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, "Plan & 'budget' \u2028 2030.docx", await documents.docx('x'));
    const res = await o.client.get(`/api/docserver/viewer/${file.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = Object.fromEntries(
      res.headers
        .get('content-security-policy')!
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name!, values]),
    );
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['script-src']![0]).toBe(double.url);
    expect(csp['script-src']!.slice(1)).toEqual([expect.stringMatching(/^'sha256-/)]);
    expect(csp['frame-src']).toEqual([double.url]);
    expect(csp['frame-ancestors']).toEqual(["'self'"]);
    expect(JSON.stringify(csp)).not.toContain('unsafe');
    const html = await res.text();
    expect(html).toStartWith('<!DOCTYPE html>');
    expect(html).toContain(`<script src="${double.url}/web-apps/apps/api/documents/api.js"></script>`);
    expect(html.match(/<\/script>/g)!.length).toBe(3);
    const data = JSON.parse(/<script type="application\/json" id="docserver-config">(.*?)<\/script>/s.exec(html)![1]!);
    expect(data.config.document.title).toBe(file.name);
    const { payload } = await jwtVerify(data.token, secret());
    expect((payload as any).document.key).toBe(data.config.document.key);
    // The hash in the CSP is the hash of the inline script on the page.
    const inline = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = new Bun.CryptoHasher('sha256').update(inline).digest('base64');
    expect(csp['script-src']).toContain(`'sha256-${hash}'`);
  });

  test('refusals are HTML pages: 400, 404, 424, and no session', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const theirs = await upload(other.client, 'theirs.docx', await documents.docx('x'));
    const bad = await upload(o.client, 'bad.docx', 'not a document');
    const page = async (res: Response, status: number, text: string) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).not.toContain('script-src');
      const html = await res.text();
      expect(html).toStartWith('<!DOCTYPE html>');
      expect(html).toContain(text);
    };
    await page(await o.client.get(`/api/docserver/viewer/${bad.id}`), 400, 'does not match its extension');
    await page(await o.client.get(`/api/docserver/viewer/${theirs.id}`), 404, 'File or folder not found');
    await page(await t.client().get(`/api/docserver/viewer/${bad.id}`), 401, 'Sign in');
    const noDownload = await seed.subUser(t, o, ['files.edit']);
    await page(await noDownload.client.get(`/api/docserver/viewer/${bad.id}`), 403, 'Download');
    await configure('', '');
    try {
      await page(await o.client.get(`/api/docserver/viewer/${bad.id}`), 424, 'No document server is connected');
    } finally {
      await configure();
    }
  });
});

describe('where the document server reaches Coffer', () => {
  test('the share base URL when one is set: document.url and callbackUrl use it, and that host serves both', async () => {
    const { o, file } = await editing();
    const shareOrigin = `http://share.test:${new URL(t.url).port}`;
    expect((await admin.client.put('/api/user/share-base-url-config', { url: shareOrigin })).status).toBe(200);
    try {
      const { config, token } = await openConfig(o.client, file.id);
      expect(config.document.url).toStartWith(`${shareOrigin}/api/docserver/file/${file.id}?t=`);
      expect(config.editorConfig.callbackUrl).toBe(`${shareOrigin}/api/docserver/callback`);
      const onShareHost = (path: string, init: RequestInit = {}) =>
        fetch(`${t.url}${path}`, { ...init, headers: { ...init.headers, host: new URL(shareOrigin).host } });
      const link = new URL(config.document.url);
      expect((await onShareHost(link.pathname + link.search)).status).toBe(200);
      const callback = await onShareHost('/api/docserver/callback', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      expect(callback.status).toBe(422);
      expect((await onShareHost(`/api/docserver/config/${file.id}`)).status).toBe(404);
    } finally {
      await admin.client.put('/api/user/share-base-url-config', { url: null });
    }
  });

  test('desktop-only access leaves the file link and the callback open, and closes the editor to browsers', async () => {
    const { o, file, key, opened } = await editing();
    expect((await admin.client.put('/api/user/desktop-only-access-config', { enabled: true })).status).toBe(200);
    try {
      expect((await fetch(opened.config.document.url)).status).toBe(200);
      expect(await json(await double.callback(key, 1))).toEqual({ error: 0 });
      const res = await o.client.get(`/api/docserver/config/${file.id}`);
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.desktopOnly);
    } finally {
      await admin.client.put('/api/user/desktop-only-access-config', { enabled: false }, { 'x-desktop-client': '1' });
    }
  });

  test('DOCSERVER_BACKEND_URL wins (a reverse proxy with a path); an invalid autosave interval is a start-up warning', async () => {
    const logger = memoryLogger();
    const other = await startTestServer({
      logger,
      env: { DOCSERVER_BACKEND_URL: 'http://coffer.internal:8080/coffer/', DOCSERVER_AUTOSAVE_INTERVAL_MS: '420000' },
    });
    try {
      const a = await seed.admin(other);
      await a.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret });
      const file = await upload(a.client, 'a.docx', await documents.docx('x'));
      const { config } = await openConfig(a.client, file.id);
      expect(config.document.url).toStartWith(`http://coffer.internal:8080/coffer/api/docserver/file/${file.id}?t=`);
      expect(config.editorConfig.callbackUrl).toBe('http://coffer.internal:8080/coffer/api/docserver/callback');
      expect(logger.lines.find((l) => l.level === 'warn' && l.msg.startsWith('DOCSERVER_AUTOSAVE_INTERVAL_MS'))!.msg).toContain(
        'using 300000 (5 minutes)',
      );
      expect(other.server.ctx.schedules.get(`docserver.forcesave:${config.document.key}`)!.intervalMs).toBe(5 * MINUTE);
    } finally {
      await other.stop();
    }
  });
});

describe('GET /api/docserver/file/:id', () => {
  test('the document server fetches the file with the link in the config; ranges work', async () => {
    const { bytes, opened } = await editing();
    expect(double.sessions.get(opened.config.document.key)!.opened).toEqual(bytes);
    const res = await fetch(opened.config.document.url, { headers: { range: 'bytes=0-9' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 0-9/${bytes.length}`);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(bytes.subarray(0, 10)));
  });

  test("refused without a token, with an expired, tampered or other file's token, and for another account's file", async () => {
    const { o, file, opened } = await editing();
    const mine = await upload(o.client, 'second.docx', await documents.docx('2'));
    const link = new URL(opened.config.document.url);
    const token = link.searchParams.get('t')!;
    const get = (path: string) => fetch(`${t.url}${path}`);
    expect((await get(`/api/docserver/file/${file.id}`)).status).toBe(401);
    const flipped = token.slice(0, -3) + (token.at(-3) === 'A' ? 'B' : 'A') + token.slice(-2);
    expect((await get(`/api/docserver/file/${file.id}?t=${flipped}`)).status).toBe(401);
    expect((await get(`/api/docserver/file/${mine.id}?t=${token}`)).status).toBe(401);
    // A link signed by Coffer, naming this account and key, but another account's file.
    const other = await seed.owner(t);
    const theirs = await upload(other.client, 'theirs.docx', await documents.docx('secret'));
    const forged = await t.server.ctx.services.docserver.fileLinkToken({
      file: theirs.id,
      account: o.id,
      key: opened.config.document.key,
      login: o.id,
    });
    const res = await get(`/api/docserver/file/${theirs.id}?t=${forged}`);
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain('secret');
    // This file and key, but another account named: the key was not handed out to it.
    const otherAccount = await t.server.ctx.services.docserver.fileLinkToken({
      file: file.id,
      account: other.id,
      key: opened.config.document.key,
      login: other.id,
    });
    expect((await get(`/api/docserver/file/${file.id}?t=${otherAccount}`)).status).toBe(401);
    // A session's document server secret cannot mint links: they are signed with Coffer's own key.
    const asDocserver = await new (await import('jose')).SignJWT({
      file: file.id,
      account: o.id,
      key: opened.config.document.key,
      login: o.id,
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('coffer:docserver-file')
      .setExpirationTime('5m')
      .sign(secret());
    expect((await get(`/api/docserver/file/${file.id}?t=${asDocserver}`)).status).toBe(401);
    expect((await get(link.pathname + link.search)).status).toBe(200);
    clock.advance(16 * MINUTE);
    try {
      const expired = await get(link.pathname + link.search);
      expect(expired.status).toBe(401);
      expect(await json(expired)).toEqual({ message: 'Invalid or expired document link' });
    } finally {
      clock.advance(-16 * MINUTE);
    }
  });
});

describe('POST /api/docserver/callback', () => {
  test('401 unless the body token or the Bearer header verifies with the shared secret; nothing changes', async () => {
    const { o, file, bytes, key } = await editing();
    double.edit(key, await documents.docx('forged'));
    const served = double.servedEdits;
    for (const opts of [{ sign: 'none' as const }, { secret: 'wrong secret' }, { sign: 'body' as const, secret: 'wrong' }]) {
      const res = await double.callback(key, 2, {}, opts);
      expect(res.status).toBe(401);
      expect(await json(res)).toEqual({ message: 'Invalid document server callback token' });
    }
    // The editor config's own token, replayed as a callback, names no status: refused, nothing saved.
    const replay = await fetch(`${t.url}/api/docserver/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: (await openConfig(o.client, file.id)).token, key, status: 2, url: `${double.url}/x` }),
    });
    expect(replay.status).toBe(422);
    expect(await download(o.client, file.id)).toEqual(bytes);
    expect(double.servedEdits).toBe(served);
    expect(auditEntries('access.denied', 'POST /api/docserver/callback').length).toBeGreaterThanOrEqual(3);
  });

  test('status 1 notes the editors; a token in the header alone or the body alone is accepted', async () => {
    const { key } = await editing();
    expect(await json(await double.callback(key, 1, {}, { sign: 'header' }))).toEqual({ error: 0 });
    expect(await json(await double.callback(key, 1, {}, { sign: 'body' }))).toEqual({ error: 0 });
    expect(t.server.ctx.repos.docserver.get(key)!.editors).toBe(JSON.stringify([double.sessions.get(key)!.userId]));
  });

  test('status 2 saves the edited version (streamed through encryption), ends the session and its schedule', async () => {
    const { o, file, bytes, key } = await editing();
    await drain();
    const objects = blobFiles(t.dataDir).objects.length;
    const usedBefore = t.server.ctx.services.quota.usage(o.id).used;
    const edited = await documents.docx('second version, a little longer than the first');
    double.edit(key, edited);
    expect(schedule(key)).not.toBeNull();
    const res = await double.callback(key, 2);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ error: 0 });
    expect(await download(o.client, file.id)).toEqual(edited);
    const info = await json(await o.client.get(`/api/files/${file.id}/info`));
    expect(info.size).toBe(edited.length);
    // The content before stays as a version, so it still counts.
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(usedBefore + edited.length);
    const [listed] = (await json(await o.client.get('/api/files'))).filter((i: any) => i.id === file.id);
    expect(listed.mimeType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(schedule(key)).toBeNull();
    const saves = auditEntries('document.save', file.id);
    expect(saves).toHaveLength(1);
    expect(saves[0]).toMatchObject({ status: 'success', loginId: o.id, details: { key, status: 2 } });
    // The new object is written; the old one is kept as the file's version.
    expect(blobFiles(t.dataDir).objects.length).toBe(objects + 1);
    await drain();
    expect(blobFiles(t.dataDir).objects.length).toBe(objects + 1);
    const [version] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    expect(version).toMatchObject({ size: bytes.length, source: 'upload' });
    // The session is over: opening again gives a new key.
    expect((await openConfig(o.client, file.id)).config.document.key).not.toBe(key);
  });

  test('status 6 (force-save) saves and keeps the session: the key follows the saved content; streams hear file.updated', async () => {
    const { o, file, key } = await editing();
    const stream = await o.client.get('/api/files/events');
    const events = new SseReader(stream);
    expect(await events.nextData()).toEqual({ type: 'connected' });
    const edited = await documents.docx('saved with Ctrl+S');
    double.edit(key, edited);
    expect(await json(await double.callback(key, 6, { forcesavetype: 1 }))).toEqual({ error: 0 });
    const event = await events.nextData();
    await events.close();
    expect(event).toMatchObject({ type: 'file.updated', data: { id: file.id, name: file.name, size: edited.length, userId: o.id } });
    expect(await download(o.client, file.id)).toEqual(edited);
    expect(schedule(key)).not.toBeNull();
    expect((await openConfig(o.client, file.id)).config.document.key).toBe(key);
    expect(auditEntries('document.save', file.id)[0]!.details).toMatchObject({ status: 6, forcesavetype: 1 });
  });

  test('status 4 (closed without changes) removes the schedule; statuses 3 and 7 keep the stored version', async () => {
    const { o, file, bytes, key } = await editing();
    double.edit(key, await documents.docx('broken'));
    expect(await json(await double.callback(key, 7, { forcesavetype: 0 }))).toEqual({ error: 0 });
    expect(await json(await double.callback(key, 3))).toEqual({ error: 0 });
    expect(await download(o.client, file.id)).toEqual(bytes);
    expect(auditEntries('document.save', file.id).map((e) => e.status)).toEqual(['failure', 'failure']);
    expect(schedule(key)).not.toBeNull();
    expect(await json(await double.callback(key, 4))).toEqual({ error: 0 });
    expect(schedule(key)).toBeNull();
    expect((await openConfig(o.client, file.id)).config.document.key).not.toBe(key);
  });

  test('over the storage limit: {error: 1}, the old bytes and the usage stay, nothing is left behind', async () => {
    const { o, file, bytes, key } = await editing();
    const used = t.server.ctx.services.quota.usage(o.id).used;
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(used + 10, o.id);
    const objects = blobFiles(t.dataDir).objects.length;
    double.edit(key, await documents.docx('x'.repeat(5000)));
    const answer = await json(await double.callback(key, 6, { forcesavetype: 1 }));
    expect(answer.error).toBe(1);
    expect(answer.message).toStartWith('Storage limit exceeded.');
    expect(await download(o.client, file.id)).toEqual(bytes);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(used);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects);
    expect(blobFiles(t.dataDir).temp).toEqual([]);
  });

  test('storage used up by another upload while the edited version downloads: {error: 1} at commit, the old bytes stay', async () => {
    const { o, file, bytes, key } = await editing();
    const edited = await documents.docx('y'.repeat(5000));
    const growth = edited.length - bytes.length;
    const used = t.server.ctx.services.quota.usage(o.id).used;
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(used + growth + 100, o.id);
    const objects = blobFiles(t.dataDir).objects.length;
    let other: { id: string } | null = null;
    double.edit(key, edited, async () => {
      other = await upload(o.client, 'meanwhile.bin', new Uint8Array(200));
    });
    const answer = await json(await double.callback(key, 2));
    expect(answer.error).toBe(1);
    expect(answer.message).toStartWith('Storage limit exceeded.');
    expect(other).not.toBeNull();
    expect(await download(o.client, file.id)).toEqual(bytes);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(used + 200);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects + 1);
  });

  test('SSRF: a url on another host, or redirected off the document server (169.254.169.254), is never fetched', async () => {
    const { o, file, bytes, key } = await editing();
    const edited = await documents.docx('from elsewhere');
    const path = new URL(double.edit(key, edited)).pathname;
    const served = double.servedEdits;
    const elsewhere = [
      `http://localhost:${new URL(double.url).port}${path}`,
      `http://127.0.0.2:${new URL(double.url).port}${path}`,
      `https://127.0.0.1:${new URL(double.url).port}${path}`,
      double.redirectTo('http://169.254.169.254/latest/meta-data/'),
      double.redirectTo(`http://localhost:${new URL(double.url).port}${path}`),
      'file:///etc/passwd',
    ];
    for (const url of elsewhere) {
      const answer = await json(await double.callback(key, 6, { url, forcesavetype: 1 }));
      expect(answer.error).toBe(1);
    }
    expect(double.servedEdits).toBe(served);
    expect(await download(o.client, file.id)).toEqual(bytes);
    // A redirect that stays on the document server is followed.
    expect(await json(await double.callback(key, 6, { url: double.redirectTo(double.url + path), forcesavetype: 1 }))).toEqual({
      error: 0,
    });
    expect(await download(o.client, file.id)).toEqual(edited);
  });

  test('two callbacks with one url save once, concurrently or not', async () => {
    const { o, file, key } = await editing();
    const edited = await documents.docx('once');
    const url = double.edit(key, edited);
    const versions = () =>
      t.server.ctx.db.$client.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM file_versions WHERE item_id = ?').get(file.id)!.n;
    const served = double.servedEdits;
    const answers = await Promise.all([
      double.callback(key, 6, { url, forcesavetype: 1 }),
      double.callback(key, 6, { url, forcesavetype: 1 }),
    ]);
    for (const r of answers) expect(await json(r)).toEqual({ error: 0 });
    expect(await json(await double.callback(key, 2, { url }))).toEqual({ error: 0 });
    expect(auditEntries('document.save', file.id)).toHaveLength(1);
    expect(double.servedEdits - served).toBe(1);
    expect(await download(o.client, file.id)).toEqual(edited);
    // One replaced object, so one version.
    expect(versions()).toBe(1);
  });

  test("a forged key naming another account's file is refused (404, error 1) and that file is untouched", async () => {
    const { key } = await editing();
    const other = await seed.owner(t);
    const theirsBytes = await documents.docx('theirs');
    const theirs = await upload(other.client, 'theirs.docx', theirsBytes);
    const forgedKey = `${theirs.id}.${key.split('.')[1]}`;
    const url = double.edit(key, await documents.docx('overwrite'));
    for (const status of [2, 6]) {
      const res = await double.callback(forgedKey, status, { url, forcesavetype: 1 }, { callbackUrl: `${t.url}/api/docserver/callback` });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ message: 'Document editing session not found', error: 1 });
    }
    expect(await download(other.client, theirs.id)).toEqual(theirsBytes);
  });

  test('an edited version whose content or type does not fit the extension is refused', async () => {
    const { o, file, bytes, key } = await editing();
    double.edit(key, await documents.xlsx('a spreadsheet'));
    expect((await json(await double.callback(key, 6, { forcesavetype: 1 }))).error).toBe(1);
    double.edit(key, await documents.docx('fine, but announced as odt'));
    const answer = await json(await double.callback(key, 6, { forcesavetype: 1, filetype: 'odt' }));
    expect(answer).toMatchObject({ error: 1, message: expect.stringContaining('assemblyFormatAsOrigin') });
    expect(await download(o.client, file.id)).toEqual(bytes);
  });
});

describe('a disabled account', () => {
  const setDisabled = async (id: string, disabled: boolean) =>
    expect((await admin.client.send('PATCH', `/api/user/${id}`, { disabled })).status).toBe(200);

  test('its file link is 403, a signed save is refused (error 1) and auto-save stops; enabled again, all work again', async () => {
    const { o, file, bytes, key, opened } = await editing();
    await setDisabled(o.id, true);
    const link = await fetch(opened.config.document.url);
    expect(link.status).toBe(403);
    expect(await json(link)).toEqual(errors.accountDisabled);
    double.edit(key, await documents.docx('saved while disabled'));
    expect(await json(await double.callback(key, 6, { forcesavetype: 1 }))).toEqual({ error: 1, ...errors.accountDisabled });
    expect(auditEntries('document.save', file.id)[0]).toMatchObject({
      status: 'failure',
      details: { reason: errors.accountDisabled.message },
    });
    clock.advance(2 * MINUTE);
    await drain();
    expect(double.commands.filter((c) => c.payload?.key === key)).toEqual([]);
    expect(schedule(key)).toBeNull();
    expect(await json(await double.callback(key, 1, { users: [o.id] }))).toEqual({ error: 0 });
    expect(schedule(key)).toBeNull();

    await setDisabled(o.id, false);
    const client = await seed.login(t, o.email);
    expect(await download(client, file.id)).toEqual(bytes);
    expect((await fetch(opened.config.document.url)).status).toBe(200);
    expect(await json(await double.callback(key, 1, { users: [o.id] }))).toEqual({ error: 0 });
    expect(schedule(key)).not.toBeNull();
    const edited = await documents.docx('saved once enabled again');
    double.edit(key, edited);
    expect(await json(await double.callback(key, 6, { forcesavetype: 1 }))).toEqual({ error: 0 });
    expect(await download(client, file.id)).toEqual(edited);
  });
});

describe('auto-save', () => {
  const commandsFor = (key: string) => double.commands.filter((c) => c.payload?.key === key);

  test('each interval the worker sends a signed forcesave (key also as shardkey); the server calls back with status 6', async () => {
    const { o, file, key } = await editing();
    const edited = await documents.docx('auto-saved');
    double.edit(key, edited);
    clock.advance(2 * MINUTE);
    await drain();
    const [command] = commandsFor(key);
    expect(command).toMatchObject({ path: '/command', shardkey: key, payload: { c: 'forcesave', key } });
    await double.settled();
    expect(await download(o.client, file.id)).toEqual(edited);
    expect(auditEntries('document.save', file.id)[0]!.details).toMatchObject({ status: 6, forcesavetype: 0 });
    // Nothing changed since: error 4, the schedule stays.
    clock.advance(MINUTE);
    await drain();
    expect(commandsFor(key)).toHaveLength(2);
    expect(schedule(key)).not.toBeNull();
  });

  test('one schedule per document key, aligned to the interval, created by config and viewer alike', async () => {
    const { o, file, key } = await editing();
    expect((await o.client.get(`/api/docserver/viewer/${file.id}`)).status).toBe(200);
    await openConfig(o.client, file.id);
    const rows = t.server.ctx.db.$client
      .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM schedules WHERE name LIKE ?')
      .get(`%${key}`)!;
    expect(rows.n).toBe(1);
    const s = schedule(key)!;
    expect(s.intervalMs).toBe(MINUTE);
    expect(s.nextRunAt % MINUTE).toBe(0);
    expect(s.nextRunAt).toBeGreaterThanOrEqual(clock.now() + MINUTE);
  });

  test('error 1 (the document is no longer open) removes the schedule; a later status 1 with editors brings it back', async () => {
    const { o, file, key, opened } = await editing();
    double.sessions.delete(key);
    clock.advance(2 * MINUTE);
    await drain();
    expect(commandsFor(key)).toHaveLength(1);
    expect(schedule(key)).toBeNull();
    // The command raced an editor still loading: once the server says someone edits, auto-save resumes.
    await double.open(opened.config, opened.token);
    expect(await json(await double.callback(key, 1, { users: [o.id] }))).toEqual({ error: 0 });
    expect(schedule(key)).not.toBeNull();
    expect((await openConfig(o.client, file.id)).config.document.key).toBe(key);
  });

  test('other errors are retried by the queue with backoff', async () => {
    // On a minute's boundary, so the 1 s backoff below cannot also reach the schedule's next window.
    clock.advance(MINUTE - (clock.now() % MINUTE));
    const { key } = await editing();
    double.commandError = 3;
    try {
      clock.advance(2 * MINUTE);
      await drain();
      expect(commandsFor(key)).toHaveLength(1);
      const failed = t.server.ctx.db.$client
        .query<{ attempts: number; lastError: string; runAt: number }, [string]>(
          `SELECT attempts, last_error AS lastError, run_at AS runAt FROM jobs WHERE kind = 'docserver.forcesave' AND payload = ? AND status = 'created'`,
        )
        .get(JSON.stringify({ key }))!;
      expect(failed.attempts).toBe(1);
      expect(failed.lastError).toContain('error 3');
      expect(failed.runAt).toBeGreaterThan(clock.now());
      double.commandError = null;
      clock.advance(1000);
      await drain();
      expect(commandsFor(key)).toHaveLength(2);
      expect(schedule(key)).not.toBeNull();
    } finally {
      double.commandError = null;
    }
  });

  test('/command answering 404: the legacy /coauthoring/CommandService.ashx for the rest of the run', async () => {
    const { key } = await editing();
    double.missingCommandPath = true;
    const legacy = '/coauthoring/CommandService.ashx';
    try {
      const before = double.commands.length;
      clock.advance(2 * MINUTE);
      await drain();
      expect(double.commands.slice(before).some((c) => c.path === '/command')).toBe(true);
      expect(commandsFor(key).at(-1)!.path).toBe(legacy);
      expect(schedule(key)).not.toBeNull();
      const mid = double.commands.length;
      clock.advance(MINUTE);
      await drain();
      const later = double.commands.slice(mid);
      expect(later.map((c) => c.payload?.key)).toContain(key);
      expect(later.every((c) => c.path === legacy)).toBe(true);
    } finally {
      double.missingCommandPath = false;
    }
  });

  test('schedules survive a restart', async () => {
    const { key } = await editing();
    await t.restart();
    expect(schedule(key)).not.toBeNull();
    clock.advance(2 * MINUTE);
    await drain();
    expect(commandsFor(key)).toHaveLength(1);
    expect(commandsFor(key)[0]!.path).toBe('/command');
  });
});
