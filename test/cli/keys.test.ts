import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { generate } from 'otplib';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { json } from '../helpers/client.ts';
import * as seed from '../helpers/seed.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { readBack, storeFile, type StoredFile } from '../helpers/stored-files.ts';
import type { LocalDriver } from '../../src/storage/local.ts';

let t: TestServer;
let owner: seed.SeededLogin;
let mfaSecret: string;
const files: StoredFile[] = [];

const ctx = () => t.server.ctx;
const keyIds = () =>
  ctx()
    .db.$client.query<{ key_id: string; n: number }, []>('SELECT key_id, COUNT(*) AS n FROM items WHERE key_id IS NOT NULL GROUP BY key_id')
    .all();
const secrets = () =>
  JSON.parse(fs.readFileSync(path.join(t.dataDir, 'secrets.json'), 'utf8')) as { masterKey: string; previousMasterKeys?: string[] };

/** What must not change: each blob's bytes and modification time. */
function blobState(): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    const file = (ctx().driver as LocalDriver).pathOf(f.storageKey);
    const st = fs.statSync(file);
    out.set(f.storageKey, `${st.mtimeMs}:${st.size}:${createHash('sha256').update(fs.readFileSync(file)).digest('hex')}`);
  }
  return out;
}

beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
  owner = await seed.owner(t);
  for (let i = 0; i < 25; i++) files.push(await storeFile(ctx(), owner.id, { size: 1000 + i * 7000 }));
  mfaSecret = (await json(await owner.client.post('/api/mfa/setup'))).secret;
  await owner.client.post('/api/mfa/verify', { code: await generate({ secret: mfaSecret }) });
});
afterAll(() => t.stop());

describe('coffer keys rotate, beside the running server', () => {
  test('interrupted after one batch, then resumed: every file and the MFA secret move to the new key, no blob is rewritten', async () => {
    const oldKey = ctx().keyring.current.id;
    const oldSecrets = secrets();
    const blobsBefore = blobState();

    const first = await runCli(['keys', 'rotate', '--batch-size', '10', '--max-batches', '1', '--json', '--data-dir', t.dataDir]);
    expect(first.code).toBe(3);
    const partial = parseJson(first);
    expect(partial).toMatchObject({ resumed: false, completed: false, itemsRewrapped: 10 });
    expect(partial.keyId).not.toBe(oldKey);
    const newKey = partial.keyId as string;
    expect(secrets().previousMasterKeys).toEqual([oldSecrets.masterKey]);
    expect(Object.fromEntries(keyIds().map((r) => [r.key_id, r.n]))).toEqual({ [newKey]: 10, [oldKey]: 15 });

    // Half-way, the server reads both kinds and wraps anything new under the new key.
    for (const f of files) expect((await readBack(ctx(), f.id)).equals(f.content)).toBe(true);
    const during = await storeFile(ctx(), owner.id);
    files.push(during);
    expect(ctx().db.$client.query<{ key_id: string }, [string]>('SELECT key_id FROM items WHERE id = ?').get(during.id)!.key_id).toBe(
      newKey,
    );

    const status = parseJson(await runCli(['keys', 'status', '--json', '--data-dir', t.dataDir]));
    expect(status.pendingRotation.toKeyId).toBe(newKey);

    const second = await runCli(['keys', 'rotate', '--batch-size', '10', '--json', '--data-dir', t.dataDir]);
    expect(second.code).toBe(0);
    const done = parseJson(second);
    expect(done).toMatchObject({ keyId: newKey, resumed: true, completed: true, remaining: 0, itemsRewrapped: 15, secretsRewrapped: 1 });

    expect(keyIds()).toEqual([{ key_id: newKey, n: 26 }]);
    const sealed = ctx()
      .db.$client.query<{ mfa_secret: string }, [string]>('SELECT mfa_secret FROM users WHERE id = ?')
      .get(owner.id)!.mfa_secret;
    expect(sealed.startsWith(`k1.${newKey}.`)).toBe(true);
    for (const f of files) expect((await readBack(ctx(), f.id)).equals(f.content)).toBe(true);
    const blobsAfter = blobState();
    for (const [key, state] of blobsBefore) expect(blobsAfter.get(key)).toBe(state);

    // The re-sealed MFA secret opens to the same seed, so the authenticator keeps working.
    expect(ctx().keyring.openSecret(sealed)).toBe(mfaSecret);

    const finalStatus = parseJson(await runCli(['keys', 'status', '--json', '--data-dir', t.dataDir]));
    expect(finalStatus).toMatchObject({ currentKeyId: newKey, pendingRotation: null, items: { [newKey]: 26 } });
    expect(finalStatus.keyIds).toEqual([newKey, oldKey]);

    ctx().services.audit.flush();
    expect(
      ctx()
        .services.audit.list({ action: 'keys.rotate' })
        .map((e) => e.status),
    ).toEqual(['success', 'failure']);
  });

  test('after a restart the files still read back; a second rotation keeps every earlier key', async () => {
    await t.restart();
    for (const f of files) expect((await readBack(ctx(), f.id)).equals(f.content)).toBe(true);
    const before = ctx().keyring.current.id;
    const r = await runCli(['keys', 'rotate', '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('rotation complete');
    expect(secrets().previousMasterKeys).toHaveLength(2);
    expect(ctx().keyring.has(before)).toBe(true);
    for (const f of files) expect((await readBack(ctx(), f.id)).equals(f.content)).toBe(true);
  });

  test('a master key given by environment cannot be rotated by Coffer: exit 1 saying why', async () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const r = await runCli(['keys', 'rotate', '--data-dir', t.dataDir], { env: { COFFER_MASTER_KEY: key } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('COFFER_MASTER_KEY');
  });
});
