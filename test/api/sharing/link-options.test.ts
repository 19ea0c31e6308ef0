import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { folder, listAll, SseReader, upload } from '../../helpers/files.ts';
import { SharesRepo } from '../../../src/db/repos/shares.ts';
import { ManualClock } from '../../../src/clock.ts';
import { createUpload, TUS } from '../../helpers/tus.ts';
import { holdOpens } from '../../helpers/hold-opens.ts';

let t: TestServer;
let owner: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

const shareRepo = () => new SharesRepo(t.server.ctx.db.$client);
const tokenOf = (url: string) => /\/s\/([A-Za-z0-9_-]+)/.exec(url)![1]!;
const HTML = { accept: 'text/html,application/xhtml+xml' };
const JSON_ACCEPT = { accept: 'application/json' };
// A 1×1 PNG, so the preview (inline) URL shape is exercised too.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

async function shareWith(client: TestClient, id: string, options: Record<string, unknown> = {}): Promise<string> {
  const res = await client.post('/api/files/share', { ids: [id], shared: true, ...options });
  expect(res.status).toBe(200);
  return tokenOf((await json(res)).links[id]);
}

/** Anonymous request with exactly this Cookie header (or none). */
function visit(path: string, init: { method?: string; cookie?: string; headers?: Record<string, string>; body?: string | FormData } = {}) {
  const headers = new Headers(init.headers);
  if (init.cookie) headers.set('cookie', init.cookie);
  return fetch(t.url + path, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual' });
}

async function unlock(token: string, password: string): Promise<Response> {
  return visit(`/s/${token}/unlock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
}

/** The unlock cookie a right password earns, as `name=value`. */
async function unlockCookie(token: string, password: string): Promise<string> {
  const res = await unlock(token, password);
  expect(res.status).toBe(204);
  const line = res.headers.getSetCookie().find((c) => c.startsWith('coffer_unlock='))!;
  expect(line).toContain(`Path=/s/${token}`);
  expect(line).toContain('HttpOnly');
  expect(line).toContain('Max-Age=86400');
  return line.split(';')[0]!;
}

function dropForm(files: Array<[string, string]>, uploader?: string): FormData {
  const form = new FormData();
  if (uploader !== undefined) form.append('uploader', uploader);
  for (const [name, content] of files) form.append('file', new File([content], name, { type: 'text/plain' }));
  return form;
}

describe('link options on POST /api/files/share, GET and PATCH /api/files/share/links', () => {
  test('a link carries its options; the list shows them (never the password); re-sharing changes only what it names', async () => {
    const o = await seed.owner(t);
    const docs = await folder(o.client, 'Docs');
    const token = await shareWith(o.client, docs.id, { password: 'correct horse', mode: 'view_upload', maxDownloads: 5 });

    const list = await json(await o.client.get('/api/files/share/links'));
    expect(list.nextCursor).toBeNull();
    expect(list.links).toEqual([
      {
        token,
        url: `${t.url}/s/${token}`,
        itemId: docs.id,
        itemName: 'Docs',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        mode: 'view_upload',
        hasPassword: true,
        maxDownloads: 5,
        downloads: 0,
        lastUsedAt: null,
      },
    ]);
    expect(JSON.stringify(list)).not.toContain('correct horse');
    expect(JSON.stringify(list)).not.toContain('argon2');

    // Omitted options keep their value; the expiry behaves as before (default 7d).
    expect(await shareWith(o.client, docs.id, { expiry: 'never' })).toBe(token);
    let [link] = (await json(await o.client.get('/api/files/share/links'))).links;
    expect(link).toMatchObject({ mode: 'view_upload', hasPassword: true, maxDownloads: 5, expiresAt: null });
    // An explicit null removes.
    await shareWith(o.client, docs.id, { password: null, maxDownloads: null });
    [link] = (await json(await o.client.get('/api/files/share/links'))).links;
    expect(link).toMatchObject({ mode: 'view_upload', hasPassword: false, maxDownloads: null });
    // So does a null mode: back to view, on POST /share and on PATCH alike.
    await shareWith(o.client, docs.id, { mode: null });
    [link] = (await json(await o.client.get('/api/files/share/links'))).links;
    expect(link).toMatchObject({ mode: 'view', hasPassword: false, maxDownloads: null });
    expect(await json(await o.client.send('PATCH', `/api/files/share/links/${token}`, { mode: 'upload' }))).toMatchObject({
      mode: 'upload',
    });
    expect(await json(await o.client.send('PATCH', `/api/files/share/links/${token}`, { mode: null }))).toMatchObject({ mode: 'view' });
    const file = await upload(o.client, 'plain.txt', 'x');
    expect((await o.client.post('/api/files/share', { ids: [file.id], shared: true, mode: null })).status).toBe(200);

    const patched = await o.client.send('PATCH', `/api/files/share/links/${token}`, { mode: 'upload', password: 'another one' });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ token, mode: 'upload', hasPassword: true, maxDownloads: null });
  });

  test('pages of links with a cursor, newest first', async () => {
    const o = await seed.owner(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await upload(o.client, `f${i}.txt`, 'x')).id);
    for (const id of ids) await shareWith(o.client, id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { links: Array<{ itemId: string }>; nextCursor: string | null } = await json(
        await o.client.get(`/api/files/share/links?limit=2${cursor ? `&cursor=${cursor}` : ''}`),
      );
      expect(page.links.length).toBeLessThanOrEqual(2);
      seen.push(...page.links.map((l) => l.itemId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    const one = await json(await o.client.get(`/api/files/share/links?itemId=${ids[2]}`));
    expect(one.links.map((l: { itemId: string }) => l.itemId)).toEqual([ids[2]]);
    expect((await o.client.get('/api/files/share/links?cursor=nope!')).status).toBe(400);
    expect((await o.client.get('/api/files/share/links?limit=0')).status).toBe(422);
  });

  test('the link of an item in the trash is listed, changed and removed there (it would work again on a restore)', async () => {
    const o = await seed.owner(t);
    const kept = await upload(o.client, 'kept.txt', 'kept');
    const ended = await upload(o.client, 'ended.txt', 'ended');
    const keptToken = await shareWith(o.client, kept.id);
    const endedToken = await shareWith(o.client, ended.id);
    expect((await o.client.post('/api/files/delete', { ids: [kept.id, ended.id] })).status).toBe(200);
    expect((await visit(`/s/${endedToken}`, { headers: JSON_ACCEPT })).status).toBe(404);
    const listed = async () => (await json(await o.client.get('/api/files/share/links'))).links.map((l: any) => l.token);
    expect(await listed()).toEqual(expect.arrayContaining([keptToken, endedToken]));

    const changed = await o.client.send('PATCH', `/api/files/share/links/${keptToken}`, { maxDownloads: 3 });
    expect([changed.status, (await json(changed)).maxDownloads]).toEqual([200, 3]);
    expect((await o.client.post('/api/files/share', { ids: [ended.id], shared: false })).status).toBe(200);
    expect(await listed()).not.toContain(endedToken);

    expect((await o.client.post('/api/files/trash/restore', { ids: [kept.id, ended.id] })).status).toBe(200);
    expect(await (await visit(`/s/${keptToken}/file/${kept.id}`)).text()).toBe('kept');
    expect((await visit(`/s/${endedToken}`, { headers: JSON_ACCEPT })).status).toBe(404);
    expect((await json(await o.client.get(`/api/files/${ended.id}/info`))).shared).toBe(false);
  });

  test('bad options are clear 4xx; another account’s token is 404; a sub-user without Share gets 403 naming it', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'one.txt', 'x');
    const dir = await folder(o.client, 'Dir');
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ password: '12345' }, 422, 'password'],
      [{ password: 'x'.repeat(129) }, 422, 'password'],
      [{ mode: 'edit' }, 422, 'mode'],
      [{ maxDownloads: 0 }, 422, 'maxDownloads'],
      [{ maxDownloads: 100_001 }, 422, 'maxDownloads'],
      [{ maxDownloads: 1.5 }, 422, 'maxDownloads'],
    ];
    for (const [options, status, field] of cases) {
      const res = await o.client.post('/api/files/share', { ids: [dir.id], shared: true, ...options });
      expect(res.status).toBe(status);
      expect((await json(res)).details[0].field).toBe(field);
    }
    const onFile = await o.client.post('/api/files/share', { ids: [file.id], shared: true, mode: 'upload' });
    expect(onFile.status).toBe(400);
    expect((await json(onFile)).message).toContain('Only a folder');

    const token = await shareWith(o.client, dir.id);
    expect((await owner.client.send('PATCH', `/api/files/share/links/${token}`, { mode: 'upload' })).status).toBe(404);
    expect(JSON.stringify(await json(await owner.client.get('/api/files/share/links')))).not.toContain(token);

    const sub = await seed.subUser(t, o, ['files.download']);
    for (const res of [
      await sub.client.get('/api/files/share/links'),
      await sub.client.send('PATCH', `/api/files/share/links/${token}`, { mode: 'upload' }),
    ]) {
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('"Share"');
    }
    const allowed = await seed.subUser(t, o, ['files.share']);
    expect((await allowed.client.send('PATCH', `/api/files/share/links/${token}`, { maxDownloads: 3 })).status).toBe(200);
  });
});

describe("a sub-user's drop folder", () => {
  test('a sub-user without "Upload & create" cannot give a link an upload mode (403, nothing changed); with it, it can', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'Inbox');
    const sharer = await seed.subUser(t, o, ['files.share']);
    for (const mode of ['upload', 'view_upload']) {
      const res = await sharer.client.post('/api/files/share', { ids: [dir.id], shared: true, mode });
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('"Upload & create"');
    }
    expect((await json(await o.client.get('/api/files/share/links'))).links).toEqual([]);

    const token = await shareWith(sharer.client, dir.id);
    for (const mode of ['upload', 'view_upload']) {
      const res = await sharer.client.send('PATCH', `/api/files/share/links/${token}`, { mode });
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('"Upload & create"');
    }
    const [link] = (await json(await o.client.get('/api/files/share/links'))).links;
    expect(link.mode).toBe('view');
    const form = new FormData();
    form.append('file', new File(['sneaked in'], 'sneaked.txt'));
    expect((await visit(`/s/${token}/upload`, { method: 'POST', body: form })).status).toBe(403);
    // Other options, and the view mode, stay the Share permission's.
    expect((await sharer.client.send('PATCH', `/api/files/share/links/${token}`, { mode: 'view', maxDownloads: 3 })).status).toBe(200);

    const uploader = await seed.subUser(t, o, ['files.share', 'files.upload']);
    expect((await uploader.client.send('PATCH', `/api/files/share/links/${token}`, { mode: 'upload' })).status).toBe(200);
  });
});

describe('a password holds on every URL under the link', () => {
  test('every URL shape refuses no cookie, a tampered one, another link’s and one from before a password change', async () => {
    const root = await folder(owner.client, 'Locked');
    const sub = await folder(owner.client, 'Inner', root.id);
    const file = await upload(owner.client, 'pic.png', PNG, { parentId: root.id });
    const token = await shareWith(owner.client, root.id, { password: 'first password', mode: 'view_upload' });
    const other = await folder(owner.client, 'Other');
    const otherToken = await shareWith(owner.client, other.id, { password: 'other password' });

    const shapes: Array<{ name: string; path: string; method?: string; headers?: Record<string, string>; body?: () => string | FormData }> =
      [
        { name: 'page JSON', path: `/s/${token}`, headers: JSON_ACCEPT },
        { name: 'subfolder JSON', path: `/s/${token}/folder/${sub.id}`, headers: JSON_ACCEPT },
        { name: 'file', path: `/s/${token}/file/${file.id}` },
        { name: 'HEAD file', path: `/s/${token}/file/${file.id}`, method: 'HEAD' },
        { name: 'Range from 0', path: `/s/${token}/file/${file.id}`, headers: { range: 'bytes=0-9' } },
        { name: 'Range from 10', path: `/s/${token}/file/${file.id}`, headers: { range: 'bytes=10-19' } },
        { name: 'preview', path: `/s/${token}/file/${file.id}?inline=1` },
        { name: 'thumbnail', path: `/s/${token}/thumbnail/${file.id}` },
        { name: 'subfolder ZIP', path: `/s/${token}/file/${sub.id}` },
        { name: 'ZIP', path: `/s/${token}/zip` },
        { name: 'upload', path: `/s/${token}/upload`, method: 'POST', headers: JSON_ACCEPT, body: () => dropForm([['in.txt', 'hi']]) },
      ];
    const expectLocked = async (cookie: string | undefined, label: string) => {
      for (const s of shapes) {
        const res = await visit(s.path, { method: s.method, headers: s.headers, cookie, body: s.body?.() });
        expect(`${label} ${s.name} ${res.status}`).toBe(`${label} ${s.name} 401`);
        if (s.name === 'tus create') continue;
        if (s.method !== 'HEAD') expect((await json(res)).message).toContain('protected by a password');
      }
      // A browser gets the password form, which brings it back to where it was going.
      const page = await visit(`/s/${token}/folder/${sub.id}`, { headers: HTML, cookie });
      expect(page.status).toBe(401);
      const html = await page.text();
      expect(html).toContain(`action="/s/${token}/unlock"`);
      expect(html).toContain(`value="/s/${token}/folder/${sub.id}"`);
      expect(html).not.toContain('Inner');
    };

    await expectLocked(undefined, 'no cookie');
    const good = await unlockCookie(token, 'first password');
    const [name, value] = good.split('=') as [string, string];
    const [expires, sig] = value.split('.') as [string, string];
    await expectLocked(`${name}=${expires}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`, 'tampered signature');
    await expectLocked(`${name}=${Number(expires) + 1000}.${sig}`, 'tampered expiry');
    await expectLocked(await unlockCookie(otherToken, 'other password'), 'other link');

    // With the right cookie every shape answers.
    for (const s of shapes) {
      const res = await visit(s.path, { method: s.method, headers: s.headers, cookie: good, body: s.body?.() });
      expect(`${s.name} ${res.status}`).toMatch(new RegExp(`^${s.name} (200|201|206)$`));
      await res.arrayBuffer();
    }

    // A new password ends every cookie issued for the old one.
    expect((await owner.client.send('PATCH', `/api/files/share/links/${token}`, { password: 'second password' })).status).toBe(200);
    await expectLocked(good, 'before the change');
    expect((await unlock(token, 'first password')).status).toBe(401);
    const fresh = await unlockCookie(token, 'second password');
    expect((await visit(`/s/${token}`, { headers: JSON_ACCEPT, cookie: fresh })).status).toBe(200);
    // Removing the password opens the link to everyone again.
    await owner.client.send('PATCH', `/api/files/share/links/${token}`, { password: null });
    expect((await visit(`/s/${token}`, { headers: JSON_ACCEPT })).status).toBe(200);
    const nothingToUnlock = await unlock(token, 'any words');
    expect(nothingToUnlock.status).toBe(204);
    expect(nothingToUnlock.headers.getSetCookie()).toEqual([]);
  });

  test('the page form unlocks with a 303 back to where the visitor was going; a wrong password shows the form again', async () => {
    const root = await folder(owner.client, 'Form');
    const token = await shareWith(owner.client, root.id, { password: 'open sesame' });
    const form = (password: string, next: string) =>
      visit(`/s/${token}/unlock`, {
        method: 'POST',
        headers: { ...HTML, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ password, next }).toString(),
      });
    const wrong = await form('nope nope', `/s/${token}/zip`);
    expect(wrong.status).toBe(401);
    const html = await wrong.text();
    expect(html).toContain('That password is not right');
    expect(html).toContain(`value="/s/${token}/zip"`);
    expect(wrong.headers.get('content-security-policy')).toContain("form-action 'self'");

    const right = await form('open sesame', `/s/${token}/zip`);
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe(`/s/${token}/zip`);
    expect(right.headers.getSetCookie()[0]).toContain(`Path=/s/${token}`);
    // Elsewhere than under the link is never a destination.
    for (const next of ['https://evil.example/', `//evil.example/s/${token}`, '/api/files', `/s/${token}x`]) {
      expect((await form('open sesame', next)).headers.get('location')).toBe(`/s/${token}`);
    }
    const json401 = await unlock(token, 'wrong again');
    expect(json401.status).toBe(401);
    expect(await json(json401)).toEqual({ message: 'Wrong password for this share link' });
    expect((await unlock(token, '')).status).toBe(422);
  });

  test('wrong passwords: 10 per link and address, then every unlock is 429 with Retry-After, the right one included; 50 concurrent guessers get at most 10 checks', async () => {
    const a = await folder(owner.client, 'Guarded');
    const token = await shareWith(owner.client, a.id, { password: 'the right one' });
    // A right password does not use up an attempt.
    for (let i = 0; i < 3; i++) expect((await unlock(token, 'the right one')).status).toBe(204);
    const guesses = await Promise.all(Array.from({ length: 50 }, (_, i) => unlock(token, `guess number ${i}`)));
    const statuses = guesses.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(40);
    const refused = await unlock(token, 'the right one');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.getSetCookie()).toEqual([]);
    // Another link is not affected.
    const b = await folder(owner.client, 'Unguarded');
    const other = await shareWith(owner.client, b.id, { password: 'the right one' });
    expect((await unlock(other, 'the right one')).status).toBe(204);
    // Audited: the 10 checked guesses as failures, the 41 refused ones as denied.
    t.server.ctx.services.audit.flush();
    const linkId = shareRepo().linkByToken(token)!.id;
    const failed = t.server.ctx.services.audit.list({ action: 'share.unlock_failed', limit: 1000 }).filter((e) => e.targetId === linkId);
    expect(failed.filter((e) => e.status === 'failure').length).toBe(10);
    expect(failed.filter((e) => e.status === 'denied').length).toBe(41);
  });
});

