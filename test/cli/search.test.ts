import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { json } from '../helpers/client.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
});
afterAll(() => t.stop());

const cli = (args: string[]) => runCli([...args, '--data-dir', t.dataDir]);
const contentHits = async (client: seed.SeededLogin['client'], q: string) =>
  (await json<any[]>(await client.get(`/api/files/search?q=${q}&content=true`))).filter((h) => h.match === 'content');

describe('coffer settings set contentSearch / coffer search reindex', () => {
  test('reindex while off is refused; turning it on from the CLI makes the running server backfill; reindex queues the files again', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    await upload(o.client, 'notes.txt', 'the boiler code is 1234');
    await upload(other.client, 'other.txt', 'nothing about boilers');

    const refused = await cli(['search', 'reindex']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('content search is off');

    expect(parseJson(await cli(['settings', 'set', 'contentSearch', 'true', '--json']))).toEqual({ contentSearch: true });
    await eventually(async () => expect(await contentHits(o.client, 'boiler')).toHaveLength(1), { timeoutMs: 30_000 });
    await eventually(() => t.server.ctx.repos.content.progress().pending === 0, { timeoutMs: 30_000 });

    expect(parseJson(await cli(['search', 'reindex', '--user', o.email, '--json']))).toEqual({ queued: 1 });
    expect((await cli(['search', 'reindex', '--user', 'nobody@example.test'])).stderr).toContain('no user with email nobody@example.test');
    await eventually(() => t.server.ctx.repos.content.progress().pending === 0, { timeoutMs: 30_000 });

    expect(parseJson(await cli(['settings', 'set', 'contentSearch', 'false', '--json']))).toEqual({ contentSearch: false });
    expect(t.server.ctx.repos.content.progress()).toEqual({ indexed: 0, pending: 0, textBytes: 0 });
    expect(await contentHits(o.client, 'boiler')).toEqual([]);
  }, 90_000);
});
