import { describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { expectAccessible, hasFocus, holdRequests, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, upload } from '../helpers/files.ts';
import { searchable } from '../helpers/search-documents.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

serverAndBrowser((s) => ({ t, admin, browser } = s));

const drained = () => eventually(() => t.server.ctx.repos.content.progress().pending === 0, { timeoutMs: 30_000 });

describe('content search in the web app', () => {
  test('the admin turns it on (the cost in one sentence, then progress); search shows name matches and "In the text" with the match highlighted; Enter opens the text at the match; the owner opts out in Settings', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/instance');
    const section = page.getByRole('region', { name: 'Content search' });
    await section.getByText(/kept in the database without encryption/).waitFor();
    const toggle = page.getByRole('switch', { name: 'Search inside documents' });
    await toggle.check();
    await page.getByText(/Up to date: .* indexed|Indexing:/).waitFor();
    await expectAccessible(page, 'Admin → Instance with content search');
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, 'content-search-admin');

    const o = await seed.owner(t);
    const bills = await folder(o.client, 'Household bills');
    await upload(o.client, 'boiler-manual.txt', 'Manual of the boiler in the basement.');
    await upload(
      o.client,
      'notes.md',
      `# House notes\n\n${'Gutters cleaned in April. '.repeat(30)}The boiler pressure must stay near 1.5 bar; call Hervé if it drops.\n`,
      {
        parentId: bills.id,
      },
    );
    await upload(o.client, 'Invoice 2026-03.pdf', searchable.pdf('Invoice for the boiler repair in March, paid in full'), {
      parentId: bills.id,
    });
    await upload(o.client, 'Wohnung Übergabe.docx', searchable.docx('Übergabeprotokoll: Heizkessel (boiler) geprüft', 'Zähler abgelesen'));
    await upload(o.client, 'Chaudière — devis.txt', 'Devis pour le remplacement de la chaudière (boiler) du sous-sol.');
    await drained();

    const owner = await signedInContext(browser, t.url, o);
    const p = owner.page;
    await p.goto('/files');
    await p.getByRole('searchbox', { name: 'Search' }).fill('boiler');
    await p.waitForURL('**/search?q=boiler');
    const inText = p.getByRole('region', { name: 'In the text' });
    await inText.waitFor();
    const hits = inText.getByRole('button');
    await eventually(async () => expect(await hits.count()).toBe(4));
    await p.getByRole('grid').getByText('boiler-manual.txt').waitFor();
    const marks = await inText.locator('mark').allTextContents();
    expect(marks.map((m) => m.toLowerCase())).toEqual(['boiler', 'boiler', 'boiler', 'boiler']);
    await expectAccessible(p, 'search results with matches in the text');
    await screenshot(p, 'content-search-results');

    // Keyboard: the first text match, Enter, and the preview opens with the match marked.
    const notes = inText.getByRole('button', { name: /notes\.md/ });
    await notes.focus();
    await p.keyboard.press('Enter');
    const dialog = p.getByRole('dialog', { name: 'notes.md' });
    await dialog.waitFor();
    expect(await dialog.locator('pre mark').textContent()).toBe('boiler');
    await screenshot(p, 'content-search-preview-at-match');
    await p.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // The owner opts out in Settings: the account's words are deleted and search goes back to names.
    await p.goto('/settings/profile');
    const include = p.getByRole('switch', { name: 'Include my documents in content search' });
    expect(await include.isChecked()).toBe(true);
    await include.uncheck();
    await eventually(() => t.server.ctx.repos.content.accountRows(o.id) === 0);
    expect(await include.isChecked()).toBe(false);
    await expectAccessible(p, 'Settings → Profile with the content search opt-out');
    await p.goto('/search?q=boiler');
    await p.getByRole('grid').getByText('boiler-manual.txt').waitFor();
    expect(await p.getByRole('region', { name: 'In the text' }).count()).toBe(0);
    await p.goto('/settings/profile');
    await p.getByRole('switch', { name: 'Include my documents in content search' }).check();
    await drained();

    // Dark at phone width.
    const phone = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true });
    await phone.page.goto('/search?q=boiler');
    await phone.page.getByRole('region', { name: 'In the text' }).getByRole('button').first().waitFor();
    await expectAccessible(phone.page, 'search results, dark, phone width');
    await screenshot(phone.page, 'content-search-results-phone-dark');

    expect([...errors, ...owner.errors, ...phone.errors]).toEqual([]);
    await Promise.all([context.close(), owner.context.close(), phone.context.close()]);
  }, 120_000);

  test('Include my documents switched by keyboard keeps the focus while the server answers; Space meanwhile sends nothing', async () => {
    expect((await admin.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/profile');
    const include = page.getByRole('switch', { name: 'Include my documents in content search' });
    expect(await include.isChecked()).toBe(true);
    const held = await holdRequests(page, '**/api/user/content-search-preference', 'PUT');
    await include.focus();
    await page.keyboard.press('Space');
    await eventually(async () => expect(held.count()).toBe(1));
    expect(await hasFocus(include)).toBe(true);
    await page.keyboard.press('Space');
    await page.waitForTimeout(300);
    expect(held.count()).toBe(1);
    expect(await include.isChecked()).toBe(false);
    held.release();
    await eventually(async () => expect(await include.getAttribute('aria-disabled')).toBeNull());
    expect(await include.isChecked()).toBe(false);
    expect(errors).toEqual([]);
    await context.close();
  });
});
