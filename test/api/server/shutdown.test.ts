import { describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { startTestServer } from '../../helpers/server.ts';
import * as seed from '../../helpers/seed.ts';
import { upload } from '../../helpers/files.ts';
import { eventually } from '../../helpers/eventually.ts';

describe('graceful shutdown', () => {
  test('stop lets an in-flight download finish byte-exact, refuses new connections, and closes the database', async () => {
    const t = await startTestServer();
    const a = await seed.admin(t);
    const content = randomBytes(8 * 1024 * 1024);
    const file = await upload(a.client, 'big.bin', content);
    const res = await a.client.get(`/api/files/${file.id}/download`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    const stopping = t.server.stop({ graceMs: 10_000 });
    await eventually(() => expect(fetch(`${t.url}/health`)).rejects.toThrow());
    const chunks: Uint8Array[] = [first.value!];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      // A slow reader, so the download is still in flight while the server stops.
      await Bun.sleep(1);
    }
    await stopping;
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
    expect(() => t.server.ctx.db.$client.query('SELECT 1').get()).toThrow();
    await t.stop();
  });
});
