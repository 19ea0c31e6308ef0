import { beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, expectAccessible, type PageOptions, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import { uploadPhoto } from '../helpers/photos.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let ada: seed.SeededLogin;
let grace: seed.SeededLogin;
let trip: { id: string };
let picks: string[];
let cat: { id: string };

/** A photo of `o`, its thumbnail made. */
const photo = async (o: seed.SeededLogin, name: string, i: number, parentId?: string) =>
  uploadPhoto(o.client, name, await img.photo(i, 480, 360, `2025:06:1${i} 12:00:00`), 480, { parentId });

serverAndBrowser((s) => ({ t, browser } = s));
beforeAll(async () => {
  ada = await seed.owner(t, seed.uniqueEmail('ada'), 'Ada Lovelace');
  grace = await seed.owner(t, seed.uniqueEmail('grace'), 'Grace Hopper');
  trip = await folder(ada.client, 'Lisbon');
  await photo(ada, 'tram.jpg', 1, trip.id);
  await photo(ada, 'tiles.jpg', 2, trip.id);
  const loose = await photo(ada, 'sunset.jpg', 3);
  picks = [loose.id];
  cat = await photo(grace, 'my-cat.jpg', 4);
});

const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name},`) });
const tile = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name.replace('.', '\\.')}(, shared by .+)?$`) });

