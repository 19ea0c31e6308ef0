import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { ItemsRepo } from '../src/db/repos/items.ts';
import { newId } from '../src/lib/ids.ts';
import { adminToken, startBenchServer, wrk } from './server.ts';
import { median } from './streams.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Seeds `count` items under a folder straight into the database beside the running server (WAL). */
export function seedFolder(dataDir: string, accountId: string, parentId: string, count: number): void {
  const db = openDatabase(path.join(dataDir, 'coffer.db'));
  const repo = new ItemsRepo(db.$client);
  const now = Date.now();
  db.$client.transaction(() => {
    for (let i = 0; i < count; i++) {
      const folder = i % 10 === 0;
      repo.insert({
        id: newId(),
        accountId,
        parentId,
        type: folder ? 'folder' : 'file',
        name: `${folder ? 'Folder' : 'Photo'} ${String(i).padStart(4, '0')}${folder ? '' : '.jpg'}`,
        size: folder ? 0 : 1000 + ((i * 7919) % 5_000_000),
        mimeType: folder ? null : 'image/jpeg',
        storageKey: null,
        wrappedKey: null,
        keyId: null,
        starred: false,
        modifiedAt: now - i * 60_000,
        accessedAt: now,
        createdAt: now,
      });
    }
  })();
  closeDatabase(db);
}

function curlSeconds(args: string[]): number {
  const out = Bun.spawnSync(['curl', '-s', '-o', '/dev/null', '-w', '%{time_total} %{http_code} %{size_download}', ...args], {
    stdout: 'pipe',
  });
  const [seconds, status, size] = out.stdout.toString().trim().split(' ');
  if (status !== '200' || Number(size) !== GiB) throw new Error(`curl ${args.at(-1)}: status ${status}, ${size} bytes`);
  return Number(seconds);
}

/** Anonymous share page throughput under wrk, and a shared 1 GiB download against an authenticated one. */
export async function runSharesBench(): Promise<void> {
  // The general limiter (10 000 per 15 minutes per IP) is raised so it does not cut the wrk run short.
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000' });
  try {
    const token = await adminToken(server.url);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const profile = (await (await fetch(`${server.url}/api/profile`, { headers: auth })).json()) as { id: string };
    const dir = (await (
      await fetch(`${server.url}/api/files/folder`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Holiday' }) })
    ).json()) as { id: string };
    seedFolder(server.dataDir, profile.id, dir.id, 1000);
    const share = async (id: string) => {
      const res = await fetch(`${server.url}/api/files/share`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ ids: [id], shared: true }),
      });
      const { links } = (await res.json()) as { links: Record<string, string> };
      return new URL(links[id]!).pathname;
    };
    const folderPath = await share(dir.id);

    const html = wrk(`${server.url}${folderPath}`, { threads: 2, connections: 4, seconds: 10, headers: { accept: 'text/html' } });
    if (html.non2xx) throw new Error(`${html.non2xx} non-2xx responses on the share page`);
    console.log(
      `shares.folder_page_html_req_s ${html.requestsPerSec.toFixed(0)} p50 ${html.p50} p99 ${html.p99} (1,000-item folder, first page of 100, wrk -t2 -c4 -d10s, goal >= 2000)`,
    );
    const asJson = wrk(`${server.url}${folderPath}`, { threads: 2, connections: 4, seconds: 10, headers: { accept: 'application/json' } });
    console.log(`shares.folder_page_json_req_s ${asJson.requestsPerSec.toFixed(0)} p50 ${asJson.p50} p99 ${asJson.p99}`);

    const big = path.join(server.dataDir, 'upload-1GiB.bin');
    const fd = fs.openSync(big, 'w');
    const block = randomBytes(MiB);
    for (let i = 0; i < 1024; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);
    const up = Bun.spawnSync(
      ['curl', '-s', '-H', `authorization: Bearer ${token}`, '-F', `file=@${big};filename=big.bin`, `${server.url}/api/files/upload`],
      { stdout: 'pipe' },
    );
    fs.rmSync(big);
    const file = JSON.parse(up.stdout.toString()) as { id: string };
    const filePath = await share(file.id);
    const authed: number[] = [];
    const shared: number[] = [];
    for (let i = 0; i < 3; i++) {
      authed.push(GiB / MiB / curlSeconds(['-H', `authorization: Bearer ${token}`, `${server.url}/api/files/${file.id}/download`]));
      shared.push(GiB / MiB / curlSeconds([`${server.url}${filePath}/file/${file.id}`]));
    }
    console.log(
      `shares.download_1GiB_authenticated_MiB_s median ${median(authed).toFixed(0)} (runs ${authed.map((x) => x.toFixed(0)).join(', ')})`,
    );
    console.log(
      `shares.download_1GiB_shared_MiB_s median ${median(shared).toFixed(0)} (runs ${shared.map((x) => x.toFixed(0)).join(', ')})`,
    );
    console.log(
      `shares.download_shared_vs_authenticated ${((median(shared) / median(authed)) * 100).toFixed(1)}% (goal: the same throughput)`,
    );
  } finally {
    await server.stop();
  }
}

if (import.meta.main) await runSharesBench();
