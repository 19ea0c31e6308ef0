import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  admin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

describe('Admin → Team folders', () => {
  test('create one with a group and a quota by keyboard, see its size, change its groups, find it in a member\u2019s My files, delete it', async () => {
    const ana = await seed.owner(t);
    const ben = await seed.owner(t);
    const design = await json(await admin.client.post('/api/admin/groups', { name: 'Design' }));
    const family = await json(await admin.client.post('/api/admin/groups', { name: 'Family' }));
    expect((await admin.client.post(`/api/admin/groups/${design.id}/members`, { email: ana.email })).status).toBe(201);
    expect((await admin.client.post(`/api/admin/groups/${family.id}/members`, { email: ben.email })).status).toBe(201);

    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/team-folders');
    await page.getByText('No team folders yet.').waitFor();
    await expectAccessible(page, 'admin team folders, empty');
    await page.getByLabel('Team folder name').fill('Brand assets');
    await page.getByLabel('Quota', { exact: true }).fill('1M');
    await page.getByLabel('Group', { exact: true }).selectOption({ label: 'Design · 1 person' });
    await page.getByLabel('Team folder name').focus();
    await page.keyboard.press('Enter');
    const list = page.getByRole('list', { name: 'Team folders' });
    await list.getByText('0 B of 1.00 MiB · Design (can edit)').waitFor();

    const [made] = (await json(await admin.client.get('/api/admin/team-folders'))).teamFolders;
    await upload(ana.client, 'logo.svg', 'x'.repeat(2048), { parentId: made.folderId });
    await page.reload();
    await list.getByText('2.00 KiB of 1.00 MiB · Design (can edit)').waitFor();

    await page.getByRole('button', { name: 'Groups of Brand assets' }).click();
    const dialog = page.getByRole('dialog', { name: 'Groups of Brand assets' });
    await dialog.getByLabel('Add a group').selectOption({ label: 'Family · 1 person' });
    await dialog.getByRole('button', { name: 'Add group' }).click();
    await dialog.getByLabel('Role of Design').selectOption('viewer');
    await expectAccessible(page, 'team folder groups');
    await dialog.getByRole('button', { name: 'Save groups' }).click();
    await list.getByText('2.00 KiB of 1.00 MiB · Design (can view), Family (can view)').waitFor();
    expect((await ana.client.post('/api/files/folder', { name: 'No', parentId: made.folderId })).status).toBe(403);

    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-desktop', { dark: true }],
      ['light-phone', { viewport: PHONE, touch: true }],
    ] as const) {
      const shot = await signedInContext(browser, t.url, admin, opts);
      await shot.page.goto('/admin/team-folders');
      await shot.page.getByRole('list', { name: 'Team folders' }).getByText('Brand assets').waitFor();
      await screenshot(shot.page, `admin-team-folders-${name}`);
      if (name === 'light-phone') await expectAccessible(shot.page, 'admin team folders on a phone');
      await shot.context.close();
      const member = await signedInContext(browser, t.url, ben, opts);
      await member.page.goto('/files');
      const row = member.page.getByRole('row', { name: /^Brand assets, folder, team folder/ });
      await row.waitFor();
      await screenshot(member.page, `team-folder-in-my-files-${name}`);
      if (name === 'dark-desktop') {
        await expectAccessible(member.page, 'my files with a team folder');
        await row.dblclick();
        await member.page.getByRole('row', { name: /^logo\.svg,/ }).waitFor();
      }
      expect(member.errors).toEqual([]);
      await member.context.close();
    }

    await page.getByRole('button', { name: 'Delete Brand assets' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete Brand assets?' });
    await confirm
      .getByText('Everything in it (2.00 KiB, its trash and file versions included) is deleted, and 2 groups (2 people) lose it at once')
      .waitFor();
    await confirm.getByRole('button', { name: 'Delete team folder' }).click();
    await page.getByText('No team folders yet.').waitFor();
    expect((await ben.client.get(`/api/files?parentId=${made.folderId}`)).status).toBe(404);
    expect(errors).toEqual([]);
    await context.close();
  });
});
