import { expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import type * as seed from '../../helpers/seed.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';

let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s), { startWorker: false });

const MiB = 1024 * 1024;

/** Request body streams alive now (the server runs in this process): each holds the runtime's buffer of its body. */
function bodyStreams(): number {
  return (heapStats().objectTypeCounts as Record<string, number>).BytesInternalReadableStreamSource ?? 0;
}

test("a PATCH's request body stream goes at the first full collection after its answer, not the second", async () => {
  const patches = 24;
  const res = await createUpload(admin.client, patches * MiB + 1, { filename: 'let-go.bin' });
  expect(res.status).toBe(201);
  const location = new URL(res.headers.get('location')!, t.url).pathname;
  Bun.gc(true);
  const before = bodyStreams();
  const bytes = new Uint8Array(MiB).fill(7);
  for (let i = 0; i < patches; i++) expect((await patchUpload(admin.client, location, i * MiB, bytes)).status).toBe(204);
  Bun.gc(true);
  // Served through the runtime's own router, half of them outlived this collection (a native handle held each until the next).
  expect(bodyStreams() - before).toBeLessThan(4);
});