describe('wrong link passwords from many addresses', () => {
  let p: TestServer;
  let sharer: seed.SeededLogin;
  beforeAll(async () => {
    // A clock that stands still: the guesses cannot straddle two windows of the limits.
    p = await startTestServer({ startWorker: false, clock: new ManualClock(Date.now()) });
    const admin = await seed.admin(p);
    // Loopback is a known proxy, so each guess can come from an address of its own (X-Forwarded-For).
    expect((await admin.client.put('/api/user/known-proxies-config', { knownProxies: ['127.0.0.1'] })).status).toBe(200);
    await p.restart({ samePort: true });
    sharer = await seed.owner(p);
  });
  afterAll(() => p.stop());

  test('count per link too: past 100 in 15 minutes every address gets 429, the right password included; a visitor already in keeps going', async () => {
    const root = await folder(sharer.client, 'Guarded from many');
    const res = await sharer.client.post('/api/files/share', { ids: [root.id], shared: true, password: 'the right one' });
    const token = tokenOf((await json(res)).links[root.id]);
    const from = (n: number, password: string) =>
      fetch(`${p.url}/s/${token}/unlock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.30.${Math.floor(n / 200)}.${n % 200}` },
        body: JSON.stringify({ password }),
      });
    const inside = await from(0, 'the right one');
    expect(inside.status).toBe(204);
    const cookie = inside.headers.getSetCookie()[0]!.split(';')[0]!;
    // Ten addresses, each under its own limit of 10: the link's 100 is what stops them.
    const statuses: number[] = [];
    for (let n = 1; n <= 11; n++) for (let i = 0; i < 10; i++) statuses.push((await from(n, `guess ${n}-${i}`)).status);
    expect(statuses.filter((s) => s === 401).length).toBe(100);
    expect(statuses.filter((s) => s === 429).length).toBe(10);
    const refused = await from(500, 'the right one');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const page = await fetch(`${p.url}/s/${token}`, { headers: { cookie, accept: 'application/json' } });
    expect(page.status).toBe(200);
  });
});

