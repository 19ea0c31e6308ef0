import { afterAll, beforeAll, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { upload } from '../../helpers/files.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import * as seed from '../../helpers/seed.ts';

let t: TestServer;
let o: seed.SeededLogin;

// Twenty documents of 1 MiB of text (the default cap), each matching: the costliest snippets a query asks for.
beforeAll(async () => {
  t = await startTestServer();
  const admin = await seed.admin(t);
  expect((await admin.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
  o = await seed.owner(t);
  const words = ['lantern', 'quarry', 'meadow', 'copper', 'thistle', 'harbour', 'ember', 'gravel'];
  for (let n = 0; n < 20; n++) {
    const body = Array.from({ length: 150_000 }, (_, i) => words[(i * 7 + n) % words.length]).join(' ');
    await upload(o.client, `long-${n}.txt`, `${body.slice(0, 1024 ** 2 - 20)} heronsong`);
  }
  await eventually(() => t.server.ctx.repos.content.progress().indexed === 20, { timeoutMs: 120_000 });
}, 180_000);
afterAll(() => t.stop());

test('snippets of 20 matches of 1 MiB each are made off the event loop', async () => {
  // The server runs in this process: a timer that fires late measures how long its event loop was held.
  let last = performance.now();
  let held = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    held += Math.max(0, now - last - 10);
    last = now;
  }, 2);
  const started = performance.now();
  try {
    for (let i = 0; i < 5; i++) {
      const res = await o.client.get('/api/files/search?q=heronsong&content=true');
      expect(res.status).toBe(200);
      const hits = (await json(res)).filter((h: any) => h.match === 'content');
      expect(hits).toHaveLength(20);
      for (const hit of hits) expect(hit.snippet).toContain('<mark>heronsong</mark>');
    }
  } finally {
    clearInterval(timer);
  }
  // Made on the event loop, the snippets held it for 95% of the time; off it, for a few percent.
  expect(held / (performance.now() - started)).toBeLessThan(0.5);
}, 120_000);
