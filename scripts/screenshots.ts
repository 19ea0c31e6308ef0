/**
 * Screenshots of every screen of the web app, and the comparison of two sets of them.
 *
 *   bun scripts/screenshots.ts --out DIR              every screen in light, dark and at phone width, as DIR/<screen>-<variant>.png
 *   bun scripts/screenshots.ts --out DIR --only home,files   only these screens
 *   bun scripts/screenshots.ts --compare DIR_A DIR_B  per screen and variant, the share of pixels that differ; diff images in DIR_B/diff/
 *
 * The real server runs on a temp data dir with a fixed clock and seeded content; the browser's clock is fixed
 * too, and what still changes run to run (link tokens, QR codes, secrets, the server's port, thumbnails) is masked,
 * so two runs of the same code compare equal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { ManualClock } from '../src/clock.ts';
import { acquireBrowser, apiSettled, DESKTOP, openContext, PHONE, releaseBrowser, signedInContext } from '../test/helpers/browser.ts';
import { json } from '../test/helpers/client.ts';
import { eventually } from '../test/helpers/eventually.ts';
import { folder, upload } from '../test/helpers/files.ts';
import { photo } from '../test/helpers/images.ts';
import { type SeededLogin, login } from '../test/helpers/seed.ts';
import { startTestServer, type TestServer } from '../test/helpers/server.ts';

const VARIANTS = [
  { tag: 'light', viewport: DESKTOP, dark: false, touch: false },
  { tag: 'dark', viewport: DESKTOP, dark: true, touch: false },
  { tag: 'phone', viewport: PHONE, dark: false, touch: true },
] as const;

/** Every stamp the server writes, and the browser's "now" an hour later: relative times read the same each run. */
const SEEDED_AT = Date.UTC(2026, 2, 14, 9, 0);
const SHOWN_AT = SEEDED_AT + 3_600_000;
const PASSWORD = 'correct horse battery';

interface Seeded {
  admin: SeededLogin;
  maria: SeededLogin;
  jordan: SeededLogin;
  photosFolder: string;
  emptyFolder: string;
  albumId: string;
  folderLink: string;
  dropLink: string;
  albumLink: string;
}

async function person(t: TestServer, name: string, email: string): Promise<SeededLogin> {
  const row = await t.server.ctx.services.accounts.createLogin({ email, password: PASSWORD, name });
  return { id: row.id, email, password: PASSWORD, client: await login(t, email) };
}

async function ok(res: Promise<Response>, what: string): Promise<any> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  return json(r);
}

/** A little of everything each screen shows; each step a minute after the last, so orders by time never tie. */
async function seed(t: TestServer, clock: ManualClock): Promise<Seeded> {
  const step = () => clock.advance(60_000);
  const signup = t.client();
  const { user } = await ok(signup.post('/api/signup', { email: 'alex@home.lan', password: PASSWORD, name: 'Alex Morgan' }), 'signup');
  const admin = { id: user.id, email: 'alex@home.lan', password: PASSWORD, client: signup };
  step();
  const maria = await person(t, 'Maria Lopez', 'maria@home.lan');
  step();
  const jordan = await person(t, 'Jordan Lee', 'jordan@home.lan');
  step();
  await t.server.ctx.services.accounts.createLogin({
    email: 'sam@home.lan',
    password: PASSWORD,
    name: 'Sam Lopez',
    owner: { id: maria.id, permissions: ['files.download', 'files.upload'] },
  });
  step();
  const photosFolder = (await folder(maria.client, 'Photos 2024')).id;
  step();
  const emptyFolder = (await folder(maria.client, 'Empty folder')).id;
  step();
  const inbox = (await folder(maria.client, 'Inbox for receipts')).id;
  step();
  const family = (await folder(maria.client, 'Φωτογραφίες οικογένειας')).id;
  step();
  const names = [
    'holiday-2024-lisbon-portugal-with-the-whole-family-final-version-edited.jpg',
    'Quarterly report Q3.pdf',
    'budget.xlsx',
    'presentation.pptx',
    'notes.md',
    'backup.tar.gz',
    'main.ts',
    'Überweisung.txt',
  ];
  for (const [n, name] of names.entries()) {
    await upload(maria.client, name, 'x'.repeat(1000 * (n + 1) ** 3));
    step();
  }
  const photoIds: string[] = [];
  for (let i = 0; i < 8; i++) {
    const taken = `2024:0${1 + (i % 3)}:${String(10 + i).padStart(2, '0')} 1${i}:30:00`;
    const item = await upload(
      maria.client,
      `IMG_${2040 + i}.jpg`,
      await photo(i, i % 3 === 0 ? 480 : 640, i % 3 === 0 ? 640 : 480, taken),
      {
        parentId: photosFolder,
        type: 'image/jpeg',
      },
    );
    photoIds.push(item.id);
    step();
  }
  const star = await upload(maria.client, 'starred-plan.md', 'plan');
  await ok(maria.client.post('/api/files/star', { ids: [star.id], starred: true }), 'star');
  step();
  const link = async (id: string, options: object): Promise<string> =>
    (await ok(maria.client.post('/api/files/share', { ids: [id], shared: true, ...options }), 'share link')).links[id];
  const folderLink = await link(photosFolder, { expiry: '30d' });
  step();
  const dropLink = await link(inbox, { mode: 'upload' });
  step();
  await ok(maria.client.post(`/api/files/${family}/members`, { email: jordan.email, role: 'editor' }), 'share with Jordan');
  step();
  const { album } = await ok(maria.client.post('/api/albums', { name: 'Lisbon', ids: photoIds.slice(0, 5) }), 'album');
  step();
  const albumLink = (await ok(maria.client.post(`/api/albums/${album.id}/link`, { expiry: 'never' }), 'album link')).link.url;
  step();
  const gone = await upload(maria.client, 'old draft.docx', 'old');
  await ok(maria.client.post('/api/files/delete', { ids: [gone.id] }), 'trash');
  step();
  await t.server.ctx.services.users.setStorageLimit(maria.id, 50 * 1024 ** 3, 'cli');
  await t.server.worker.drain();
  return { admin, maria, jordan, photosFolder, emptyFolder, albumId: album.id, folderLink, dropLink, albumLink };
}

