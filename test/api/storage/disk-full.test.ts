import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { json } from '../../helpers/client.ts';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { blobFiles, upload, uploadRaw } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { mountSmallDisk, type SmallDisk } from '../../helpers/small-disk.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import { eventually } from '../../helpers/eventually.ts';
import { jpeg } from '../../helpers/images.ts';
import { ManualClock } from '../../../src/clock.ts';
import { AuditActions } from '../../../src/services/admin/audit.ts';

const MiB = 1024 * 1024;
const disk: SmallDisk | string = mountSmallDisk(64);
const reason = typeof disk === 'string' ? disk : null;
const noDisk = skipWithout(reason, 'the disk-full tests');

const free = (dir: string) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};

function pollJob(client: SeededLogin['client'], jobId: string): Promise<any> {
  return eventually(
    async () => {
      const res = await client.get(`/api/files/jobs/${jobId}`);
      return res.status !== 202 && json(res);
    },
    { timeoutMs: 20_000, message: 'job did not finish' },
  );
}

describe.skipIf(noDisk)('a full disk (issue 13, defect 3): 64 MiB tmpfs, 8 MiB reserve', () => {
  const log = memoryLogger();
  let t: TestServer;
  let a: SeededLogin;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = path.join((disk as SmallDisk).dir, 'data');
    t = await startTestServer({ dataDir, env: { COFFER_MIN_FREE_BYTES: '8M' }, logger: log });
    a = await admin(t);
  });
  afterAll(async () => {
    await t?.server.stop();
    (disk as SmallDisk).unmount();
  });

  const uploaded: string[] = [];

  test('uploads until the reserve is reached; the one that would cross it gets 507 with a sentence to act on', async () => {
    let refused: Response | null = null;
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await uploadRaw(a.client, `fill-${i}.bin`, randomBytes(4 * MiB));
      if (res.status === 200) uploaded.push((await json(res)).id);
      else refused = res;
    }
    expect(uploaded.length).toBeGreaterThan(8);
    expect(refused!.status).toBe(507);
    const body = await json(refused!);
    expect(body.message).toContain('running out of disk space');
    expect(body.message).toContain('empty the trash');
    // The refusal kept the reserve: the database still has room.
    expect(free(dataDir)).toBeGreaterThan(4 * MiB);
    const left = blobFiles(dataDir);
    expect({ objects: left.objects.length, temp: left.temp }).toEqual({ objects: uploaded.length, temp: [] });
    expect(log.lines.some((l) => l.level === 'warn' && l.msg.startsWith('disk space low'))).toBe(true);
  });

  test('coffer doctor reports the low space (exit 3)', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', dataDir], { env: { COFFER_MIN_FREE_BYTES: '8M' } });
    expect(r.code).toBe(3);
    const report = parseJson(r);
    expect(report.disk.low).toBe(true);
    expect(report.disk.reserve).toBe(8 * MiB);
  });

  test('copies are refused with 507 too', async () => {
    const res = await a.client.post('/api/files/copy', { ids: [uploaded[0]] });
    expect(res.status).toBe(507);
  });

  test('trash, permanent delete and empty trash free the space through the API alone; uploads work again', async () => {
    const before = free(dataDir);
    const trashed = await a.client.post('/api/files/delete', { ids: uploaded });
    expect(trashed.status).toBe(200);
    const purge = await a.client.post('/api/files/trash/delete', { ids: [uploaded[0]] });
    expect(purge.status).toBe(202);
    expect(await pollJob(a.client, (await json(purge)).jobId)).toMatchObject({ status: 'completed', result: { count: 1 } });
    const empty = await a.client.post('/api/files/trash/empty');
    expect(empty.status).toBe(202);
    const job = await pollJob(a.client, (await json(empty)).jobId);
    expect(job.status).toBe('completed');
    expect(job.result.count).toBe(uploaded.length - 1);
    // The objects are deleted by the queued storage job just after; the database keeps a little of what it grew.
    const freed = () => free(dataDir) - before;
    await eventually(() => freed() >= uploaded.length * 4 * MiB * 0.9, { timeoutMs: 10_000 });
    expect(freed()).toBeGreaterThan(uploaded.length * 4 * MiB * 0.9);
    expect((await uploadRaw(a.client, 'after.bin', randomBytes(4 * MiB))).status).toBe(200);
  });

  test('a write that meets a disk filled by something else answers 507, never 500', async () => {
    // Another program fills the disk to the last block: the reserve cannot help, the answer must still be honest.
    const ballast = path.join((disk as SmallDisk).dir, 'ballast');
    const fd = fs.openSync(ballast, 'w');
    const block = Buffer.alloc(MiB);
    try {
      for (;;) fs.writeSync(fd, block);
    } catch {
      try {
        for (;;) fs.writeSync(fd, block.subarray(0, 4096));
      } catch {
        // full
      }
    }
    fs.closeSync(fd);
    try {
      const statuses = new Set<number>();
      for (let i = 0; i < 300 && !statuses.has(507); i++) {
        const res = await a.client.post('/api/files/folder', { name: `f-${i}-${'x'.repeat(80)}` });
        statuses.add(res.status);
      }
      expect(statuses.has(507)).toBe(true);
      expect([...statuses].every((s) => s === 200 || s === 507)).toBe(true);
      const upload = await uploadRaw(a.client, 'no.bin', randomBytes(MiB));
      expect(upload.status).toBe(507);
    } finally {
      fs.rmSync(ballast);
    }
    expect((await a.client.post('/api/files/folder', { name: 'after-ballast' })).status).toBe(200);
    expect(log.lines.filter((l) => l.level === 'error' && l.msg === 'unhandled error')).toEqual([]);
  });
});

