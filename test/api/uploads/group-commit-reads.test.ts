import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { upload } from '../../helpers/files.ts';
import { owner } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { transactionAtRuns } from '../../helpers/statements.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';
import { newStorageKey } from '../../../src/storage/keys.ts';
import { Messages } from '../../../src/errors.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
});
afterAll(() => t.stop());

const sqlite = () => t.server.ctx.db.$client;
const USAGE_ROW = 'FROM users WHERE id = ?';

/** How many statements whose SQL holds `fragment` ran while `fn` did, and what `fn` settled to. */
async function reads<T>(fragment: string, fn: () => Promise<T>): Promise<{ reads: number; result: T }> {
  const query = spyOn(sqlite(), 'query');
  try {
    const result = await fn();
    return { reads: query.mock.calls.filter(([sql]) => String(sql).includes(fragment)).length, result };
  } finally {
    query.mockRestore();
  }
}

/** `writes` asked for in one turn: one group commit, as the writes of uploads in progress together are (docs/performance.md, the twelfth pass). */
function oneGroup<T>(writes: Array<() => T>): Promise<PromiseSettledResult<T>[]> {
  const { transactions } = t.server.ctx.repos;
  return Promise.allSettled(writes.map((write) => transactions.grouped(write)));
}

/** Four uploads' intents in one group; the keys are forgotten again once it settled. */
async function groupOfIntents(): Promise<PromiseSettledResult<string>[]> {
  const intents = t.server.ctx.services.uploadIntents;
  const settled = await oneGroup(
    Array.from({ length: 4 }, () => () => {
      const key = newStorageKey();
      intents.record(key);
      return key;
    }),
  );
  for (const r of settled) if (r.status === 'fulfilled') intents.forget(r.value);
  return settled;
}

describe("a group commit's writes check the storage location once", () => {
  test('four intents in one group read the location once (four times before)', async () => {
    const { reads: n, result } = await reads('FROM storage_location', groupOfIntents);
    expect(result.map((r) => r.status)).toEqual(Array(4).fill('fulfilled'));
    expect(n).toBe(1);
  });

  test('while a storage move pauses writes, every write of the group is refused with its own 503, each check reading again', async () => {
    const location = t.server.ctx.repos.storageLocation;
    location.setWritesPaused(Date.now());
    try {
      const { reads: n, result } = await reads('FROM storage_location', groupOfIntents);
      expect(result.map((r) => r.status)).toEqual(Array(4).fill('rejected'));
      for (const r of result) expect((r as PromiseRejectedResult).reason).toMatchObject({ status: 503, message: Messages.storageMoving });
      expect(n).toBe(4);
    } finally {
      location.setWritesPaused(null);
    }
    expect(sqlite().query<{ n: number }, []>('SELECT COUNT(*) AS n FROM upload_intents').get()!.n).toBe(0);
    expect((await reads('FROM storage_location', groupOfIntents)).reads).toBe(1);
  });
});

describe("a group commit's writes read an account's usage row once", () => {
  test('reads and adjustments in one group: one read, each later read seeing the adjustments before it', async () => {
    const o = await owner(t);
    const quota = t.server.ctx.services.quota;
    const used = () => quota.usage(o.id).used;
    const start = used();
    const { reads: n, result } = await reads(USAGE_ROW, () =>
      oneGroup([
        used,
        () => {
          quota.adjust(o.id, 100);
          return used();
        },
        () => {
          quota.adjust(o.id, -40);
          return used();
        },
        used,
      ]),
    );
    expect(result.map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([start, start + 100, start + 60, start + 60]);
    expect(n).toBe(1);
    expect(used()).toBe(start + 60);
  });

  test('a write that adjusts the counter and then fails rolls back alone: the writes after it read the row again and do not see its bytes', async () => {
    const o = await owner(t);
    const quota = t.server.ctx.services.quota;
    const used = () => quota.usage(o.id).used;
    const start = used();
    const { reads: n, result } = await reads(USAGE_ROW, () =>
      oneGroup([
        used,
        () => {
          quota.adjust(o.id, 500);
          throw new Error('the row failed after its bytes were counted');
        },
        used,
      ]),
    );
    expect(result.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((result[2] as PromiseFulfilledResult<number>).value).toBe(start);
    expect(n).toBe(2);
    expect(used()).toBe(start);
  });

  test('an upload reads its room inside the transaction that records its intent, not in a read transaction of its own before it', async () => {
    const o = await owner(t);
    await upload(o.client, 'warm.bin', 'warm');
    // The room (in the intent's transaction), then the exact check in the row's commit: both under the write lock.
    const seen = await transactionAtRuns(t, USAGE_ROW, () => upload(o.client, 'counted.bin', 'counted').then(() => {}), o.id);
    expect(seen).toEqual([true, true]);
    expect(quota().usage(o.id).used).toBe('warm'.length + 'counted'.length);
  });

  test("a resumable upload's commit, in a transaction of its own, reads the row once for its checks (twice before)", async () => {
    const o = await owner(t);
    const created = await createUpload(o.client, 10, { filename: 'resumed.bin' });
    expect(created.status).toBe(201);
    // Whether the account still takes files, then its room with the upload's own reservation: one read, in the commit.
    const seen = await transactionAtRuns(
      t,
      USAGE_ROW,
      async () => expect((await patchUpload(o.client, created.headers.get('location')!, 0, Buffer.from('0123456789'))).status).toBe(204),
      o.id,
    );
    expect(seen).toEqual([true]);
    expect(quota().usage(o.id).used).toBe(10);
  });
});

const quota = () => t.server.ctx.services.quota;