interface Screen {
  name: string;
  /** Who is signed in: none for the public pages. */
  as: 'maria' | 'admin' | 'jordan' | null;
  path: (s: Seeded) => string;
  /** Waits until the screen shows what it is for; may click its way there (a dialog). */
  ready: (page: Page) => Promise<unknown>;
  /** Only at phone width (the navigation drawer: a desktop always shows it). */
  phoneOnly?: boolean;
  /** What differs run to run though the code is the same. */
  mask?: (page: Page) => Locator[];
}

const role = (page: Page, r: Parameters<Page['getByRole']>[0], name: string | RegExp) => page.getByRole(r, { name }).first().waitFor();
const text = (page: Page, t: string | RegExp) => page.getByText(t).first().waitFor();
const links = (page: Page) => [page.locator('input[readonly]'), page.locator('img[alt^="QR code"]'), page.locator('code')];

const SCREENS: Screen[] = [
  { name: 'sign-in', as: null, path: () => '/login', ready: (p) => role(p, 'button', 'Sign in') },
  { name: 'home', as: 'maria', path: () => '/', ready: (p) => role(p, 'heading', 'Recent files') },
  { name: 'files', as: 'maria', path: () => '/files', ready: (p) => role(p, 'row', /^budget\.xlsx/) },
  { name: 'folder-empty', as: 'maria', path: (s) => `/files/${s.emptyFolder}`, ready: (p) => text(p, 'This folder is empty.') },
  { name: 'folder-shared', as: 'maria', path: (s) => `/files/${s.photosFolder}`, ready: (p) => role(p, 'row', /^IMG_2040\.jpg/) },
  {
    name: 'files-grid',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await role(p, 'row', /^budget\.xlsx/);
      await p.getByRole('button', { name: 'Grid view' }).click();
      await role(p, 'option', /^budget\.xlsx/);
    },
  },
  {
    name: 'selection',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('button', { name: 'List view' }).click();
      await p
        .getByRole('row', { name: /^budget\.xlsx/ })
        .getByRole('checkbox')
        .click();
      await text(p, '1 selected');
    },
  },
  {
    name: 'share-dialog',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('row', { name: /^Photos 2024/ }).click();
      await p.getByRole('button', { name: 'Share', exact: true }).first().click();
      await role(p, 'dialog', 'Share “Photos 2024”');
      await p.getByRole('dialog').getByRole('tab', { name: 'Link' }).click();
      await p.getByRole('dialog').getByRole('textbox', { name: 'Share link' }).waitFor();
    },
    mask: links,
  },
  {
    name: 'details',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('row', { name: /^budget\.xlsx/ }).click();
      await p.getByRole('button', { name: 'Details', exact: true }).click();
      await role(p, 'tab', 'Versions');
    },
  },
  {
    name: 'versions',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('row', { name: /^budget\.xlsx/ }).click();
      await p.getByRole('button', { name: 'Details', exact: true }).click();
      await p.getByRole('tab', { name: 'Versions' }).click();
      await text(p, 'No earlier versions yet.');
    },
  },
  {
    name: 'move-dialog',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('row', { name: /^budget\.xlsx/ }).click();
      await p.keyboard.press('m');
      await role(p, 'button', 'Move here');
    },
  },
  {
    name: 'shortcuts',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await role(p, 'row', /^budget\.xlsx/);
      await p.keyboard.press('?');
      await role(p, 'dialog', 'Keyboard shortcuts');
    },
  },
  {
    name: 'notifications',
    as: 'jordan',
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('button', { name: /^Notifications/ }).click();
      await p.getByRole('dialog', { name: 'Notifications' }).getByRole('button').first().waitFor();
    },
  },
  {
    name: 'navigation',
    as: 'maria',
    phoneOnly: true,
    path: () => '/files',
    ready: async (p) => {
      await p.getByRole('button', { name: 'Open navigation' }).click();
      await role(p, 'link', 'Trash');
    },
  },
  { name: 'photos', as: 'maria', path: () => '/photos', ready: (p) => text(p, 'February 2024') },
  {
    name: 'viewer',
    as: 'maria',
    path: () => '/photos',
    ready: async (p) => {
      await p.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name: 'IMG_2041.jpg', exact: true }).click();
      await role(p, 'dialog', 'IMG_2041.jpg');
    },
  },
  { name: 'albums', as: 'maria', path: () => '/photos/albums', ready: (p) => text(p, 'Lisbon') },
  { name: 'album', as: 'maria', path: (s) => `/photos/albums/${s.albumId}`, ready: (p) => role(p, 'heading', 'Lisbon') },
  { name: 'shared', as: 'maria', path: () => '/shared', ready: (p) => role(p, 'row', /^Photos 2024/), mask: links },
  { name: 'shared-with-me', as: 'jordan', path: () => '/shared-with-me', ready: (p) => role(p, 'row', /^Φωτογραφίες/) },
  { name: 'starred', as: 'maria', path: () => '/starred', ready: (p) => role(p, 'row', /^starred-plan\.md/) },
  { name: 'recent', as: 'maria', path: () => '/recent', ready: (p) => role(p, 'row', /^budget\.xlsx/) },
  { name: 'trash', as: 'maria', path: () => '/trash', ready: (p) => role(p, 'row', /^old draft\.docx/) },
  { name: 'search', as: 'maria', path: () => '/search?q=report', ready: (p) => role(p, 'row', /^Quarterly report Q3\.pdf/) },
  { name: 'activity', as: 'maria', path: () => '/activity', ready: (p) => text(p, 'moved to the trash') },
  {
    name: 'palette',
    as: 'maria',
    path: () => '/files',
    ready: async (p) => {
      await role(p, 'row', /^budget\.xlsx/);
      await p.keyboard.press('Control+k');
      await p.getByRole('dialog').first().waitFor();
    },
  },
  { name: 'settings-profile', as: 'maria', path: () => '/settings/profile', ready: (p) => text(p, 'Member since') },
  {
    name: 'settings-security',
    as: 'maria',
    path: () => '/settings/security',
    ready: (p) => role(p, 'button', 'Enable two-factor authentication'),
  },
  {
    name: 'settings-two-factor',
    as: 'maria',
    path: () => '/settings/security',
    ready: async (p) => {
      await p.getByRole('button', { name: 'Enable two-factor authentication' }).click();
      await role(p, 'img', 'QR code for your authenticator app');
      // The click leaves the pointer where Cancel appears, and whether Chromium shows its hover by then varies.
      await p.mouse.move(0, 0);
    },
    mask: links,
  },
  { name: 'settings-sessions', as: 'maria', path: () => '/settings/sessions', ready: (p) => text(p, 'Current') },
  { name: 'settings-app-passwords', as: 'maria', path: () => '/settings/app-passwords', ready: (p) => role(p, 'heading', 'App passwords') },
  { name: 'settings-sub-users', as: 'maria', path: () => '/settings/sub-users', ready: (p) => text(p, 'sam@home.lan') },
  { name: 'settings-groups', as: 'maria', path: () => '/settings/groups', ready: (p) => role(p, 'heading', 'Groups') },
  { name: 'settings-webhooks', as: 'maria', path: () => '/settings/webhooks', ready: (p) => role(p, 'heading', 'Webhooks') },
  { name: 'settings-appearance', as: 'maria', path: () => '/settings/appearance', ready: (p) => role(p, 'radio', 'Dark') },
  { name: 'admin-users', as: 'admin', path: () => '/admin/users', ready: (p) => text(p, 'maria@home.lan') },
  { name: 'admin-groups', as: 'admin', path: () => '/admin/groups', ready: (p) => role(p, 'heading', 'Groups') },
  { name: 'admin-team-folders', as: 'admin', path: () => '/admin/team-folders', ready: (p) => role(p, 'heading', 'Team folders') },
  { name: 'admin-libraries', as: 'admin', path: () => '/admin/libraries', ready: (p) => role(p, 'heading', 'Libraries') },
  {
    name: 'admin-instance',
    as: 'admin',
    path: () => '/admin/instance',
    ready: (p) => role(p, 'textbox', 'Maximum upload size'),
    mask: (p) => [p.locator('code')],
  },
  { name: 'admin-orphans', as: 'admin', path: () => '/admin/orphans', ready: (p) => role(p, 'button', 'Start scan') },
  { name: 'admin-backups', as: 'admin', path: () => '/admin/backups', ready: (p) => text(p, 'No backup has run yet.') },
  { name: 'admin-clients', as: 'admin', path: () => '/admin/clients', ready: (p) => role(p, 'heading', 'Clients') },
  { name: 'admin-webhooks', as: 'admin', path: () => '/admin/webhooks', ready: (p) => role(p, 'heading', 'Webhooks') },
  { name: 'admin-about', as: 'admin', path: () => '/admin/about', ready: (p) => role(p, 'heading', 'Version') },
  {
    name: 'admin-refused',
    as: 'maria',
    path: () => '/admin/users',
    ready: (p) => role(p, 'heading', 'The admin console is not available to you'),
  },
  { name: 'share-page', as: null, path: (s) => new URL(s.folderLink).pathname, ready: (p) => role(p, 'heading', 'Photos 2024') },
  { name: 'album-page', as: null, path: (s) => new URL(s.albumLink).pathname, ready: (p) => text(p, 'Lisbon') },
  { name: 'drop-page', as: null, path: (s) => new URL(s.dropLink).pathname, ready: (p) => text(p, 'Inbox for receipts') },
];

