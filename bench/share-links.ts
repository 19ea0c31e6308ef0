import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminToken, curl, startBenchServer, wrk, writeRandomGiB } from './server.ts';
import { seedFolder } from './shares.ts';
import { median } from './streams.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const ROUNDS = 3;

/**
 * Share link options (issue 32): a password-protected page after unlocking against an open one (req/s, in
 * alternating rounds of the same run), a 1 GiB upload into a drop folder against an authenticated upload,
 * and how many wrong passwords 50 concurrent guessers get checked. Loopback only; about 2 minutes.
 */
export async function runShareLinksBench(): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_UPLOAD_RATE_LIMIT: '1000000' });
  const input = path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `coffer-bench-drop-${process.pid}.bin`);
  try {
    const token = await adminToken(server.url);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async <T>(p: string, body: unknown): Promise<T> => {
      const res = await fetch(`${server.url}${p}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    const profile = (await (await fetch(`${server.url}/api/profile`, { headers: auth })).json()) as { id: string };
    const folder = async (name: string) => call<{ id: string }>('/api/files/folder', { name });
    const share = async (id: string, options: Record<string, unknown> = {}) => {
      const { links } = await call<{ links: Record<string, string> }>('/api/files/share', { ids: [id], shared: true, ...options });
      return new URL(links[id]!).pathname;
    };

    // 1. The same 1,000-item folder behind two links: one open, one with a password (visited unlocked).
    const dir = await folder('Holiday');
    seedFolder(server.dataDir, profile.id, dir.id, 1000);
    const open = await share(dir.id);
    const twin = await folder('Holiday locked');
    seedFolder(server.dataDir, profile.id, twin.id, 1000);
    const locked = await share(twin.id, { password: 'bench password 1' });
    const unlocked = await fetch(`${server.url}${locked}/unlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'bench password 1' }),
    });
    if (unlocked.status !== 204) throw new Error(`unlock: ${unlocked.status}`);
    const cookie = unlocked.headers.getSetCookie()[0]!.split(';')[0]!;
    const openRuns: number[] = [];
    const lockedRuns: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const a = wrk(`${server.url}${open}`, { seconds: 5, headers: { accept: 'text/html' } });
      const b = wrk(`${server.url}${locked}`, { seconds: 5, headers: { accept: 'text/html', cookie } });
      if (a.non2xx || b.non2xx) throw new Error(`non-2xx answers: open ${a.non2xx}, locked ${b.non2xx}`);
      openRuns.push(a.requestsPerSec);
      lockedRuns.push(b.requestsPerSec);
    }
    const runs = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log(
      `share_links.page_open_req_s median ${median(openRuns).toFixed(0)} (runs ${runs(openRuns)}; wrk -t2 -c4 -d5s, first page of 100)`,
    );
    console.log(`share_links.page_password_unlocked_req_s median ${median(lockedRuns).toFixed(0)} (runs ${runs(lockedRuns)})`);
    console.log(
      `share_links.page_password_vs_open ${((median(lockedRuns) / median(openRuns)) * 100).toFixed(1)}% (goal >= 90%, alternating rounds in one run)`,
    );

    // 2. 1 GiB through the drop folder's upload against the app's own upload, alternating.
    writeRandomGiB(input);
    const inbox = await folder('Inbox');
    const drop = await share(inbox.id, { mode: 'upload' });
    const authed: number[] = [];
    const dropped: number[] = [];
    const viaApp = () => {
      const a = curl([
        '--max-time',
        '600',
        '-H',
        `authorization: Bearer ${token}`,
        '-F',
        `file=@${input};filename=big.bin`,
        `${server.url}/api/files/upload`,
      ]);
      if (a.status !== 200) throw new Error(`authenticated upload: ${a.status} ${a.body}`);
      authed.push(GiB / MiB / a.seconds);
    };
    const viaDrop = () => {
      const d = curl(['--max-time', '600', '-F', `file=@${input};filename=big.bin`, `${server.url}${drop}/upload`]);
      if (d.status !== 201) throw new Error(`drop upload: ${d.status} ${d.body}`);
      dropped.push(GiB / MiB / d.seconds);
    };
    // Alternating which goes first, so a burst of load from elsewhere does not favour one side.
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2 === 0) {
        viaApp();
        viaDrop();
      } else {
        viaDrop();
        viaApp();
      }
    }
    console.log(`share_links.upload_1GiB_authenticated_MiB_s median ${median(authed).toFixed(0)} (runs ${runs(authed)})`);
    console.log(`share_links.upload_1GiB_drop_folder_MiB_s median ${median(dropped).toFixed(0)} (runs ${runs(dropped)})`);
    console.log(`share_links.drop_vs_authenticated_upload ${((median(dropped) / median(authed)) * 100).toFixed(1)}% (goal >= 85%)`);

    // 3. 50 concurrent guessers, 4 wrong passwords each, on one link from one address.
    const guarded = await share((await folder('Guarded')).id, { password: 'the right password' });
    const guess = (text: string) =>
      fetch(`${server.url}${guarded}/unlock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: text }),
      }).then((r) => r.status);
    const perGuesser = await Promise.all(
      Array.from({ length: 50 }, async (_, g) => {
        const out: number[] = [];
        for (let i = 0; i < 4; i++) out.push(await guess(`guesser ${g} try ${i}`));
        return out;
      }),
    );
    const statuses = perGuesser.flat();
    const checked = statuses.filter((s) => s === 401).length;
    const refused = statuses.filter((s) => s === 429).length;
    console.log(
      `share_links.wrong_password_attempts_checked ${checked} of ${statuses.length} (refused 429: ${refused}; 50 concurrent guessers; goal <= 10)`,
    );
  } finally {
    fs.rmSync(input, { force: true });
    await server.stop();
  }
}

if (import.meta.main) await runShareLinksBench();
