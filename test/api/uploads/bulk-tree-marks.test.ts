import { beforeAll, describe, expect, spyOn, test } from 'bun:test';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

let t: TestServer;
let owner: seed.SeededLogin;

serverWithAdmin((s) => ({ t } = s), { startWorker: false });
beforeAll(async () => {
  owner = await seed.owner(t);
});

const sqlite = () => t.server.ctx.db.$client;
const folder = (parentId: string | null, name: string) =>
  sqlite()
    .query<{ id: string; treeSize: number; treeVersion: number }, [string, string, string]>(
      `SELECT id, tree_size AS treeSize, tree_version AS treeVersion FROM items
        WHERE account_id = ? AND parent_key = ? AND name = ? AND deleted_at IS NULL`,
    )
    .get(owner.id, parentId ?? '', name)!;
const filesBytes = (parentId: string) =>
  sqlite()
    .query<{ n: number }, [string]>('SELECT COALESCE(SUM(size), 0) AS n FROM items WHERE parent_id = ? AND deleted_at IS NULL')
    .get(parentId)!.n;
const root = () =>
  sqlite()
    .query<{ size: number; version: number }, [string]>('SELECT size, version FROM tree_versions WHERE account_id = ?')
    .get(owner.id) ?? {
    size: 0,
    version: 0,
  };

describe('a bulk upload marks its folders once per committed chunk', () => {
  test('150 files into two new folders: each folder, its ancestors and the root marked once per chunk, by the bytes of all its files', async () => {
    const form = new FormData();
    let bytes = 0;
    for (let i = 0; i < 150; i++) {
      const content = 'x'.repeat(i + 1);
      bytes += content.length;
      form.append('relativePaths', `docs/${i < 75 ? 'a' : 'b'}/file-${i}.txt`);
      form.append('files', new File([content], `file-${i}.txt`));
    }
    const rootBefore = root();
    const query = spyOn(sqlite(), 'query');
    let marks: string[];
    try {
      const res = await owner.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { successful: number }).successful).toBe(150);
      marks = query.mock.calls
        .map(([sql]) => String(sql))
        .filter((sql) => /tree_version = tree_version \+ 1|version = version \+ 1/.test(sql));
    } finally {
      query.mockRestore();
    }
    // Rows go in 100 per transaction: the first marks docs (a and b made in it), a and b; the second b only. Once per file before.
    expect(marks.filter((sql) => sql.includes('UPDATE items')).length).toBe(4);
    expect(marks.filter((sql) => sql.includes('tree_versions')).length).toBe(2);

    const docs = folder(null, 'docs');
    const a = folder(docs.id, 'a');
    const b = folder(docs.id, 'b');
    expect(a.treeSize).toBe(filesBytes(a.id));
    expect(b.treeSize).toBe(filesBytes(b.id));
    expect(a.treeSize + b.treeSize).toBe(bytes);
    expect(docs.treeSize).toBe(bytes);
    expect(root().size - rootBefore.size).toBe(bytes);
    // Each chunk moved the ETags of the folders it wrote into.
    expect(b.treeVersion).toBe(2);
    expect(root().version - rootBefore.version).toBe(2);
  });

  test('a file refused in a chunk is not counted in its folder', async () => {
    const form = new FormData();
    form.append('relativePaths', 'refused/kept.txt');
    form.append('files', new File(['kept'], 'kept.txt'));
    form.append('relativePaths', 'refused/bad.txt');
    form.append('files', new File(['bad'], '..'));
    const res = await owner.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { failedCount: number }).failedCount).toBe(1);
    const refused = folder(null, 'refused');
    expect(refused.treeSize).toBe(4);
    expect(filesBytes(refused.id)).toBe(4);
  });
});
