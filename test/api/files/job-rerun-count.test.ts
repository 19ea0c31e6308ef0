import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { folder, rowCount, seedRows } from '../../helpers/files.ts';
import { admin, login, owner, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let o: SeededLogin;
beforeAll(async () => {
  // The worker is driven by hand: a job is started, cut off part-way as a crash would, then run again.
  t = await startTestServer({ startWorker: false });
  await admin(t);
  o = await owner(t);
});
afterAll(() => t.stop());

/** Claims the job and runs its handler until its first batch has committed, then stops it dead. */
async function runFirstBatchThenCrash(jobId: string): Promise<void> {
  const { queue, registry } = t.server.ctx;
  const job = queue.claim()!;
  expect(job.id).toBe(jobId);
  const crash = new AbortController();
  const def = registry.get(job.kind)!;
  let threw = false;
  try {
    await def.handle(def.spec.payload.parse(job.payload), {
      job,
      signal: crash.signal,
      addProgress: (n) => {
        queue.addProgress(job.id, n);
        crash.abort(new Error('killed'));
      },
      totalProgress: () => queue.progress(job.id),
    });
  } catch {
    threw = true;
  }
  expect(threw).toBe(true);
  // The job row stays `active`, as after kill -9; the next start re-queues it.
  expect(queue.get(jobId)!.status).toBe('active');
}

/** Starts the server again on the same data (the interrupted job is re-queued), runs it, and reads its result. */
async function resultAfterRestart(jobId: string): Promise<{ count: number }> {
  await t.restart();
  await t.server.worker.drain();
  const res = await (await login(t, o.email)).get(`/api/files/jobs/${jobId}`);
  expect(res.status).toBe(200);
  return (await json(res)).result;
}

describe('a job re-run after a crash reports all of its work (issue 13, defect 5)', () => {
  test('trashing 1,102 items, killed after the first batch of 500: the result says 1,102', async () => {
    const dir = await folder(o.client, 'big');
    seedRows(t, o.id, dir.id, 1101);
    const res = await o.client.post('/api/files/delete', { ids: [dir.id] });
    expect(res.status).toBe(202);
    const { jobId } = await json(res);
    await runFirstBatchThenCrash(jobId);
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NOT NULL', o.id)).toBe(500);
    // It used to report only the second run's part: {count: 602}.
    expect(await resultAfterRestart(jobId)).toEqual({ count: 1102 });
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NULL', o.id)).toBe(0);
  });

  test('emptying the trash, killed after the first batch: the count covers both runs', async () => {
    const res = await (await login(t, o.email)).post('/api/files/trash/empty');
    expect(res.status).toBe(202);
    const { jobId } = await json(res);
    await runFirstBatchThenCrash(jobId);
    expect(await resultAfterRestart(jobId)).toEqual({ count: 1102 });
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
  });
});
