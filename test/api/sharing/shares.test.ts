import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { HtmlValidate } from 'html-validate';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { folder, listAll, readZip, seedRows, upload } from '../../helpers/files.ts';
import { ManualClock } from '../../../src/clock.ts';

let t: TestServer;
const clock = new ManualClock(Date.now());
let owner: seed.SeededLogin;
// long-title is advice about tab width, not validity; titles are cut at 70 characters before escaping.
const htmlValidator = new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'long-title': 'off' } });

beforeAll(async () => {
  t = await startTestServer({ clock });
  await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

const tokenOf = (url: string) => /\/s\/([A-Za-z0-9_-]+)/.exec(url)![1]!;
const anon = () => t.client();
const HTML = { accept: 'text/html,application/xhtml+xml' };
const JSON_ACCEPT = { accept: 'application/json' };

async function share(client: TestClient, ids: string[], expiry?: string): Promise<Record<string, string>> {
  const res = await client.post('/api/files/share', { ids, shared: true, ...(expiry ? { expiry } : {}) });
  expect(res.status).toBe(200);
  return (await json(res)).links;
}

async function expectValidHtml(res: Response): Promise<string> {
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = res.headers.get('content-security-policy')!;
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(res.headers.get('set-cookie')).toBeNull();
  const html = await res.text();
  const report = await htmlValidator.validateString(html);
  expect(report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`))).toEqual([]);
  expect(html).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
  return html;
}

describe('POST /api/files/share and friends', () => {
  test('sharing creates one link per root with a 128+ bit token; re-sharing keeps the token and updates expiry', async () => {
    const a = await upload(owner.client, 'a.txt', 'alpha');
    const b = await upload(owner.client, 'b.txt', 'bravo');
    const links = await share(owner.client, [a.id, b.id]);
    expect(Object.keys(links).sort()).toEqual([a.id, b.id].sort());
    expect(links[a.id]).toStartWith(`${t.url}/s/`);
    expect(Buffer.from(tokenOf(links[a.id]!), 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(tokenOf(links[a.id]!)).not.toBe(tokenOf(links[b.id]!));

    let info = await json(await owner.client.get(`/api/files/${a.id}/info`));
    expect(info.shared).toBe(true);
    expect(Date.parse(info.expiresAt) - Date.parse(info.sharedAt)).toBe(7 * 24 * 3600_000);

    const again = await share(owner.client, [a.id], 'never');
    expect(again[a.id]).toBe(links[a.id]);
    info = await json(await owner.client.get(`/api/files/${a.id}/info`));
    expect(info.expiresAt).toBeNull();
    await share(owner.client, [a.id], '30d');
    info = await json(await owner.client.get(`/api/files/${a.id}/info`));
    expect(Date.parse(info.expiresAt) - clock.now()).toBe(30 * 24 * 3600_000);

    expect(await json(await owner.client.post('/api/files/share/links', { ids: [a.id, b.id] }))).toEqual({
      links: { [a.id]: links[a.id], [b.id]: links[b.id] },
    });
    const unshare = await owner.client.post('/api/files/share', { ids: [a.id], shared: false });
    expect(await json(unshare)).toEqual({ message: expect.any(String) });
    expect((await json(await owner.client.get(`/api/files/${a.id}/info`))).shared).toBe(false);
    expect(await json(await owner.client.post('/api/files/share/links', { ids: [a.id] }))).toEqual({ links: {} });
    expect((await anon().get(`/s/${tokenOf(links[a.id]!)}`, JSON_ACCEPT)).status).toBe(404);
  });

  test('shared list, stats sharedCount, and sharedAt/expiresAt in listings', async () => {
    const o = await seed.owner(t);
    const f = await upload(o.client, 'x.bin', 'x');
    const g = await folder(o.client, 'Public');
    await share(o.client, [f.id], 'never');
    await share(o.client, [g.id]);
    const shared = await listAll(o.client, '/api/files/shared');
    expect(shared.map((i) => i.id).sort()).toEqual([f.id, g.id].sort());
    for (const i of shared) expect(i.sharedAt).toEqual(expect.any(String));
    expect(shared.find((i) => i.id === f.id).expiresAt).toBeNull();
    expect((await json(await o.client.get('/api/files/stats'))).sharedCount).toBe(2);
    const root = await listAll(o.client, '/api/files');
    expect(root.find((i) => i.id === g.id)).toMatchObject({ shared: true });
  });

  test('validation: ids required, at most 500, expiry from the list', async () => {
    expect((await owner.client.post('/api/files/share', { ids: [], shared: true })).status).toBe(422);
    expect((await owner.client.post('/api/files/share', { ids: Array(501).fill('x'), shared: true })).status).toBe(422);
    const bad = await owner.client.post('/api/files/share', { ids: ['x'], shared: true, expiry: '1y' });
    expect(bad.status).toBe(422);
    expect((await json(bad)).details[0].field).toBe('expiry');
    expect((await owner.client.post('/api/files/share', { ids: ['x'] })).status).toBe(422);
  });

  test("another account's item → 404 on share, unshare, links and link-parent-share; nothing changes", async () => {
    const victim = await seed.owner(t);
    const file = await upload(victim.client, 'secret.txt', 'mine');
    for (const [path, body] of [
      ['/api/files/share', { ids: [file.id], shared: true }],
      ['/api/files/share', { ids: [file.id], shared: false }],
      ['/api/files/share/links', { ids: [file.id] }],
      ['/api/files/link-parent-share', { ids: [file.id] }],
    ] as const) {
      const res = await owner.client.post(path, body);
      expect(res.status).toBe(404);
    }
    expect(t.server.ctx.db.$client.query('SELECT 1 FROM share_links WHERE item_id = ?').get(file.id)).toBeNull();
  });

  test('a sub-user without files.share → 403 naming "Share"; with it, shares the owner\'s items', async () => {
    const f = await upload(owner.client, 'team.txt', 'team');
    const without = await seed.subUser(t, owner, ['files.download', 'files.upload', 'files.edit', 'files.delete', 'files.trash']);
    for (const path of ['/api/files/share', '/api/files/share/links', '/api/files/link-parent-share']) {
      const res = await without.client.post(path, { ids: [f.id], shared: true });
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.permission('Share'));
    }
    const withShare = await seed.subUser(t, owner, ['files.share']);
    const links = await share(withShare.client, [f.id]);
    expect((await anon().get(`/s/${tokenOf(links[f.id]!)}`, JSON_ACCEPT)).status).toBe(200);
  });

  test('link-parent-share adds items to their shared parent; moving them out leaves the share; uploads into it show', async () => {
    const dir = await folder(owner.client, 'Album');
    const links = await share(owner.client, [dir.id]);
    const token = tokenOf(links[dir.id]!);
    const photo = await upload(owner.client, 'photo.jpg', 'jpeg-ish', { parentId: dir.id });
    const loose = await upload(owner.client, 'loose.txt', 'no parent share');
    const added = await json(await owner.client.post('/api/files/link-parent-share', { ids: [photo.id, loose.id] }));
    expect(added.links).toEqual({ [photo.id]: `${links[dir.id]}/file/${photo.id}` });
    expect((await json(await owner.client.get(`/api/files/${photo.id}/info`))).shared).toBe(true);
    const listed = await json(await anon().get(`/s/${token}`, JSON_ACCEPT));
    expect(listed.items.map((i: { id: string }) => i.id)).toEqual([photo.id]);

    await owner.client.post('/api/files/move', { ids: [photo.id] });
    expect((await json(await owner.client.get(`/api/files/${photo.id}/info`))).shared).toBe(false);
    expect((await anon().get(`/s/${token}/file/${photo.id}`)).status).toBe(404);
    expect((await json(await anon().get(`/s/${token}`, JSON_ACCEPT))).items).toEqual([]);
  });
});

describe('public share pages', () => {
  test('a folder share exposes exactly its live subtree; siblings, trashed items and other accounts are 404, even by id', async () => {
    const o = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    const sub = await folder(o.client, 'Sub', shared.id);
    const inside = await upload(o.client, 'inside.txt', 'inside', { parentId: sub.id });
    const sibling = await folder(o.client, 'Sibling');
    const outside = await upload(o.client, 'outside.txt', 'outside', { parentId: sibling.id });
    const trashed = await upload(o.client, 'trashed.txt', 'gone', { parentId: shared.id });
    const trashedDir = await folder(o.client, 'OldDir', shared.id);
    const underTrashedDir = await upload(o.client, 'deep.txt', 'deep', { parentId: trashedDir.id });
    await o.client.post('/api/files/delete', { ids: [trashed.id, trashedDir.id] });
    const stranger = await seed.owner(t);
    const theirs = await upload(stranger.client, 'theirs.txt', 'theirs');
    const token = tokenOf((await share(o.client, [shared.id]))[shared.id]!);

    const top = await json(await anon().get(`/s/${token}`, JSON_ACCEPT));
    expect(top.items.map((i: { name: string }) => i.name)).toEqual(['Sub']);
    expect(top.nextCursor).toBeNull();
    expect((await json(await anon().get(`/s/${token}/folder/${sub.id}`, JSON_ACCEPT))).items.map((i: { id: string }) => i.id)).toEqual([
      inside.id,
    ]);
    expect(await (await anon().get(`/s/${token}/file/${inside.id}`)).text()).toBe('inside');

    for (const id of [outside.id, sibling.id, trashed.id, trashedDir.id, underTrashedDir.id, theirs.id, 'no-such-id']) {
      expect((await anon().get(`/s/${token}/file/${id}`)).status).toBe(404);
      expect((await anon().get(`/s/${token}/folder/${id}`, JSON_ACCEPT)).status).toBe(404);
    }
    expect((await anon().get(`/s/${token}/folder/${inside.id}`, JSON_ACCEPT)).status).toBe(404);
  });

  test('missing and removed links → 404; expired → 410; as a small page for browsers and JSON otherwise', async () => {
    const f = await upload(owner.client, 'soon.txt', 'soon');
    const token = tokenOf((await share(owner.client, [f.id], '7d'))[f.id]!);
    expect((await anon().get(`/s/${token}`, JSON_ACCEPT)).status).toBe(200);

    const missing = await anon().get('/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', JSON_ACCEPT);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/json');
    const missingPage = await anon().get('/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', HTML);
    expect(missingPage.status).toBe(404);
    expect(await expectValidHtml(missingPage)).toContain('Not found');

    clock.advance(7 * 24 * 3600_000 + 1);
    try {
      for (const path of [`/s/${token}`, `/s/${token}/file/${f.id}`, `/s/${token}/zip`]) {
        const expired = await anon().get(path, JSON_ACCEPT);
        expect(expired.status).toBe(410);
        expect(await json(expired)).toEqual({ message: 'This share link has expired' });
      }
      const page = await anon().get(`/s/${token}`, HTML);
      expect(page.status).toBe(410);
      expect(await expectValidHtml(page)).toContain('Link expired');
    } finally {
      clock.set(Date.now());
    }

    await owner.client.post('/api/files/delete', { ids: [f.id] });
    expect((await anon().get(`/s/${token}`, JSON_ACCEPT)).status).toBe(404);
  });

  test('a single-file landing page with a download button and, for an image, a preview: its large thumbnail fitted to the screen, else the image itself', async () => {
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da6364f8ffbf1e000501020055b1e8dc0000000049454e44ae426082',
      'hex',
    );
    const image = await upload(owner.client, 'pixel.png', png, { type: 'image/png' });
    const token = tokenOf((await share(owner.client, [image.id]))[image.id]!);
    const html = await expectValidHtml(await anon().get(`/s/${token}`, HTML));
    expect(html).toContain(`href="/s/${token}/file/${image.id}"`);
    // libpng refuses this hand-made pixel (a read error) where browsers do not: the page shows the image as it is.
    expect(html).toContain(`src="/s/${token}/file/${image.id}?inline=1"`);
    expect(html).toContain('image/png');
    const photo = await upload(owner.client, 'photo.png', await img.png(2000, 1000), { type: 'image/png' });
    const photoToken = tokenOf((await share(owner.client, [photo.id]))[photo.id]!);
    const photoPage = await expectValidHtml(await anon().get(`/s/${photoToken}`, HTML));
    expect(photoPage).toContain(`src="/s/${photoToken}/thumbnail/${photo.id}?size=large"`);
    expect(photoPage).not.toContain('?inline=1');
    const fitted = await anon().get(`/s/${photoToken}/thumbnail/${photo.id}?size=large`);
    expect([fitted.status, fitted.headers.get('content-type')]).toEqual([200, 'image/webp']);
    const preview = await anon().get(`/s/${token}/file/${image.id}?inline=1`);
    expect(preview.headers.get('content-disposition')).toStartWith('inline;');
    expect(Buffer.from(await preview.arrayBuffer())).toEqual(png);
    expect((await anon().get(`/s/${token}/zip`, JSON_ACCEPT)).status).toBe(404);

    const svg = await upload(owner.client, 'x.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', {
      type: 'image/svg+xml',
    });
    const svgToken = tokenOf((await share(owner.client, [svg.id]))[svg.id]!);
    const svgPage = await expectValidHtml(await anon().get(`/s/${svgToken}`, HTML));
    expect(svgPage).not.toContain('?inline=1');
    expect(svgPage).not.toContain('/thumbnail/');
    const svgInline = await anon().get(`/s/${svgToken}/file/${svg.id}?inline=1`);
    expect(svgInline.headers.get('content-disposition')).toStartWith('attachment;');
    expect(svgInline.headers.get('content-security-policy')).toContain('sandbox');
  });

  test('names with <script>, quotes and & are escaped in every page', async () => {
    // The API refuses < > " in names; rows written behind its back (an older import, a restored backup) still must not inject.
    const evil = `<script>alert("x")</script> & 'quotes'`;
    const dir = await folder(owner.client, "Tom & Jerry's");
    const [childId] = seedRows(t, owner.id, dir.id, 1, () => ({ name: `${evil} child`, type: 'folder' }));
    seedRows(t, owner.id, childId!, 1, () => ({ name: `${evil}.txt` }));
    seedRows(t, owner.id, dir.id, 1, () => ({ name: `${evil} file.txt` }));
    const [singleId] = seedRows(t, owner.id, null, 1, () => ({ name: `${evil} single.txt` }));
    const dirToken = tokenOf((await share(owner.client, [dir.id]))[dir.id]!);
    const fileToken = tokenOf((await share(owner.client, [singleId!]))[singleId!]!);
    for (const path of [`/s/${dirToken}`, `/s/${dirToken}/folder/${childId}`, `/s/${fileToken}`]) {
      const html = await expectValidHtml(await anon().get(path, HTML));
      expect(html).not.toContain('<script>');
      expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
    }
    expect(await expectValidHtml(await anon().get(`/s/${dirToken}`, HTML))).toContain('Tom &amp; Jerry&#39;s');
  });

  test('ZIPs of the whole share and of a subfolder hold exactly the live tree', async () => {
    const dir = await folder(owner.client, 'Trip');
    const day1 = await folder(owner.client, 'Day 1', dir.id);
    await folder(owner.client, 'Empty', dir.id);
    await upload(owner.client, 'notes.txt', 'top notes', { parentId: dir.id });
    await upload(owner.client, 'a.txt', 'day one', { parentId: day1.id });
    const gone = await upload(owner.client, 'gone.txt', 'trash me', { parentId: day1.id });
    await owner.client.post('/api/files/delete', { ids: [gone.id] });
    const token = tokenOf((await share(owner.client, [dir.id]))[dir.id]!);

    const whole = await anon().get(`/s/${token}/zip`);
    expect(whole.headers.get('content-type')).toBe('application/zip');
    const entries = readZip(Buffer.from(await whole.arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual(['Trip/', 'Trip/Day 1/', 'Trip/Day 1/a.txt', 'Trip/Empty/', 'Trip/notes.txt'].sort());
    expect(entries.find((e) => e.name === 'Trip/Day 1/a.txt')!.data.toString()).toBe('day one');

    const sub = readZip(Buffer.from(await (await anon().get(`/s/${token}/file/${day1.id}`)).arrayBuffer()));
    expect(sub.map((e) => e.name).sort()).toEqual(['Day 1/', 'Day 1/a.txt']);
  });

  test('Range on a shared file', async () => {
    const content = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
    const f = await upload(owner.client, 'big.bin', content);
    const token = tokenOf((await share(owner.client, [f.id]))[f.id]!);
    const res = await anon().get(`/s/${token}/file/${f.id}`, { range: 'bytes=65530-65545' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 65530-65545/${content.length}`);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(content.subarray(65530, 65546));
    expect((await anon().get(`/s/${token}/file/${f.id}`, { range: `bytes=${content.length}-` })).status).toBe(416);
  });

  test('paging through a 250-item shared folder visits every item once, folders first then by name', async () => {
    const dir = await folder(owner.client, 'Many');
    seedRows(t, owner.id, dir.id, 250, (i) => ({ name: `item ${String(1000 - i)}`, type: i % 10 === 0 ? 'folder' : 'file' }));
    const token = tokenOf((await share(owner.client, [dir.id]))[dir.id]!);
    const seen: Array<{ id: string; type: string; name: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=30&cursor=${encodeURIComponent(cursor)}` : '?limit=30';
      const body: { items: typeof seen; nextCursor: string | null } = await json(await anon().get(`/s/${token}${q}`, JSON_ACCEPT));
      expect(body.items.length).toBeLessThanOrEqual(30);
      seen.push(...body.items);
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(9);
    expect(new Set(seen.map((i) => i.id)).size).toBe(250);
    const firstFile = seen.findIndex((i) => i.type === 'file');
    expect(seen.slice(0, firstFile).every((i) => i.type === 'folder')).toBe(true);
    expect(firstFile).toBe(25);
    const names = seen.slice(firstFile).map((i) => i.name);
    expect(names).toEqual([...names].sort());
    expect((await json(await anon().get(`/s/${token}`, JSON_ACCEPT))).items).toHaveLength(100);

    const html = await expectValidHtml(await anon().get(`/s/${token}`, HTML));
    expect(html).toContain(`href="/s/${token}/zip"`);
    expect(html).toContain('Next page');
    for (const q of ['?limit=0', '?limit=201', '?limit=x']) expect((await anon().get(`/s/${token}${q}`, JSON_ACCEPT)).status).toBe(422);
    expect((await anon().get(`/s/${token}?cursor=bogus!`, JSON_ACCEPT)).status).toBe(400);
  });

  test('share routes read no cookie and set none; they stay open under desktop-only access', async () => {
    const f = await upload(owner.client, 'open.txt', 'open');
    const token = tokenOf((await share(owner.client, [f.id]))[f.id]!);
    const withCookie = await owner.client.get(`/s/${token}/file/${f.id}`);
    expect(withCookie.status).toBe(200);
    expect(withCookie.headers.get('set-cookie')).toBeNull();
    const a = await seed.login(
      t,
      (await t.server.ctx.db.$client.query<{ email: string }, []>('SELECT email FROM users WHERE is_admin = 1').get())!.email,
    );
    t.server.ctx.services.settings.set('desktopOnlyAccess', true);
    try {
      expect((await anon().get(`/s/${token}`, JSON_ACCEPT)).status).toBe(200);
      expect((await a.get('/api/profile')).status).toBe(403);
    } finally {
      t.server.ctx.services.settings.set('desktopOnlyAccess', false);
    }
  });

  test('share-domain isolation: with a share base URL, its host serves /s/ only, and links use it', async () => {
    const f = await upload(owner.client, 'iso.txt', 'iso');
    t.server.ctx.services.settings.set('shareBaseUrl', 'https://share.example.test');
    try {
      const links = await share(owner.client, [f.id]);
      expect(links[f.id]).toStartWith('https://share.example.test/s/');
      const token = tokenOf(links[f.id]!);
      const onShareHost = { host: 'share.example.test' };
      expect((await anon().get(`/s/${token}`, { ...onShareHost, ...JSON_ACCEPT })).status).toBe(200);
      for (const path of ['/api/profile', '/api/signup-status', '/health', '/']) {
        expect((await owner.client.get(path, onShareHost)).status).toBe(404);
      }
      expect((await owner.client.get('/api/profile')).status).toBe(200);
    } finally {
      t.server.ctx.services.settings.set('shareBaseUrl', null);
    }
  });

  test('visits and downloads reach the audit log', async () => {
    const f = await upload(owner.client, 'audited.txt', 'audited');
    const token = tokenOf((await share(owner.client, [f.id]))[f.id]!);
    await anon().get(`/s/${token}`, HTML);
    await anon().get(`/s/${token}`, HTML);
    await (await anon().get(`/s/${token}/file/${f.id}`)).arrayBuffer();
    const audit = t.server.ctx.services.audit;
    audit.flush();
    const forItem = (action: string) =>
      audit.list({ action, limit: 1000 }).filter((e) => (e.details as { itemId?: string } | null)?.itemId === f.id);
    expect(forItem('share.create')).toHaveLength(1);
    expect(forItem('share.access')).toHaveLength(1);
    expect(forItem('share.download')).toMatchObject([{ actor: 'anonymous', ip: '127.0.0.1', accountId: owner.id }]);
    await owner.client.post('/api/files/share', { ids: [f.id], shared: false });
    audit.flush();
    expect(forItem('share.remove')).toHaveLength(1);
  });

  test('a long name cut for the page title never splits a character in two: no replacement character in the title', async () => {
    // 68 letters, then a character outside the Basic Multilingual Plane (two UTF-16 units) astride the cut at 69.
    const name = `${'a'.repeat(68)}\u{1F4F7}photo.txt`;
    const f = await upload(owner.client, name, 'x');
    const token = tokenOf((await share(owner.client, [f.id]))[f.id]!);
    const page = await (await anon().get(`/s/${token}`, HTML)).text();
    expect(/<title>(.*)<\/title>/.exec(page)![1]).toBe(`${'a'.repeat(68)}\u2026`);
  });

  test('a HEAD downloads nothing: a folder link\u2019s ZIP and a file asked with HEAD are no download in the audit log', async () => {
    const dir = await folder(owner.client, 'Headed');
    const f = await upload(owner.client, 'headed.txt', 'headed', { parentId: dir.id });
    const token = tokenOf((await share(owner.client, [dir.id]))[dir.id]!);
    for (const path of [`/s/${token}/zip`, `/s/${token}/file/${dir.id}`, `/s/${token}/file/${f.id}`])
      expect((await fetch(t.url + path, { method: 'HEAD' })).status).toBe(200);
    const audit = t.server.ctx.services.audit;
    const downloads = () => {
      audit.flush();
      return audit
        .list({ action: 'share.download', limit: 1000 })
        .filter((e) => [dir.id, f.id].includes((e.details as { itemId: string }).itemId));
    };
    expect(downloads()).toEqual([]);
    await (await anon().get(`/s/${token}/zip`)).arrayBuffer();
    expect(downloads()).toHaveLength(1);
  });
});
