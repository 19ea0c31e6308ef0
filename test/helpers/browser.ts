import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sparticuz from '@sparticuz/chromium';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import type { AxeResults } from 'axe-core';
import { eventually } from './eventually.ts';

/** Screenshots are test artefacts, never committed, taken only when $COFFER_SCREENSHOTS names where to save them. */
const SCREENSHOT_DIR = process.env.COFFER_SCREENSHOTS;

const UNPACK_LOCK = path.join(os.tmpdir(), 'coffer-chromium-unpack.lock');

/**
 * @sparticuz/chromium unpacks Chromium into the temp directory and takes a file already there as complete,
 * so test processes running side by side (the suite's shards) take turns; a lock older than a minute was left by a killed process.
 */
async function chromiumPath(): Promise<string> {
  for (;;) {
    try {
      fs.mkdirSync(UNPACK_LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(UNPACK_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 60_000) fs.rmSync(UNPACK_LOCK, { recursive: true, force: true });
      else await Bun.sleep(100);
    }
  }
  try {
    return await sparticuz.executablePath();
  } finally {
    fs.rmSync(UNPACK_LOCK, { recursive: true, force: true });
  }
}

let shared: Promise<Browser> | null = null;
let sharedGpu = false;
let users = 0;

/** The package's flags that make Chromium composite through an emulated GPU (SwiftShader, in the browser process). */
const EMULATED_GPU = /^--(ignore-gpu-blocklist|in-process-gpu|use-gl=|use-angle=|enable-unsafe-swiftshader)/;

/**
 * One headless Chromium (from the npm package @sparticuz/chromium) shared by the browser tests of a run.
 * It composites in software (--disable-gpu): the package's emulated GPU (SwiftShader, in the browser process)
 * took most of a browser test's CPU (test/ui/settings.test.ts: Chromium 23 s, 7 without it) for pages that
 * draw only HTML and CSS. `emulatedGpu` keeps the package's flags, for the benches earlier passes measured so.
 */
export async function acquireBrowser({ emulatedGpu = false }: { emulatedGpu?: boolean } = {}): Promise<Browser> {
  if (shared && sharedGpu !== emulatedGpu) throw new Error('the shared browser is already running with the other GPU setting');
  users++;
  sharedGpu = emulatedGpu;
  // The package's serverless flags include --single-process, under which closing a context can take the
  // whole browser down; tests open and close many contexts.
  const flags = sparticuz.args.filter((a) => a !== '--single-process');
  const args = emulatedGpu ? flags : [...flags.filter((a) => !EMULATED_GPU.test(a)), '--disable-gpu'];
  shared ??= (async () => chromium.launch({ executablePath: await chromiumPath(), args, headless: true }))();
  return shared;
}

export async function releaseBrowser(): Promise<void> {
  if (--users > 0 || !shared) return;
  const b = await shared;
  shared = null;
  await b.close();
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface PageOptions {
  viewport?: { width: number; height: number };
  dark?: boolean;
  touch?: boolean;
  /**
   * A busy machine: the next frame and short timers (50 ms or less) come 300 ms late, so work a page
   * defers to them (Preact's effects) runs after keys pressed meanwhile, as it can under load.
   */
  lateFrames?: boolean;
}

const LATE_FRAMES = `{
  const later = window.setTimeout;
  window.setTimeout = (fn, ms, ...args) => later(fn, ms > 0 && ms <= 50 ? 300 : ms, ...args);
  window.requestAnimationFrame = (fn) => later(() => fn(performance.now()), 300);
}`;

/** An API call of the page, the long-lived event stream aside. */
const isApiCall = (u: URL) => u.pathname.startsWith('/api/') && u.pathname !== '/api/files/events';

/**
 * Counts the page's fetch calls to the API not yet answered, each a task after its answer so the page's own
 * handling has run. Counted in the page: Playwright's request events for every page cost a race of their own
 * (a late event naming a closed context's response fails whatever test runs next).
 */
const COUNT_API_CALLS = `{
  const original = window.fetch;
  let pending = 0;
  Object.defineProperty(window, '__cofferApiPending', { get: () => pending });
  window.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    if (!url.pathname.startsWith('/api/')) return original(input, init);
    pending++;
    const done = () => setTimeout(() => pending--, 0);
    const call = original(input, init);
    call.then(done, done);
    return call;
  };
}`;

/**
 * Counts the page's event streams that are open now: counted at their `{"type":"connected"}` (the server
 * subscribes before it sends it), no longer once closed or dropped. Counted in the page, so a page closed earlier
 * whose socket the server has not yet let go, or another page of the account, never makes it look open.
 */
const COUNT_EVENT_STREAMS = `{
  const Original = window.EventSource;
  let open = 0;
  Object.defineProperty(window, '__cofferStreamsOpen', { get: () => open });
  window.EventSource = class extends Original {
    constructor(url, init) {
      super(url, init);
      let counted = false;
      const drop = () => counted && ((counted = false), open--);
      this.addEventListener('message', (m) => {
        if (!counted && String(m.data).includes('"type":"connected"')) (counted = true), open++;
      });
      this.addEventListener('error', drop);
      const close = this.close.bind(this);
      this.close = () => (drop(), close());
    }
  };
}`;

/**
 * Waits until the page's event stream is open: a change made after this reaches the page live, one made
 * before it may never (a page just loaded connects a moment later, much later on a loaded machine).
 */
export async function eventStreamOpen(page: Page): Promise<void> {
  await eventually(async () => ((await page.evaluate('window.__cofferStreamsOpen')) as number) > 0, {
    timeoutMs: 15_000,
    message: "the page's event stream did not open",
  });
}

/** Waits until every API call the page has made is answered: the page has what it asked for. */
export async function apiSettled(page: Page): Promise<void> {
  await eventually(async () => (await page.evaluate('window.__cofferApiPending')) === 0, {
    timeoutMs: 15_000,
    message: 'the page still waits for an API call',
  });
}

/** A fresh browser profile (its own cookies) with page errors collected, so a script error fails the test. */
export async function openContext(
  browser: Browser,
  baseURL: string,
  opts: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    baseURL,
    viewport: opts.viewport ?? DESKTOP,
    colorScheme: opts.dark ? 'dark' : 'light',
    hasTouch: opts.touch ?? false,
    isMobile: opts.touch ?? false,
    acceptDownloads: true,
    // No transitions (the app honours the setting): screenshots need not wait for them.
    reducedMotion: 'reduce',
  });
  if (opts.lateFrames) await context.addInitScript(LATE_FRAMES);
  await context.addInitScript(COUNT_API_CALLS);
  await context.addInitScript(COUNT_EVENT_STREAMS);
  // Races hunted on purpose: every API call but the event stream answered up to this many ms late, at random.
  const latency = Number(process.env.COFFER_UI_LATENCY_MS ?? 0);
  if (latency > 0)
    await context.route(isApiCall, async (r) => {
      await new Promise((f) => setTimeout(f, Math.random() * latency));
      await r.fallback();
    });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
}

