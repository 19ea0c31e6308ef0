import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { davLogin, propfindRows } from '../../helpers/dav.ts';
import { folder, upload } from '../../helpers/files.ts';
import { eventually } from '../../helpers/eventually.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let admin: seed.SeededLogin;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  t = await startTestServer();
  admin = await seed.admin(t);
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await t.stop();
});

/**
 * How long a test waits for a message: a push comes at the next poll of the log (50 ms; docs/sync.md's bench measures
 * its delay), so this only fails one that never comes, not a loaded machine's slow turn (a second is short there).
 */
const PUSHED_WITHIN = 10_000;

/** A socket and every text message it received, in order. */
interface PushClient {
  ws: WebSocket;
  messages: string[];
  closed: Promise<void>;
  /** Resolves with the next message matching `match` (one already received counts), rejects after `ms`. */
  next(match: string | RegExp, ms?: number): Promise<string>;
}

async function connect(): Promise<PushClient> {
  const url = `${t.url.replace(/^http/, 'ws')}/push/ws`;
  const ws = new WebSocket(url);
  sockets.push(ws);
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  ws.onmessage = (e) => {
    messages.push(String(e.data));
    for (const w of [...waiters]) w();
  };
  const closed = new Promise<void>((resolve) => ws.addEventListener('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('socket error'));
  });
  let read = 0;
  const next = (match: string | RegExp, ms = PUSHED_WITHIN) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        while (read < messages.length) {
          const m = messages[read++]!;
          if (typeof match === 'string' ? m === match : match.test(m)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${match} within ${ms} ms; got ${JSON.stringify(messages)}`));
      }, ms);
      waiters.add(check);
      check();
    });
  return { ws, messages, closed, next };
}

async function signedIn(user: string, password: string): Promise<PushClient> {
  const c = await connect();
  c.ws.send(user);
  c.ws.send(password);
  await c.next('authenticated');
  return c;
}

const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('notify_push for the Nextcloud desktop client', () => {
  test('the capability names the socket and pre_auth on the address the client used', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/cloud/capabilities?format=json`, { headers: { 'OCS-APIRequest': 'true' } });
    const caps = (await json(res)).ocs.data.capabilities;
    expect(caps.notify_push).toEqual({
      type: ['files'],
      endpoints: { websocket: `${t.url.replace('http', 'ws')}/push/ws`, pre_auth: `${t.url}/index.php/apps/notify_push/pre_auth` },
    });
    // A plain GET is told what the path is for.
    expect((await fetch(`${t.url}/push/ws`)).status).toBe(400);
  });

  test('signed in with an app password: notify_file at a change in the tree or in a share, nothing of others', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const ownerPush = await signedIn(o.email, (await davLogin(t, o)).password);
    const memberPush = await signedIn(member.email, (await davLogin(t, member)).password);
    const strangerPush = await signedIn(stranger.email, (await davLogin(t, stranger)).password);
    const sub = await seed.subUser(t, { id: o.id }, []);
    const subPush = await signedIn(sub.email, (await davLogin(t, sub)).password);

    await upload(o.client, 'private.txt', 'p');
    await ownerPush.next('notify_file');
    await subPush.next('notify_file');

    await upload(o.client, 'inside.txt', 'i', { parentId: shared.id });
    await memberPush.next('notify_file');
    await ownerPush.next('notify_file');

    // A member's change in the share reaches the owner.
    await upload(member.client, 'by-member.txt', 'm', { parentId: shared.id });
    await ownerPush.next('notify_file');
    await memberPush.next('notify_file');

    // After removal the member hears nothing of the owner's tree.
    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    // The removal itself is told (its rights changed, at once): awaited, so it is not counted below as news of the tree.
    await memberPush.next('notify_file');
    const before = memberPush.messages.length;
    await upload(o.client, 'after.txt', 'a', { parentId: shared.id });
    await ownerPush.next('notify_file');
    await quiet(300);
    expect(memberPush.messages.length).toBe(before);
    expect(strangerPush.messages).toEqual(['authenticated']);
  });

  test("after `listen notify_file_id`: the changed files' fileids (as PROPFIND names them) and notify_activity; a plain socket still gets notify_file", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const withIds = await signedIn(o.email, dav.password);
    const plain = await signedIn(o.email, dav.password);
    withIds.ws.send('listen notify_file_id');
    await quiet(100);
    expect((await dav.put('report.txt', 'r')).status).toBe(201);
    const message = await withIds.next(/^notify_file/);
    await withIds.next('notify_activity');
    await plain.next('notify_file');
    await plain.next('notify_activity');
    const props = await dav.propfind(
      'report.txt',
      '0',
      '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop></d:propfind>',
    );
    const fileid = Number(propfindRows(await props.text())[0]!.props.fileid);
    expect(message).toBe(`notify_file_id [${fileid}]`);
    expect(plain.messages).not.toContain(message);
  });

  test("a team folder's group member is told of a change inside it", async () => {
    const member = await seed.owner(t);
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Crew ${Math.random().toString(36).slice(2)}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    expect(
      (await admin.client.post('/api/admin/team-folders', { name: 'Crew', groups: [{ groupId: group.id, role: 'editor' }] })).status,
    ).toBe(201);
    const memberDav = await davLogin(t, member);
    const push = await signedIn(member.email, memberDav.password);
    const adminDav = await davLogin(t, admin);
    const other = await signedIn(admin.email, adminDav.password);
    expect((await memberDav.put('Crew/plan.txt', 'p')).status).toBe(201);
    await push.next('notify_file');
    await quiet(200);
    expect(other.messages).toEqual(['authenticated']);
  });

  test('a change of rights (a role, a group dropped or made viewer, a sub-user’s permissions) moves no file but is pushed: the client’s ETags moved', async () => {
    /** Runs `change` once the socket is quiet, then waits for a notify_file it caused. */
    const pushedBy = async (c: PushClient, change: () => Promise<Response>) => {
      await quiet(200);
      const from = c.messages.length;
      expect((await change()).status).toBeLessThan(300);
      await eventually(() => expect(c.messages.slice(from)).toContain('notify_file'), { timeoutMs: PUSHED_WITHIN });
    };
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Rights');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const memberPush = await signedIn(member.email, (await davLogin(t, member)).password);
    await pushedBy(memberPush, () => o.client.send('PATCH', `/api/files/${shared.id}/members/${member.id}`, { role: 'viewer' }));
    await pushedBy(memberPush, () => o.client.send('PATCH', `/api/files/${shared.id}/members/${member.id}`, { role: 'editor' }));

    const sub = await seed.subUser(t, { id: o.id }, ['files.upload', 'files.download']);
    const subPush = await signedIn(sub.email, (await davLogin(t, sub)).password);
    await pushedBy(subPush, () => o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.download'] }));

    const crew = await seed.owner(t);
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Rights ${Math.random().toString(36).slice(2)}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: crew.email })).status).toBe(201);
    const team = await json(
      await admin.client.post('/api/admin/team-folders', { name: 'Rights crew', groups: [{ groupId: group.id, role: 'editor' }] }),
    );
    const crewPush = await signedIn(crew.email, (await davLogin(t, crew)).password);
    await pushedBy(crewPush, () =>
      admin.client.put(`/api/admin/team-folders/${team.id}/groups`, { groups: [{ groupId: group.id, role: 'viewer' }] }),
    );
    await pushedBy(crewPush, () => admin.client.delete(`/api/admin/groups/${group.id}/members/${crew.id}`));
  });

  test('pre_auth: a one-use token from an authenticated POST signs a socket in with an empty login', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const res = await fetch(`${t.url}/index.php/apps/notify_push/pre_auth`, {
      method: 'POST',
      headers: { authorization: dav.authorization },
    });
    expect(res.status).toBe(200);
    const token = await res.text();
    expect(token.length).toBeGreaterThan(20);
    const push = await signedIn('', token);
    await upload(o.client, 'x.txt', 'x');
    await push.next('notify_file');
    // Spent: a second socket with it is refused.
    const again = await connect();
    again.ws.send('');
    again.ws.send(token);
    await again.next('err: Invalid credentials');
    await again.closed;
    expect((await fetch(`${t.url}/index.php/apps/notify_push/pre_auth`, { method: 'POST' })).status).toBe(401);
  });

  test('a pre_auth token of a sub-user deleted (or an app password revoked) since it was issued signs no socket in', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, { id: o.id }, []);
    const preAuth = async (dav: { authorization: string }) => {
      const res = await fetch(`${t.url}/index.php/apps/notify_push/pre_auth`, {
        method: 'POST',
        headers: { authorization: dav.authorization },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const subToken = await preAuth(await davLogin(t, sub));
    const revokedDav = await davLogin(t, o);
    const revokedToken = await preAuth(revokedDav);
    expect((await o.client.delete(`/api/user/sub-users/${sub.id}`)).status).toBe(200);
    expect((await o.client.delete(`/api/user/app-passwords/${revokedDav.id}`)).status).toBe(200);
    for (const token of [subToken, revokedToken]) {
      const c = await connect();
      c.ws.send('');
      c.ws.send(token);
      await c.next('err: Invalid credentials');
      await c.closed;
      expect(c.messages).toEqual(['err: Invalid credentials']);
    }
  });

  test('a socket whose app password was revoked, whose sub-user was deleted or whose account password changed hears nothing more: closed at the next change', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, { id: o.id }, []);
    const kept = await signedIn(o.email, (await davLogin(t, o)).password);
    const revokedDav = await davLogin(t, o);
    const revoked = await signedIn(o.email, revokedDav.password);
    const preAuth = await fetch(`${t.url}/index.php/apps/notify_push/pre_auth`, {
      method: 'POST',
      headers: { authorization: revokedDav.authorization },
    });
    const preAuthed = await signedIn('', await preAuth.text());
    const subPush = await signedIn(sub.email, (await davLogin(t, sub)).password);
    expect((await o.client.delete(`/api/user/app-passwords/${revokedDav.id}`)).status).toBe(200);
    expect((await o.client.delete(`/api/user/sub-users/${sub.id}`)).status).toBe(200);
    await upload(o.client, 'after.txt', 'a');
    await kept.next('notify_file');
    await Promise.all([revoked.closed, preAuthed.closed, subPush.closed]);
    for (const c of [revoked, preAuthed, subPush]) expect(c.messages).toEqual(['authenticated']);

    // Signed in with the account password (where the admin allows it): a password change ends it.
    expect((await admin.client.put('/api/user/webdav-account-password-config', { enabled: true })).status).toBe(200);
    try {
      const byPassword = await signedIn(o.email, o.password);
      const changed = await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'another long password' });
      expect(changed.status).toBe(200);
      const again = await seed.login(t, o.email, 'another long password');
      await upload(again, 'later.txt', 'l');
      await kept.next('notify_file');
      await byPassword.closed;
      expect(byPassword.messages).toEqual(['authenticated']);
    } finally {
      await admin.client.put('/api/user/webdav-account-password-config', { enabled: false });
    }
  });

  test('wrong credentials are refused and closed, and repeated failures hit the sign-in limiter', async () => {
    const o = await seed.owner(t);
    const bad = await connect();
    bad.ws.send(o.email);
    bad.ws.send('not the password');
    await bad.next('err: Invalid credentials');
    await bad.closed;
    // A binary message is no credential.
    const binary = await connect();
    binary.ws.send(new Uint8Array([1, 2, 3]));
    await binary.next(/^err: /);
    // A message past the cap closes the socket.
    const huge = await connect();
    huge.ws.send('x'.repeat(100_000));
    await huge.closed;
    let limited = false;
    for (let i = 0; i < 40 && !limited; i++) {
      const c = await connect();
      c.ws.send(o.email);
      c.ws.send(`wrong ${i}`);
      limited = (await c.next(/^err: /)).includes('too many');
    }
    expect(limited).toBe(true);
  });

  test('at most 20 sockets per address may be signing in at once', async () => {
    const waiting = [];
    for (let i = 0; i < 20; i++) waiting.push(await connect());
    const res = await fetch(`${t.url}/push/ws`, {
      headers: {
        upgrade: 'websocket',
        connection: 'Upgrade',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    expect(res.status).toBe(429);
    for (const c of waiting) c.ws.close();
    await Promise.all(waiting.map((c) => c.closed));
    await quiet(100);
    await connect();
  });

  test('at most 20 sockets per login; one over the cap is told why and closed', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const open = [];
    for (let i = 0; i < 20; i++) open.push(await signedIn(o.email, dav.password));
    const over = await connect();
    over.ws.send(o.email);
    over.ws.send(dav.password);
    expect(await over.next(/^err: /)).toContain('too many push connections for this login');
    await over.closed;
    // Closing one makes room.
    open[0]!.ws.close();
    await open[0]!.closed;
    await quiet(100);
    await signedIn(o.email, dav.password);
  });

  test('the server closes push sockets when it stops', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const push = await signedIn(o.email, dav.password);
    const signingIn = await connect();
    const started = performance.now();
    // Timed to the sockets' close, not to the end of the restart (a new server's start, slow on a loaded machine).
    const closedAfter = Promise.all([push.closed, signingIn.closed]).then(() => performance.now() - started);
    await t.restart();
    const ms = await closedAfter;
    expect(push.ws.readyState).toBe(WebSocket.CLOSED);
    // Closed first: the listener did not wait out its 10 s grace for them.
    expect(ms).toBeLessThan(8000);
  });
});

// Last: the log it rolls back stays so for the tests after it.
describe('notify_push and a restored change log', () => {
  test('a change log put back beneath the running server (its numbering back below what the push read): the next change is still pushed', async () => {
    const o = await seed.owner(t);
    const push = await signedIn(o.email, (await davLogin(t, o)).password);
    const restorePoint = t.server.ctx.services.changes.latestSeq();
    for (const name of ['Lost 1', 'Lost 2', 'Lost 3']) await folder(o.client, name);
    await push.next('notify_file');
    await quiet(200);
    // As a restore of the database leaves the log: the rows after the restore point gone, its numbering back there.
    const db = new Database(t.server.ctx.paths.database);
    db.transaction(() => {
      db.run('DELETE FROM changes WHERE seq > ?', [restorePoint]);
      db.run("UPDATE sqlite_sequence SET seq = ? WHERE name = 'changes'", [restorePoint]);
    })();
    db.close();
    const read = push.messages.length;
    await upload(o.client, 'after-the-restore.txt', 'a');
    await eventually(() => expect(push.messages.slice(read)).toContain('notify_file'), { timeoutMs: PUSHED_WITHIN });
  });
});