describe('download caps', () => {
  test('concurrent downloads never pass the cap; a Range not starting at 0 is still served; the page then answers 410', async () => {
    const file = await upload(owner.client, 'capped.txt', '0123456789abcdefghij');
    const token = await shareWith(owner.client, file.id, { maxDownloads: 3 });
    // Page views and HEAD do not count.
    for (let i = 0; i < 3; i++) expect((await visit(`/s/${token}`, { headers: JSON_ACCEPT })).status).toBe(200);
    expect((await visit(`/s/${token}/file/${file.id}`, { method: 'HEAD' })).status).toBe(200);
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await visit(`/s/${token}/file/${file.id}`);
        return { status: res.status, body: await res.text() };
      }),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(3);
    expect(results.filter((r) => r.status === 200).every((r) => r.body === '0123456789abcdefghij')).toBe(true);
    expect(results.filter((r) => r.status === 410).length).toBe(17);
    const rest = await visit(`/s/${token}/file/${file.id}`, { headers: { range: 'bytes=10-' } });
    expect(rest.status).toBe(206);
    expect(await rest.text()).toBe('abcdefghij');
    expect((await visit(`/s/${token}/file/${file.id}`, { headers: { range: 'bytes=0-' } })).status).toBe(410);
    const page = await visit(`/s/${token}`, { headers: HTML });
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('download limit');
    const [link] = (await json(await owner.client.get('/api/files/share/links'))).links.filter((l: any) => l.token === token);
    expect(link).toMatchObject({ downloads: 3, maxDownloads: 3, lastUsedAt: expect.any(String) });
    // Raising the cap opens it again.
    await owner.client.send('PATCH', `/api/files/share/links/${token}`, { maxDownloads: 4 });
    expect((await visit(`/s/${token}/file/${file.id}`)).status).toBe(200);
  });

  test("a Range under an If-Range that is not the file's ETag is served whole and counts as the download it is", async () => {
    const file = await upload(owner.client, 'if-range.txt', '0123456789');
    const token = await shareWith(owner.client, file.id, { maxDownloads: 1 });
    const first = await visit(`/s/${token}/file/${file.id}`, { headers: { range: 'bytes=5-', 'if-range': '"stale"' } });
    expect({ status: first.status, body: await first.text() }).toEqual({ status: 200, body: '0123456789' });
    expect((await visit(`/s/${token}/file/${file.id}`, { headers: { range: 'bytes=5-', 'if-range': '"stale"' } })).status).toBe(410);
  });

  test('every Range form that covers byte 0 counts, as the parser that serves it reads it; one past byte 0 does not', async () => {
    const content = '0123456789abcdefghij';
    const forms = ['bytes=-100000', 'BYTES=0-', 'bytes= 0-', 'bytes=00-', 'bytes=0000-99999', 'bytes=abc', 'bytes=5-9,0-4'];
    for (const range of forms) {
      const file = await upload(owner.client, `ranged-${forms.indexOf(range)}.txt`, content);
      const token = await shareWith(owner.client, file.id, { maxDownloads: 1 });
      const first = await visit(`/s/${token}/file/${file.id}`, { headers: { range } });
      expect({ range, status: first.status, body: await first.text() }).toEqual({ range, status: first.status, body: content });
      const again = await visit(`/s/${token}/file/${file.id}`, { headers: { range } });
      expect({ range, status: again.status }).toEqual({ range, status: 410 });
      // A suffix that leaves out byte 0 is the rest of a download already counted: served past the cap.
      const tail = await visit(`/s/${token}/file/${file.id}`, { headers: { range: 'bytes=-5' } });
      expect({ range, status: tail.status, body: await tail.text() }).toEqual({ range, status: 206, body: 'fghij' });
    }
    // A folder's ZIP is served whole whatever the Range, so it counts.
    const dir = await folder(owner.client, 'Ranged zip');
    await upload(owner.client, 'a.txt', 'a', { parentId: dir.id });
    const token = await shareWith(owner.client, dir.id, { maxDownloads: 1 });
    const zip = await visit(`/s/${token}/file/${dir.id}`, { headers: { range: 'bytes=5-' } });
    expect(zip.status).toBe(200);
    await zip.arrayBuffer();
    expect((await visit(`/s/${token}/file/${dir.id}`, { headers: { range: 'bytes=5-' } })).status).toBe(410);
  });

  test('viewing the page of a picture without a thumbnail spends no download of a capped link: the page shows no original then', async () => {
    // A 1×1 BMP: browsers show it as it is, no thumbnail is made of it.
    const bmp = Buffer.alloc(58);
    bmp.write('BM', 0, 'latin1');
    for (const [at, value] of [
      [2, 58],
      [10, 54],
      [14, 40],
      [18, 1],
      [22, 1],
      [34, 4],
    ] as const)
      bmp.writeUInt32LE(value, at);
    bmp.writeUInt16LE(1, 26);
    bmp.writeUInt16LE(24, 28);
    const file = await upload(owner.client, 'scan.bmp', bmp, { type: 'image/bmp' });
    const token = await shareWith(owner.client, file.id, { maxDownloads: 1 });
    // What a browser showing the page fetches: every image and video source in it.
    const view = async () => {
      const page = await (await visit(`/s/${token}`, { headers: HTML })).text();
      for (const [, src] of page.matchAll(/ src="([^"]+)"/g)) await (await visit(src!.replaceAll('&amp;', '&'))).arrayBuffer();
      return page;
    };
    expect(await view()).not.toContain('?inline=1');
    await view();
    const [link] = (await json(await owner.client.get('/api/files/share/links'))).links.filter((l: any) => l.token === token);
    expect(link.downloads).toBe(0);
    expect(Buffer.from(await (await visit(`/s/${token}/file/${file.id}`)).arrayBuffer())).toEqual(bmp);
    // Without a cap the page shows the picture as it is.
    await shareWith(owner.client, file.id, { maxDownloads: null });
    expect(await view()).toContain(`src="/s/${token}/file/${file.id}?inline=1"`);
  });

  test('a ZIP counts once', async () => {
    const dir = await folder(owner.client, 'Zipped');
    await upload(owner.client, 'a.txt', 'a', { parentId: dir.id });
    await upload(owner.client, 'b.txt', 'b', { parentId: dir.id });
    const token = await shareWith(owner.client, dir.id, { maxDownloads: 2 });
    expect((await (await visit(`/s/${token}/zip`)).arrayBuffer()).byteLength).toBeGreaterThan(0);
    const [link] = (await json(await owner.client.get('/api/files/share/links'))).links.filter((l: any) => l.token === token);
    expect(link.downloads).toBe(1);
  });
});