const secondDisk: SmallDisk | string = mountSmallDisk(64);

describe.skipIf(skipWithout(typeof secondDisk === 'string' ? secondDisk : null, 'the disk-full tests of a disk filled by another program'))(
  'a disk filled to the last block by another program',
  () => {
    const clock = new ManualClock();
    const log = memoryLogger();
    let t: TestServer;
    let a: SeededLogin;
    let ballast: string;
    beforeAll(async () => {
      const small = secondDisk as SmallDisk;
      ballast = path.join(small.dir, 'ballast');
      // No worker: the background making of thumbnails (a job) stays out of the way of the one a request makes.
      t = await startTestServer({
        dataDir: path.join(small.dir, 'data'),
        env: { COFFER_MIN_FREE_BYTES: '8M' },
        logger: log,
        clock,
        startWorker: false,
      });
      a = await admin(t);
    });
    afterAll(async () => {
      fs.rmSync(ballast, { force: true });
      await t?.server.stop();
      (secondDisk as SmallDisk).unmount();
    });
    /** Fills the disk at once, in this turn of the event loop: no background write of the server comes in between. */
    function fill(): void {
      const fd = fs.openSync(ballast, 'w');
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(MiB));
      } catch {
        try {
          for (;;) fs.writeSync(fd, Buffer.alloc(4096));
        } catch {
          // full
        }
      }
      fs.closeSync(fd);
    }

    test('the audit batch failing every second says so once, then at most every five minutes, and says when it works again', async () => {
      const { audit } = t.server.ctx.services;
      audit.record({ action: AuditActions.fileDownload, targetType: 'file', targetId: 'queued-before-the-disk-filled' });
      fill();
      try {
        const failedLines = () => log.lines.filter((l) => l.msg === 'audit batch failed');
        for (let i = 0; i < 5; i++) audit.processBatch();
        expect(failedLines()).toHaveLength(1);
        expect(failedLines()[0]!.fields.err).toBe('database or disk is full');

        clock.advance(5 * 60_000);
        audit.processBatch();
        expect(failedLines()).toHaveLength(2);
        expect(failedLines()[1]!.fields).toMatchObject({ failingForMinutes: 5 });
        expect(failedLines()[1]!.fields.failures).toBeGreaterThanOrEqual(6);
      } finally {
        fs.rmSync(ballast);
      }
      audit.flush();
      expect(log.lines.filter((l) => l.msg === 'the audit batch works again')).toHaveLength(1);
      expect(audit.list({ limit: 100 }).some((e) => e.targetId === 'queued-before-the-disk-filled')).toBe(true);
    });

    test('a photo whose thumbnail was not made yet still shows one while the disk is full, and it is kept once there is room', async () => {
      const form = new FormData();
      form.append('file', new File([await jpeg(800, 600)], 'photo.jpg', { type: 'image/jpeg' }));
      const photo = await json(await a.client.request('/api/files/upload', { method: 'POST', body: form }));
      // The upload's own thumbnail, if its background making got to it, is forgotten: the request below makes it.
      await t.server.ctx.services.thumbnails.remove(t.server.ctx.repos.items.get(a.id, photo.id)!.storageKey!);
      const stored = () =>
        t.server.ctx.db.$client
          .query('SELECT status FROM thumbnails WHERE storage_key = ?')
          .get(t.server.ctx.repos.items.get(a.id, photo.id)!.storageKey!);
      fill();
      try {
        for (const size of ['small', 'large']) {
          const res = await a.client.get(`/api/files/${photo.id}/thumbnail?size=${size}`);
          expect(res.status).toBe(200);
          expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
        }
        expect(stored()).toBeNull();
      } finally {
        fs.rmSync(ballast);
      }
      expect((await a.client.get(`/api/files/${photo.id}/thumbnail?size=small`)).status).toBe(200);
      expect(stored()).toEqual({ status: 'ready' });
    });
    test('a server restarted on a disk another program filled starts, and its files can be read', async () => {
      const kept = await upload(a.client, 'kept.txt', 'readable on a full disk');
      try {
        await t.restart({ samePort: true, whileDown: async () => fill() });
        expect((await a.client.get('/api/files')).status).toBe(200);
        expect(await (await a.client.get(`/api/files/${kept.id}/download`)).text()).toBe('readable on a full disk');
      } finally {
        fs.rmSync(ballast, { force: true });
      }
    });
  },
);