describe('sharing photos with people', () => {
  test('the People part suggests accounts by name; an album is shared from its page; all in light at desktop width', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, ada);
    await page.goto('/files');
    await row(page, 'Lisbon').click();
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Share “Lisbon”' });
    await dialog.getByRole('tab', { name: 'People', selected: true }).waitFor();
    await dialog.getByLabel('Name or email').fill('Gra');
    await dialog.locator(`datalist option[label="Grace Hopper · ${grace.email}"]`).waitFor({ state: 'attached' });
    await expectAccessible(page, 'share dialog, People with a suggestion');
    await screenshot(page, 'share-people-suggestion-light-desktop');
    // Picking the suggestion puts its email in the field.
    await dialog.getByLabel('Name or email').fill(grace.email);
    await dialog.getByRole('button', { name: 'Add person' }).click();
    await dialog.getByRole('combobox', { name: `Role for ${grace.email}` }).waitFor();
    await dialog.getByRole('status').filter({ hasText: 'Saved: Shared with Grace Hopper' }).waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    // A folder shared with people only wears the people badge, not the link one.
    await row(page, 'Lisbon').getByTitle('Shared with people: no public link').waitFor();
    expect(
      await row(page, 'Lisbon')
        .getByTitle(/Shared by link/)
        .count(),
    ).toBe(0);

    const { album } = await json(await ada.client.post('/api/albums', { name: 'Best of', ids: picks }));
    await page.goto(`/photos/albums/${album.id}`);
    await page.getByRole('heading', { name: 'Best of' }).waitFor();
    await page.getByRole('button', { name: 'Share' }).click();
    const share = page.getByRole('dialog', { name: 'Share the album “Best of”' });
    await share.getByLabel('Name or email').fill('Grace Hopper');
    await share.locator('datalist option[value]').first().waitFor({ state: 'attached' });
    await share.getByRole('button', { name: 'Add person' }).click();
    await share.getByRole('combobox', { name: `Role for ${grace.email}` }).waitFor();
    await share.getByRole('status').filter({ hasText: 'Saved: Grace Hopper can view' }).waitFor();
    await expectAccessible(page, 'album share dialog');
    await screenshot(page, 'album-share-light-desktop');
    expect((await json(await ada.client.get(`/api/albums/${album.id}/members`))).members).toEqual([
      expect.objectContaining({ accountId: grace.id, role: 'viewer' }),
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });

  for (const [name, opts] of [
    ['light-desktop', {}],
    ['dark-phone', { dark: true, viewport: PHONE, touch: true }],
  ] as const) {
    test(`Photos: Mine, Shared with me and All, each shared photo marked with its owner; the shared album under Albums (${name})`, async () => {
      const { context, page, errors } = await signedInContext(browser, t.url, grace, opts);
      await page.goto('/photos');
      const grid = page.getByRole('listbox', { name: 'Photos' });
      await tile(grid as unknown as Page, 'tram.jpg').waitFor();
      expect(await grid.getByRole('option').count()).toBe(4);
      expect(await page.getByRole('radio', { name: 'All' }).isChecked()).toBe(true);
      expect(await tile(grid as unknown as Page, 'tram.jpg').getAttribute('aria-describedby')).toBeTruthy();
      await grid.getByRole('option', { name: 'tram.jpg, shared by Ada Lovelace', exact: true }).waitFor();
      expect(await grid.getByRole('option', { name: 'my-cat.jpg', exact: true }).count()).toBe(1);
      await expectAccessible(page, `Photos, all, ${name}`);
      await screenshot(page, `photos-all-shared-${name}`);

      await page.getByRole('radio', { name: 'Shared with me' }).check();
      await eventually(async () => (await grid.getByRole('option').count()) === 3);
      expect(await tile(grid as unknown as Page, 'my-cat.jpg').count()).toBe(0);
      // Another account's photo offers no tools to change it.
      await tile(grid as unknown as Page, 'tram.jpg').click({ button: 'right' });
      const menu = page.getByRole('menu');
      await menu.getByRole('menuitem', { name: /Download/ }).waitFor();
      expect(await menu.getByRole('menuitem', { name: /Move to trash|Rename|Share/ }).count()).toBe(0);
      await page.keyboard.press('Escape');
      await screenshot(page, `photos-shared-${name}`);

      await page.getByRole('radio', { name: 'Mine' }).check();
      await eventually(async () => (await grid.getByRole('option').count()) === 1);
      await tile(grid as unknown as Page, 'my-cat.jpg').waitFor();
      await page.getByRole('radio', { name: 'All' }).check();

      await page.goto('/photos/albums');
      const shared = page.getByRole('list', { name: 'Albums shared with you' });
      await shared.getByText('Shared by Ada Lovelace').waitFor();
      await expectAccessible(page, `albums with one shared, ${name}`);
      await screenshot(page, `albums-shared-${name}`);
      await shared.getByRole('link').first().click();
      await page.getByText('Shared by Ada Lovelace · you can view').waitFor();
      await tile(page, 'sunset.jpg').waitFor();
      expect(await page.getByRole('button', { name: 'Delete album' }).count()).toBe(0);
      await screenshot(page, `album-shared-page-${name}`);
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  test('a viewer of an album takes out the photos it added as an editor, and only those (light, dark at phone width)', async () => {
    const { album } = await json(await ada.client.post('/api/albums', { name: 'Cats and sunsets', ids: picks }));
    const member = (role: string) => ada.client.post(`/api/albums/${album.id}/members`, { accountId: grace.id, role });
    await json(await member('editor'));
    await json(await grace.client.post(`/api/albums/${album.id}/items`, { ids: [cat.id] }));
    await json(await member('viewer'));
    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-phone', { dark: true, viewport: PHONE, touch: true }],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, grace, opts);
      await page.goto(`/photos/albums/${album.id}`);
      await page.getByText('Shared by Ada Lovelace · you can view').waitFor();
      const grid = page.getByRole('listbox', { name: 'Photos in Cats and sunsets' });
      const remove = page.getByRole('button', { name: 'Remove from album' });
      // The owner's photo: a viewer may only look.
      await tile(grid as unknown as Page, 'sunset.jpg').click({ modifiers: ['Control'] });
      await page.getByText('1 selected').waitFor();
      expect(await remove.count()).toBe(0);
      await tile(grid as unknown as Page, 'my-cat.jpg').click({ modifiers: ['Control'] });
      await page.getByText('2 selected').waitFor();
      expect(await remove.count()).toBe(0);
      await tile(grid as unknown as Page, 'sunset.jpg').click({ modifiers: ['Control'] });
      await remove.waitFor();
      // Every action is on screen or under More: none hides past the bar's edge.
      const bar = page.getByRole('toolbar', { name: 'Selection actions' });
      for (const b of await bar.getByRole('button').all()) {
        const box = (await b.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(((opts as PageOptions).viewport ?? DESKTOP).width);
      }
      await bar.getByRole('button', { name: /Move to trash|Delete/ }).waitFor();
      await bar.getByRole('button', { name: 'More actions' }).click();
      await page.getByRole('menu', { name: 'More actions' }).getByRole('menuitem', { name: /Copy/ }).waitFor();
      await page.keyboard.press('Escape');
      await expectAccessible(page, `a viewer's own photo selected in a shared album, ${name}`);
      await screenshot(page, `album-viewer-remove-own-${name}`);
      if (name === 'dark-phone') {
        await remove.click();
        await page.getByText('1 item removed from the album; they stay in your files').waitFor();
        await eventually(async () => (await tile(grid as unknown as Page, 'my-cat.jpg').count()) === 0);
        await tile(grid as unknown as Page, 'sunset.jpg').waitFor();
        expect((await json(await ada.client.get(`/api/albums/${album.id}`))).items.map((i: { name: string }) => i.name)).toEqual([
          'sunset.jpg',
        ]);
      }
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
