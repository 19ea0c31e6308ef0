import { randomBytes } from 'node:crypto';
import type { TestServer } from './server.ts';
import { json, type TestClient } from './client.ts';
import type { Permission } from '../../src/contract/permissions.ts';

export interface SeededLogin {
  id: string;
  email: string;
  password: string;
  client: TestClient;
}

let counter = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}-${++counter}-${randomBytes(3).toString('hex')}@example.test`;
const PASSWORD = 'correct horse battery';

/** Signs in through HTTP and returns a client holding the `token` cookie. */
export async function login(t: TestServer, email: string, password = PASSWORD): Promise<TestClient> {
  const client = t.client();
  const res = await client.post('/api/login', { email, password });
  if (res.status !== 200) throw new Error(`login ${email} failed: ${res.status} ${await res.text()}`);
  return client;
}

/** The first account on a fresh instance, through the public signup: it becomes the admin. */
export async function admin(t: TestServer, email = uniqueEmail('admin')): Promise<SeededLogin> {
  const client = t.client();
  const res = await client.post('/api/signup', { email, password: PASSWORD, name: 'Admin' });
  if (res.status !== 200) throw new Error(`admin signup failed: ${res.status} ${await res.text()}`);
  const { user } = await json(res);
  return { id: user.id, email, password: PASSWORD, client };
}

/** Another owner account, as the admin makes one (`coffer users create`; signup is closed after the admin). */
export async function owner(t: TestServer, email = uniqueEmail('owner'), name = 'Owner'): Promise<SeededLogin> {
  const row = await t.server.ctx.services.accounts.createLogin({ email, password: PASSWORD, name, emailTrusted: true });
  return { id: row.id, email, password: PASSWORD, client: await login(t, email) };
}

/** A sub-user of `parent` holding exactly `permissions`. */
export async function subUser(
  t: TestServer,
  parent: { id: string },
  permissions: Permission[],
  email = uniqueEmail('sub'),
): Promise<SeededLogin> {
  const row = await t.server.ctx.services.accounts.createLogin({
    email,
    password: PASSWORD,
    name: 'Sub',
    owner: { id: parent.id, permissions },
  });
  return { id: row.id, email, password: PASSWORD, client: await login(t, email) };
}
