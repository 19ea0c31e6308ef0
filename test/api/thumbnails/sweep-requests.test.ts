import { afterAll, beforeAll, expect, test } from 'bun:test';
import { upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';

let t: TestServer;
let owner: seed.SeededLogin;
// The worker does not run: a queued sweep stays waiting, where the test can see it.
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  owner = await seed.admin(t);
});
afterAll(() => t.stop());

const sweepWaiting = () => t.server.ctx.queue.hasWaiting(Jobs.thumbnailsSweep);
const clearSweeps = () =>
  t.server.ctx.db.$client.query("DELETE FROM jobs WHERE kind = ? AND status = 'created'").run(Jobs.thumbnailsSweep.name);

test('an upload of a type that never has a thumbnail queues no thumbnail sweep; an image still does', async () => {
  clearSweeps();
  expect(sweepWaiting()).toBe(false);
  await upload(owner.client, 'notes.txt', 'plain text has no thumbnail');
  await upload(owner.client, 'data.bin', new Uint8Array(4096));
  expect(sweepWaiting()).toBe(false);
  await upload(owner.client, 'photo.png', await img.png(64, 48));
  expect(sweepWaiting()).toBe(true);
});
