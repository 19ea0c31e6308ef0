import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import type { ChangeRow } from '../../../src/db/repos/changes.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { CHANGE_KINDS, type ChangeKind } from '../../../src/services/changes/change-log.ts';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import type { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithDocserver } from '../../helpers/suite.ts';
import { TUS, tusUpload } from '../../helpers/tus.ts';

const DAY = 24 * 3600_000;
const clock = new ManualClock(Date.now());
let t: TestServer;
let double: DocserverDouble;
let admin: seed.SeededLogin;

serverWithDocserver((s) => ({ t, admin, double } = s), { clock, startWorker: false });

const changes = () => t.server.ctx.services.changes;
const drain = () => t.server.worker.drain();

/** Every row of the log after `seq`, whatever the account. */
function rowsAfter(seq: number): ChangeRow[] {
  return t.server.ctx.repos.changes.pageOfAccounts(
    t.server.ctx.db.$client
      .query<{ id: string }, []>('SELECT id FROM users')
      .all()
      .map((u) => u.id),
    seq,
    10_000,
  );
}

/** Runs `act` and answers the rows it appended, as [kind, itemId] plus the rows themselves. */
async function appended(act: () => Promise<unknown>): Promise<ChangeRow[]> {
  const before = changes().latestSeq();
  await act();
  return rowsAfter(before);
}

const kinds = (rows: ChangeRow[]) => rows.map((r) => r.kind);
const details = (row: ChangeRow) => JSON.parse(row.details ?? 'null');

function multipart(name: string, content: string | Uint8Array): FormData {
  const form = new FormData();
  form.append('file', new File([content], name));
  return form;
}

async function shareLink(o: seed.SeededLogin, id: string, options: Record<string, unknown> = {}): Promise<string> {
  const res = await o.client.post('/api/files/share', { ids: [id], shared: true, ...options });
  expect(res.status).toBe(200);
  return /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[id])![1]!;
}

