import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import {
  acquireBrowser,
  apiSettled,
  type DropEntry,
  dropFiles,
  dropTree,
  eventStreamOpen,
  expectAccessible,
  hasFocus,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { json } from '../helpers/client.ts';
import { folder, listAll, seedRows, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;

const PDF = '%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n';

/** One second of 8 kHz 8-bit mono PCM: a WAV every browser plays without extra codecs. */
function wav(): Buffer {
  const rate = 8000;
  const b = Buffer.alloc(44 + rate);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + rate, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36);
  b.writeUInt32LE(rate, 40);
  for (let i = 0; i < rate; i++) b[44 + i] = 128 + Math.round(60 * Math.sin(i / 5));
  return b;
}

// A 2x2 PNG, enough for the browser to decode and show.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/**
 * Holds the page's requests to `pattern` until the returned function lets the first one (and any
 * others held) through. The route stays, passing requests on from then: taking it away while the
 * browser has another request paused for interception can leave that request hanging.
 */
async function hold(page: Page, pattern: string): Promise<() => Promise<void>> {
  let open!: () => void;
  let held!: () => void;
  let released = false;
  const gate = new Promise<void>((r) => (open = r));
  const first = new Promise<void>((r) => (held = r));
  const passed: Promise<void>[] = [];
  await page.route(pattern, (route: Route) => {
    if (released) return route.fallback();
    held();
    passed.push(gate.then(() => route.continue()));
  });
  return async () => {
    let late: ReturnType<typeof setTimeout> | undefined;
    const noRequest = new Promise<never>((_, reject) => {
      late = setTimeout(() => reject(new Error(`the page sent no request to ${pattern} within 20 s`)), 20_000);
    });
    await Promise.race([first, noRequest]).finally(() => clearTimeout(late));
    released = true;
    open();
    await Promise.all(passed);
  };
}