describe('a ZIP refused for want of a slot', () => {
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startTestServer({ startWorker: false, env: { COFFER_MAX_ZIPS: '4', COFFER_MAX_ZIPS_PER_ACCOUNT: '1' } });
  });
  afterAll(() => capped.stop());

  test('spends none of the link’s downloads, by the link’s ZIP or the folder’s download', async () => {
    const o = await seed.owner(capped);
    const dir = await folder(o.client, 'Busy');
    await upload(o.client, 'a.txt', 'a', { parentId: dir.id });
    const res = await o.client.post('/api/files/share', { ids: [dir.id], shared: true, maxDownloads: 3 });
    const token = tokenOf((await json(res)).links[dir.id]);
    const downloads = async () =>
      (await json(await o.client.get('/api/files/share/links'))).links.find((l: { token: string }) => l.token === token).downloads;
    const release = holdOpens(capped);
    try {
      const first = await fetch(`${capped.url}/s/${token}/zip`);
      expect(first.status).toBe(200);
      expect((await fetch(`${capped.url}/s/${token}/zip`)).status).toBe(429);
      expect((await fetch(`${capped.url}/s/${token}/file/${dir.id}`)).status).toBe(429);
      expect(await downloads()).toBe(1);
      release();
      await first.arrayBuffer();
      expect((await (await fetch(`${capped.url}/s/${token}/zip`)).arrayBuffer()).byteLength).toBeGreaterThan(0);
      expect(await downloads()).toBe(2);
    } finally {
      release();
    }
  });
});

