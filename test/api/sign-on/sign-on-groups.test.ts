import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import { json } from '../../helpers/client.ts';
import { folder } from '../../helpers/files.ts';
import { newPerson, type SsoServer, signInWithProvider, startSsoServer, startTestProvider, type TestProvider } from '../../helpers/oidc.ts';
import * as seed from '../../helpers/seed.ts';

let provider: TestProvider;
let c: SsoServer;
let admin: seed.SeededLogin;

beforeAll(async () => {
  provider = await startTestProvider();
  c = await startSsoServer(provider, {
    env: { OIDC_SCOPES: 'openid email profile groups', OIDC_GROUPS_CLAIM: 'groups', OIDC_GROUPS_CREATE: 'true', OIDC_AUTO_CREATE: 'true' },
  });
  admin = await seed.admin(c.t);
});
afterAll(async () => {
  await c.t.stop();
  await provider.stop();
});

/** The groups the account of `email` is in, by name, with where each comes from. */
async function groupsOf(email: string): Promise<string[]> {
  const all = (await json(await admin.client.get('/api/admin/groups'))).groups as Array<{ id: string; name: string; source: string }>;
  const out: string[] = [];
  for (const g of all) {
    const detail = await json(await admin.client.get(`/api/admin/groups/${g.id}`));
    if (detail.members.some((m: any) => m.email === email)) out.push(`${g.name} (${g.source})`);
  }
  return out.sort();
}

async function signIn(subject: string) {
  const client = c.t.client();
  expect(await signInWithProvider(provider, client, subject)).toBe('/');
  return client;
}

