import { afterAll, beforeAll, expect } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, releaseBrowser } from './browser.ts';
import { DocserverDouble } from './docserver-double.ts';
import * as seed from './seed.ts';
import { startTestServer, type TestServer, type TestServerOptions } from './server.ts';
import { startReceiver } from './webhook-receiver.ts';

type Receiver = ReturnType<typeof startReceiver>;

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
 * A UI test file's server (started with `opts`), an admin of it, and the shared browser, made before the file's
 * tests, which `set` hands to the file; after them the browser is released and the server stops.
 */
export function serverAndBrowser(
  set: (s: { t: TestServer; admin: seed.SeededLogin; browser: Browser }) => void,
  opts: TestServerOptions = {},
): void {
  let t: TestServer | undefined;
  beforeAll(async () => {
    const [server, browser] = await Promise.all([startTestServer(opts), acquireBrowser()]);
    t = server;
    set({ t, admin: await seed.admin(t), browser });
  });
  afterAll(async () => {
    await releaseBrowser();
    await t?.stop();
  });
}

/**
 * A test file's server (started with `opts`) and an admin of it whose document server is a double, started first;
 * `set` hands them to the file. After the file's tests the double's callbacks settle, the server and the double
 * stop, then `after` cleans up what the file made.
 */
export function serverWithDocserver(
  set: (s: { t: TestServer; admin: seed.SeededLogin; double: DocserverDouble }) => void,
  opts: TestServerOptions = {},
  after?: () => void,
): void {
  let t: TestServer | undefined;
  let double: DocserverDouble | undefined;
  beforeAll(async () => {
    double = DocserverDouble.start();
    t = await startTestServer(opts);
    const admin = await seed.admin(t);
    expect((await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret })).status).toBe(200);
    set({ t, admin, double });
  });
  afterAll(async () => {
    await double?.settled();
    await t?.stop();
    double?.stop();
    after?.();
  });
}

/**
 * serverWithAdmin with a webhook receiver on loopback, started first and allowed as a webhook host; after the file's
 * tests the server stops, then the receiver, then `after` cleans up what the file made.
 */
export function serverWithReceiver(
  set: (s: { t: TestServer; admin: seed.SeededLogin; receiver: Receiver }) => void,
  opts: TestServerOptions = {},
  after?: () => void,
): void {
  let receiver: Receiver;
  beforeAll(() => {
    receiver = startReceiver();
  });
  serverWithAdmin(
    (s) => set({ ...s, receiver }),
    { ...opts, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', ...opts.env } },
    () => {
      receiver?.stop();
      after?.();
    },
  );
}