/** Signs in through the page itself, as a person would. */
export async function signIn(page: Page, email: string, password: string, to = '/'): Promise<void> {
  await page.goto(to === '/' ? '/login' : `/login?next=${encodeURIComponent(to)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((u) => u.pathname !== '/login');
}

/** Saves what the page shows as `<name>.png` under $COFFER_SCREENSHOTS; without it, nothing (a picture no one opens checks nothing). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOT_DIR) return;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // Let layout and late paints settle so the picture is what a person sees (motion is reduced, see openContext).
  await page.waitForTimeout(50);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}

/**
 * axe-core's source, evaluated into a page (and each of its frames) once, when it is first checked. Its
 * Playwright builder sent the 550 KB again at every check and finished each in a new blank page: 1.5 s of
 * CPU a check against 0.25, and that page sometimes never opened on a loaded machine (60 s, then the test failed).
 */
const AXE_SOURCE = fs.readFileSync(Bun.resolveSync('axe-core/axe.min.js', import.meta.dir), 'utf8');

async function axeViolations(page: Page): Promise<AxeResults['violations']> {
  for (const frame of page.frames()) {
    // A frame gone meanwhile has nothing to check.
    const present = await frame.evaluate('typeof window.axe === "object"').catch(() => true);
    if (!present) await frame.evaluate(AXE_SOURCE);
  }
  // Every rule, as the builder ran them; only the violations' details are gathered.
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as AxeResults;
  return result.violations;
}

/** axe-core on the page as it is: no serious or critical violation allowed. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const misnamed = await misnamedFields(page);
  if (misnamed.length) throw new Error(`form fields on ${what} not named exactly by their visible label:\n  ${misnamed.join('\n  ')}`);
  const bad = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    const lines = bad.map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help}\n  ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join('\n  ')}`,
    );
    throw new Error(`axe-core on ${what}:\n${lines.join('\n')}`);
  }
}

