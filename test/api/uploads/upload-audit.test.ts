import { describe, expect, test } from 'bun:test';
import { upload } from '../../helpers/files.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import type { TestServer } from '../../helpers/server.ts';
import type { AuditRecord } from '../../../src/services/admin/audit.ts';

let t: TestServer;
serverWithAdmin((s) => ({ t } = s), { startWorker: false });

/** The `file.upload` records queued while `fn` runs, each with whether a transaction was open when it was queued. */
async function queuedUploads(fn: () => Promise<unknown>): Promise<Array<{ targetId: string | null; inTransaction: boolean }>> {
  const audit = t.server.ctx.services.audit;
  const sqlite = t.server.ctx.db.$client;
  const seen: Array<{ targetId: string | null; inTransaction: boolean }> = [];
  const record = audit.record;
  audit.record = (input: AuditRecord) => {
    if (input.action === 'file.upload') seen.push({ targetId: input.targetId ?? null, inTransaction: sqlite.inTransaction });
    record.call(audit, input);
  };
  try {
    await fn();
  } finally {
    audit.record = record;
  }
  return seen;
}

describe("an upload's audit record commits with its row (docs/reliability.md)", () => {
  test('a single upload, a bulk upload and a WebDAV PUT queue their records inside the transaction that inserts the rows', async () => {
    const o = await seed.owner(t);
    let single: { id: string; mimeType: string } | undefined;
    expect(await queuedUploads(async () => (single = await upload(o.client, 'one.txt', 'one')))).toEqual([
      { targetId: single!.id, inTransaction: true },
    ]);

    const form = new FormData();
    form.append('file', new File(['a'], 'a.txt'));
    form.append('relativePaths', 'Trip/a.txt');
    form.append('file', new File(['b'], 'b.txt'));
    form.append('relativePaths', 'Trip/b.txt');
    let bulk: { files: Array<{ id: string }> } | undefined;
    const bulkSeen = await queuedUploads(async () => {
      const res = await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
      expect(res.status).toBe(200);
      bulk = (await res.json()) as { files: Array<{ id: string }> };
    });
    expect(bulkSeen).toEqual(bulk!.files.map((f) => ({ targetId: f.id, inTransaction: true })));

    const dav = await davLogin(t, o);
    const davSeen = await queuedUploads(async () => expect((await dav.put('put.txt', 'put')).status).toBe(201));
    expect(davSeen).toEqual([{ targetId: expect.any(String), inTransaction: true }]);

    t.server.ctx.services.audit.flush();
    const logged = t.server.ctx.services.audit.list({ action: 'file.upload', limit: 100 }).filter((e) => e.accountId === o.id);
    expect(logged.map((e) => e.targetId).sort()).toEqual([single!.id, ...bulk!.files.map((f) => f.id), davSeen[0]!.targetId].sort());
    expect(logged.find((e) => e.targetId === single!.id)).toMatchObject({
      loginId: o.id,
      targetType: 'file',
      details: { name: 'one.txt', parentId: null, size: 3, mimeType: single!.mimeType },
    });
  });
});
