import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { folder } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startReceiver, verifyStandardWebhook } from '../helpers/webhook-receiver.ts';

let t: TestServer;
let browser: Browser;
let adminLogin: seed.SeededLogin;
let receiver: ReturnType<typeof startReceiver>;

beforeAll(async () => {
  receiver = startReceiver();
  [t, browser] = await Promise.all([startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } }), acquireBrowser()]);
  adminLogin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  receiver.stop();
});

describe('Settings → Webhooks', () => {
  test('add one (secret shown once and copied), send a test event, see it in the delivery log, redeliver, disable, delete', async () => {
    const o = await seed.owner(t);
    await folder(o.client, 'Drop box');
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/settings/webhooks');
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet.').waitFor();
    await expectAccessible(page, 'webhooks, empty');
    await screenshot(page, 'settings-webhooks-empty');

    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByLabel('Receiver URL').fill('ftp://nowhere');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('alert').filter({ hasText: 'starting with https://' }).waitFor();
    await page.getByLabel('Receiver URL').fill('http://10.0.0.7/hook');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('alert').filter({ hasText: 'a private address' }).waitFor();
    await page.getByLabel('Receiver URL').fill(`${receiver.url}/ui`);
    await page.getByRole('checkbox', { name: 'Renamed' }).check();
    await page.getByRole('checkbox', { name: 'Share link opened' }).check();
    expect(await page.getByRole('checkbox', { name: 'Scheduled backup failed' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Choose folder' }).click();
    const picker = page.getByRole('dialog');
    await picker.getByRole('button', { name: /Drop box/ }).click();
    await picker.getByRole('navigation', { name: 'Folder path' }).getByRole('button', { name: 'Drop box' }).waitFor();
    await picker.getByRole('button', { name: 'Choose this folder' }).click();
    await page.getByText('Only changes in “Drop box”').waitFor();
    await expectAccessible(page, 'the add webhook form');
    await screenshot(page, 'settings-webhooks-add');
    await page.getByRole('button', { name: 'Add webhook' }).click();

    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expectAccessible(page, 'a new webhook secret');
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel('Signing secret').count()).toBe(0);
    const [hook] = (await json(await o.client.get('/api/webhooks'))).webhooks;
    expect(hook).toMatchObject({ url: `${receiver.url}/ui`, events: ['item.uploaded', 'item.renamed', 'share.link_opened'] });
    expect(hook.folderId).not.toBeNull();

    const entry = page
      .getByRole('list', { name: 'Webhooks' })
      .getByRole('listitem')
      .filter({ hasText: `${receiver.url}/ui` });
    await entry.getByRole('button', { name: 'Send test event' }).click();
    await entry.getByRole('button', { name: 'Deliveries' }).click();
    const log = page.getByRole('region', { name: `Deliveries to ${receiver.url}/ui` });
    await log.getByText('Delivered').waitFor({ timeout: 15_000 });
    await log.getByText('HTTP 200').waitFor();
    expect(verifyStandardWebhook(secret, receiver.received.at(-1)!)).toBe(true);
    await expectAccessible(page, 'the delivery log');
    await screenshot(page, 'settings-webhooks-log');

    const before = receiver.received.length;
    await log.getByRole('button', { name: /^Redeliver webhook.test/ }).click();
    await log.getByText('Delivered').nth(1).waitFor({ timeout: 15_000 });
    expect(receiver.received.length).toBe(before + 1);
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(receiver.received.at(-2)!.headers['webhook-id']);

    await entry.getByRole('button', { name: 'Disable' }).click();
    await entry.getByText('Disabled', { exact: true }).waitFor();
    await entry.getByRole('button', { name: 'Enable' }).click();
    await entry.getByText('Enabled', { exact: true }).waitFor();
    await entry.getByRole('button', { name: `Delete webhook to ${receiver.url}/ui` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a sub-user has no Webhooks tab; dark at phone width the page stays accessible; the admin has instance webhooks', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    const subContext = await signedInContext(browser, t.url, sub);
    await subContext.page.goto('/settings/webhooks');
    await subContext.page.getByText("Webhooks are the account owner's").waitFor();
    expect(await subContext.page.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await subContext.context.close();

    await o.client.post('/api/webhooks', {
      url: `${receiver.url}/phone-${'long-path-segment-'.repeat(4)}`,
      events: ['item.uploaded', 'item.moved'],
    });
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true, touch: true });
    await page.goto('/settings/webhooks');
    await page.getByRole('list', { name: 'Webhooks' }).waitFor();
    await expectAccessible(page, 'webhooks, phone, dark');
    await screenshot(page, 'settings-webhooks-phone-dark');
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    expect(errors).toEqual([]);
    await context.close();

    const admin = await signedInContext(browser, t.url, adminLogin);
    await admin.page.goto('/admin/webhooks');
    await admin.page.getByRole('heading', { name: 'Instance webhooks' }).waitFor();
    await admin.page.getByRole('button', { name: 'Add webhook' }).click();
    await admin.page.getByLabel('Receiver URL').fill(`${receiver.url}/ops`);
    await admin.page.getByRole('checkbox', { name: 'Scheduled backup failed' }).check();
    expect(await admin.page.getByRole('button', { name: 'Choose folder' }).count()).toBe(0);
    await admin.page.getByRole('button', { name: 'Add webhook' }).click();
    await admin.page.getByLabel('Signing secret').waitFor();
    await expectAccessible(admin.page, 'instance webhooks');
    await screenshot(admin.page, 'admin-webhooks');
    expect((await json(await adminLogin.client.get('/api/admin/webhooks'))).webhooks[0].events).toEqual(['item.uploaded', 'backup.failed']);
    expect(admin.errors).toEqual([]);
    await admin.context.close();
  });
});