/** Every picture in view has loaded (one the page lazy-loads out of view never does). */
const PICTURES_SHOWN = `[...document.images].every((i) => {
  const r = i.getBoundingClientRect();
  return i.complete || r.width === 0 || r.bottom < 0 || r.top > innerHeight;
})`;

/** Until every picture on the page has loaded and the page waits for nothing: the picture is complete. */
async function settled(page: Page): Promise<void> {
  await apiSettled(page);
  await eventually(async () => (await page.evaluate(PICTURES_SHOWN)) === true, {
    message: 'a picture is still loading',
  });
  await page.evaluate('document.fonts.ready');
  // Two frames: what the last answers changed is laid out and painted.
  await page.evaluate('new Promise((f) => requestAnimationFrame(() => requestAnimationFrame(f)))');
}

/** Marks what shows the server's address: its port is a new one each run. */
const MARK_ADDRESS = `{
  for (const el of document.querySelectorAll('input, textarea')) if (el.value.includes(location.host)) el.dataset.screenshotMask = '';
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) if (walk.currentNode.data.includes(location.host)) walk.currentNode.parentElement.dataset.screenshotMask = '';
}`;

/**
 * The screen once two pictures taken 250 ms apart agree: a picture swapped late (a larger thumbnail) is in.
 * Images are painted over (their boxes stay): thumbnails come out a little different each run (see NOISE_LEVELS).
 */
