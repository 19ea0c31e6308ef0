import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { ChangeRow } from '../../../src/db/repos/changes.ts';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { SseReader } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithReceiver } from '../../helpers/suite.ts';
import { verifyStandardWebhook, type startReceiver } from '../../helpers/webhook-receiver.ts';
import { addLibrary, changingTree, childNamed, cleanHostDirs, hostDir, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let receiver: ReturnType<typeof startReceiver>;

// Only the watch finds changes: no periodic rescan.
serverWithReceiver((s) => ({ t, admin, receiver } = s), { env: { LIBRARY_RESCAN_MINUTES: '0' } }, cleanHostDirs);

const rowsOf = (accountId: string, afterSeq = 0): ChangeRow[] => t.server.ctx.repos.changes.pageOfAccounts([accountId], afterSeq, 10_000);
const system = { actorKind: 'system', actorId: null };
const detailsOf = (row: ChangeRow) => JSON.parse(row.details ?? 'null');

describe('library changes in the change log', () => {
  test('adding, scanning, and changes by another program are rows of the owner, by the system, naming the library; a webhook hears them', async () => {
    const owner = await seed.owner(t);
    const res = await owner.client.post('/api/webhooks', {
      url: `${receiver.url}/library`,
      events: ['item.uploaded', 'item.replaced', 'item.renamed', 'item.moved', 'item.purged'],
    });
    expect(res.status).toBe(201);
    const { secret } = await json(res);
    const root = changingTree();
    const library = await addLibrary(admin, root, owner);

    const first = rowsOf(owner.id);
    expect(first.every((r) => r.actorKind === 'system' && r.actorId === null && detailsOf(r).library === library.id)).toBe(true);
    expect(first[0]).toMatchObject({ kind: 'item.created', itemId: library.folderId, nameAfter: library.name, parentAfter: null });
    const byName = new Map(first.map((r) => [r.nameAfter, r]));
    expect(byName.get('a.txt')).toMatchObject({ kind: 'item.uploaded', itemType: 'file', parentAfter: library.folderId });
    expect(detailsOf(byName.get('a.txt')!).size).toBe(3);
    expect(byName.get('box')).toMatchObject({ kind: 'item.created', itemType: 'folder' });
    expect(byName.get('inner.txt')).toMatchObject({ kind: 'item.uploaded', parentAfter: byName.get('box')!.itemId });
    expect(first).toHaveLength(7);

    const a = await childNamed(owner, library.folderId, 'a.txt');
    const renamed = await childNamed(owner, library.folderId, 'old-name.txt');
    const doomed = await childNamed(owner, library.folderId, 'doomed.txt');
    const box = await childNamed(owner, library.folderId, 'box');
    const shelf = await childNamed(owner, library.folderId, 'shelf');
    const mark = rowsOf(owner.id).at(-1)!.seq;

    write(root, 'fresh.txt', 'fresh');
    fs.writeFileSync(path.join(root, 'a.txt'), 'one and two');
    fs.renameSync(path.join(root, 'old-name.txt'), path.join(root, 'new-name.txt'));
    fs.rmSync(path.join(root, 'doomed.txt'));
    fs.renameSync(path.join(root, 'box'), path.join(root, 'shelf', 'box'));

    const rows = await eventually(() => {
      const r = rowsOf(owner.id, mark);
      return r.length >= 5 && r;
    });
    expect(rows.every((r) => r.actorKind === system.actorKind && r.actorId === system.actorId)).toBe(true);
    const fresh = rows.find((r) => r.kind === 'item.uploaded');
    expect(fresh).toMatchObject({ nameAfter: 'fresh.txt', parentAfter: library.folderId });
    expect(rows.find((r) => r.kind === 'item.replaced')).toMatchObject({ itemId: a.id, nameAfter: 'a.txt' });
    expect(detailsOf(rows.find((r) => r.kind === 'item.replaced')!).size).toBe(11);
    expect(rows.find((r) => r.kind === 'item.renamed')).toMatchObject({
      itemId: renamed.id,
      nameBefore: 'old-name.txt',
      nameAfter: 'new-name.txt',
      parentBefore: library.folderId,
      parentAfter: library.folderId,
    });
    expect(rows.find((r) => r.kind === 'item.purged')).toMatchObject({
      itemId: doomed.id,
      nameBefore: 'doomed.txt',
      nameAfter: null,
      parentAfter: null,
    });
    expect(rows.find((r) => r.kind === 'item.moved')).toMatchObject({
      itemId: box.id,
      nameAfter: 'box',
      parentBefore: library.folderId,
      parentAfter: shelf.id,
    });
    expect(rows).toHaveLength(5);

    // The webhook is fed from the log: the file another program made arrives, signed, as the system's change.
    const delivered = await eventually(
      () => {
        const bodies = receiver.received
          .filter((r) => verifyStandardWebhook(secret, r))
          .map((r) => JSON.parse(r.body))
          .filter((b) => b.data.seq > mark);
        const created = bodies.find((b) => b.type === 'item.uploaded');
        return bodies.length >= 5 && created ? { bodies, created } : false;
      },
      { timeoutMs: 15_000 },
    );
    expect(delivered.created.data).toMatchObject({
      accountId: owner.id,
      actor: { kind: 'system', id: null },
      item: { id: fresh!.itemId, type: 'file' },
      after: { name: 'fresh.txt', parentId: library.folderId },
    });
    expect(delivered.bodies.map((b) => b.type).sort()).toEqual([
      'item.moved',
      'item.purged',
      'item.renamed',
      'item.replaced',
      'item.uploaded',
    ]);
  });

  test('a scan of more than 200 changes sends one summary event, so clients list again; removing the library is a purge', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    for (let i = 0; i < 250; i++) write(root, `many/${i}.txt`, `${i}`);
    const stream = await owner.client.get('/api/files/events');
    expect(stream.status).toBe(200);
    const reader = new SseReader(stream);
    expect(await reader.nextData()).toEqual({ type: 'connected' });
    const library = await addLibrary(admin, root, owner);
    expect(await reader.nextData()).toMatchObject({ type: 'folder.created', data: { id: library.folderId } });
    const summary = await reader.nextData();
    expect(summary).toMatchObject({
      type: 'file.updated',
      data: { id: library.folderId, userId: owner.id, action: 'library-scan', count: 251 },
    });
    expect(await reader.quietFor(300)).toBe(true);
    await reader.close();
    expect(rowsOf(owner.id).filter((r) => r.kind === 'item.uploaded')).toHaveLength(250);

    const mark = rowsOf(owner.id).at(-1)!.seq;
    expect((await admin.client.delete(`/api/admin/libraries/${library.id}`)).status).toBe(200);
    expect(rowsOf(owner.id, mark)).toMatchObject([
      { kind: 'item.purged', itemId: library.folderId, nameBefore: library.name, nameAfter: null, ...system },
    ]);
  });
});