describe('the change log through the API', () => {
  test('one row per change of every API kind, in seq order, naming the acting login and the item before and after', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const login = { accountId: o.id, actorKind: 'login', actorId: o.id };

    let dir: any;
    let rows = await appended(async () => (dir = await folder(o.client, 'Projects')));
    expect(rows).toMatchObject([
      { kind: 'item.created', itemId: dir.id, itemType: 'folder', nameAfter: 'Projects', parentAfter: null, ...login },
    ]);
    expect(rows[0]!.nameBefore).toBeNull();

    let file: any;
    rows = await appended(async () => (file = await upload(o.client, 'plan.txt', 'first', { parentId: dir.id })));
    expect(rows).toMatchObject([
      { kind: 'item.uploaded', itemId: file.id, itemType: 'file', nameAfter: 'plan.txt', parentAfter: dir.id, ...login },
    ]);
    expect(details(rows[0]!)).toEqual({ size: 5, mimeType: 'application/octet-stream' });

    rows = await appended(() =>
      o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: multipart('plan.txt', 'second!') }),
    );
    expect(rows).toMatchObject([{ kind: 'item.replaced', itemId: file.id, ...login }]);
    expect(details(rows[0]!)).toEqual({ size: 7, mimeType: 'application/octet-stream' });

    rows = await appended(() => o.client.post('/api/files/rename', { id: file.id, name: 'plan-v2.txt' }));
    expect(rows).toMatchObject([
      {
        kind: 'item.renamed',
        itemId: file.id,
        nameBefore: 'plan.txt',
        nameAfter: 'plan-v2.txt',
        parentBefore: dir.id,
        parentAfter: dir.id,
      },
    ]);

    rows = await appended(() => o.client.post('/api/files/move', { ids: [file.id], parentId: null }));
    expect(rows).toMatchObject([
      { kind: 'item.moved', itemId: file.id, parentBefore: dir.id, parentAfter: null, nameAfter: 'plan-v2.txt' },
    ]);

    rows = await appended(async () => {
      expect((await o.client.post('/api/files/copy', { ids: [dir.id] })).status).toBe(202);
      await drain();
    });
    expect(kinds(rows)).toEqual(['item.copied']);
    expect(rows[0]).toMatchObject({ itemType: 'folder', nameAfter: 'Projects (1)', ...login });
    expect(details(rows[0]!)).toEqual({ sourceId: dir.id });

    const [version] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    rows = await appended(() => o.client.post(`/api/files/${file.id}/versions/${version.id}/restore`));
    expect(rows).toMatchObject([{ kind: 'item.version_restored', itemId: file.id, ...login }]);
    expect(details(rows[0]!)).toMatchObject({ versionId: version.id });

    rows = await appended(() => o.client.post('/api/files/delete', { ids: [dir.id] }));
    expect(rows).toMatchObject([{ kind: 'item.trashed', itemId: dir.id, ...login }]);

    rows = await appended(() => o.client.post('/api/files/trash/restore', { ids: [dir.id] }));
    expect(rows).toMatchObject([{ kind: 'item.restored', itemId: dir.id, nameAfter: 'Projects', ...login }]);

    rows = await appended(async () => {
      await o.client.post('/api/files/delete', { ids: [dir.id] });
      await o.client.post('/api/files/trash/delete', { ids: [dir.id] });
      await drain();
    });
    expect(kinds(rows)).toEqual(['item.trashed', 'item.purged']);
    expect(rows[1]).toMatchObject({ itemId: dir.id, nameBefore: 'Projects', nameAfter: null, parentAfter: null, ...login });

    let token = '';
    rows = await appended(async () => (token = await shareLink(o, file.id)));
    expect(rows).toMatchObject([{ kind: 'link.created', itemId: file.id, ...login }]);
    expect(token).not.toBe('');
    rows = await appended(() => o.client.post('/api/files/share', { ids: [file.id], shared: false }));
    expect(rows).toMatchObject([{ kind: 'link.removed', itemId: file.id, ...login }]);

    rows = await appended(() => o.client.post(`/api/files/${file.id}/members`, { email: other.email, role: 'viewer' }));
    expect(rows).toMatchObject([{ kind: 'member.added', itemId: file.id, ...login }]);
    expect(details(rows[0]!)).toEqual({ memberId: other.id, role: 'viewer' });
    rows = await appended(() => o.client.send('DELETE', `/api/files/${file.id}/members/${other.id}`));
    expect(rows).toMatchObject([{ kind: 'member.removed', itemId: file.id }]);

    const seqs = rowsAfter(0).map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  test('a bulk upload with folders logs each folder made and each file, with the sub-user who sent them', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.upload']);
    const form = new FormData();
    form.append('file', new File(['a'], 'a.txt'));
    form.append('relativePaths', 'Trip/a.txt');
    form.append('file', new File(['b'], 'b.txt'));
    form.append('relativePaths', 'Trip/b.txt');
    const rows = await appended(async () =>
      expect((await sub.client.request('/api/files/upload/bulk', { method: 'POST', body: form })).status).toBe(200),
    );
    expect(kinds(rows)).toEqual(['item.created', 'item.uploaded', 'item.uploaded']);
    expect(rows.every((r) => r.accountId === o.id && r.actorKind === 'login' && r.actorId === sub.id)).toBe(true);
    expect(rows[1]!.parentAfter).toBe(rows[0]!.itemId);
  });

  test('a change that fails writes no row (a taken name, a missing target, a refused move)', async () => {
    const o = await seed.owner(t);
    const a = await upload(o.client, 'a.txt', 'a');
    await upload(o.client, 'b.txt', 'b');
    const dir = await folder(o.client, 'Box');
    const inner = await folder(o.client, 'Inner', dir.id);
    const rows = await appended(async () => {
      expect((await o.client.post('/api/files/rename', { id: a.id, name: 'B.txt' })).status).toBe(409);
      expect((await o.client.post('/api/files/move', { ids: [dir.id], parentId: inner.id })).status).toBe(400);
      expect((await o.client.post('/api/files/folder', { name: 'X', parentId: 'missing' })).status).toBe(404);
      expect((await o.client.post('/api/files/rename', { id: a.id, name: 'a.txt' })).status).toBe(200);
    });
    expect(rows).toEqual([]);
  });

  test('an append outside a transaction is refused, so no door can log a change that did not commit with it', () => {
    expect(() =>
      changes().record({ accountId: admin.id, loginId: admin.id }, 'item.created', { id: 'x', type: 'folder', name: 'x', parentId: null }),
    ).toThrow(/outside its transaction/);
  });

  test('the kinds are one table with every kind of the issue', () => {
    expect([...CHANGE_KINDS].sort()).toEqual(
      [
        'item.created',
        'item.uploaded',
        'item.replaced',
        'item.renamed',
        'item.moved',
        'item.trashed',
        'item.restored',
        'item.purged',
        'item.copied',
        'item.version_restored',
        'link.created',
        'link.removed',
        'member.added',
        'member.removed',
        'item.dropped',
        'item.touched',
      ].sort() as ChangeKind[],
    );
  });
});

