import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const clock = new ManualClock(Date.UTC(2026, 10, 29, 9, 0, 0));
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterAll(() => t.stop());

const HTML = { accept: 'text/html' };
const page = async (token: string, path = '') => (await fetch(`${t.url}/s/${token}${path}`, { headers: HTML })).text();

async function shareWith(client: TestClient, id: string, options: Record<string, unknown>): Promise<string> {
  const res = await client.post('/api/files/share', { ids: [id], shared: true, ...options });
  expect(res.status).toBe(200);
  return /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[id])![1]!;
}

describe('what a share page says of its link', () => {
  test('whose it is, until when, and how many downloads are left, as they are spent', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'report.txt', 'the report');
    const token = await shareWith(o.client, file.id, { expiry: '7d', maxDownloads: 3 });
    expect(await page(token)).toContain('Shared by <bdi>Owner</bdi> &middot; until 6 December 2026 &middot; 3 downloads left');
    expect((await fetch(`${t.url}/s/${token}/file/${file.id}`)).status).toBe(200);
    expect(await page(token)).toContain('2 downloads left');

    const dir = await folder(o.client, 'Holiday');
    await upload(o.client, 'a.txt', 'a', { parentId: dir.id });
    const folderToken = await shareWith(o.client, dir.id, { expiry: 'never', maxDownloads: 2 });
    const before = await page(folderToken);
    expect(before).toContain('Shared by <bdi>Owner</bdi> &middot; 2 downloads left');
    expect(before).not.toContain('until');
    // The folder's page is rendered once per state of the link: the count moves with it.
    expect((await fetch(`${t.url}/s/${folderToken}/zip`)).status).toBe(200);
    expect(await page(folderToken)).toContain('Shared by <bdi>Owner</bdi> &middot; 1 download left');
  });

  test('an owner with no name is not named (an email is never shown); a link with no limit says none', async () => {
    const email = seed.uniqueEmail('nameless');
    await t.server.ctx.services.accounts.createLogin({ email, password: 'a fine password', name: '' });
    const nameless = { email, client: await seed.login(t, email, 'a fine password') };
    const file = await upload(nameless.client, 'x.txt', 'x');
    const token = await shareWith(nameless.client, file.id, { expiry: 'never' });
    const html = await page(token);
    expect(html).toContain('<p class="meta facts">Shared with you</p>');
    expect(html).not.toContain(nameless.email);
  });

  test('the drop page says whose folder the files go to', async () => {
    const o = await seed.owner(t);
    const inbox = await folder(o.client, 'Inbox');
    const token = await shareWith(o.client, inbox.id, { expiry: '30d', mode: 'upload' });
    const html = await page(token);
    expect(html).toContain('Files you send go to <bdi>Owner</bdi>’s folder <bdi>Inbox</bdi>.');
    expect(html).toContain('You can send files until 29 December 2026.');
  });
});

describe('a shared video', () => {
  test('plays in the page, muted, from the link (its bytes served with Range); nothing is read before Play', async () => {
    const o = await seed.owner(t);
    const clip = await upload(o.client, 'clip.mp4', new Uint8Array(4096).fill(7), { type: 'video/mp4' });
    const token = await shareWith(o.client, clip.id, { expiry: 'never', maxDownloads: 5 });
    const res = await fetch(`${t.url}/s/${token}`, { headers: HTML });
    expect(res.headers.get('content-security-policy')).toContain("media-src 'self'");
    const html = await res.text();
    const video = /<video [^>]*>/.exec(html)?.[0] ?? '';
    expect(video).toContain(`src="/s/${token}/file/${clip.id}"`);
    for (const attribute of ['controls', 'muted', 'playsinline', 'preload="none"', 'aria-label="clip.mp4"'])
      expect(video).toContain(attribute);
    // Rendering the page read nothing of the file: no download was counted.
    expect(html).toContain('5 downloads left');
    const part = await fetch(`${t.url}/s/${token}/file/${clip.id}`, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect((await part.arrayBuffer()).byteLength).toBe(100);
  });

  test('a file that is not a video has no player', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'notes.txt', 'words', { type: 'text/plain' });
    const token = await shareWith(o.client, file.id, { expiry: 'never' });
    expect(await page(token)).not.toContain('<video');
  });
});
