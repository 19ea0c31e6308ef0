import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { DAY, strayObject } from '../helpers/stored-files.ts';

let s3: TestS3;
let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  s3 = await startTestS3({ plain: true });
  [t, browser] = await Promise.all([startTestServer({ env: s3.env() }), acquireBrowser()]);
});
afterAll(async () => {
  await releaseBrowser();
  await t?.stop();
  await s3?.stop();
});

describe('Admin → Orphans on a store that cannot list incomplete multipart uploads (plain s3rver)', () => {
  test('the report lists the objects and says in a sentence that incomplete multipart uploads could not be listed', async () => {
    const admin = await seed.admin(t);
    const stray = await strayObject(t.server.ctx, { ageMs: 2 * DAY });
    const { context, page, errors } = await signedInContext(browser, t.url, admin, { viewport: PHONE });
    await page.goto('/admin/orphans');
    await page.getByRole('button', { name: 'Start scan' }).click();
    await page.getByRole('region', { name: 'Stored objects without a file', exact: true }).getByText(stray).waitFor();
    await page.getByText('Incomplete multipart uploads could not be listed on this storage').waitFor();
    await page.getByText('501 NotImplemented').waitFor();
    await expectAccessible(page, 'orphan report without incomplete uploads');
    await screenshot(page, 'orphans-plain-s3-light-phone');
    expect(errors).toEqual([]);
    await context.close();
  });
});
