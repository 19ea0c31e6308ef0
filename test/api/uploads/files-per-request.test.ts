import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { blobFiles, folder, rowCount } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let owner: seed.SeededLogin;

beforeAll(async () => {
  // Local storage: the tests count the objects left in the data directory.
  t = await startTestServer({ env: { COFFER_STORAGE: 'local' } });
  await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

// The limit docs/uploads.md states.
const MAX_FILES_PER_REQUEST = 1000;

function manyFiles(field: string, count: number): FormData {
  const form = new FormData();
  for (let i = 0; i < count; i++) form.append(field, new File([`${i}`], `tiny-${i}.txt`));
  return form;
}

async function dropLink(name: string): Promise<{ token: string; folderId: string }> {
  const inbox = await folder(owner.client, name);
  const res = await owner.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload' });
  const token = /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[inbox.id])![1]!;
  return { token, folderId: inbox.id };
}

const drop = (token: string, form: FormData) =>
  fetch(`${t.url}/s/${token}/upload`, { method: 'POST', headers: { accept: 'application/json' }, body: form });

const inFolder = (folderId: string) => rowCount(t, 'parent_id = ? AND deleted_at IS NULL', folderId);

/**
 * The numbers of rows in the folder seen from outside the request while it runs (checked every
 * millisecond): a count between none and all is a turn of the event loop taken between two commits,
 * and `onPartial` runs then.
 */
async function watchRows<T>(folderId: string, run: () => Promise<T>, onPartial?: () => void): Promise<{ result: T; seen: Set<number> }> {
  const seen = new Set<number>();
  let watching = true;
  const watch = async () => {
    while (watching) {
      const n = inFolder(folderId);
      seen.add(n);
      if (n > 0 && n < MAX_FILES_PER_REQUEST) onPartial?.();
      await Bun.sleep(1);
    }
  };
  const watcher = watch();
  try {
    return { result: await run(), seen };
  } finally {
    watching = false;
    await watcher;
  }
}

describe('files per bulk or drop request', () => {
  test(`a drop of more than ${MAX_FILES_PER_REQUEST} files is refused with 413 and leaves nothing behind`, async () => {
    const { token, folderId } = await dropLink('Crowded inbox');
    const objects = blobFiles(t.dataDir).objects.length;
    const res = await drop(token, manyFiles('file', MAX_FILES_PER_REQUEST + 1));
    expect(res.status).toBe(413);
    expect((await json(res)).message).toBe(
      `Too many files in one request: at most ${MAX_FILES_PER_REQUEST}. Send the rest in another request.`,
    );
    expect(inFolder(folderId)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects);
  });

  test(`a bulk upload of more than ${MAX_FILES_PER_REQUEST} files is refused with 413 and leaves nothing behind`, async () => {
    const target = await folder(owner.client, 'Crowded bulk');
    const objects = blobFiles(t.dataDir).objects.length;
    const form = manyFiles('files', MAX_FILES_PER_REQUEST + 1);
    form.append('parentId', target.id);
    const res = await owner.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
    expect(res.status).toBe(413);
    expect((await json(res)).message).toContain(`at most ${MAX_FILES_PER_REQUEST}`);
    expect(inFolder(target.id)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects);
  });

  test('a full drop commits its rows in chunks, with other work running between them', async () => {
    const { token, folderId } = await dropLink('Full inbox');
    const { result, seen } = await watchRows(folderId, () => drop(token, manyFiles('file', MAX_FILES_PER_REQUEST)));
    expect(result.status).toBe(201);
    expect(inFolder(folderId)).toBe(MAX_FILES_PER_REQUEST);
    expect([...seen].some((n) => n > 0 && n < MAX_FILES_PER_REQUEST)).toBe(true);
    // One audit entry names every file, across the chunks.
    t.server.ctx.services.audit.flush();
    const audited = t.server.ctx.services.audit
      .list({ action: 'share.drop', limit: 1000 })
      .filter((e) => (e.details as { folderId?: string }).folderId === folderId);
    expect(audited.map((e) => (e.details as { files: unknown[] }).files.length)).toEqual([MAX_FILES_PER_REQUEST]);
  });

  test('a full bulk upload commits its rows in chunks, with other work running between them', async () => {
    const target = await folder(owner.client, 'Full bulk');
    const form = manyFiles('files', MAX_FILES_PER_REQUEST);
    form.append('parentId', target.id);
    const { result, seen } = await watchRows(target.id, () =>
      owner.client.request('/api/files/upload/bulk', { method: 'POST', body: form }),
    );
    expect(result.status).toBe(200);
    const body = await json(result);
    expect({ total: body.total, successful: body.successful }).toEqual({ total: MAX_FILES_PER_REQUEST, successful: MAX_FILES_PER_REQUEST });
    expect(body.files.map((f: { name: string }) => f.name).slice(0, 2)).toEqual(['tiny-0.txt', 'tiny-1.txt']);
    expect([...seen].some((n) => n > 0 && n < MAX_FILES_PER_REQUEST)).toBe(true);
  });

  test('a bulk target trashed between two chunks: the files committed before it stay, the rest fail with the reason', async () => {
    const target = await folder(owner.client, 'Vanishing bulk');
    const form = manyFiles('files', MAX_FILES_PER_REQUEST);
    form.append('parentId', target.id);
    let kept = -1;
    const { result } = await watchRows(
      target.id,
      () => owner.client.request('/api/files/upload/bulk', { method: 'POST', body: form }),
      () => {
        if (kept >= 0) return;
        kept = inFolder(target.id);
        // Trashed between two commits, as the owner's own request would do it.
        t.server.ctx.db.$client.query('UPDATE items SET deleted_at = ?, deleted_root_id = id WHERE id = ?').run(Date.now(), target.id);
      },
    );
    expect(result.status).toBe(200);
    const body = await json(result);
    expect(kept).toBeGreaterThan(0);
    expect({ successful: body.successful, failedCount: body.failedCount }).toEqual({
      successful: kept,
      failedCount: MAX_FILES_PER_REQUEST - kept,
    });
    expect(new Set(body.failed.map((f: { error: string }) => f.error))).toEqual(new Set(['Folder not found']));
    expect(rowCount(t, 'parent_id = ?', target.id)).toBe(kept);
  });
});
