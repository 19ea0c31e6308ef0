import { describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { apiSettled, expectAccessible, hasFocus, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, seedRows, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;

serverAndBrowser((s) => ({ t, browser } = s));

/** An owner with note.txt at the root and Big holding `count` subfolders (Sub 000…), and the list of Big's subfolders open in the picker of `action`. */
async function bigFolderPicker(action: 'Move' | 'Copy', count: number) {
  const o = await seed.owner(t);
  const big = await folder(o.client, 'Big');
  seedRows(t, o.id, big.id, count, (i) => ({ name: `Sub ${String(i).padStart(3, '0')}`, type: 'folder' }));
  await upload(o.client, 'note.txt', 'hello');
  const { context, page, errors } = await signedInContext(browser, t.url, o);
  await page.goto('/files');
  await page.getByRole('row', { name: /^note\.txt,/ }).click();
  await page.getByRole('button', { name: action, exact: true }).click();
  const picker = page.getByRole('dialog', { name: new RegExp(`^${action}`) });
  await picker.getByRole('button', { name: 'Big' }).waitFor();
  await apiSettled(page);
  return { o, big, context, page, errors, picker };
}

describe('folder picker', () => {
  test('a folder of 650 subfolders shows its first page after one request; scrolling to the end reads the next, to the last, which takes the move', async () => {
    const { o, big, context, page, errors, picker } = await bigFolderPicker('Move', 650);

    const reads: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/api/files' && url.searchParams.get('parentId') === big.id) reads.push(r.url());
    });
    await picker.getByRole('button', { name: 'Big' }).click();
    const list = picker.getByRole('list', { name: 'Folders' });
    const subs = list.getByRole('button', { name: /^Sub \d+$/ });
    await list.getByRole('button', { name: 'Sub 000' }).waitFor();
    await apiSettled(page);
    expect(reads).toHaveLength(1);
    expect(await subs.count()).toBe(200);
    expect(await list.getByRole('button', { name: 'Sub 649' }).count()).toBe(0);
    await expectAccessible(page, 'folder picker with more folders to read');
    await screenshot(page, 'folder-picker-more-light-desktop');

    // The wheel, to the end of what is shown, each time: each end reads the next page, none before. A wheel sent while
    // the page just read is still being laid out can land short of the new end: as a person would, it is sent again.
    await list.hover();
    for (const shown of [400, 600, 650]) {
      await eventually(
        async () => {
          if ((await subs.count()) < shown) await page.mouse.wheel(0, 100_000);
          expect(await subs.count()).toBe(shown);
        },
        { intervalMs: 500 },
      );
    }
    const last = list.getByRole('button', { name: 'Sub 649' });
    await list.getByRole('button', { name: 'More folders' }).waitFor({ state: 'detached' });
    expect(reads).toHaveLength(4);
    await last.focus();
    await page.keyboard.press('Enter');
    await picker.getByRole('navigation', { name: 'Folder path' }).getByRole('button', { name: 'Sub 649' }).waitFor();
    await picker.getByRole('button', { name: 'Move here' }).click();
    await page.getByRole('row', { name: /^note\.txt,/ }).waitFor({ state: 'detached' });
    const target = (await listAll(o.client, `/api/files?parentId=${big.id}`)).find((i) => i.name === 'Sub 649');
    await eventually(async () =>
      expect((await listAll(o.client, `/api/files?parentId=${target.id}`)).map((i) => i.name)).toEqual(['note.txt']),
    );
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the keyboard alone reaches the rest: More folders, the end of the list, reads a page in view and again on Enter, keeping the focus', async () => {
    const { context, page, errors, picker } = await bigFolderPicker('Copy', 650);
    await picker.getByRole('button', { name: 'Big' }).click();
    const list = picker.getByRole('list', { name: 'Folders' });
    const subs = list.getByRole('button', { name: /^Sub \d+$/ });
    await list.getByRole('button', { name: 'Sub 000' }).waitFor();
    await apiSettled(page);
    expect(await subs.count()).toBe(200);

    // Shift+Tab from the first of the dialog's actions lands on the list's end, which comes into view and reads the next page.
    await picker.getByRole('button', { name: 'New folder' }).focus();
    await page.keyboard.press('Shift+Tab');
    const more = list.getByRole('button', { name: 'More folders' });
    expect(await hasFocus(more)).toBe(true);
    await eventually(async () => expect(await subs.count()).toBe(400));
    expect(await hasFocus(more)).toBe(true);
    await apiSettled(page);
    await page.keyboard.press('Enter');
    await eventually(async () => expect(await subs.count()).toBe(600));
    expect(await hasFocus(more)).toBe(true);
    await apiSettled(page);
    await page.keyboard.press('Enter');
    await list.getByRole('button', { name: 'Sub 649' }).waitFor();
    await more.waitFor({ state: 'detached' });
    // Gone with the last page, it hands the focus to the first folder that page brought, not to the page's start.
    await eventually(async () => expect(await hasFocus(list.getByRole('button', { name: 'Sub 600' }))).toBe(true));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the picker scrolled to the end of a folder of more than a page, dark and at phone width', async () => {
    const o = await seed.owner(t);
    const big = await folder(o.client, 'Big');
    seedRows(t, o.id, big.id, 250, (i) => ({ name: `Sub ${String(i).padStart(3, '0')}`, type: 'folder' }));
    await upload(o.client, 'other.txt', 'hello');
    for (const [name, opts] of [
      ['dark-desktop', { dark: true }],
      ['light-phone', { viewport: PHONE }],
    ] as const) {
      const shot = await signedInContext(browser, t.url, o, opts);
      await shot.page.goto(`/files`);
      await shot.page.getByRole('row', { name: /^other\.txt,/ }).click();
      const bar = shot.page.getByRole('toolbar', { name: 'Selection actions' });
      const move = bar.getByRole('button', { name: 'Move', exact: true });
      if (await move.isVisible()) await move.click();
      else {
        await bar.getByRole('button', { name: 'More actions' }).click();
        await shot.page.getByRole('menuitem', { name: /^Move/ }).click();
      }
      const p = shot.page.getByRole('dialog', { name: /^Move/ });
      await p.getByRole('button', { name: 'Big' }).click();
      await p.getByRole('button', { name: 'Sub 000' }).waitFor();
      await p.getByRole('button', { name: 'More folders' }).scrollIntoViewIfNeeded();
      await p.getByRole('button', { name: 'Sub 249' }).scrollIntoViewIfNeeded();
      await screenshot(shot.page, `folder-picker-scrolled-${name}`);
      await shot.context.close();
    }
  });
});
