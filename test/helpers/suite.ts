import { afterAll, beforeAll } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, releaseBrowser } from './browser.ts';
import * as seed from './seed.ts';
import { startTestServer, type TestServer, type TestServerOptions } from './server.ts';

/**
 * A test file's server (started with `opts`) and an admin of it, made before the file's tests, which `set` hands
 * to the file; after them the server stops, then `after` cleans up what the file made.
 */
export function serverWithAdmin(
  set: (s: { t: TestServer; admin: seed.SeededLogin }) => void,
  opts: TestServerOptions = {},
  after?: () => void,
): void {
  let t: TestServer | undefined;
  beforeAll(async () => {
    t = await startTestServer(opts);
    set({ t, admin: await seed.admin(t) });
  });
  afterAll(async () => {
    await t?.stop();
    after?.();
  });
}

/**
 * A UI test file's server (started with `opts`) and the shared browser, made before the file's tests, which `set`
 * hands to the file; after them the browser is released and the server stops.
 */
export function serverAndBrowser(set: (s: { t: TestServer; browser: Browser }) => void, opts: TestServerOptions = {}): void {
  let t: TestServer | undefined;
  beforeAll(async () => {
    const [server, browser] = await Promise.all([startTestServer(opts), acquireBrowser()]);
    t = server;
    set({ t, browser });
  });
  afterAll(async () => {
    await releaseBrowser();
    await t?.stop();
  });
}
