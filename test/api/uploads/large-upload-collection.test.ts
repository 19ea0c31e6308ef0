import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { collectAfterTransfer } from '../../../src/lib/buffers.ts';
import { upload } from '../../helpers/files.ts';
import { cookieHeader, streamMultipartUpload } from '../../helpers/raw-http.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let a: SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  a = await admin(t);
  // The body is refused after its first MiB: what is tested happens before a byte of it is read.
  t.server.ctx.services.settings.set('maxUploadBytes', 1024 * 1024);
});
afterAll(() => t.stop());

const MiB = 1024 * 1024;

/** About 24 MB of objects on the heap, held by the caller while the request runs: the heap has grown. */
const grownHeap = () => Array.from({ length: 300_000 }, (_, i) => ({ i, name: `object ${i}` }));

describe('a full collection before a large upload, when garbage waits (docs/performance.md, the twelfth pass)', () => {
  test('an upload declaring 256 MiB is preceded by one full collection once the heap has grown since the last', async () => {
    collectAfterTransfer(256 * MiB);
    const held = grownHeap();
    const gc = spyOn(Bun, 'gc');
    try {
      const r = await streamMultipartUpload(t.url, '/api/files/upload', 256 * MiB, cookieHeader(a.client.cookies));
      expect(r.status).toBe(413);
      expect(gc).toHaveBeenCalledTimes(1);
      expect(gc).toHaveBeenLastCalledWith(true);
    } finally {
      gc.mockRestore();
    }
    expect(held.length).toBe(300_000);
  });

  test('a small upload on the same grown heap runs none', async () => {
    collectAfterTransfer(256 * MiB);
    const held = grownHeap();
    const gc = spyOn(Bun, 'gc');
    try {
      await upload(a.client, 'small.bin', new Uint8Array(4096).fill(1));
      expect(gc).not.toHaveBeenCalled();
    } finally {
      gc.mockRestore();
    }
    expect(held.length).toBe(300_000);
  });
});
