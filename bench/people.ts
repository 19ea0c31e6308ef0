import { loadConfig } from '../src/config.ts';
import { openContext } from '../src/composition.ts';
import { createLogger } from '../src/log.ts';
import { newId } from '../src/lib/ids.ts';
import type { AppContext } from '../src/context.ts';
import { seedTree } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const MEMBERS = 100;
const SHARES = 1000;
const FOLDER_ITEMS = 200;
const ROUNDS = 300;

/** Owner accounts and their session tokens, written beside the running server (WAL): no password hashing. */
async function accounts(ctx: AppContext, n: number, prefix: string): Promise<Array<{ id: string; email: string; token: string }>> {
  const out = [];
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const email = `${prefix}-${i}@example.test`;
    const row = ctx.repos.users.insert({
      id: newId(),
      email,
      emailKey: email,
      name: `${prefix} ${i}`,
      passwordHash: null,
      isAdmin: false,
      parentUserId: null,
      permissions: null,
      createdAt: now,
    });
    const { token } = await ctx.services.sessions.start(row.id, { ip: '127.0.0.1', userAgent: 'bench' });
    out.push({ id: row.id, email, token });
  }
  return out;
}

async function timeGet(url: string, token: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return performance.now() - start;
}

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;
const ms = (x: number) => x.toFixed(2);

/** Resolves when `stream`'s body carries an event naming `marker`. */
async function waitFor(
  reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> },
  marker: string,
  deadline: number,
): Promise<void> {
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(marker)) {
    if (performance.now() > deadline) throw new Error('an event did not arrive within the bench deadline');
    const { value, done } = await reader.read();
    if (done) throw new Error('an event stream ended');
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Sharing with people: a 200-item shared folder listed by a member against its owner (alternating, same
 * run), shared-with-me with 1,000 shares to one account, and one change inside a folder shared with
 * 100 members reaching all their open event streams.
 */
export async function runPeopleBench(): Promise<void> {
  const server = await startBenchServer({
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
    COFFER_MAX_CONNECTIONS_PER_IP: '0',
    COFFER_MEMBER_LOOKUP_RATE_LIMIT: '1000000000',
  });
  try {
    const ownerToken = await adminToken(server.url);
    const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    const owner = (await (await fetch(`${server.url}/api/profile`, { headers: auth(ownerToken) })).json()) as { id: string };
    const ctx = openContext(loadConfig({ dataDir: server.dataDir }, {}), { mode: 'cli', logger: createLogger('silent') });
    let members: Array<{ id: string; email: string; token: string }>;
    let folderId: string;
    try {
      members = await accounts(ctx, MEMBERS, 'member');
      folderId = seedTree(ctx, owner.id, null, 1, 'Shared')[0]!;
      seedTree(ctx, owner.id, folderId, FOLDER_ITEMS, 'Photo');
      // 1,000 items of another owner, each shared with the first member.
      const [other] = await accounts(ctx, 1, 'sharer');
      const now = Date.now();
      const shared = seedTree(ctx, other!.id, null, SHARES, 'Item');
      ctx.db.$client.transaction(() => {
        shared.forEach((itemId, i) =>
          ctx.repos.members.insert({
            itemId,
            ownerId: other!.id,
            accountId: members[0]!.id,
            role: 'viewer',
            addedBy: other!.id,
            addedAt: now - i,
          }),
        );
      })();
    } finally {
      ctx.close();
    }
    for (const m of members) {
      const res = await fetch(`${server.url}/api/files/${folderId}/members`, {
        method: 'POST',
        headers: auth(ownerToken),
        body: JSON.stringify({ email: m.email, role: 'viewer' }),
      });
      if (res.status !== 201) throw new Error(`adding a member: ${res.status} ${await res.text()}`);
    }

    const list = `${server.url}/api/files?parentId=${folderId}&limit=${FOLDER_ITEMS}`;
    for (const token of [ownerToken, members[0]!.token]) {
      const shown = (await (await fetch(list, { headers: auth(token) })).json()) as unknown[];
      if (shown.length !== FOLDER_ITEMS) throw new Error(`the shared folder lists ${shown.length} items, not ${FOLDER_ITEMS}`);
    }
    const asOwner: number[] = [];
    const asMember: number[] = [];
    for (let i = 0; i < 20; i++) {
      await timeGet(list, ownerToken);
      await timeGet(list, members[0]!.token);
    }
    for (let i = 0; i < ROUNDS; i++) {
      asOwner.push(await timeGet(list, ownerToken));
      asMember.push(await timeGet(list, members[0]!.token));
    }
    const ratio = median(asMember) / median(asOwner);
    console.log(
      `people.list_200_owner_ms median ${ms(median(asOwner))} p95 ${ms(p95(asOwner))} (${ROUNDS} requests, alternating with the member's)`,
    );
    console.log(`people.list_200_member_ms median ${ms(median(asMember))} p95 ${ms(p95(asMember))}`);
    console.log(`people.list_200_member_vs_owner ${((ratio - 1) * 100).toFixed(1)}% (goal: within 10%)`);

    const sharedWithMe: number[] = [];
    const sharedUrl = `${server.url}/api/files/shared-with-me`;
    for (let i = 0; i < 20; i++) await timeGet(sharedUrl, members[0]!.token);
    for (let i = 0; i < ROUNDS; i++) sharedWithMe.push(await timeGet(sharedUrl, members[0]!.token));
    const full: number[] = [];
    for (let i = 0; i < 50; i++) full.push(await timeGet(`${sharedUrl}?limit=200`, members[0]!.token));
    console.log(
      `people.shared_with_me_1000_ms median ${ms(median(sharedWithMe))} p95 ${ms(p95(sharedWithMe))} (first page of 50, 1,000 shares to the account, goal < 10 ms)`,
    );
    console.log(`people.shared_with_me_1000_limit200_ms median ${ms(median(full))} p95 ${ms(p95(full))}`);

    const streams = await Promise.all(
      members.map(async (m) => {
        const controller = new AbortController();
        const res = await fetch(`${server.url}/api/files/events`, { headers: auth(m.token), signal: controller.signal });
        if (!res.ok) throw new Error(`events: ${res.status}`);
        const reader = res.body!.getReader();
        await waitFor(reader, '"connected"', performance.now() + 30_000);
        return { reader, controller };
      }),
    );
    const fanout: number[] = [];
    for (let round = 0; round < 10; round++) {
      const name = `live-${round}-${newId()}`;
      const start = performance.now();
      const arrived = streams.map((s) => waitFor(s.reader, name, start + 30_000).then(() => performance.now() - start));
      const res = await fetch(`${server.url}/api/files/folder`, {
        method: 'POST',
        headers: auth(ownerToken),
        body: JSON.stringify({ name, parentId: folderId }),
      });
      if (!res.ok) throw new Error(`folder: ${res.status}`);
      fanout.push(Math.max(...(await Promise.all(arrived))));
    }
    for (const s of streams) s.controller.abort();
    console.log(
      `people.event_to_100_members_ms median ${ms(median(fanout))} max ${ms(Math.max(...fanout))} (a folder created inside a folder shared with 100 members, until the last of their 100 open streams has it; 10 rounds, goal < 200 ms)`,
    );
  } finally {
    await server.stop();
  }
}

if (import.meta.main) await runPeopleBench();
