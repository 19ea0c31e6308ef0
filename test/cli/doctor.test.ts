import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { rowWithoutObject, storeFile } from '../helpers/stored-files.ts';
import { createUpload, patchUpload } from '../helpers/tus.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const doctor = (...args: string[]) => runCli(['doctor', ...args, '--data-dir', t.dataDir]);

describe('coffer doctor, beside the running server', () => {
  test('healthy: exit 0', async () => {
    const o = await seed.admin(t);
    await storeFile(t.server.ctx, o.id);
    const r = await doctor();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('database integrity: ok');
    expect(r.stdout).toContain('no problems found');
  });

  test('finds a wrong usage counter and a row without its object; --fix repairs only the counter', async () => {
    const o = await seed.owner(t);
    const ctx = t.server.ctx;
    const f = await storeFile(ctx, o.id, { size: 4000 });
    const lost = rowWithoutObject(ctx, o.id, { size: 500 });
    ctx.db.$client.query('UPDATE users SET storage_used = storage_used + 12345 WHERE id = ?').run(o.id);
    const actual = f.size + lost.size;

    const found = await doctor('--json');
    expect(found.code).toBe(3);
    const report = parseJson(found);
    expect(report.ok).toBe(false);
    expect(report.usage.mismatches).toEqual([{ accountId: o.id, email: o.email, recorded: actual + 12345, actual, fixed: false }]);
    expect(report.missingObjects).toMatchObject({ count: 1, items: [{ id: lost.id, storageKey: lost.storageKey }] });
    expect(ctx.services.quota.usage(o.id).used).toBe(actual + 12345);

    const human = await doctor();
    expect(human.stdout).toContain('repair with: coffer doctor --fix');
    expect(human.stdout).toContain(`${lost.id}`);

    const fixed = await doctor('--fix', '--json');
    expect(fixed.code).toBe(3);
    expect(parseJson(fixed).usage.mismatches[0].fixed).toBe(true);
    expect(ctx.services.quota.usage(o.id).used).toBe(actual);
    // The row without an object is left for the admin to review with `coffer orphans`.
    expect(ctx.db.$client.query('SELECT 1 FROM items WHERE id = ?').get(lost.id)).not.toBeNull();

    const after = parseJson(await doctor('--json'));
    expect(after.usage.mismatches).toEqual([]);
    expect(after.missingObjects.count).toBe(1);
    ctx.services.audit.flush();
    expect(ctx.services.audit.list({ action: 'doctor.fix' })[0]!.details).toEqual({
      accounts: [{ accountId: o.id, from: actual + 12345, to: actual }],
    });
  });

  test('lists resumable uploads past their expiry (the server deletes them; they are no problem)', async () => {
    const o = await seed.owner(t);
    const created = await createUpload(o.client, 5000, { filename: 'abandoned.mov' });
    const id = created.headers.get('location')!.split('/').at(-1)!;
    expect((await patchUpload(o.client, `/api/files/tus/${id}`, 0, Buffer.alloc(1200, 7))).status).toBe(204);
    t.server.ctx.db.$client.query('UPDATE tus_uploads SET expires_at = ? WHERE id = ?').run(Date.now() - 60_000, id);
    const human = await doctor();
    expect(human.stdout).toContain('resumable uploads: 1 unfinished, 1 past their expiry, 0 staged object(s) no upload owns');
    expect(human.stdout).toContain(`  ${id} abandoned.mov: 1200 of 5000 bytes, expired `);
    expect(parseJson(await doctor('--json')).uploads).toMatchObject({ unfinished: 1, expired: [{ id, name: 'abandoned.mov' }] });
  });
});
