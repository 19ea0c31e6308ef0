import { afterAll, expect, spyOn, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { admin } from '../../helpers/seed.ts';

let t: TestServer | undefined;
afterAll(() => t?.stop());

test('start-up ends by freeing the page cache its migrations and checks filled; the server then reads and writes as before', async () => {
  const run = spyOn(Database.prototype, 'run');
  try {
    t = await startTestServer();
    const statements = run.mock.calls.map((c) => String(c[0]));
    expect(statements.at(-1)).toBe('PRAGMA shrink_memory');
  } finally {
    run.mockRestore();
  }
  const login = await admin(t, 'cache@example.test');
  const res = await login.client.get('/api/profile');
  expect(res.status).toBe(200);
  expect(((await res.json()) as { email: string }).email).toBe('cache@example.test');
});