describe('groups from the identity provider (OIDC_GROUPS_CLAIM)', () => {
  test('claim added, changed and removed: memberships in the provider groups follow it at each sign-on; groups made here are left alone', async () => {
    const local = await json(await admin.client.post('/api/admin/groups', { name: 'Local' }));
    const sub = newPerson(provider, { groups: ['Design', '/Family', 'Local'] });
    const email = provider.accounts.get(sub)!.email!;
    const client = await signIn(sub);
    // Created on first sight; "Local" is the admin's, not the provider's: not joined.
    expect(await groupsOf(email)).toEqual(['Design (idp)', 'Family (idp)']);

    // Sharing with a provider group reaches the person; the admin adds them to the local group by hand.
    const owner = await seed.owner(c.t);
    const root = await folder(owner.client, 'Family photos');
    const family = (await json(await admin.client.get('/api/admin/groups'))).groups.find((g: any) => g.name === 'Family');
    expect((await owner.client.post(`/api/files/${root.id}/members`, { groupId: family.id, role: 'viewer' })).status).toBe(201);
    expect((await client.get(`/api/files?parentId=${root.id}`)).status).toBe(200);
    expect((await admin.client.post(`/api/admin/groups/${local.id}/members`, { email })).status).toBe(201);

    provider.accounts.set(sub, { ...provider.accounts.get(sub)!, groups: ['Design', 'Sales'] });
    await signIn(sub);
    expect(await groupsOf(email)).toEqual(['Design (idp)', 'Local (admin)', 'Sales (idp)']);
    // Out of Family: what it gave ends for every session of the account.
    expect((await client.get(`/api/files?parentId=${root.id}`)).status).toBe(404);

    const { groups: _, ...withoutGroups } = provider.accounts.get(sub)!;
    provider.accounts.set(sub, withoutGroups);
    await signIn(sub);
    expect(await groupsOf(email)).toEqual(['Local (admin)']);
    const audit = c.t.server.ctx.db.$client
      .query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_queue WHERE event LIKE '%group.member_remove%' AND event LIKE '%sign-on%'")
      .get()!.n;
    const logged = c.t.server.ctx.db.$client
      .query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'group.member_remove' AND details LIKE '%sign-on%'")
      .get()!.n;
    expect(audit + logged).toBe(3);
  });

  test('a group the admin made for sign-on (source idp) is synced by name; without OIDC_GROUPS_CREATE nothing new is made', async () => {
    const other = await startSsoServer(provider, {
      env: { OIDC_SCOPES: 'openid email profile groups', OIDC_GROUPS_CLAIM: 'groups', OIDC_AUTO_CREATE: 'true' },
    });
    try {
      const otherAdmin = await seed.admin(other.t);
      const res = await otherAdmin.client.post('/api/admin/groups', { name: 'Engineering', source: 'idp' });
      expect(res.status).toBe(201);
      const sub = newPerson(provider, { groups: ['engineering', 'Unknown'] });
      const client = other.t.client();
      expect(await signInWithProvider(provider, client, sub)).toBe('/');
      const groups = (await json(await otherAdmin.client.get('/api/admin/groups'))).groups;
      expect(groups.map((g: any) => [g.name, g.size])).toEqual([['Engineering', 1]]);
    } finally {
      await other.t.stop();
    }
  });
  test('a name no group can have (control characters, over 64 characters) is skipped: the sign-on and the other groups go on', async () => {
    const sub = newPerson(provider, { groups: ['Tab\tGroup', 'x'.repeat(65), 'Usable'] });
    const email = provider.accounts.get(sub)!.email!;
    await signIn(sub);
    expect(await groupsOf(email)).toEqual(['Usable (idp)']);
  });

  test('names in another Unicode form are one group: a claim in NFD keeps the group made from NFC, none is made twice', async () => {
    const sub = newPerson(provider, { groups: ['Caf\u00e9'] });
    const email = provider.accounts.get(sub)!.email!;
    await signIn(sub);
    provider.accounts.set(sub, { ...provider.accounts.get(sub)!, groups: ['CAFE\u0301'] });
    await signIn(sub);
    const named = (await json(await admin.client.get('/api/admin/groups'))).groups.filter(
      (g: any) => g.name.normalize('NFC') === 'Caf\u00e9',
    );
    expect(named.map((g: any) => [g.name, g.size])).toEqual([['Caf\u00e9', 1]]);
    expect(await groupsOf(email)).toEqual(['Caf\u00e9 (idp)']);
  });

  test('a group stored before names were NFC (its name as the provider sent it, decomposed) is still the one the claim names', async () => {
    const legacy = 'Se\u0301ance';
    c.t.server.ctx.db.$client
      .query('INSERT INTO groups (id, name, name_key, description, source, team_folder_bytes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run('legacy-nfd-group', legacy, legacy.toLowerCase(), '', 'idp', null, Date.now());
    const sub = newPerson(provider, { groups: [legacy] });
    const email = provider.accounts.get(sub)!.email!;
    await signIn(sub);
    await signIn(sub);
    const named = (await json(await admin.client.get('/api/admin/groups'))).groups.filter(
      (g: any) => g.name.normalize('NFC') === 'S\u00e9ance',
    );
    expect(named.map((g: any) => [g.id, g.size])).toEqual([['legacy-nfd-group', 1]]);
    expect(await groupsOf(email)).toEqual([`${legacy} (idp)`]);
  });

  test('a claim of more than 500 groups: the account stays in every group it names', async () => {
    const names = Array.from({ length: 600 }, (_, i) => `Many ${String(i).padStart(3, '0')}`);
    const sub = newPerson(provider, { groups: names.slice(500) });
    const email = provider.accounts.get(sub)!.email!;
    await signIn(sub);
    provider.accounts.set(sub, { ...provider.accounts.get(sub)!, groups: names });
    await signIn(sub);
    const mine = (await groupsOf(email)).filter((g) => g.startsWith('Many '));
    expect(mine.length).toBe(600);
  });

  test('a claim that is not a list of names (an object, a number) leaves the memberships as they are; non-strings in a list are skipped', async () => {
    const sub = newPerson(provider, { groups: ['Kept'] });
    const email = provider.accounts.get(sub)!.email!;
    await signIn(sub);
    for (const odd of [{ Kept: true }, 7]) {
      provider.accounts.set(sub, { ...provider.accounts.get(sub)!, groups: odd as unknown as string[] });
      await signIn(sub);
      expect(await groupsOf(email)).toEqual(['Kept (idp)']);
    }
    provider.accounts.set(sub, { ...provider.accounts.get(sub)!, groups: [1, null, 'Kept', { a: 1 }] as unknown as string[] });
    await signIn(sub);
    expect(await groupsOf(email)).toEqual(['Kept (idp)']);
  });

  test("Zitadel's project roles claim (an object keyed by role) is read as the group names; an empty one is no group", async () => {
    const claim = 'urn:zitadel:iam:org:project:roles';
    const zitadel = await startSsoServer(provider, {
      env: { OIDC_SCOPES: 'openid email profile groups', OIDC_GROUPS_CLAIM: claim, OIDC_GROUPS_CREATE: 'true', OIDC_AUTO_CREATE: 'true' },
    });
    try {
      const zAdmin = await seed.admin(zitadel.t);
      const sub = newPerson(provider, {
        [claim]: { Editors: { '2481': 'example.zitadel.cloud' }, Viewers: { '2481': 'example.zitadel.cloud' } },
      });
      const members = async () => {
        expect(await signInWithProvider(provider, zitadel.t.client(), sub)).toBe('/');
        return (await json(await zAdmin.client.get('/api/admin/groups'))).groups.map((g: any) => [g.name, g.size]);
      };
      expect(await members()).toEqual([
        ['Editors', 1],
        ['Viewers', 1],
      ]);
      provider.accounts.set(sub, { ...provider.accounts.get(sub)!, [claim]: { Viewers: { '2481': 'example.zitadel.cloud' } } });
      expect(await members()).toEqual([
        ['Editors', 0],
        ['Viewers', 1],
      ]);
      provider.accounts.set(sub, { ...provider.accounts.get(sub)!, [claim]: {} });
      expect(await members()).toEqual([
        ['Editors', 0],
        ['Viewers', 0],
      ]);
    } finally {
      await zitadel.t.stop();
    }
  });

  test('an account with two-step verification: the claim is applied only once its code is entered, never by the provider step alone', async () => {
    const sub = newPerson(provider, { groups: ['Before'] });
    const email = provider.accounts.get(sub)!.email!;
    const client = await signIn(sub);
    const { secret } = await json(await client.post('/api/mfa/setup'));
    const { backupCodes } = await json(await client.post('/api/mfa/verify', { code: await generate({ secret }) }));
    expect(await groupsOf(email)).toEqual(['Before (idp)']);

    provider.accounts.set(sub, { ...provider.accounts.get(sub)!, groups: ['After'] });
    const pending = c.t.client();
    expect(await signInWithProvider(provider, pending, sub)).toBe('/login?mfa=1');
    // Past the provider, not past the second factor: nothing changed yet.
    expect(await groupsOf(email)).toEqual(['Before (idp)']);
    expect((await pending.post('/api/idp/mfa-verify', { code: '000000' })).status).toBe(401);
    expect(await groupsOf(email)).toEqual(['Before (idp)']);
    expect((await pending.post('/api/idp/mfa-verify', { code: backupCodes[0] })).status).toBe(200);
    expect(await groupsOf(email)).toEqual(['After (idp)']);
  });
});
