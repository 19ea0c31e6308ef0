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

async function bulk(count: number): Promise<number> {
  const body = new FormData();
  for (let i = 0; i < count; i++) body.append('files', new File([`file ${i}`], `bulk-${count}-${i}.txt`));
  const access = spyOn(t.server.ctx.repos.database, 'accessVersion');
  try {
    const res = await owner.client.request('/api/files/upload/bulk', { method: 'POST', body });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { files: unknown[] }).files).toHaveLength(count);
    return access.mock.calls.length;
  } finally {
    access.mockRestore();
  }
}

describe('a bulk upload announces its files', () => {
  test("reading who the owner's shares reach once for the files committed together, not once per file", async () => {
    await bulk(1);
    const one = await bulk(1);
    expect(await bulk(12)).toBe(one);
  });
});
