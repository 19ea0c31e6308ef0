import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { DocserverDouble } from '../helpers/docserver-double.ts';
import { json } from '../helpers/client.ts';
import { documents } from '../helpers/documents.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let double: DocserverDouble;
let admin: seed.SeededLogin;

beforeAll(async () => {
  double = DocserverDouble.start();
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  admin = await seed.admin(t);
  await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret });
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  double.stop();
});

const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},`) });
const openInEditor = (page: Page) => page.getByRole('button', { name: 'Open in editor', exact: true });

describe('Open in editor', () => {
  test('an office document opens in a new tab: the viewer loads the document server, which fetches the file', async () => {
    const o = await seed.owner(t);
    const docx = await documents.docx('browser');
    await upload(o.client, 'Budget 2030.docx', docx);
    await upload(o.client, 'notes.md', '# not an office document');
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    await row(page, 'notes.md').click();
    expect(await openInEditor(page).count()).toBe(0);
    await row(page, 'Budget 2030.docx').click();
    await openInEditor(page).waitFor();
    await expectAccessible(page, 'the file manager with a document selected');
    await screenshot(page, 'docserver-open-in-editor');
    const violations: string[] = [];
    const [tab] = await Promise.all([context.waitForEvent('page'), openInEditor(page).click()]);
    tab.on('console', (m) => m.text().includes('Content Security Policy') && violations.push(m.text()));
    await tab.waitForLoadState();
    expect(new URL(tab.url()).pathname).toMatch(/^\/api\/docserver\/viewer\//);
    expect(await tab.title()).toBe('Budget 2030.docx – Coffer');
    const editor = tab.frameLocator('iframe[title="Document editor"]');
    await editor.getByRole('heading', { name: 'Editing Budget 2030.docx' }).waitFor();
    expect(await editor.getByText('edit · ').textContent()).toBe(`edit · ${docx.length} bytes`);
    await screenshot(tab, 'docserver-viewer');
    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the preview of a document offers it; nothing offers it when no document server is connected', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'Slides.odt', await documents.odt('x'));
    const first = await signedInContext(browser, t.url, o);
    await first.page.goto('/files');
    await row(first.page, 'Slides.odt').dblclick();
    const preview = first.page.getByRole('dialog');
    await preview.getByRole('button', { name: 'Open in editor' }).waitFor();
    await screenshot(first.page, 'docserver-preview');
    await first.context.close();
    // Phone width, dark: the action sits in the selection toolbar like the others.
    const phone = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true, touch: true });
    await phone.page.goto('/files');
    await row(phone.page, 'Slides.odt').click();
    await openInEditor(phone.page)
      .or(phone.page.getByRole('button', { name: 'More actions' }))
      .first()
      .waitFor();
    await screenshot(phone.page, 'docserver-phone-dark');
    await phone.context.close();

    // A document server that does not answer: the viewer says so instead of staying blank.
    const down = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('', { status: 502 }) });
    await admin.client.put('/api/user/docserver-config', { url: `http://127.0.0.1:${down.port}`, jwtSecret: double.secret });
    const [file] = await json<Array<{ id: string }>>(await o.client.get('/api/files'));
    const unreachable = await signedInContext(browser, t.url, o);
    await unreachable.page.goto(`/api/docserver/viewer/${file!.id}`);
    await unreachable.page.getByRole('heading', { name: 'The document editor is not reachable' }).waitFor();
    await screenshot(unreachable.page, 'docserver-unreachable');
    await unreachable.context.close();
    down.stop(true);

    await admin.client.put('/api/user/docserver-config', { url: null, jwtSecret: null });
    try {
      const { context, page } = await signedInContext(browser, t.url, o);
      await page.goto('/files');
      await row(page, 'Slides.odt').click();
      await page.getByRole('button', { name: 'Download', exact: true }).waitFor();
      expect(await openInEditor(page).count()).toBe(0);
      await context.close();
    } finally {
      await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret });
    }
  });
});
