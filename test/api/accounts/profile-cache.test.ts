import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { generate } from 'otplib';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { runCli } from '../../helpers/cli.ts';
import * as seed from '../../helpers/seed.ts';

// Each profile is read three times before the change, so the server answers it from its cache.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
});
afterAll(() => t.stop());

async function cachedProfile(client: TestClient): Promise<Record<string, unknown>> {
  let profile: Record<string, unknown> = {};
  for (let i = 0; i < 3; i++) profile = await json(await client.get('/api/profile'));
  return profile;
}

describe('a cached profile shows a change at the next request', () => {
  test('two-step verification turned on and off through the API', async () => {
    const o = await seed.owner(t);
    expect((await cachedProfile(o.client)).mfaEnabled).toBe(false);
    const { secret } = await json(await o.client.post('/api/mfa/setup'));
    const verified = await o.client.post('/api/mfa/verify', { code: await generate({ secret }) });
    expect(verified.status).toBe(200);
    const { backupCodes } = await json(verified);
    expect((await json(await o.client.get('/api/profile'))).mfaEnabled).toBe(true);
    await cachedProfile(o.client);
    expect((await o.client.post('/api/mfa/disable', { code: backupCodes[0] })).status).toBe(200);
    expect((await json(await o.client.get('/api/profile'))).mfaEnabled).toBe(false);
  });

  test("one login's profile is not another's", async () => {
    const a = await seed.owner(t, seed.uniqueEmail('a'), 'Ada');
    const b = await seed.owner(t, seed.uniqueEmail('b'), 'Bea');
    expect(await cachedProfile(a.client)).toMatchObject({ id: a.id, email: a.email, name: 'Ada' });
    expect(await cachedProfile(b.client)).toMatchObject({ id: b.id, email: b.email, name: 'Bea' });
  });

  test("a sub-user's changed permissions", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    expect((await cachedProfile(sub.client)).permissions).toEqual(['files.download']);
    expect((await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.download', 'files.upload'] })).status).toBe(200);
    expect((await json(await sub.client.get('/api/profile'))).permissions).toEqual(['files.download', 'files.upload']);
  });

  test('another connection renames the login', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('rename'), 'Before');
    expect((await cachedProfile(o.client)).name).toBe('Before');
    const db = new Database(path.join(t.dataDir, 'coffer.db'));
    try {
      db.run('PRAGMA busy_timeout = 5000');
      db.query('UPDATE users SET name = ? WHERE id = ?').run('After', o.id);
    } finally {
      db.close();
    }
    expect((await json(await o.client.get('/api/profile'))).name).toBe('After');
  });

  test('another process (the CLI beside the server) resets two-step verification', async () => {
    const o = await seed.owner(t);
    const { secret } = await json(await o.client.post('/api/mfa/setup'));
    expect((await o.client.post('/api/mfa/verify', { code: await generate({ secret }) })).status).toBe(200);
    expect((await cachedProfile(o.client)).mfaEnabled).toBe(true);
    const r = await runCli(['users', 'reset-mfa', o.email, '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    expect((await json(await o.client.get('/api/profile'))).mfaEnabled).toBe(false);
  });
});

describe('a kept profile answer', () => {
  const answer = async (client: TestClient) => {
    const res = await client.get('/api/profile');
    const headers = [...res.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date');
    return { status: res.status, headers, body: await res.text() };
  };

  test('is the answer built afresh, byte for byte, with the header Response.json gives', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('bytes'), 'Bytes');
    const sub = await seed.subUser(t, o, ['files.upload', 'files.download']);
    for (const client of [o.client, sub.client]) {
      // The first read after the seed's commits builds the answer; the next two are the kept one.
      const fresh = await answer(client);
      expect(fresh.status).toBe(200);
      expect(fresh.headers).toContainEqual(['content-type', 'application/json;charset=utf-8']);
      const p = JSON.parse(fresh.body);
      const { id, email, name, createdAt, mfaEnabled, permissions, signInMethods } = p;
      expect(fresh.body).toBe(JSON.stringify({ id, email, name, createdAt, mfaEnabled, permissions, signInMethods }));
      expect(await answer(client)).toEqual(fresh);
      expect(await answer(client)).toEqual(fresh);
    }
    expect(JSON.parse((await answer(o.client)).body).permissions).toBeNull();
    expect(JSON.parse((await answer(sub.client)).body).permissions).toEqual(['files.download', 'files.upload']);
  });
});