/** What a form control's label may hold besides its caption: nothing that reads as a hint or a message. */
const NOT_CAPTION = 'small, p, .muted, .hint, .field-error, [role="alert"]';

/**
 * Every visible form control whose name comes from a <label> is named exactly by that label's caption, as
 * Chromium's accessibility tree computes it: a hint or an error inside the label (which would join the
 * name) is a problem, as is a control with no name at all. One line per problem.
 */
async function misnamedFields(page: Page): Promise<string[]> {
  const fields = await page.evaluate((notCaption) => {
    const doc = (globalThis as any).document;
    const out: Array<{ mark: string; caption: string | null; hintInLabel: string | null; what: string }> = [];
    doc.querySelectorAll('input, select, textarea').forEach((el: any, i: number) => {
      if (el.type === 'hidden' || el.closest('[hidden], [inert], [aria-hidden="true"]') || !el.getClientRects().length) return;
      const label = el.labels?.[0] ?? null;
      let caption: string | null = null;
      let hintInLabel: string | null = null;
      if (label && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby')) {
        const copy = label.cloneNode(true);
        const hint = copy.querySelector(notCaption);
        hintInLabel = hint ? (hint.textContent ?? '').trim() : null;
        for (const n of copy.querySelectorAll(`input, select, textarea, ${notCaption}`)) n.remove();
        caption = (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
      }
      const mark = `f${i}`;
      el.setAttribute('data-field-check', mark);
      out.push({
        mark,
        caption,
        hintInLabel,
        what: `${el.tagName.toLowerCase()}[${el.getAttribute('type') ?? ''}]${el.id ? `#${el.id}` : ''}`,
      });
    });
    return out;
  }, NOT_CAPTION);
  const problems: string[] = [];
  try {
    for (const f of fields) {
      // Playwright's accessibility snapshot, not a DevTools session of our own: a second session on the
      // page stops Chromium's virtual authenticator (the passkey tests') from answering.
      const snapshot = (await page.locator(`[data-field-check="${f.mark}"]`).ariaSnapshot()).trim();
      // Behind an open modal dialog the page is out of the accessibility tree: nothing there is named.
      if (!snapshot) continue;
      let line = snapshot.split('\n')[0]!;
      // YAML single-quotes an entry whose name holds a colon: `- 'checkbox "Select all: …"'`.
      if (line.startsWith("- '")) line = `- ${line.slice(3, line.lastIndexOf("'")).replaceAll("''", "'")}`;
      const name = JSON.parse(`"${/^- [\w-]+ "((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? ''}"`).trim();
      if (!name) problems.push(`${f.what} has no accessible name`);
      else if (f.hintInLabel !== null)
        problems.push(`${f.what} "${name}": its label holds "${f.hintInLabel}", which belongs in a description`);
      else if (f.caption !== null && name !== f.caption) problems.push(`${f.what} is named "${name}", its label reads "${f.caption}"`);
    }
    return problems;
  } finally {
    await page.evaluate(() => {
      for (const e of (globalThis as any).document.querySelectorAll('[data-field-check]')) e.removeAttribute('data-field-check');
    });
  }
}

/** A browser profile already signed in as `login` (its session cookie), for tests that are not about signing in. */
export async function signedInContext(
  browser: Browser,
  baseURL: string,
  login: { client: { cookies: Map<string, string> } },
  opts: PageOptions = {},
) {
  const opened = await openContext(browser, baseURL, opts);
  const { hostname } = new URL(baseURL);
  await opened.context.addCookies([
    { name: 'token', value: login.client.cookies.get('token')!, domain: hostname, path: '/', httpOnly: true, sameSite: 'Lax' },
  ]);
  return opened;
}

/**
 * Drops files on the first element matching `selector` the way a desktop drag does (a DataTransfer of
 * File objects with dragover then drop). Written as page source: the test runner has no DOM types.
 */
export async function dropFiles(
  page: Page,
  selector: string,
  files: { name: string; text: string }[],
  ariaLabelPrefix?: string,
): Promise<void> {
  await page.evaluate(`(() => {
    const dt = new DataTransfer();
    for (const f of ${JSON.stringify(files)}) dt.items.add(new File([f.text], f.name, { type: 'text/plain' }));
    const prefix = ${JSON.stringify(ariaLabelPrefix ?? null)};
    const target = [...document.querySelectorAll(${JSON.stringify(selector)})].find((el) => !prefix || (el.getAttribute('aria-label') || '').startsWith(prefix));
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  })()`);
}

export type DropEntry = { name: string; text: string } | { name: string; children: DropEntry[] };

/**
 * Drops files and whole folders from the desktop on the first element matching `selector`. A page
 * cannot make directory entries (Chromium hands real ones only to an OS drag; over CDP they cannot be
 * read), so `DataTransferItem.prototype.webkitGetAsEntry` is patched to answer, for these items,
 * FileSystemEntry look-alikes backed by real File objects. Directory readers answer in batches of two,
 * as a real reader answers in batches, so the app must keep reading until an empty batch.
 */
export async function dropTree(page: Page, selector: string, entries: DropEntry[], ariaLabelPrefix?: string): Promise<void> {
  await page.evaluate(`(() => {
    const entries = ${JSON.stringify(entries)};
    const toEntry = (e, dir) => {
      const fullPath = dir + '/' + e.name;
      if (!e.children) {
        const file = new File([e.text], e.name, { type: 'text/plain' });
        return { isFile: true, isDirectory: false, name: e.name, fullPath, file: (ok) => setTimeout(() => ok(file)) };
      }
      const children = e.children.map((c) => toEntry(c, fullPath));
      return {
        isFile: false,
        isDirectory: true,
        name: e.name,
        fullPath,
        createReader: () => {
          let at = 0;
          return { readEntries: (ok) => setTimeout(() => { ok(children.slice(at, at + 2)); at += 2; }) };
        },
      };
    };
    const dt = new DataTransfer();
    const byName = new Map();
    for (const e of entries) {
      // A dropped folder reaches the page as a file item named after it; its entry is what says it is a folder.
      dt.items.add(new File([e.children ? '' : e.text], e.name));
      byName.set(e.name, toEntry(e, ''));
    }
    const proto = DataTransferItem.prototype;
    const original = proto.webkitGetAsEntry;
    proto.webkitGetAsEntry = function () {
      return byName.get(this.getAsFile()?.name) ?? original.call(this);
    };
    const prefix = ${JSON.stringify(ariaLabelPrefix ?? null)};
    const target = [...document.querySelectorAll(${JSON.stringify(selector)})].find((el) => !prefix || (el.getAttribute('aria-label') || '').startsWith(prefix));
    try {
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    } finally {
      proto.webkitGetAsEntry = original;
    }
  })()`);
}

/**
 * Holds the page's `method` requests to `pattern` until `release`, counting them as the browser sends them: a test
 * presses a button again while the server "answers" and sees whether a second request went out.
 */
export async function holdRequests(page: Page, pattern: string, method = 'POST'): Promise<{ count(): number; release(): void }> {
  let count = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  await page.route(pattern, async (route) => {
    if (route.request().method() !== method) return route.fallback();
    count++;
    await gate;
    await route.continue();
  });
  return { count: () => count, release: () => open() };
}

/** Whether the keyboard's focus is on this element (not dropped to the page). */
export function hasFocus(locator: Locator): Promise<boolean> {
  return locator.evaluate((el: any) => el === el.ownerDocument.activeElement);
}

/**
 * The sides of the focused element's focus ring (its outline, offset included) that an ancestor which clips
 * its overflow cuts off: none is what a person sees whole.
 */
export function clippedRingSides(locator: Locator): Promise<string[]> {
  return locator.evaluate((el: any) => {
    const win = el.ownerDocument.defaultView;
    const style = win.getComputedStyle(el);
    const out = (parseFloat(style.outlineWidth) || 0) + (parseFloat(style.outlineOffset) || 0);
    const r = el.getBoundingClientRect();
    const ring = { left: r.left - out, right: r.right + out, top: r.top - out, bottom: r.bottom + out };
    const cut = new Set<string>();
    for (let a = el.parentElement; a; a = a.parentElement) {
      const s = win.getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const b = a.getBoundingClientRect();
      // The padding box clips: the border is outside it.
      const box = {
        left: b.left + a.clientLeft,
        top: b.top + a.clientTop,
        right: b.left + a.clientLeft + a.clientWidth,
        bottom: b.top + a.clientTop + a.clientHeight,
      };
      if (ring.left < box.left - 0.5) cut.add('left');
      if (ring.right > box.right + 0.5) cut.add('right');
      if (ring.top < box.top - 0.5) cut.add('top');
      if (ring.bottom > box.bottom + 0.5) cut.add('bottom');
    }
    return [...cut];
  });
}
