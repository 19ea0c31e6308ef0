import { describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { expectAccessible, hasFocus, holdRequests, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { newGroup } from '../helpers/groups.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

serverAndBrowser((s) => ({ t, admin, browser } = s));

describe('Admin → Groups', () => {
  test('create a group by keyboard, add members by email, make a group administrator, rename, and delete saying what it removes', async () => {
    const ana = await seed.owner(t);
    const ben = await seed.owner(t);
    const owner = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/groups');
    await page.getByText('No groups yet.').waitFor();
    await expectAccessible(page, 'admin groups, empty');

    await page.getByLabel('Group name', { exact: true }).focus();
    await page.keyboard.type('Family');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Members of Family' });
    await dialog.getByText('No one is in Family yet.').waitFor();
    // The email field has focus and completes from the accounts.
    await page.keyboard.type(ana.email);
    await page.keyboard.press('Enter');
    const members = dialog.getByRole('list', { name: 'Members of Family' });
    await members.getByText(ana.email).waitFor();
    await dialog.getByLabel('Email', { exact: true }).fill('nobody@example.test');
    await dialog.getByRole('button', { name: 'Add member' }).click();
    await dialog.getByText('No account with this email').waitFor();
    await dialog.getByLabel('Email', { exact: true }).fill(ben.email);
    await dialog.getByRole('button', { name: 'Add member' }).click();
    await members.getByText(ben.email).waitFor();
    await dialog.getByRole('button', { name: `Make administrator: ${ben.email}` }).click();
    await members.getByText('Group administrator').waitFor();
    await expectAccessible(page, 'admin group members');
    await dialog.getByRole('button', { name: `Remove ${ana.email}` }).click();
    await page
      .getByRole('dialog', { name: `Remove ${ana.email} from Family?` })
      .getByRole('button', { name: 'Remove member' })
      .click();
    await members.getByText(ana.email).waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Done' }).click();

    const groups = page.getByRole('list', { name: 'Groups' });
    await groups.getByText('1 person · nothing shared with it').waitFor();
    const [group] = (await json(await admin.client.get('/api/admin/groups'))).groups;
    const root = await folder(owner.client, 'Holidays');
    expect((await owner.client.post(`/api/files/${root.id}/members`, { groupId: group.id, role: 'viewer' })).status).toBe(201);
    expect((await ben.client.get(`/api/files?parentId=${root.id}`)).status).toBe(200);

    await page.getByRole('button', { name: 'Rename Family' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename Family' });
    await rename.getByLabel('Group name').fill('Household');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await groups.getByText('Household', { exact: true }).waitFor();
    await groups.getByText('1 person · shared with 1 item').waitFor();
    await page.getByRole('button', { name: 'Team folder allowance of Household' }).click();
    const allowance = page.getByRole('dialog', { name: 'Team folder allowance of Household' });
    await allowance.getByLabel(/Quota its administrators may give/).fill('lots');
    await allowance.getByRole('button', { name: 'Save' }).click();
    await allowance.getByText('“lots” is not a size').waitFor();
    await allowance.getByLabel(/Quota its administrators may give/).fill('1G');
    await allowance.getByRole('button', { name: 'Save' }).click();
    await groups.getByText('1 person · shared with 1 item · its administrators may make team folders of 1.00 GiB in all').waitFor();

    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-desktop', { dark: true }],
      ['light-phone', { viewport: PHONE, touch: true }],
    ] as const) {
      const shot = await signedInContext(browser, t.url, admin, opts);
      await shot.page.goto('/admin/groups');
      await shot.page.getByRole('list', { name: 'Groups' }).getByText('Household').waitFor();
      await screenshot(shot.page, `admin-groups-${name}`);
      await shot.page.getByRole('button', { name: 'Members of Household' }).click();
      await shot.page.getByRole('dialog', { name: 'Members of Household' }).getByText(ben.email).waitFor();
      await screenshot(shot.page, `admin-group-members-${name}`);
      if (name === 'light-phone') await expectAccessible(shot.page, 'admin group members on a phone');
      await shot.context.close();
    }

    const deleteButton = page.getByRole('button', { name: 'Delete Household' });
    await deleteButton.click();
    const confirm = page.getByRole('dialog', { name: 'Delete Household?' });
    await confirm.getByText('1 person in it lose what was shared with the group (1 item) at once').waitFor();
    const deletes = await holdRequests(page, '**/api/admin/groups/*', 'DELETE');
    await confirm.getByRole('button', { name: 'Delete group' }).click();
    await eventually(() => deletes.count() === 1);
    // Pressed again while the server answers: no second question, no second request.
    await deleteButton.click({ force: true });
    expect(await confirm.count()).toBe(0);
    deletes.release();
    await page.getByText('No groups yet.').waitFor();
    expect(deletes.count()).toBe(1);
    expect((await ben.client.get(`/api/files?parentId=${root.id}`)).status).toBe(404);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Create group by keyboard while the server answers: the focus stays on the button and a second Enter sends nothing', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/groups');
    await page.getByLabel('Group name', { exact: true }).fill('Pressed twice');
    const held = await holdRequests(page, '**/api/admin/groups');
    const create = page.getByRole('button', { name: 'Create group' });
    await create.focus();
    await page.keyboard.press('Enter');
    await eventually(async () => expect(held.count()).toBe(1));
    expect(await create.getAttribute('aria-disabled')).toBe('true');
    expect(await hasFocus(create)).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300);
    expect(held.count()).toBe(1);
    held.release();
    await page.getByRole('dialog', { name: 'Members of Pressed twice' }).waitFor();
    const groups = (await json(await admin.client.get('/api/admin/groups'))).groups;
    expect(groups.filter((g: { name: string }) => g.name === 'Pressed twice').length).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the members dialog completes an email from every account, not only the first hundred: on a household of 130, the last one made is offered as its address is typed', async () => {
    // Owners straight through the service (no password: fast), more than one page of the accounts list.
    for (let i = 0; i < 130; i++)
      await t.server.ctx.services.accounts.createLogin({ email: `relative-${i}@family.test`, password: null, name: `Relative ${i}` });
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/groups');
    await page.getByLabel('Group name', { exact: true }).fill('Cousins');
    await page.getByRole('button', { name: 'Create group' }).click();
    const dialog = page.getByRole('dialog', { name: 'Members of Cousins' });
    await dialog.getByText('No one is in Cousins yet.').waitFor();
    await dialog.getByLabel('Email', { exact: true }).pressSequentially('relative-129');
    const offered = dialog.locator('datalist option[value="relative-129@family.test"]');
    await eventually(async () => expect(await offered.count()).toBe(1));
    await dialog.getByLabel('Email', { exact: true }).fill('relative-129@family.test');
    await dialog.getByRole('button', { name: 'Add member' }).click();
    await dialog.getByRole('list', { name: 'Members of Cousins' }).getByText('relative-129@family.test').waitFor();
    // A member already in is no longer offered.
    await dialog.getByLabel('Email', { exact: true }).pressSequentially('relative-12');
    await eventually(async () => expect(await dialog.locator('datalist option[value="relative-120@family.test"]').count()).toBe(1));
    expect(await offered.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("members by keyboard: Enter on Remove asks first (Escape keeps the member); Remove member takes them out and the focus moves to the next member's first button, not to the page behind", async () => {
    const id = await newGroup(admin, 'Neighbours', await seed.owner(t), await seed.owner(t), await seed.owner(t));
    const group = await json(await admin.client.get(`/api/admin/groups/${id}`));
    const name = group.name;
    // In the order the dialog lists them.
    const [ada, bo, cy] = group.members as [{ email: string }, { email: string }, { email: string }];
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/groups');
    await page.getByRole('button', { name: `Members of ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Members of ${name}` });
    const focused = () => page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label') ?? null);
    await dialog.getByRole('button', { name: `Remove ${bo.email}` }).focus();
    await page.keyboard.press('Enter');
    const ask = page.getByRole('dialog', { name: `Remove ${bo.email} from ${name}?` });
    await ask.getByText(`${bo.email} loses what is shared with ${name} at once.`).waitFor();
    await screenshot(page, 'admin-group-remove-member-light-desktop');
    await page.keyboard.press('Escape');
    await ask.waitFor({ state: 'detached' });
    await eventually(async () => expect(await focused()).toBe(`Remove ${bo.email}`));
    expect((await json(await admin.client.get(`/api/admin/groups/${id}`))).members.length).toBe(3);
    await page.keyboard.press('Enter');
    await ask.getByRole('button', { name: 'Remove member' }).waitFor();
    await page.keyboard.press('Enter');
    // Exactly the entry's email: the toast saying it was removed shows inside the open dialog too.
    await dialog.getByText(bo.email, { exact: true }).waitFor({ state: 'detached' });
    await eventually(async () => expect(await focused()).toBe(`Make administrator: ${cy.email}`));
    await dialog.getByRole('button', { name: `Remove ${cy.email}` }).focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('dialog', { name: `Remove ${cy.email} from ${name}?` })
      .getByRole('button', { name: 'Remove member' })
      .waitFor();
    await page.keyboard.press('Enter');
    await dialog.getByText(cy.email, { exact: true }).waitFor({ state: 'detached' });
    await eventually(async () => expect(await focused()).toBe(`Make administrator: ${ada.email}`));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the share dialog completes groups beside people ("Design · 2 people"), sets their role and removes them', async () => {
    const o = await seed.owner(t);
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    const design = await json(await admin.client.post('/api/admin/groups', { name: 'Design studio' }));
    for (const m of [a, b])
      expect((await admin.client.post(`/api/admin/groups/${design.id}/members`, { email: m.email })).status).toBe(201);
    const root = await folder(o.client, 'Logos');
    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-phone', { dark: true, viewport: PHONE, touch: true }],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      await page.goto('/files');
      await page.getByRole('row', { name: /^Logos,/ }).click();
      await page.getByRole('button', { name: 'Share', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Share “Logos”' });
      const input = dialog.getByLabel('Group', { exact: true });
      await input.fill('design');
      await dialog.locator('datalist option[label="Design studio · 2 people"]').waitFor({ state: 'attached' });
      await input.fill('Design studio');
      await dialog.getByRole('combobox', { name: 'Group role' }).selectOption('editor');
      await dialog.getByRole('button', { name: 'Add group' }).click();
      const role = dialog.getByRole('combobox', { name: 'Role for Design studio' });
      await role.waitFor();
      expect(await role.inputValue()).toBe('editor');
      await dialog.getByText('Group · 2 people').waitFor();
      await expectAccessible(page, `share dialog with a group, ${name}`);
      await screenshot(page, `share-dialog-group-${name}`);
      expect((await a.client.post('/api/files/folder', { name: `by-${name}`, parentId: root.id })).status).toBe(200);
      await role.selectOption('viewer');
      await eventually(async () => (await json(await o.client.get(`/api/files/${root.id}/members`))).groups[0].role === 'viewer');
      expect((await a.client.post('/api/files/folder', { name: 'no', parentId: root.id })).status).toBe(403);
      await dialog.getByRole('button', { name: 'Remove Design studio' }).click();
      await role.waitFor({ state: 'detached' });
      expect((await a.client.get(`/api/files?parentId=${root.id}`)).status).toBe(404);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('Settings → Groups: a group administrator adds and removes its members, never another administrator; a plain member only sees the group', async () => {
    const lead = await seed.owner(t);
    const plain = await seed.owner(t);
    const newcomer = await seed.owner(t);
    const crew = await json(await admin.client.post('/api/admin/groups', { name: 'Night crew' }));
    expect((await admin.client.post(`/api/admin/groups/${crew.id}/members`, { email: lead.email, admin: true })).status).toBe(201);
    expect((await admin.client.post(`/api/admin/groups/${crew.id}/members`, { email: plain.email })).status).toBe(201);

    const { context, page, errors } = await signedInContext(browser, t.url, lead);
    await page.goto('/settings/groups');
    const list = page.getByRole('list', { name: 'Your groups' });
    await list.getByText('Group administrator').waitFor();
    await page.getByRole('button', { name: 'Members of Night crew' }).click();
    const dialog = page.getByRole('dialog', { name: 'Members of Night crew' });
    const members = dialog.getByRole('list', { name: 'Members of Night crew' });
    await members.getByText(plain.email).waitFor();
    // Only the admin makes or removes administrators.
    expect(await dialog.getByRole('button', { name: /administrator/ }).count()).toBe(0);
    expect(await dialog.getByRole('button', { name: `Remove ${lead.email}` }).count()).toBe(0);
    await page.keyboard.type(newcomer.email);
    await page.keyboard.press('Enter');
    await members.getByText(newcomer.email).waitFor();
    await dialog.getByRole('button', { name: `Remove ${plain.email}` }).click();
    await page
      .getByRole('dialog', { name: /^Remove .* from / })
      .getByRole('button', { name: 'Remove member' })
      .click();
    await members.getByText(plain.email).waitFor({ state: 'detached' });
    await expectAccessible(page, 'group administrator members');
    await screenshot(page, 'settings-group-members-light-desktop');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await list.getByText('2 people').waitFor();

    expect((await admin.client.send('PATCH', `/api/admin/groups/${crew.id}`, { teamFolderBytes: 1024 ** 3 })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'New team folder for Night crew' }).click();
    const make = page.getByRole('dialog', { name: 'New team folder for Night crew' });
    await page.keyboard.type('Rota');
    await make.getByLabel('Quota').fill('2G');
    await make.getByRole('button', { name: 'Make team folder' }).click();
    await make.getByText('Night crew may give team folders 1.00 GiB more').waitFor();
    await make.getByLabel('Quota').fill('512M');
    await expectAccessible(page, 'new team folder for a group');
    await make.getByRole('button', { name: 'Make team folder' }).click();
    await page.getByRole('status').filter({ hasText: 'Team folder Rota made for Night crew' }).waitFor();
    const top = await json(await newcomer.client.get('/api/files'));
    expect(top[0]).toMatchObject({ name: 'Rota', teamFolder: true });

    // What members trash in the team folder, its administrator restores or deletes forever.
    const shifts = await upload(newcomer.client, 'shifts.txt', 'mon tue', { parentId: top[0].id });
    const old = await upload(newcomer.client, 'old.txt', 'old', { parentId: top[0].id });
    expect((await newcomer.client.post('/api/files/delete', { ids: [shifts.id, old.id] })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Trash of Rota' }).click();
    const bin = page.getByRole('dialog', { name: 'Trash of Rota' });
    const trashed = bin.getByRole('list', { name: 'Trash of Rota' });
    await trashed.getByText('shifts.txt').waitFor();
    await expectAccessible(page, 'team folder trash');
    await screenshot(page, 'settings-team-folder-trash-light-desktop');
    await bin.getByRole('button', { name: 'Restore shifts.txt' }).click();
    await trashed.getByText('shifts.txt').waitFor({ state: 'detached' });
    expect((await newcomer.client.get(`/api/files/${shifts.id}/download`)).status).toBe(200);
    await bin.getByRole('button', { name: 'Delete forever: old.txt' }).click();
    await page.getByRole('dialog', { name: 'Delete old.txt forever?' }).getByRole('button', { name: 'Delete forever' }).click();
    await bin.getByText('The trash of Rota is empty.').waitFor();
    expect(errors).toEqual([]);
    await context.close();

    const other = await signedInContext(browser, t.url, newcomer, { dark: true, viewport: PHONE, touch: true });
    await other.page.goto('/settings/groups');
    await other.page.getByRole('list', { name: 'Your groups' }).getByText('Night crew').waitFor();
    expect(await other.page.getByRole('button', { name: 'Members of Night crew' }).count()).toBe(0);
    await expectAccessible(other.page, 'settings groups, dark phone');
    await screenshot(other.page, 'settings-groups-dark-phone');
    expect(other.errors).toEqual([]);
    await other.context.close();
  });
});
