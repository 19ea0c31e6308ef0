import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { LIBRARY_NOT_ENCRYPTED } from '../../src/contract/libraries.ts';
import { acquireBrowser, expectAccessible, holdRequests, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer, tempDir } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;
const root = tempDir('coffer-ui-library-');

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } }), acquireBrowser()]);
  admin = await seed.admin(t);
  fs.mkdirSync(path.join(root, 'Summer 2019'));
  for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(root, 'Summer 2019', `beach-${i}.txt`), `beach ${i}`);
  fs.writeFileSync(path.join(root, 'index.txt'), 'the family archive');
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('Admin → Libraries', () => {
  test('add a library with the not-encrypted warning, see its scan, find it marked in the owner’s My files and details, remove it', async () => {
    const anna = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/libraries');
    await page.getByText('No libraries yet.').waitFor();
    await page.getByText(LIBRARY_NOT_ENCRYPTED).waitFor();
    await expectAccessible(page, 'admin libraries, empty');
    await page.getByLabel('Folder on the server').fill('relative/path');
    await page.getByLabel('Library name').fill('Family archive');
    await page.getByLabel('Owner’s email').fill(anna.email);
    await page.getByRole('button', { name: 'Add library' }).click();
    await page.getByText('relative/path is not an absolute path').waitFor();
    await page.getByLabel('Folder on the server').fill(root);
    await page.getByRole('button', { name: 'Add library' }).click();
    const list = page.getByRole('list', { name: 'Libraries' });
    await list.getByText(/13 files, 1 folder/).waitFor();
    await list.getByText('read-only').waitFor();

    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-desktop', { dark: true }],
      ['light-phone', { viewport: PHONE, touch: true }],
    ] as const) {
      const shot = await signedInContext(browser, t.url, admin, opts);
      await shot.page.goto('/admin/libraries');
      await shot.page.getByRole('list', { name: 'Libraries' }).getByText('Family archive').waitFor();
      await screenshot(shot.page, `admin-libraries-${name}`);
      if (name !== 'light-desktop') await expectAccessible(shot.page, `admin libraries (${name})`);
      await shot.context.close();
      const owner = await signedInContext(browser, t.url, anna, opts);
      await owner.page.goto('/files');
      const row = owner.page.getByRole('row', { name: /^Family archive, folder, library/ });
      await row.waitFor();
      // On a phone a tap selects: the top level, with the library marked, is the picture there.
      if (name !== 'light-phone') {
        await row.dblclick();
        await owner.page.getByRole('row', { name: /^index\.txt, 18 B, library/ }).click();
        await owner.page.getByRole('button', { name: 'Details' }).click();
        await owner.page
          .locator('.info-panel')
          .getByText('In a library: kept as it is in a folder on the server, not encrypted by Coffer')
          .waitFor();
      }
      await screenshot(owner.page, `library-in-my-files-${name}`);
      if (name === 'dark-desktop') await expectAccessible(owner.page, 'a library in my files, details open');
      expect(owner.errors).toEqual([]);
      await owner.context.close();
    }

    await page.getByRole('button', { name: 'Rescan Family archive' }).click();
    await list.getByText(/13 files, 1 folder/).waitFor();
    const removeButton = page.getByRole('button', { name: 'Remove Family archive' });
    await removeButton.click();
    const confirm = page.getByRole('dialog', { name: 'Remove Family archive?' });
    const deletes = await holdRequests(page, '**/api/admin/libraries/*', 'DELETE');
    await confirm.getByRole('button', { name: 'Remove library' }).click();
    await eventually(() => deletes.count() === 1);
    // Pressed again while the server answers: no second question, no second request.
    await removeButton.click({ force: true });
    expect(await confirm.count()).toBe(0);
    deletes.release();
    await page.getByText('No libraries yet.').waitFor();
    expect(deletes.count()).toBe(1);
    expect(fs.readdirSync(root).sort()).toEqual(['Summer 2019', 'index.txt']);
    expect(errors).toEqual([]);
    await context.close();
  });
});
