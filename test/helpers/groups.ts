import { expect } from 'bun:test';
import { json } from './client.ts';
import type { SeededLogin } from './seed.ts';

let counter = 0;

/** A group `admin` makes, named `<prefix> <n>`, with `members` in it: its id. */
export async function newGroup(admin: SeededLogin, prefix: string, ...members: SeededLogin[]): Promise<string> {
  const res = await admin.client.post('/api/admin/groups', { name: `${prefix} ${++counter}` });
  expect(res.status).toBe(201);
  const { id } = await json(res);
  for (const m of members) expect((await admin.client.post(`/api/admin/groups/${id}/members`, { email: m.email })).status).toBe(201);
  return id;
}