describe('the change log through the other doors', () => {
  test('WebDAV: MKCOL, PUT (new and over), MOVE (rename and move), COPY and DELETE each log one row', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const login = { accountId: o.id, actorKind: 'login', actorId: o.id };
    let rows = await appended(async () => expect((await dav.request('MKCOL', 'Docs')).status).toBe(201));
    expect(rows).toMatchObject([{ kind: 'item.created', nameAfter: 'Docs', ...login }]);
    const docs = rows[0]!.itemId;
    rows = await appended(async () => expect((await dav.put('Docs/n.txt', 'one')).status).toBe(201));
    expect(rows).toMatchObject([{ kind: 'item.uploaded', nameAfter: 'n.txt', parentAfter: docs, ...login }]);
    const file = rows[0]!.itemId;
    rows = await appended(async () => expect((await dav.put('Docs/n.txt', 'two')).status).toBe(204));
    expect(rows).toMatchObject([{ kind: 'item.replaced', itemId: file, ...login }]);
    rows = await appended(async () =>
      expect((await dav.request('MOVE', 'Docs/n.txt', { headers: { destination: `${t.url}/dav/Docs/m.txt` } })).status).toBe(201),
    );
    expect(rows).toMatchObject([{ kind: 'item.renamed', itemId: file, nameBefore: 'n.txt', nameAfter: 'm.txt' }]);
    rows = await appended(async () =>
      expect((await dav.request('MOVE', 'Docs/m.txt', { headers: { destination: `${t.url}/dav/m2.txt` } })).status).toBe(201),
    );
    expect(rows).toMatchObject([
      { kind: 'item.moved', itemId: file, nameBefore: 'm.txt', parentBefore: docs, nameAfter: 'm2.txt', parentAfter: null },
    ]);
    rows = await appended(async () =>
      expect((await dav.request('COPY', 'm2.txt', { headers: { destination: `${t.url}/dav/Docs/c.txt` } })).status).toBe(201),
    );
    expect(rows).toMatchObject([{ kind: 'item.copied', nameAfter: 'c.txt', parentAfter: docs, ...login }]);
    rows = await appended(async () => expect((await dav.request('DELETE', 'm2.txt')).status).toBe(204));
    expect(rows).toMatchObject([{ kind: 'item.trashed', itemId: file, ...login }]);
  });

  test('Nextcloud chunked upload: the final MOVE logs one upload, and one replacement when it lands on a file', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'Nextcloud');
    const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${t.url}/remote.php/dav/${path}`, { method, headers: { authorization: dav.authorization, ...headers }, body });
    const filesUrl = (rel: string) => `${t.url}/remote.php/dav/files/${o.id}/${rel}`;
    const chunked = async (transfer: string, rel: string) => {
      expect((await send('MKCOL', `uploads/${o.id}/${transfer}`, { destination: filesUrl(rel) })).status).toBe(201);
      expect((await send('PUT', `uploads/${o.id}/${transfer}/1`, {}, 'hello ')).status).toBe(201);
      expect((await send('PUT', `uploads/${o.id}/${transfer}/2`, {}, 'world')).status).toBe(201);
      return send('MOVE', `uploads/${o.id}/${transfer}/.file`, { destination: filesUrl(rel) });
    };
    let rows = await appended(async () => expect((await chunked('t-1', 'big.bin')).status).toBe(201));
    expect(rows).toMatchObject([{ kind: 'item.uploaded', nameAfter: 'big.bin', accountId: o.id, actorKind: 'login', actorId: o.id }]);
    rows = await appended(async () => expect((await chunked('t-2', 'big.bin')).status).toBe(204));
    expect(rows).toMatchObject([{ kind: 'item.replaced', itemId: rows[0]?.itemId, nameAfter: 'big.bin' }]);
  });

  test('tus: a finished upload logs one row', async () => {
    const o = await seed.owner(t);
    const rows = await appended(() => tusUpload(t.url, o.client, Buffer.from('resumable bytes'), { metadata: { filename: 'r.bin' } }).done);
    expect(rows).toMatchObject([{ kind: 'item.uploaded', nameAfter: 'r.bin', accountId: o.id, actorKind: 'login', actorId: o.id }]);
  });

  test('a drop link: the page and its tus endpoint each log item.dropped by the link, not by a login', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'Inbox');
    const token = await shareLink(o, dir.id, { mode: 'view_upload' });
    const linkId = t.server.ctx.db.$client.query<{ id: string }, [string]>('SELECT id FROM share_links WHERE token = ?').get(token)!.id;
    const byLink = { accountId: o.id, actorKind: 'link', actorId: linkId, parentAfter: dir.id };
    let rows = await appended(async () => {
      const res = await fetch(`${t.url}/s/${token}/upload`, {
        method: 'POST',
        headers: { accept: 'application/json' },
        body: multipart('d.txt', 'dropped'),
      });
      expect(res.status).toBe(201);
    });
    expect(rows).toMatchObject([{ kind: 'item.dropped', nameAfter: 'd.txt', ...byLink }]);
    expect(details(rows[0]!)).toMatchObject({ linkId });
    rows = await appended(async () => {
      const meta = `filename ${Buffer.from('scan.pdf').toString('base64')}`;
      const made = await fetch(`${t.url}/s/${token}/tus`, {
        method: 'POST',
        headers: { ...TUS, 'Upload-Length': '5', 'Upload-Metadata': meta },
      });
      expect(made.status).toBe(201);
      const patched = await fetch(new URL(made.headers.get('location')!, t.url), {
        method: 'PATCH',
        headers: { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
        body: 'hello',
      });
      expect(patched.status).toBe(204);
    });
    expect(rows).toMatchObject([{ kind: 'item.dropped', nameAfter: 'scan.pdf', ...byLink }]);
  });

  test('a document server save logs item.replaced by the document server, naming the editing login', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'report.docx', await documents.docx('first'));
    const opened = await json(await o.client.get(`/api/docserver/config/${file.id}`));
    await double.open(opened.config, opened.token);
    const key = opened.config.document.key as string;
    double.edit(key, await documents.docx('second, edited'));
    const rows = await appended(async () => expect(await json(await double.callback(key, 2))).toEqual({ error: 0 }));
    expect(rows).toMatchObject([{ kind: 'item.replaced', itemId: file.id, accountId: o.id, actorKind: 'docserver', actorId: null }]);
    expect(details(rows[0]!)).toMatchObject({ loginId: o.id, key });
  });
});

describe('who sees which changes', () => {
  test('another account sees nothing; a member sees only under the shared folder, and nothing once removed', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const start = changes().latestSeq();
    const shared = await folder(o.client, 'Shared');
    const privateFile = await upload(o.client, 'private.txt', 'mine');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const inside = await upload(o.client, 'inside.txt', 'ours', { parentId: shared.id });
    const byMember = await upload(member.client, 'from-member.txt', 'hi', { parentId: shared.id });
    await o.client.post('/api/files/rename', { id: privateFile.id, name: 'still-private.txt' });
    // Moved out of the share: the member sees it leave.
    await o.client.post('/api/files/move', { ids: [inside.id], parentId: null });

    const ofOwner = changes().changesFor({ accountId: o.id }, { afterSeq: start, limit: 100 }).rows;
    expect(kinds(ofOwner)).toEqual([
      'item.created',
      'item.uploaded',
      'member.added',
      'item.uploaded',
      'item.uploaded',
      'item.renamed',
      'item.moved',
    ]);
    expect(ofOwner[4]).toMatchObject({ itemId: byMember.id, accountId: o.id, actorId: member.id });

    const ofMember = changes().changesFor({ accountId: member.id }, { afterSeq: start, limit: 100 }).rows;
    expect(ofMember.map((r) => [r.kind, r.itemId])).toEqual([
      ['item.created', shared.id],
      ['member.added', shared.id],
      ['item.uploaded', inside.id],
      ['item.uploaded', byMember.id],
      ['item.moved', inside.id],
    ]);
    // A principal Tree.actor scoped to the share reads as the member's own account.
    const scoped = { accountId: o.id, share: { rootId: shared.id, role: 'editor' as const, memberAccountId: member.id } };
    expect(changes().changesFor(scoped, { afterSeq: start, limit: 100 }).rows).toEqual(ofMember);
    expect(changes().changesFor({ accountId: stranger.id }, { afterSeq: start, limit: 100 }).rows).toEqual([]);
    expect(changes().changesFor({ accountId: stranger.id }, { afterSeq: start, limit: 100, itemId: inside.id }).rows).toEqual([]);

    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    await upload(o.client, 'after.txt', 'later', { parentId: shared.id });
    expect(changes().changesFor({ accountId: member.id }, { afterSeq: start, limit: 100 }).rows).toEqual([]);
  });

  test('a group member sees changes under an item shared with its group', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const made = await admin.client.post('/api/admin/groups', { name: `Team ${Math.random().toString(36).slice(2)}` });
    expect(made.status).toBe(201);
    const group = await json(made);
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const shared = await folder(o.client, 'Team stuff');
    const start = changes().latestSeq();
    expect((await o.client.post(`/api/files/${shared.id}/members`, { groupId: group.id, role: 'viewer' })).status).toBe(201);
    const inside = await upload(o.client, 'g.txt', 'g', { parentId: shared.id });
    await upload(o.client, 'outside.txt', 'o');
    expect(
      changes()
        .changesFor({ accountId: member.id }, { afterSeq: start, limit: 100 })
        .rows.map((r) => [r.kind, r.itemId]),
    ).toEqual([
      ['member.added', shared.id],
      ['item.uploaded', inside.id],
    ]);
  });

  test("a team folder: its root made and renamed by the admin, a group member's upload inside, seen by the group's members", async () => {
    const member = await seed.owner(t);
    const made = await admin.client.post('/api/admin/groups', { name: `Crew ${Math.random().toString(36).slice(2)}` });
    const group = await json(made);
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const start = changes().latestSeq();
    const res = await admin.client.post('/api/admin/team-folders', { name: 'Crew files', groups: [{ groupId: group.id, role: 'editor' }] });
    expect(res.status).toBe(201);
    const team = await json(res);
    expect((await admin.client.send('PATCH', `/api/admin/team-folders/${team.id}`, { name: 'Crew docs' })).status).toBe(200);
    const root = rowsAfter(start).find((r) => r.kind === 'item.created')!;
    const inside = await upload(member.client, 'crew.txt', 'c', { parentId: root.itemId });
    const seen = changes().changesFor({ accountId: member.id }, { afterSeq: start, limit: 100 }).rows;
    expect(seen.map((r) => [r.kind, r.itemId, r.actorId])).toEqual([
      ['item.created', root.itemId, admin.id],
      ['member.added', root.itemId, admin.id],
      ['item.renamed', root.itemId, admin.id],
      ['item.uploaded', inside.id, member.id],
    ]);
    expect(seen.every((r) => r.accountId === team.id)).toBe(true);
  });

  test("a sub-user without any permission sees its account's changes (it lists the whole tree); filters and keyset pages", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    const start = changes().latestSeq();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await upload(o.client, `f${i}.txt`, `${i}`));
    await o.client.post('/api/files/rename', { id: made[0].id, name: 'renamed.txt' });
    const reader = { accountId: o.id, loginId: sub.id };
    const first = changes().changesFor(reader, { afterSeq: start, limit: 4 });
    const second = changes().changesFor(reader, { afterSeq: first.nextAfterSeq, limit: 4 });
    expect([...first.rows, ...second.rows].map((r) => r.itemId)).toEqual([...made.map((m) => m.id), made[0].id]);
    expect(
      changes()
        .changesFor(reader, { afterSeq: start, limit: 10, kind: 'item.renamed' })
        .rows.map((r) => r.itemId),
    ).toEqual([made[0].id]);
    expect(
      changes()
        .changesFor(reader, { afterSeq: start, limit: 10, itemId: made[0].id })
        .rows.map((r) => r.kind),
    ).toEqual(['item.uploaded', 'item.renamed']);
    expect(changes().changesFor(reader, { afterSeq: start, limit: 10, actor: sub.id }).rows).toEqual([]);
    expect(changes().changesFor(reader, { afterSeq: start, limit: 10, actor: o.id }).rows).toHaveLength(6);
  });
});

describe('changes the server makes itself', () => {
  test('an expired link removed by the daily clean-up logs link.removed by the system', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'short-lived.txt', 's');
    await shareLink(o, file.id, { expiry: '7d' });
    clock.advance(38 * DAY);
    const rows = await appended(async () => {
      t.server.ctx.queue.enqueue(Jobs.sharesCleanup, null);
      await drain();
    });
    expect(rows.filter((r) => r.itemId === file.id)).toMatchObject([
      { kind: 'link.removed', accountId: o.id, actorKind: 'system', actorId: null },
    ]);
  });
});

describe('retention', () => {
  test('the daily changes.thin job removes rows older than CHANGES_RETENTION_DAYS (default 30); seqs are never reused', async () => {
    expect(t.server.ctx.config.changesRetentionDays).toBe(30);
    expect(t.server.ctx.schedules.get('__changes.thin__')).toMatchObject({ kind: 'changes.thin', intervalMs: DAY });
    const o = await seed.owner(t);
    const old = await folder(o.client, 'Old');
    const oldSeq = changes().latestSeq();
    clock.advance(29 * DAY);
    // Sessions do not last the month: a new sign-in for each later change.
    const recent = await folder(await seed.login(t, o.email), 'Recent');
    clock.advance(2 * DAY);
    t.server.ctx.queue.enqueue(Jobs.changesThin, null);
    await drain();
    const left = changes().changesFor({ accountId: o.id }, { afterSeq: 0, limit: 100 }).rows;
    expect(left.map((r) => r.itemId)).toEqual([recent.id]);
    expect(changes().oldestSeq()).toBeGreaterThan(oldSeq);
    expect(old.id).not.toBe(recent.id);
    const latest = changes().latestSeq();
    clock.advance(31 * DAY);
    t.server.ctx.queue.enqueue(Jobs.changesThin, null);
    await drain();
    expect(changes().oldestSeq()).toBeNull();
    const next = await folder(await seed.login(t, o.email), 'Next');
    expect(changes().changesFor({ accountId: o.id }, { afterSeq: 0, limit: 10 }).rows).toMatchObject([
      { itemId: next.id, seq: latest + 1 },
    ]);
  });
});
