import { describe, expect, test } from 'bun:test';
import { strToU8, zipSync } from 'fflate';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { upload } from '../../helpers/files.ts';
import { hostile } from '../../helpers/search-documents.ts';
import type * as seed from '../../helpers/seed.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Two extraction workers, so texts come to the index writer through two channels at once.
serverWithAdmin((s) => ({ t, admin } = s), { env: { SEARCH_WORKERS: '2' } });

const indexed = () =>
  eventually(() => t.server.ctx.repos.content.progress().pending === 0 && t.server.ctx.repos.content.nextPending(1).length === 0, {
    timeoutMs: 60_000,
  });

async function found(q: string): Promise<string[]> {
  const res = await admin.client.get(`/api/files/search?q=${encodeURIComponent(q)}&content=true`);
  expect(res.status).toBe(200);
  return ((await json(res)) as any[]).filter((h) => h.match === 'content').map((h) => h.name);
}

// A DOCX whose extraction leaves the worker's heap large (over 64 MiB), so its worker is ended right after answering.
const heavyDocx = () =>
  zipSync(
    {
      'word/document.xml': strToU8(
        `<w:document><w:p><w:t>quetzal</w:t></w:p>${'<w:p><w:t>some words of text</w:t></w:p>'.repeat(680_000)}</w:document>`,
      ),
    },
    { level: 0 },
  );

describe('texts from the extraction workers to the index writer', () => {
  test('a worker ended right after its document (its heap grew) still has that text indexed; hostile documents leave nothing waiting', async () => {
    await upload(admin.client, 'heavy.docx', heavyDocx());
    for (let i = 0; i < 6; i++) await upload(admin.client, `note-${i}.txt`, `ocelot${i} and some plain words`);
    await upload(admin.client, 'bomb.docx', hostile.zipBomb());
    await upload(admin.client, 'deep.docx', hostile.deepXml());
    await upload(admin.client, 'heavy-again.docx', heavyDocx());
    await upload(admin.client, 'after.txt', 'written after the others: narwhal');
    expect((await admin.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
    await indexed();
    expect((await found('quetzal')).sort()).toEqual(['heavy-again.docx', 'heavy.docx']);
    for (let i = 0; i < 6; i++) expect(await found(`ocelot${i}`)).toEqual([`note-${i}.txt`]);
    expect(await found('narwhal')).toEqual(['after.txt']);
    expect(t.server.ctx.repos.content.progress().indexed).toBe(11);
    // Every text sent was taken, and the channels of the ended workers were let go (at most one per worker left).
    const held = await t.server.ctx.services.contentSearch.textsHeld();
    expect(held.texts).toBe(0);
    expect(held.channels).toBeLessThanOrEqual(2);
  }, 120_000);
});
