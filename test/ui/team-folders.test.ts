import { describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, holdRequests, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { seedRows, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

serverAndBrowser((s) => ({ t, admin, browser } = s));

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

    const deleteButton = page.getByRole('button', { name: 'Delete Brand assets' });
    await deleteButton.click();
    const confirm = page.getByRole('dialog', { name: 'Delete Brand assets?' });
    await confirm
      .getByText('Everything in it (2.00 KiB, its trash and file versions included) is deleted, and 2 groups (2 people) lose it at once')
      .waitFor();
    const deletes = await holdRequests(page, '**/api/admin/team-folders/*', 'DELETE');
    await confirm.getByRole('button', { name: 'Delete team folder' }).click();
    await eventually(() => deletes.count() === 1);
    // Pressed again while the server answers: no second question, no second request.
    await deleteButton.click({ force: true });
    expect(await confirm.count()).toBe(0);
    deletes.release();
    await page.getByText('No team folders yet.').waitFor();
    expect(deletes.count()).toBe(1);
    expect((await ben.client.get(`/api/files?parentId=${made.folderId}`)).status).toBe(404);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a group named with a long word (no spaces): at 390 px the form stays on the screen, Create team folder within reach', async () => {
    await admin.client.post('/api/admin/groups', { name: `Crew${'0123456789'.repeat(6)}`.slice(0, 64) });
    const { context, page, errors } = await signedInContext(browser, t.url, admin, { viewport: PHONE, dark: true, touch: true });
    await page.goto('/admin/team-folders');
    await page
      .getByLabel('Group', { exact: true })
      .getByRole('option', { name: /^Crew0123/ })
      .waitFor({ state: 'attached' });
    await screenshot(page, 'admin-team-folders-long-group-dark-phone');
    for (const control of [page.getByLabel('Group', { exact: true }), page.getByRole('button', { name: 'Create team folder' })]) {
      const box = (await control.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    }
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('a team folder\u2019s links and versions in the web app', () => {
  test('its administrator shares an item from inside it and the team folder itself, and manages the link in Shared; members see no Share; Versions offers what each may do', async () => {
    const lead = await seed.owner(t);
    const editor = await seed.owner(t);
    const viewer = await seed.owner(t);
    const editors = await json(await admin.client.post('/api/admin/groups', { name: 'Press' }));
    const viewers = await json(await admin.client.post('/api/admin/groups', { name: 'Readers' }));
    expect((await admin.client.post(`/api/admin/groups/${editors.id}/members`, { email: lead.email, admin: true })).status).toBe(201);
    expect((await admin.client.post(`/api/admin/groups/${editors.id}/members`, { email: editor.email })).status).toBe(201);
    expect((await admin.client.post(`/api/admin/groups/${viewers.id}/members`, { email: viewer.email })).status).toBe(201);
    const team = await json(
      await admin.client.post('/api/admin/team-folders', {
        name: 'Press kit',
        quota: null,
        groups: [
          { groupId: editors.id, role: 'editor' },
          { groupId: viewers.id, role: 'viewer' },
        ],
      }),
    );
    const flyer = await upload(editor.client, 'flyer.txt', 'first', { parentId: team.folderId });
    const form = new FormData();
    form.append('file', new File(['second'], 'flyer.txt'));
    expect((await editor.client.request(`/api/files/${flyer.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    const teamLinks = async () => (await json(await lead.client.get(`/api/team-folders/${team.id}/share/links`))).links;

    const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace('.', '\\.')},`) });
    const openFlyer = async (page: Page) => {
      await page.goto('/files');
      await row(page, 'Press kit').dblclick();
      await row(page, 'flyer.txt').click();
    };

    const { context, page, errors } = await signedInContext(browser, t.url, lead);
    await openFlyer(page);
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Share “flyer.txt”' });
    await dialog.getByRole('button', { name: 'Create link' }).click();
    await dialog.getByRole('textbox', { name: 'Share link' }).waitFor();
    // No People part: a team folder's people are its groups.
    expect(await dialog.getByRole('heading', { name: 'People' }).count()).toBe(0);
    const [made] = await teamLinks();
    expect(made).toMatchObject({ itemId: flyer.id, mode: 'view' });
    expect(await dialog.getByRole('textbox', { name: 'Share link' }).inputValue()).toBe(made.url);
    expect((await json(await lead.client.get('/api/files/share/links'))).links).toEqual([]);
    await expectAccessible(page, 'share dialog of a team folder item');
    await dialog.getByRole('button', { name: 'Done' }).click();

    // Versions: its administrator restores and deletes.
    await page.getByRole('button', { name: 'Details', exact: true }).click();
    await page.getByRole('tab', { name: 'Versions' }).click();
    const versions = page.getByRole('tabpanel', { name: 'Versions' }).getByRole('listitem');
    await versions.getByRole('button', { name: 'Delete' }).waitFor();
    await versions.getByRole('button', { name: 'Restore' }).waitFor();

    // The Shared view lists the team's links under its name; settings change there, and the link is removed.
    await page.getByRole('link', { name: 'Shared', exact: true }).click();
    const links = page.getByRole('list', { name: 'Share links of Press kit' });
    await links.getByText('flyer.txt').waitFor();
    expect(await page.getByRole('list', { name: 'Share links', exact: true }).count()).toBe(0);
    await expectAccessible(page, 'Shared view with a team folder\u2019s links');
    await screenshot(page, 'team-folder-links-light-desktop');
    await page.getByRole('button', { name: 'Settings of the link to flyer.txt' }).click();
    const settings = page.getByRole('dialog', { name: 'Link settings for “flyer.txt”' });
    // A file's link has no upload mode.
    expect(await settings.getByLabel('Upload only').count()).toBe(0);
    await settings.getByLabel('Limit downloads').check();
    await settings.getByLabel('Maximum downloads').fill('3');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await links.getByText(/0 of 3 downloads used/).waitFor();
    expect((await teamLinks())[0]).toMatchObject({ maxDownloads: 3 });
    await page.getByRole('button', { name: 'Remove the link to flyer.txt' }).click();
    await links.waitFor({ state: 'detached' });
    expect(await teamLinks()).toEqual([]);
    expect((await fetch(made.url.replace(/^https?:\/\/[^/]+/, t.url))).status).toBe(404);

    // The team folder itself, from My files: a folder's link, with its modes.
    await page.goto('/files');
    await row(page, 'Press kit').click();
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const whole = page.getByRole('dialog', { name: 'Share “Press kit”' });
    await whole.getByRole('button', { name: 'Create link' }).click();
    await whole.getByRole('textbox', { name: 'Share link' }).waitFor();
    // Every change saves as it is made, on the team's link.
    await whole.getByLabel('View and upload').check();
    await whole.getByRole('status').filter({ hasText: 'Saved: Link settings saved' }).waitFor();
    expect(await teamLinks()).toEqual([expect.objectContaining({ itemId: team.folderId, mode: 'view_upload' })]);
    await whole.getByRole('button', { name: 'Done' }).click();
    expect(errors).toEqual([]);
    await context.close();

    // An editor who administers nothing: no Share, Restore without Delete; a viewer: neither.
    for (const [who, restore] of [
      [editor, 1],
      [viewer, 0],
    ] as const) {
      const member = await signedInContext(browser, t.url, who);
      await member.page.goto('/files');
      await row(member.page, 'Press kit').click();
      await member.page.getByRole('button', { name: 'Details', exact: true }).waitFor();
      expect(await member.page.getByRole('button', { name: 'Share', exact: true }).count()).toBe(0);
      await row(member.page, 'Press kit').dblclick();
      await row(member.page, 'flyer.txt').click();
      await member.page.getByRole('button', { name: 'Details', exact: true }).waitFor();
      expect(await member.page.getByRole('button', { name: 'Share', exact: true }).count()).toBe(0);
      await member.page.getByRole('button', { name: 'Details', exact: true }).click();
      // The file's details have arrived (what the tab offers follows them).
      await member.page.getByText(restore ? /you can edit/ : /you can view/).waitFor();
      await member.page.getByRole('tab', { name: 'Versions' }).click();
      const items = member.page.getByRole('tabpanel', { name: 'Versions' }).getByRole('listitem');
      await items.first().getByRole('link', { name: 'Download' }).waitFor();
      expect(await items.getByRole('button', { name: 'Restore' }).count()).toBe(restore);
      expect(await items.getByRole('button', { name: 'Delete' }).count()).toBe(0);
      expect(member.errors).toEqual([]);
      await member.context.close();
    }
  });
});

describe('a team folder’s trash in Settings → Groups', () => {
  test('its administrator reaches every trashed item, past the first page of 200, and restores one from the second page', async () => {
    const lead = await seed.owner(t);
    const crew = await json(await admin.client.post('/api/admin/groups', { name: 'Crew' }));
    expect((await admin.client.post(`/api/admin/groups/${crew.id}/members`, { email: lead.email, admin: true })).status).toBe(201);
    const team = await json(
      await admin.client.post('/api/admin/team-folders', { name: 'Stage', quota: null, groups: [{ groupId: crew.id, role: 'editor' }] }),
    );
    // Rows straight through the repository, in the team folder's own account: the trash's paging is under test, not making folders.
    const { account_id: teamAccount } = t.server.ctx.db.$client
      .query<{ account_id: string }, [string]>('SELECT account_id FROM items WHERE id = ?')
      .get(team.folderId)!;
    const ids = seedRows(t, teamAccount, team.folderId, 205, (i) => ({ name: `cue-${String(i).padStart(3, '0')}`, type: 'folder' }));
    expect((await lead.client.post('/api/files/delete', { ids })).status).toBeLessThan(300);
    const trashed = async () => {
      const all: { name: string }[] = [];
      let cursor = '';
      do {
        const res = await lead.client.get(`/api/team-folders/${team.id}/trash?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
        all.push(...(await json(res)));
        cursor = res.headers.get('X-Next-Cursor') ?? '';
      } while (cursor);
      return all.map((i) => i.name);
    };
    const everything = await trashed();
    expect(everything.length).toBe(205);

    const { context, page, errors } = await signedInContext(browser, t.url, lead);
    await page.goto('/settings/groups');
    await page.getByRole('button', { name: 'Trash of Stage' }).click();
    const dialog = page.getByRole('dialog', { name: 'Trash of Stage' });
    const list = dialog.getByRole('list', { name: 'Trash of Stage' });
    await list.getByRole('listitem').first().waitFor();
    expect(await list.getByRole('listitem').count()).toBe(200);
    const last = everything.at(-1)!;
    expect(await list.getByText(last, { exact: true }).count()).toBe(0);
    await dialog.getByRole('button', { name: 'More in the trash' }).click();
    await list.getByText(last, { exact: true }).waitFor();
    expect(await list.getByRole('listitem').count()).toBe(205);
    expect(await dialog.getByRole('button', { name: 'More in the trash' }).count()).toBe(0);
    // By keyboard: once it is restored, the focus is on the entry now last, not on the page behind the dialog.
    await dialog.getByRole('button', { name: `Restore ${last}` }).focus();
    await page.keyboard.press('Enter');
    await list.getByText(last, { exact: true }).waitFor({ state: 'detached' });
    await eventually(async () =>
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label'))).toBe(
        `Restore ${everything.at(-2)}`,
      ),
    );
    expect(await trashed()).not.toContain(last);
    await screenshot(page, 'team-trash-two-pages-light-desktop');
    expect(errors).toEqual([]);
    await context.close();
  });
});