async function steadyPicture(page: Page, screen: Screen): Promise<Buffer> {
  let last: Buffer | null = null;
  for (let i = 0; i < 20; i++) {
    await page.evaluate(MARK_ADDRESS);
    const picture = await page.screenshot({
      mask: [...(screen.mask?.(page) ?? []), page.locator('[data-screenshot-mask]'), page.locator('img')],
      maskColor: '#ff00ff',
      animations: 'disabled',
      caret: 'hide',
    });
    if (last?.equals(picture)) return picture;
    last = picture;
    await page.waitForTimeout(250);
    await settled(page);
  }
  throw new Error('the screen kept changing');
}

async function capture(out: string, only: string[]): Promise<void> {
  fs.mkdirSync(out, { recursive: true });
  const clock = new ManualClock(SEEDED_AT);
  const t = await startTestServer({ clock });
  let browser: Browser | undefined;
  try {
    const seeded = await seed(t, clock);
    browser = await acquireBrowser();
    const logins = { maria: seeded.maria, admin: seeded.admin, jordan: seeded.jordan };
    const failed: string[] = [];
    for (const v of VARIANTS) {
      for (const screen of SCREENS.filter((s) => (!only.length || only.includes(s.name)) && (v.touch || !s.phoneOnly))) {
        const opts = { viewport: v.viewport, dark: v.dark, touch: v.touch };
        const { context, page } = screen.as
          ? await signedInContext(browser, t.url, logins[screen.as], opts)
          : await openContext(browser, t.url, opts);
        try {
          page.setDefaultTimeout(15_000);
          await page.clock.setFixedTime(SHOWN_AT);
          await page.goto(screen.path(seeded));
          await screen.ready(page);
          await settled(page);
          fs.writeFileSync(path.join(out, `${screen.name}-${v.tag}.png`), await steadyPicture(page, screen));
          process.stdout.write(`${screen.name}-${v.tag}\n`);
        } catch (err) {
          await page.screenshot({ path: path.join(out, `failed-${screen.name}-${v.tag}.png`) }).catch(() => {});
          failed.push(`${screen.name}-${v.tag}: ${(err as Error).message.split('\n')[0]}`);
        } finally {
          await context.close();
        }
      }
    }
    if (failed.length) throw new Error(`screens not captured:\n  ${failed.join('\n  ')}`);
  } finally {
    if (browser) await releaseBrowser();
    await t.stop();
  }
}