const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},`) });
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const names = async (login: seed.SeededLogin, parentId?: string) =>
  (await listAll(login.client, `/api/files?sortBy=name&order=asc${parentId ? `&parentId=${parentId}` : ''}`)).map((i) => i.name as string);

async function openFolder(login: seed.SeededLogin, to = '/files', opts = {}) {
  const opened = await signedInContext(browser, t.url, login, opts);
  await opened.page.goto(to);
  await opened.page.getByRole('navigation', { name: 'Breadcrumb' }).or(opened.page.locator('h1')).first().waitFor();
  return opened;
}

describe('file manager', () => {
  test('at 390 px, Delete permanently on a long name without spaces asks with the whole name inside the dialog, nothing cut or scrolled sideways', async () => {
    const o = await seed.owner(t);
    const name = `${'Holiday_in_Lisbon_with_the_whole_family_'.repeat(3).slice(0, 96)}.txt`;
    const file = await upload(o.client, name, 'x');
    await o.client.post('/api/files/delete', { ids: [file.id] });
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, touch: true });
    await page.goto('/trash');
    await row(page, name).getByRole('checkbox').click();
    await button(page, 'Delete permanently').click();
    const confirm = page.getByRole('dialog', { name: /permanently\?$/ });
    await confirm.getByText('This cannot be undone.').waitFor();
    await screenshot(page, 'trash-delete-long-name-light-390');
    const body = confirm.locator('.dialog-body');
    expect(await body.evaluate((el: any) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    const box = (await confirm.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('uploads: picker with progress rows, a folder tree with its paths, files dropped from the desktop', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await openFolder(o);
    await page.getByText('This folder is empty.').waitFor();
    const chooser = page.waitForEvent('filechooser');
    await button(page, 'Upload files').click();
    await (await chooser).setFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the browser') },
      { name: 'Überweisung 2024 – 東京.txt', mimeType: 'text/plain', buffer: Buffer.from('unicode') },
    ]);
    await page.getByRole('progressbar', { name: 'notes.txt' }).waitFor();
    await row(page, 'notes.txt').waitFor();
    await row(page, 'Überweisung 2024 – 東京.txt').waitFor();
    expect(await names(o)).toEqual(['notes.txt', 'Überweisung 2024 – 東京.txt']);

    const dir = tempDir('coffer-tree-');
    fs.mkdirSync(path.join(dir, 'trip/day 1'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'trip/plan.md'), '# plan');
    fs.writeFileSync(path.join(dir, 'trip/day 1/photo.txt'), 'photo');
    const folderChooser = page.waitForEvent('filechooser');
    await button(page, 'Upload folder').click();
    await (await folderChooser).setFiles(path.join(dir, 'trip'));
    await row(page, 'trip').waitFor();
    const trip = (await listAll(o.client, '/api/files')).find((i) => i.name === 'trip');
    await eventually(async () => expect(await names(o, trip.id)).toEqual(['day 1', 'plan.md']));
    const day = (await listAll(o.client, `/api/files?parentId=${trip.id}`)).find((i) => i.name === 'day 1');
    expect(await names(o, day.id)).toEqual(['photo.txt']);
    fs.rmSync(dir, { recursive: true, force: true });

    // Files dragged in from the desktop onto the window.
    await dropFiles(page, '.browser', [{ name: 'dropped.txt', text: 'dropped' }]);
    await row(page, 'dropped.txt').waitFor();
    // Dropped onto a folder row: into that folder.
    await dropFiles(page, '[role=row]', [{ name: 'into-trip.txt', text: 'into trip' }], 'trip,');
    await eventually(async () => expect(await names(o, trip.id)).toContain('into-trip.txt'));

    // Whole folder trees from the desktop, onto the window and onto a folder row, arrive with their paths.
    // Empty folders come along too: one inside the tree, one dropped on its own.
    const tree = (top: string): DropEntry[] => [
      {
        name: top,
        children: [
          { name: 'a.txt', text: 'a' },
          { name: 'b.txt', text: 'b' },
          { name: 'c.txt', text: 'c' },
          {
            name: 'inner',
            children: [
              { name: 'deep.txt', text: 'deep' },
              { name: 'nothing', children: [] },
            ],
          },
        ],
      },
      { name: `${top}-loose.txt`, text: 'loose' },
      { name: `${top}-empty`, children: [] },
    ];
    const ids = new Map<string, string>();
    const paths = async (parentId?: string): Promise<string[]> => {
      const out: string[] = [];
      const walk = async (id: string | undefined, prefix: string) => {
        for (const i of await listAll(o.client, `/api/files?sortBy=name&order=asc${id ? `&parentId=${id}` : ''}`)) {
          out.push(`${prefix}${i.name}${i.type === 'folder' ? '/' : ''}`);
          ids.set(`${prefix}${i.name}`, i.id);
          if (i.type === 'folder') await walk(i.id, `${prefix}${i.name}/`);
        }
      };
      await walk(parentId, '');
      return out;
    };
    await dropTree(page, '.browser', tree('Desk'));
    await row(page, 'Desk').waitFor();
    await eventually(async () => {
      const all = await paths();
      expect(all.filter((p) => p.startsWith('Desk'))).toEqual([
        'Desk/',
        'Desk/inner/',
        'Desk/inner/nothing/',
        'Desk/inner/deep.txt',
        'Desk/a.txt',
        'Desk/b.txt',
        'Desk/c.txt',
        'Desk-empty/',
        'Desk-loose.txt',
      ]);
    });
    await dropTree(page, '[role=row]', tree('Into'), 'trip,');
    await eventually(async () =>
      expect((await paths(trip.id)).filter((p) => p.startsWith('Into'))).toEqual([
        'Into/',
        'Into/inner/',
        'Into/inner/nothing/',
        'Into/inner/deep.txt',
        'Into/a.txt',
        'Into/b.txt',
        'Into/c.txt',
        'Into-empty/',
        'Into-loose.txt',
      ]),
    );
    expect(await (await o.client.get(`/api/files/${ids.get('Into/inner/deep.txt')}/download`)).text()).toBe('deep');
    await expectAccessible(page, 'folder with uploads');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a name that exists: Replace overwrites it, Keep both adds a numbered copy', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'same.txt', 'old');
    const { context, page } = await openFolder(o);
    await row(page, 'same.txt').waitFor();
    const pick = async (choice: string) => {
      const chooser = page.waitForEvent('filechooser');
      await button(page, 'Upload files').click();
      await (await chooser).setFiles([{ name: 'same.txt', mimeType: 'text/plain', buffer: Buffer.from(`new ${choice}`) }]);
      await page.getByRole('dialog', { name: 'Replace or keep both?' }).waitFor();
      await button(page, choice).click();
    };
    await pick('Replace');
    await eventually(async () => {
      const items = await listAll(o.client, '/api/files');
      expect(items.map((i) => i.name)).toEqual(['same.txt']);
      expect(items[0].size).toBe('new Replace'.length);
    });
    await pick('Keep both');
    await eventually(async () => expect((await names(o)).sort()).toEqual(['same (1).txt', 'same.txt']));
    await context.close();
  });

  test('progress and cancel: a slow upload shows its bar, Cancel stops it and leaves nothing, Retry finishes it', async () => {
    const o = await seed.owner(t);
    const { context, page } = await openFolder(o);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 20,
      downloadThroughput: -1,
      uploadThroughput: 512 * 1024,
    });
    const chooser = page.waitForEvent('filechooser');
    await button(page, 'Upload files').click();
    await (await chooser).setFiles([{ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(6 * 1024 * 1024, 7) }]);
    const bar = page.getByRole('progressbar', { name: 'big.bin' });
    await eventually(async () => expect(Number(await bar.getAttribute('value'))).toBeGreaterThan(0), { timeoutMs: 10_000 });
    await screenshot(page, 'upload-progress-light-desktop');
    await button(page, 'Cancel upload of big.bin').click();
    await page.getByText('Cancelled').waitFor();
    // The check is that no file appears after the cancel: there is no event to wait for.
    await Bun.sleep(300);
    expect(await names(o)).toEqual([]);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await button(page, 'Retry upload of big.bin').click();
    await row(page, 'big.bin').waitFor();
    expect(await names(o)).toEqual(['big.bin']);
    await context.close();
  });

  test('how uploads end is said to a screen reader: complete, or failed with each file’s reason', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await openFolder(o);
    const panel = page.getByRole('region', { name: 'Uploads' });
    const pick = async (name: string) => {
      const chooser = page.waitForEvent('filechooser');
      await button(page, 'Upload files').click();
      await (await chooser).setFiles([{ name, mimeType: 'text/plain', buffer: Buffer.from('hello') }]);
    };
    await pick('fine.txt');
    await panel
      .getByRole('status')
      .filter({ hasText: /^1 upload complete$/ })
      .waitFor();
    // The server refuses the next one after it was sent (a permission taken away meanwhile).
    await page.route(
      (u) => u.pathname === '/api/files/upload',
      (r) => r.fulfill({ status: 403, contentType: 'application/json', body: JSON.stringify({ message: 'Permission required: Upload' }) }),
    );
    await pick('refused.txt');
    await panel
      .getByRole('status')
      .filter({ hasText: /^1 upload failed: refused\.txt: Permission required: Upload$/ })
      .waitFor();
    await screenshot(page, 'upload-failed-said');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('rename and new folder open with the name field focused, the base name selected: typing and Enter are enough', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'report.txt', 'r');
    const { context, page, errors } = await openFolder(o);
    await row(page, 'report.txt').click();
    await page.keyboard.press('F2');
    const rename = page.getByRole('dialog', { name: 'Rename file' });
    await rename.waitFor();
    const field = () =>
      page.evaluate(() => {
        const el = (globalThis as any).document.activeElement;
        return { label: el.labels?.[0]?.textContent, value: el.value, from: el.selectionStart, to: el.selectionEnd };
      });
    expect(await field()).toEqual({ label: 'Name', value: 'report.txt', from: 0, to: 'report'.length });
    const release = await hold(page, '**/api/files/rename');
    await page.keyboard.type('summary');
    await page.keyboard.press('Enter');
    // The row is renamed before the server answers (optimistic).
    await row(page, 'summary.txt').waitFor();
    // Escape before the answer clears the selection, and the answer does not select the row again.
    await page.keyboard.press('Escape');
    await page.getByRole('toolbar', { name: 'Folder actions' }).waitFor();
    await release();
    await page.getByRole('status').filter({ hasText: 'Renamed to “summary.txt”' }).waitFor();
    expect(await names(o)).toEqual(['summary.txt']);
    expect(await page.getByRole('toolbar', { name: 'Selection actions' }).count()).toBe(0);
    await button(page, 'New folder').click();
    await page.getByRole('dialog', { name: 'New folder' }).waitFor();
    expect(await field()).toEqual({ label: 'Name', value: 'New folder', from: 0, to: 'New folder'.length });
    await page.keyboard.type('Projects');
    await page.keyboard.press('Enter');
    await row(page, 'Projects').waitFor();
    expect(await names(o)).toEqual(['Projects', 'summary.txt']);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a name the server refuses (New folder, Rename) keeps the dialog open with its reason, tied to the field', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'notes.txt', 'n');
    const { context, page, errors } = await openFolder(o);
    const refused = 'Name must not contain control characters or any of / \\ : * ? " < > |';
    await button(page, 'New folder').click();
    const create = page.getByRole('dialog', { name: 'New folder' });
    await create.getByLabel('Name').fill('2026/05');
    await create.getByRole('button', { name: 'Create' }).click();
    await create.getByRole('alert').filter({ hasText: refused }).waitFor();
    expect(await create.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'new-folder-refused-name');
    await page.keyboard.press('Escape');
    await row(page, 'notes.txt').click();
    await page.keyboard.press('F2');
    const rename = page.getByRole('dialog', { name: 'Rename file' });
    await rename.getByLabel('Name').fill('notes|draft.txt');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await rename.getByRole('alert').filter({ hasText: refused }).waitFor();
    await page.keyboard.press('Escape');
    expect(await names(o)).toEqual(['notes.txt']);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('organise: new folder, rename (F2) with Undo, move by dialog and by drag, copy as a job, star, cut and paste', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'report.txt', 'r');
    await upload(o.client, 'photo.png', PNG);
    const { context, page, errors } = await openFolder(o);
    await row(page, 'report.txt').waitFor();

    await button(page, 'New folder').click();
    const dialog = page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByLabel('Name').fill('Archive');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await row(page, 'Archive').waitFor();
    await page.keyboard.press('Escape');
    // A refused name stays in the dialog with the server's message.
    await button(page, 'New folder').click();
    await page.getByRole('dialog', { name: 'New folder' }).getByLabel('Name').fill('bad/name');
    await page.getByRole('dialog', { name: 'New folder' }).getByRole('button', { name: 'Create' }).click();
    await page.getByRole('dialog', { name: 'New folder' }).getByRole('alert').waitFor();
    await page.keyboard.press('Escape');

    await row(page, 'report.txt').click();
    await page.keyboard.press('F2');
    const rename = page.getByRole('dialog', { name: 'Rename file' });
    await rename.getByLabel('Name').fill('summary.txt');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await row(page, 'summary.txt').waitFor();
    await page.getByRole('status').filter({ hasText: 'Renamed to “summary.txt”' }).getByRole('button', { name: 'Undo' }).click();
    await row(page, 'report.txt').waitFor();

    await row(page, 'report.txt').click();
    await button(page, 'Move').click();
    const picker = page.getByRole('dialog', { name: /^Move/ });
    await picker.getByRole('button', { name: 'Archive' }).click();
    await picker.getByRole('button', { name: 'Move here' }).click();
    await row(page, 'report.txt').waitFor({ state: 'detached' });
    const archive = (await listAll(o.client, '/api/files')).find((i) => i.name === 'Archive');
    // The row goes before the server answers (optimistic): its answer may come later.
    await eventually(async () => expect(await names(o, archive.id)).toEqual(['report.txt']));

    await row(page, 'photo.png').dragTo(row(page, 'Archive'));
    await eventually(async () => expect(await names(o, archive.id)).toEqual(['photo.png', 'report.txt']));

    await row(page, 'Archive').click();
    await button(page, 'Copy').click();
    const copyPicker = page.getByRole('dialog', { name: /^Copy/ });
    await copyPicker.getByRole('button', { name: 'Copy here' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied “Archive” to My files' }).waitFor();
    await row(page, 'Archive (1)').waitFor();

    await row(page, 'Archive (1)').click();
    await button(page, 'Star').click();
    await eventually(async () => expect(await row(page, 'Archive (1)').getAttribute('aria-label')).toContain('starred'));
    await page.getByRole('link', { name: 'Starred' }).click();
    await row(page, 'Archive (1)').waitFor();
    await row(page, 'Archive (1)').click();
    await button(page, 'Unstar').click();
    await page.getByText('Nothing starred yet').waitFor();

    // Cut here, paste in another folder: a move. The paste comes the moment the folder's title shows,
    // before the page has settled (it once moved the items into the folder just left).
    await page.getByRole('link', { name: 'My files' }).click();
    await row(page, 'Archive (1)').click();
    await page.keyboard.press('Control+x');
    await page.evaluate(() => {
      const w = globalThis as any;
      const doc = w.document;
      const pasteOnArrival = new w.MutationObserver(() => {
        if (![...doc.querySelectorAll('h1')].some((h: any) => h.textContent?.trim() === 'Archive')) return;
        pasteOnArrival.disconnect();
        doc.dispatchEvent(new w.ClipboardEvent('paste', { clipboardData: new w.DataTransfer(), bubbles: true }));
      });
      pasteOnArrival.observe(doc.body, { childList: true, subtree: true, characterData: true });
    });
    await row(page, 'Archive').dblclick();
    await page.getByRole('heading', { name: 'Archive', exact: true }).waitFor();
    await row(page, 'Archive (1)').waitFor();
    await eventually(async () => expect((await names(o, archive.id)).sort()).toEqual(['Archive (1)', 'photo.png', 'report.txt']));
    // And back by the keys: cut, open My files, Ctrl+V.
    await row(page, 'Archive (1)').click();
    await page.keyboard.press('Control+x');
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'My files' }).click();
    await page.getByRole('heading', { name: 'My files', exact: true }).waitFor();
    await page.keyboard.press('Control+v');
    await eventually(async () => expect(await names(o)).toContain('Archive (1)'));
    await row(page, 'Archive').dblclick();
    await page.getByRole('heading', { name: 'Archive', exact: true }).waitFor();

    // The breadcrumb is a drop target too: drag back up to My files.
    await row(page, 'photo.png').dragTo(page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'My files' }));
    await eventually(async () => expect(await names(o)).toContain('photo.png'));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('rename, move and delete show at once, before the server answers, and roll back with its reason when it refuses', async () => {
    const o = await seed.owner(t);
    for (const n of ['draft.txt', 'old.txt', 'keep.txt']) await upload(o.client, n, n);
    const box = await folder(o.client, 'Box');
    const gone = await folder(o.client, 'Gone');
    const { context, page, errors } = await openFolder(o);
    await row(page, 'draft.txt').waitFor();

    // A name the folder already holds is refused in the dialog, with the server's own words.
    await row(page, 'draft.txt').click();
    await page.keyboard.press('F2');
    const dialog = page.getByRole('dialog', { name: 'Rename file' });
    await dialog.getByLabel('Name').fill('box');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'An item with this name already exists' }).waitFor();

    // While the server has not answered, the list already shows the result.
    let release = await hold(page, '**/api/files/rename');
    await dialog.getByLabel('Name').fill('final.txt');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await row(page, 'final.txt').waitFor();
    expect(await names(o)).toContain('draft.txt');
    await release();
    await eventually(async () => expect(await names(o)).toContain('final.txt'));

    release = await hold(page, '**/api/files/move');
    await row(page, 'old.txt').click();
    await button(page, 'Move').click();
    const picker = page.getByRole('dialog', { name: /^Move/ });
    await picker.getByRole('button', { name: 'Box' }).click();
    await picker.getByRole('button', { name: 'Move here' }).click();
    await row(page, 'old.txt').waitFor({ state: 'detached' });
    expect(await names(o)).toContain('old.txt');
    await release();
    await eventually(async () => expect(await names(o, box.id)).toEqual(['old.txt']));

    release = await hold(page, '**/api/files/delete');
    await row(page, 'final.txt').click();
    await button(page, 'Delete').click();
    await row(page, 'final.txt').waitFor({ state: 'detached' });
    expect(await names(o)).toContain('final.txt');
    await release();
    await eventually(async () => expect((await listAll(o.client, '/api/files/trash')).map((i) => i.name)).toEqual(['final.txt']));

    // Refused: the folder it was moved into went to the trash meanwhile (another device).
    await row(page, 'keep.txt').click();
    await button(page, 'Move').click();
    await picker.getByRole('button', { name: 'Gone' }).click();
    release = await hold(page, '**/api/files/move');
    await picker.getByRole('button', { name: 'Move here' }).click();
    await row(page, 'keep.txt').waitFor({ state: 'detached' });
    await o.client.post('/api/files/delete', { ids: [gone.id] });
    await release();
    await row(page, 'keep.txt').waitFor();
    await page.getByRole('alert').filter({ hasText: '“keep.txt” was not moved: Folder not found' }).waitFor();
    expect(await names(o)).toEqual(['Box', 'keep.txt']);
    await context.close();

    // Refused: the owner took this sub-user's permissions away while its page was open.
    const sub = await seed.subUser(t, { id: o.id }, ['files.edit', 'files.delete']);
    const other = await openFolder(sub);
    const p = other.page;
    await row(p, 'keep.txt').waitFor();
    await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.delete'] });
    await row(p, 'keep.txt').click();
    await p.keyboard.press('F2');
    await p.getByRole('dialog', { name: 'Rename file' }).getByLabel('Name').fill('kept.txt');
    release = await hold(p, '**/api/files/rename');
    await p.getByRole('dialog', { name: 'Rename file' }).getByRole('button', { name: 'Rename' }).click();
    await row(p, 'kept.txt').waitFor();
    await release();
    await row(p, 'keep.txt').waitFor();
    await p
      .getByRole('alert')
      .filter({ hasText: '“keep.txt” was not renamed: You do not have permission to do that. Ask the account owner to enable "Modify".' })
      .waitFor();
    // The refusal taught the page what this login may do now: no Rename, still Delete.
    await row(p, 'keep.txt').click();
    await button(p, 'Delete').waitFor();
    await eventually(async () => expect(await button(p, 'Rename').count()).toBe(0));

    await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: [] });
    release = await hold(p, '**/api/files/delete');
    await button(p, 'Delete').click();
    await row(p, 'keep.txt').waitFor({ state: 'detached' });
    await release();
    await row(p, 'keep.txt').waitFor();
    await p
      .getByRole('alert')
      .filter({
        hasText:
          '“keep.txt” was not moved to the trash: You do not have permission to do that. Ask the account owner to enable "Move to trash".',
      })
      .waitFor();
    expect(await names(o)).toEqual(['Box', 'keep.txt']);
    expect([...errors, ...other.errors]).toEqual([]);
    await other.context.close();
  });

  test('share: create a 7-day link, copy it, change expiry, see it in Shared, a banner inside the folder, remove it with Undo', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Holiday');
    await upload(o.client, 'beach.txt', 'sand', { parentId: box.id });
    const { context, page, errors } = await openFolder(o);
    await row(page, 'Holiday').click();
    await button(page, 'Share').click();
    const dialog = page.getByRole('dialog', { name: 'Share “Holiday”' });
    await dialog.getByRole('tab', { name: 'Link' }).click();
    await dialog.getByLabel('7 days').check();
    await expectAccessible(page, 'share dialog');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    const link = dialog.getByRole('textbox', { name: 'Share link' });
    await link.waitFor();
    const url = await link.inputValue();
    expect(url).toContain('/s/');
    expect((await fetch(url)).status).toBe(200);
    await dialog.getByText('Expires in 7 days').waitFor();
    await screenshot(page, 'share-light-desktop');
    await dialog.getByRole('button', { name: 'Copy link' }).click();
    await page.getByRole('status').filter({ hasText: 'Link copied' }).waitFor();
    await dialog.getByLabel('Never').check();
    await dialog.getByText('Never expires').waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect((await json(await o.client.get(`/api/files/${box.id}/info`))).name).toBe('Holiday');

    await page.getByRole('link', { name: 'Shared', exact: true }).click();
    await row(page, 'Holiday').waitFor();
    expect(await row(page, 'Holiday').textContent()).toContain('Never expires');

    await row(page, 'Holiday').dblclick();
    await page.getByRole('note').filter({ hasText: 'This folder is shared by link' }).waitFor();

    await page.getByRole('link', { name: 'Shared', exact: true }).click();
    await row(page, 'Holiday').click();
    await button(page, 'Share').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove link' }).click();
    await page.getByText('Nothing shared yet').waitFor();
    expect((await fetch(url)).status).toBe(404);
    await page.getByRole('status').filter({ hasText: 'removed' }).getByRole('button', { name: 'Undo' }).click();
    await row(page, 'Holiday').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('delete to trash with Undo; trash: restore, delete permanently and empty, each confirmed', async () => {
    const o = await seed.owner(t);
    for (const n of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) await upload(o.client, n, n);
    const { context, page, errors } = await openFolder(o);
    await row(page, 'a.txt').click();
    await page.keyboard.press('Delete');
    await row(page, 'a.txt').waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Moved “a.txt” to the trash' }).getByRole('button', { name: 'Undo' }).click();
    await row(page, 'a.txt').waitFor();

    await row(page, 'a.txt').click();
    await row(page, 'c.txt').click({ modifiers: ['Shift'] });
    await button(page, 'Delete').click();
    await page.getByText('This folder is empty.').or(row(page, 'd.txt')).first().waitFor();
    await eventually(async () => expect(await names(o)).toEqual(['d.txt']));

    await page.getByRole('link', { name: 'Trash' }).click();
    await row(page, 'b.txt').waitFor();
    await expectAccessible(page, 'trash');
    await screenshot(page, 'trash-light-desktop');
    await row(page, 'b.txt').click();
    await button(page, 'Restore').click();
    await row(page, 'b.txt').waitFor({ state: 'detached' });
    await eventually(async () => expect((await names(o)).sort()).toEqual(['b.txt', 'd.txt']));

    await row(page, 'a.txt').click();
    await button(page, 'Delete permanently').click();
    const confirm = page.getByRole('dialog', { name: /permanently\?$/ });
    await confirm.getByText('This cannot be undone.').waitFor();
    await confirm.getByRole('button', { name: 'Delete permanently' }).click();
    await row(page, 'a.txt').waitFor({ state: 'detached' });

    await button(page, 'Empty trash').click();
    const empty = page.getByRole('dialog', { name: 'Empty the trash?' });
    await empty.getByText(/1 item .* cannot be undone/).waitFor();
    await empty.getByRole('button', { name: 'Empty trash' }).click();
    await page.getByText('The trash is empty. Deleted items wait here').waitFor();
    await eventually(async () => expect(await listAll(o.client, '/api/files/trash')).toEqual([]));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('preview: images with next and previous, text files, arrows and Esc; download of one file and of a selection as a ZIP', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'a-first.png', PNG);
    await upload(o.client, 'b-readme.md', '# Hello\nThis is the readme.');
    await upload(o.client, 'c-data.bin', Buffer.alloc(10, 1));
    const { context, page, errors } = await openFolder(o);
    await row(page, 'a-first.png').dblclick();
    const viewer = page.getByRole('dialog', { name: 'a-first.png' });
    await viewer.getByRole('img', { name: 'a-first.png' }).waitFor();
    await eventually(async () => expect(await viewer.getByRole('img').evaluate((img: any) => img.naturalWidth)).toBe(2));
    await page.keyboard.press('ArrowRight');
    const text = page.getByRole('dialog', { name: 'b-readme.md' });
    await text.getByText('This is the readme.').waitFor();
    await screenshot(page, 'preview-text-light-desktop');
    await page.keyboard.press('ArrowRight');
    await page.getByRole('dialog', { name: 'c-data.bin' }).getByText('There is no preview for this kind of file.').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    await row(page, 'b-readme.md').click();
    await row(page, 'a-first.png').click({ modifiers: ['Control'] });
    const zip = page.waitForEvent('download');
    await button(page, 'Download').click();
    const zipped = await zip;
    expect(zipped.suggestedFilename()).toMatch(/^download-\d{8}-\d{6}\.zip$/);
    expect(fs.statSync((await zipped.path())!).size).toBeGreaterThan(100);
    await row(page, 'b-readme.md').click();
    const one = page.waitForEvent('download');
    await button(page, 'Download').click();
    expect((await one).suggestedFilename()).toBe('b-readme.md');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('preview: video and audio stream from the download URL with Range requests, PDF in a frame, the 1 MiB text limit, anything else offers download', async () => {
    const o = await seed.owner(t);
    const song = await upload(o.client, 'a-song.wav', wav());
    const clip = await upload(o.client, 'b-clip.mp4', Buffer.alloc(4096, 3));
    const pdf = await upload(o.client, 'c-doc.pdf', PDF);
    const limit = 1024 * 1024;
    await upload(o.client, 'd-fits.txt', `${'x'.repeat(limit - 4)}END\n`);
    const big = await upload(o.client, 'e-big.txt', 'y'.repeat(limit + 1));
    const other = await upload(o.client, 'f-data.bin', Buffer.alloc(10, 1));
    const { context, page, errors } = await openFolder(o);
    // What the browser asked the server for, per download URL: the Range header and the status it got.
    // Noted as each response arrives; its headers are read later, and `askedFor` waits for them.
    const asked = new Map<string, Promise<{ range?: string; status: number }>[]>();
    page.on('response', (r) => {
      const id = /\/api\/files\/([^/]+)\/download/.exec(r.url())?.[1];
      if (!id) return;
      const seen = r
        .request()
        .allHeaders()
        .then((h) => ({ range: h.range, status: r.status() }));
      asked.set(id, [...(asked.get(id) ?? []), seen]);
    });
    const askedFor = (id: string) => Promise.all(asked.get(id) ?? []);
    const url = (item: { id: string }) => `/api/files/${item.id}/download`;

    await row(page, 'a-song.wav').dblclick();
    const audio = page.getByRole('dialog', { name: 'a-song.wav' }).locator('audio');
    expect(await audio.getAttribute('src')).toBe(url(song));
    await eventually(async () => expect(await audio.evaluate((a: any) => a.duration)).toBeCloseTo(1, 1), { timeoutMs: 10_000 });
    expect((await askedFor(song.id)).some((r) => r.range?.startsWith('bytes=') && r.status === 206)).toBe(true);

    await page.keyboard.press('ArrowRight');
    const video = page.getByRole('dialog', { name: 'b-clip.mp4' });
    await eventually(
      async () => expect((await askedFor(clip.id)).some((r) => r.range?.startsWith('bytes=') && r.status === 206)).toBe(true),
      {
        timeoutMs: 10_000,
      },
    );
    // This one is not a playable video: the viewer says so and offers the file instead.
    await video.getByText('This browser cannot play this video').waitFor();
    expect(await video.getByRole('link', { name: /^Download \(/ }).getAttribute('href')).toBe(url(clip));

    // Blob URLs made by the page, so the test can read what the PDF frame was given.
    await page.evaluate(() => {
      const w = globalThis as any;
      const make = URL.createObjectURL;
      w.blobs = new Map();
      URL.createObjectURL = (b: Blob) => {
        const u = make(b);
        w.blobs.set(u, b);
        return u;
      };
    });
    await page.keyboard.press('ArrowRight');
    const frame = page.getByRole('dialog', { name: 'c-doc.pdf' }).locator('iframe[title="c-doc.pdf"]');
    await frame.waitFor();
    expect((await askedFor(pdf.id)).some((r) => r.status === 200)).toBe(true);
    // The browser's own viewer gets the file's bytes as a PDF.
    const shown = await frame.evaluate(async (f: any) => {
      const b = (globalThis as any).blobs.get(f.src);
      return { type: b.type, text: await b.text() };
    });
    expect(shown).toEqual({ type: 'application/pdf', text: PDF });

    await page.keyboard.press('ArrowRight');
    const fits = page.getByRole('dialog', { name: 'd-fits.txt' });
    await eventually(async () => expect(await fits.getByLabel('Contents of d-fits.txt').textContent()).toEndWith('END\n'));
    expect(await askedFor((await listAll(o.client, '/api/files')).find((i) => i.name === 'd-fits.txt').id)).toEqual([
      { range: `bytes=0-${limit - 1}`, status: 206 },
    ]);

    await page.keyboard.press('ArrowRight');
    const tooBig = page.getByRole('dialog', { name: 'e-big.txt' });
    await tooBig.getByText('Text files over 1.00 MiB are not previewed; this one is 1.00 MiB.').waitFor();
    expect(await tooBig.getByRole('link', { name: /^Download \(/ }).getAttribute('href')).toBe(url(big));
    expect(asked.has(big.id)).toBe(false);

    await page.keyboard.press('ArrowRight');
    const none = page.getByRole('dialog', { name: 'f-data.bin' });
    await none.getByText('There is no preview for this kind of file.').waitFor();
    const download = page.waitForEvent('download');
    await none.getByRole('link', { name: 'Download (10 B)' }).click();
    expect((await download).suggestedFilename()).toBe('f-data.bin');
    expect(new URL((await download).url()).pathname).toBe(url(other));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('search: / focuses the box, results come as you type, each with its folder', async () => {
    const o = await seed.owner(t);
    const docs = await folder(o.client, 'Documents');
    await upload(o.client, 'invoice-march.pdf', '%PDF-1.4', { parentId: docs.id });
    await upload(o.client, 'unrelated.txt', 'x');
    const { context, page } = await openFolder(o);
    await row(page, 'Documents').waitFor();
    await page.locator('body').click({ position: { x: 5, y: 400 } });
    await page.keyboard.press('/');
    const box = page.getByRole('searchbox', { name: 'Search' });
    await eventually(async () => expect(await box.evaluate((el: any) => el === el.ownerDocument.activeElement)).toBe(true));
    await page.keyboard.type('invoice');
    await page.waitForURL('**/search?q=invoice');
    const hit = row(page, 'invoice-march.pdf');
    await hit.waitFor();
    await eventually(async () => expect(await hit.textContent()).toContain('Documents'));
    expect(await row(page, 'unrelated.txt').count()).toBe(0);
    await expectAccessible(page, 'search results');
    await box.fill('nothing-like-this');
    await page.getByText('No files or folders match').waitFor();
    await context.close();
  });

  test('live updates: a second page of the same account sees changes without reloading', async () => {
    const o = await seed.owner(t);
    const first = await openFolder(o);
    const second = await openFolder(o);
    await first.page.getByText('This folder is empty.').waitFor();
    await second.page.getByText('This folder is empty.').waitFor();
    await eventStreamOpen(first.page);
    await eventStreamOpen(second.page);
    await button(first.page, 'New folder').click();
    await first.page.getByRole('dialog', { name: 'New folder' }).getByLabel('Name').fill('From tab one');
    await first.page.getByRole('dialog', { name: 'New folder' }).getByRole('button', { name: 'Create' }).click();
    await row(second.page, 'From tab one').waitFor();
    // A change made elsewhere (another device, a script) arrives too.
    await upload(o.client, 'from-a-script.txt', 'x');
    await row(first.page, 'from-a-script.txt').waitFor();
    await row(second.page, 'from-a-script.txt').waitFor();
    await first.context.close();
    await second.context.close();
  });

  test('offline and reconnecting are said; the event stream reconnects with backoff and shows what changed meanwhile', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'before.txt', 'b');
    const { context, page, errors } = await openFolder(o);
    const streams: number[] = [];
    page.on('request', (r) => {
      // A reconnect names its last event id in the query.
      if (new URL(r.url()).pathname === '/api/files/events') streams.push(Date.now());
    });
    await row(page, 'before.txt').waitFor();
    // Open before the drop: a stream that never connected has no missed changes to ask for.
    await eventStreamOpen(page);
    const offline = page.getByRole('status').filter({ hasText: 'You are offline or Coffer cannot be reached' });
    const reconnecting = page.getByRole('status').filter({ hasText: 'Reconnecting to live updates' });

    // The browser goes offline: the app says so, and a change fails with a message instead of silently.
    await context.setOffline(true);
    await offline.waitFor();
    await button(page, 'New folder').click();
    const dialog = page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Coffer cannot be reached' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await upload(o.client, 'while-offline.txt', 'x');
    await context.setOffline(false);
    await offline.waitFor({ state: 'detached' });
    await row(page, 'while-offline.txt').waitFor();

    // The server goes away (its connections with it) and comes back on the same address.
    // A call the restart cut would rightly make the app say offline instead.
    await apiSettled(page);
    const before = streams.length;
    await t.restart({
      samePort: true,
      whileDown: async () => {
        await reconnecting.waitFor();
        // Two failed attempts; the next, which finds the server back, comes later still (backoff).
        await eventually(() => expect(streams.length - before).toBeGreaterThanOrEqual(2), { timeoutMs: 10_000 });
      },
    });
    await upload(o.client, 'while-away.txt', 'x');
    const uploadedAt = Date.now();
    await reconnecting.waitFor({ state: 'detached', timeout: 15_000 });
    await row(page, 'while-away.txt').waitFor();
    const gaps = streams
      .slice(before)
      .map((at, n, all) => (n ? at - all[n - 1]! : 0))
      .slice(1);
    expect(gaps[0]!).toBeGreaterThanOrEqual(900);
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    // The change was made while the page had no stream: it came from the replay after reconnecting.
    expect(streams.at(-1)!).toBeGreaterThan(uploadedAt);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a sub-user sees only what its permissions allow', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'shared-doc.txt', 'x');
    const viewer = await seed.subUser(t, { id: o.id }, []);
    const { context, page } = await openFolder(viewer);
    await row(page, 'shared-doc.txt').waitFor();
    expect(await button(page, 'Upload files').count()).toBe(0);
    expect(await button(page, 'New folder').count()).toBe(0);
    await row(page, 'shared-doc.txt').click();
    await page.getByText('1 selected').waitFor();
    for (const name of ['Rename', 'Move', 'Copy', 'Share', 'Download', 'Delete', 'Star']) expect(await button(page, name).count()).toBe(0);
    await context.close();

    const editor = await seed.subUser(t, { id: o.id }, ['files.upload', 'files.download']);
    const second = await openFolder(editor);
    await button(second.page, 'Upload files').waitFor();
    await row(second.page, 'shared-doc.txt').click();
    await button(second.page, 'Download').waitFor();
    expect(await button(second.page, 'Delete').count()).toBe(0);
    await second.context.close();
  });

  test('keyboard only: arrows, Enter into a folder, Backspace back, Shift+arrows, Delete, ? sheet and Ctrl+K palette', async () => {
    const o = await seed.owner(t);
    const inner = await folder(o.client, 'Alpha');
    await upload(o.client, 'inside.txt', 'i', { parentId: inner.id });
    for (const n of ['one.txt', 'two.txt', 'three.txt']) await upload(o.client, n, n);
    // Keys pressed as soon as a folder shows act on it, even before the page's next frame.
    const { context, page } = await openFolder(o, '/files', { lateFrames: true });
    await row(page, 'Alpha').waitFor();
    await row(page, 'Alpha').focus();
    await page.keyboard.press('Enter');
    await row(page, 'inside.txt').waitFor();
    await page.waitForURL(`**/files/${inner.id}`);
    await row(page, 'inside.txt').focus();
    await page.keyboard.press('Backspace');
    await page.waitForURL('**/files');
    await row(page, 'Alpha').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Shift+ArrowDown');
    await page.getByText('2 selected').waitFor();
    await page.keyboard.press('Delete');
    await page.getByRole('status').filter({ hasText: 'Moved 2 items to the trash' }).waitFor();
    expect(await names(o)).toEqual(['Alpha', 'two.txt']);
    await page.keyboard.press('Escape');
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText('Command palette').waitFor();
    await expectAccessible(page, 'shortcut sheet');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+k');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.getByRole('combobox').fill('trash');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/trash');
    await context.close();
  });

  test('a context menu opened from the keyboard gives focus back to its row: on Escape, and after the dialog an entry opened', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'menu.txt', 'm');
    const { context, page, errors } = await openFolder(o);
    const focused = () => row(page, 'menu.txt').evaluate((el: any) => el === (globalThis as any).document.activeElement);
    await row(page, 'menu.txt').click();
    await page.keyboard.press('Shift+F10');
    const menu = page.getByRole('menu', { name: 'Actions for menu.txt' });
    await menu.waitFor();
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    expect(await focused()).toBe(true);
    await page.keyboard.press('Shift+F10');
    await menu.getByRole('menuitem', { name: 'Share' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Share “menu.txt”' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focused()).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the command palette shows a long file name without its middle, its end and extension in view, as the list does (desktop, phone)', async () => {
    const o = await seed.owner(t);
    const name = `holiday-${'0123456789'.repeat(7)}-final-edit.jpeg`;
    await upload(o.client, name, 'x');
    for (const opts of [{}, { viewport: PHONE, dark: true, touch: true }]) {
      const { context, page, errors } = await openFolder(o, '/files', opts);
      await row(page, name).waitFor();
      await page.keyboard.press('Control+k');
      const palette = page.getByRole('dialog', { name: 'Command palette' });
      await palette.getByRole('combobox').fill('holiday');
      const option = palette.getByRole('option', { name });
      await option.waitFor();
      const end = option.getByText('edit.jpeg', { exact: false });
      const [box, endBox] = [(await option.boundingBox())!, (await end.boundingBox())!];
      expect(endBox.x + endBox.width).toBeLessThanOrEqual(box.x + box.width);
      expect(await end.evaluate((el: any) => el.scrollWidth <= el.clientWidth)).toBe(true);
      expect(await option.locator('[title]').getAttribute('title')).toBe(name);
      await screenshot(page, `palette-long-name-${opts.dark ? 'dark-phone' : 'light-desktop'}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('the command palette with nothing matching says so outside its list, which holds options only (axe-core); light and dark', async () => {
    const o = await seed.owner(t);
    for (const [opts, tag] of [
      [{}, 'light-desktop'],
      [{ viewport: PHONE, dark: true, touch: true }, 'dark-phone'],
    ] as const) {
      const { context, page, errors } = await openFolder(o, '/files', opts);
      await page.getByText('This folder is empty.').waitFor();
      await page.keyboard.press('Control+k');
      const palette = page.getByRole('dialog', { name: 'Command palette' });
      await palette.getByRole('combobox').fill('qwxz nothing like this');
      await palette.getByText('Nothing matches.').waitFor();
      await expectAccessible(page, `command palette with nothing matching (${tag})`);
      const list = palette.getByRole('listbox', { name: 'Commands and files' });
      expect(await list.locator(':scope > :not([role="option"])').count()).toBe(0);
      expect(await palette.getByRole('status').textContent()).toBe('Nothing matches.');
      await screenshot(page, `palette-nothing-matches-${tag}`);
      await palette.getByRole('combobox').fill('trash');
      await palette.getByRole('option', { name: 'Go to Trash' }).waitFor();
      expect(await palette.getByText('Nothing matches.').count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('Backspace and Alt+Up to the parent folder focus and select the folder left', async () => {
    const o = await seed.owner(t);
    await folder(o.client, 'Alpha');
    const beta = await folder(o.client, 'Beta');
    await upload(o.client, 'inside.txt', 'i', { parentId: beta.id });
    await upload(o.client, 'top.txt', 't');
    const { context, page, errors } = await openFolder(o);
    const focusedRow = () =>
      page.evaluate(() => {
        const el = (globalThis as any).document.activeElement;
        return el?.getAttribute('aria-label') ?? el?.tagName;
      });
    for (const key of ['Backspace', 'Alt+ArrowUp']) {
      await row(page, 'Beta').focus();
      await page.keyboard.press('Enter');
      await row(page, 'inside.txt').waitFor();
      await page.keyboard.press(key);
      await page.waitForURL(/\/files$/);
      await eventually(async () => expect(await focusedRow()).toMatch(/^Beta,/));
      expect(await row(page, 'Beta').getAttribute('aria-selected')).toBe('true');
      // The keys act from there: the next item down.
      await page.keyboard.press('ArrowDown');
      await eventually(async () => expect(await focusedRow()).toMatch(/^top\.txt,/));
    }
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a folder bigger than a page loads further pages as it scrolls, with few rows in the page', async () => {
    const o = await seed.owner(t);
    const big = await folder(o.client, 'Big');
    seedRows(t, o.id, big.id, 650, (i) => ({ name: `entry-${String(i).padStart(4, '0')}.txt`, size: i }));
    const { context, page } = await openFolder(o, `/files/${big.id}`);
    await row(page, 'entry-0000.txt').waitFor();
    for (let i = 0; i < 20 && (await row(page, 'entry-0649.txt').count()) === 0; i++) {
      await page.locator('.scroller').evaluate((el: any) => {
        el.scrollTop = el.scrollHeight;
      });
      await page.waitForTimeout(150);
    }
    await row(page, 'entry-0649.txt').waitFor();
    expect(await page.getByRole('row').count()).toBeLessThan(80);
    await page.getByText('650 items').waitFor();
    await context.close();
  });
});

describe('keyboard focus in the file list', () => {
  test('Delete on a focused row left out of the selection trashes that row, not the selection elsewhere', async () => {
    const o = await seed.owner(t);
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await upload(o.client, name, name);
    const { context, page, errors } = await openFolder(o);
    await row(page, 'a.txt').click();
    // Ctrl+arrows move the focus alone: a.txt stays selected, c.txt is focused.
    await page.keyboard.press('Control+ArrowDown');
    await page.keyboard.press('Control+ArrowDown');
    await eventually(() => hasFocus(row(page, 'c.txt')));
    expect(await row(page, 'c.txt').getAttribute('aria-selected')).toBe('false');
    await page.keyboard.press('Delete');
    await page.getByRole('status').filter({ hasText: 'Moved “c.txt” to the trash' }).waitFor();
    await eventually(async () => expect(await names(o)).toEqual(['a.txt', 'b.txt']));
    expect(await row(page, 'a.txt').isVisible()).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Delete on the focused row moves the focus to the row now in its place, not to the page: the arrows go on from there', async () => {
    const o = await seed.owner(t);
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await upload(o.client, name, name);
    const { context, page, errors } = await openFolder(o);
    await row(page, 'a.txt').click();
    await page.keyboard.press('ArrowDown');
    await eventually(() => hasFocus(row(page, 'b.txt')));
    await page.keyboard.press('Delete');
    await row(page, 'b.txt').waitFor({ state: 'detached' });
    await eventually(() => hasFocus(row(page, 'c.txt')));
    await page.keyboard.press('ArrowUp');
    await eventually(() => hasFocus(row(page, 'a.txt')));
    expect(await row(page, 'a.txt').getAttribute('aria-selected')).toBe('true');
    expect(errors).toEqual([]);
    await context.close();
  });
});