describe('drop folders', () => {
  test('upload mode: files land as new items with free names, the visitor sees only what this visit sent, never the folder', async () => {
    const o = await seed.owner(t);
    const inbox = await folder(o.client, 'Inbox');
    const secret = await upload(o.client, 'report.txt', 'private', { parentId: inbox.id });
    const token = await shareWith(o.client, inbox.id, { mode: 'upload' });
    // The owner sees drops arrive live.
    const events = new SseReader(await o.client.get('/api/files/events'));
    expect((await events.nextData(10_000)).type).toBe('connected');

    const sent = await visit(`/s/${token}/upload`, {
      method: 'POST',
      headers: JSON_ACCEPT,
      body: dropForm(
        [
          ['report.txt', 'mine'],
          ['b.txt', 'bee'],
        ],
        ' Ada ',
      ),
    });
    expect(sent.status).toBe(201);
    expect(await json(sent)).toEqual({
      items: [
        { name: 'report (1).txt', size: 4 },
        { name: 'b.txt', size: 3 },
      ],
    });
    const arrived = [await events.nextData(10_000), await events.nextData(10_000)];
    expect(arrived.map((e) => [e.type, e.data.name, e.data.parentId])).toEqual([
      ['file.uploaded', 'report (1).txt', inbox.id],
      ['file.uploaded', 'b.txt', inbox.id],
    ]);
    await events.close();
    t.server.ctx.services.audit.flush();
    const [audited] = t.server.ctx.services.audit.list({ action: 'share.drop', limit: 1000 }).filter((e) => e.accountId === o.id);
    expect(audited!.details).toMatchObject({ folderId: inbox.id, uploader: 'Ada', files: [{ name: 'report (1).txt' }, { name: 'b.txt' }] });
    const visitCookie = sent.headers.getSetCookie().find((c) => c.startsWith('coffer_drop='))!;
    expect(visitCookie).toContain(`Path=/s/${token}`);
    const cookie = visitCookie.split(';')[0]!;

    expect(await json(await visit(`/s/${token}`, { headers: JSON_ACCEPT, cookie }))).toEqual({
      items: [],
      nextCursor: null,
      received: [
        { name: 'report (1).txt', size: 4 },
        { name: 'b.txt', size: 3 },
      ],
    });
    expect((await json(await visit(`/s/${token}`, { headers: JSON_ACCEPT }))).received).toEqual([]);
    const page = await (await visit(`/s/${token}`, { headers: HTML, cookie })).text();
    expect(page).toContain('Drop files here');
    expect(page).toContain('report (1).txt');
    expect(page).not.toContain('>report.txt<');
    for (const path of [`/s/${token}/file/${secret.id}`, `/s/${token}/zip`, `/s/${token}/folder/${inbox.id}`])
      expect((await visit(path)).status).toBe(404);

    const names = (await listAll(o.client, `/api/files?parentId=${inbox.id}`)).map((i: any) => i.name).sort();
    expect(names).toEqual(['b.txt', 'report (1).txt', 'report.txt']);
    const infos = await Promise.all(
      (await listAll(o.client, `/api/files?parentId=${inbox.id}&sortBy=name&order=asc`)).map(async (i: any) =>
        json(await o.client.get(`/api/files/${i.id}/info`)),
      ),
    );
    expect(infos.map((i) => [i.name, i.droppedBy?.uploader])).toEqual([
      ['b.txt', 'Ada'],
      ['report (1).txt', 'Ada'],
      ['report.txt', undefined],
    ]);
  });

  test('a browser form posts back to the page (303); view links refuse uploads; names and quota are enforced (507 readable)', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Box');
    const token = await shareWith(o.client, box.id, { mode: 'view_upload' });
    const viaForm = await visit(`/s/${token}/upload`, { method: 'POST', headers: HTML, body: dropForm([['x.txt', 'x']]) });
    expect(viaForm.status).toBe(303);
    expect(viaForm.headers.get('location')).toBe(`/s/${token}`);
    const listing = await json(await visit(`/s/${token}`, { headers: JSON_ACCEPT }));
    expect(listing.items.map((i: any) => i.name)).toEqual(['x.txt']);
    expect(await (await visit(`/s/${token}`, { headers: HTML })).text()).toContain('Drop files here');

    expect((await visit(`/s/${token}/upload`, { method: 'POST', body: dropForm([['bad:name?.txt', 'x']]) })).status).toBe(400);
    expect((await visit(`/s/${token}/upload`, { method: 'POST', body: new FormData() })).status).toBe(400);

    const viewOnly = await folder(o.client, 'ViewOnly');
    const viewToken = await shareWith(o.client, viewOnly.id);
    const refused = await visit(`/s/${viewToken}/upload`, { method: 'POST', body: dropForm([['x.txt', 'x']]) });
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe('This share link does not accept uploads');

    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = 10 WHERE id = ?').run(o.id);
    const full = await visit(`/s/${token}/upload`, { method: 'POST', body: dropForm([['big.txt', 'more than ten bytes']]) });
    expect(full.status).toBe(507);
    expect((await json(full)).message).toContain('run out of storage space');
    expect((await listAll(o.client, `/api/files?parentId=${box.id}`)).map((i: any) => i.name)).toEqual(['x.txt']);
  });

  test('resumable uploads under the link (tus, no session): into the link’s folder only, recorded as a drop, reachable through that link only', async () => {
    const o = await seed.owner(t);
    const inbox = await folder(o.client, 'Big files');
    const elsewhere = await folder(o.client, 'Elsewhere');
    const kept = await upload(o.client, 'kept.txt', 'original', { parentId: elsewhere.id });
    const token = await shareWith(o.client, inbox.id, { mode: 'upload', password: 'tus password' });
    const cookie = await unlockCookie(token, 'tus password');
    const meta = (m: Record<string, string>) =>
      Object.entries(m)
        .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
        .join(',');
    const options = await visit(`/s/${token}/tus`, { method: 'OPTIONS' });
    expect(options.headers.get('tus-version')).toBe('1.0.0');

    // parentId, relativePath and replaceId are the link's to decide: they are ignored.
    const created = await visit(`/s/${token}/tus`, {
      method: 'POST',
      cookie,
      headers: {
        ...TUS,
        'upload-length': '10',
        'upload-metadata': meta({
          filename: 'video.bin',
          parentId: elsewhere.id,
          relativePath: 'x/y/video.bin',
          replaceId: kept.id,
          uploader: 'Bo',
        }),
      },
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toStartWith(`/s/${token}/tus/`);
    const patch = (offset: number, bytes: string, c = cookie, path = location) =>
      visit(path, {
        method: 'PATCH',
        cookie: c,
        headers: { ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body: bytes,
      });
    expect((await patch(0, '01234')).status).toBe(204);
    // Without the unlock cookie, or through another link of the same account, the upload is out of reach.
    expect((await patch(5, '56789', '')).status).toBe(401);
    const otherToken = await shareWith(o.client, elsewhere.id, { mode: 'upload' });
    expect((await patch(5, '56789', '', `/s/${otherToken}/tus/${location.split('/').pop()}`)).status).toBe(404);
    expect((await o.client.request(`/api/files/tus/${location.split('/').pop()}`, { method: 'HEAD', headers: TUS })).status).toBe(404);
    const head = await visit(location, { method: 'HEAD', cookie, headers: TUS });
    expect(head.headers.get('upload-offset')).toBe('5');
    expect((await patch(5, '56789')).status).toBe(204);
    expect(await json(await visit(location, { cookie }))).toEqual({ item: { name: 'video.bin', size: 10 } });

    const [file] = await listAll(o.client, `/api/files?parentId=${inbox.id}`);
    expect(file.name).toBe('video.bin');
    expect((await listAll(o.client, `/api/files?parentId=${elsewhere.id}`)).map((i: any) => [i.name, i.size])).toEqual([['kept.txt', 8]]);
    expect(await (await o.client.get(`/api/files/${kept.id}/download`)).text()).toBe('original');
    expect((await json(await o.client.get(`/api/files/${file.id}/info`))).droppedBy.uploader).toBe('Bo');

    // A view-only link takes no resumable uploads either.
    const viewToken = await shareWith(o.client, (await folder(o.client, 'View only')).id);
    const refused = await visit(`/s/${viewToken}/tus`, {
      method: 'POST',
      headers: { ...TUS, 'upload-length': '1', 'upload-metadata': meta({ filename: 'a.txt' }) },
    });
    expect(refused.status).toBe(403);
    // The owner's own tus endpoint is unchanged.
    expect((await createUpload(o.client, 1, { filename: 'mine.txt', parentId: inbox.id })).status).toBe(201);
  });
});