/**
 * A pixel differs when a colour channel moves by more than this many of 255 levels. Two runs of the same code
 * differ by up to 8 in a few pixels: thumbnails re-encoded and icons rasterised a little differently each run.
 */
const NOISE_LEVELS = 12;

async function pixels(file: string) {
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Per screen and variant, the share of pixels that differ; a diff image (differences in red over a faded A) for each that does. */
async function compare(a: string, b: string): Promise<number> {
  const names = new Set([...fs.readdirSync(a), ...fs.readdirSync(b)].filter((n) => n.endsWith('.png')));
  const diffDir = path.join(b, 'diff');
  fs.rmSync(diffDir, { recursive: true, force: true });
  let differing = 0;
  for (const name of [...names].sort()) {
    if (!fs.existsSync(path.join(a, name)) || !fs.existsSync(path.join(b, name))) {
      console.log(`${name.padEnd(40)} only in ${fs.existsSync(path.join(a, name)) ? a : b}`);
      differing++;
      continue;
    }
    const [pa, pb] = await Promise.all([pixels(path.join(a, name)), pixels(path.join(b, name))]);
    if (pa.width !== pb.width || pa.height !== pb.height) {
      console.log(`${name.padEnd(40)} size ${pa.width}×${pa.height} → ${pb.width}×${pb.height}`);
      differing++;
      continue;
    }
    const diff = Buffer.alloc(pa.data.length);
    let count = 0;
    let noise = 0;
    for (let i = 0; i < pa.data.length; i += 4) {
      const delta = Math.max(...[0, 1, 2].map((c) => Math.abs(pa.data[i + c]! - pb.data[i + c]!)));
      const same = delta <= NOISE_LEVELS;
      if (!same) count++;
      else if (delta > 0) noise++;
      const grey = Math.round((pa.data[i]! + pa.data[i + 1]! + pa.data[i + 2]!) / 3);
      diff[i] = same ? 200 + (grey >> 3) : 255;
      diff[i + 1] = same ? 200 + (grey >> 3) : 0;
      diff[i + 2] = same ? 200 + (grey >> 3) : 0;
      diff[i + 3] = 255;
    }
    const share = count / (pa.width * pa.height);
    const quiet = noise ? ` (${noise} pixels off by at most ${NOISE_LEVELS} levels)` : '';
    console.log(`${name.padEnd(40)} ${count === 0 ? 'same' : `${(share * 100).toFixed(3)}% of pixels differ (${count})`}${quiet}`);
    if (count > 0) {
      differing++;
      fs.mkdirSync(diffDir, { recursive: true });
      await sharp(diff, { raw: { width: pa.width, height: pa.height, channels: 4 } })
        .png()
        .toFile(path.join(diffDir, name));
    }
  }
  console.log(`${differing} of ${names.size} screenshots differ${differing ? ` (diff images in ${diffDir})` : ''}`);
  return differing;
}

const { values, positionals } = parseArgs({
  options: { out: { type: 'string' }, compare: { type: 'boolean' }, only: { type: 'string' } },
  allowPositionals: true,
});
if (values.compare && positionals.length === 2) process.exit((await compare(positionals[0]!, positionals[1]!)) > 0 ? 1 : 0);
else if (values.out && !values.compare) {
  await capture(values.out, values.only?.split(',') ?? []);
  process.exit(0);
} else {
  console.error('usage: bun scripts/screenshots.ts --out DIR | --compare DIR_A DIR_B');
  process.exit(2);
}
