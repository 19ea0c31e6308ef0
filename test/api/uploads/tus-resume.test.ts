import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { TestClient } from '../../helpers/client.ts';
import { downloaded, uploadRaw } from '../../helpers/files.ts';
import { ServerProcess } from '../../helpers/server-process.ts';
import * as seed from '../../helpers/seed.ts';
import { createUpload, filesContaining, headUpload, patchUpload, stagedFiles, tusUpload } from '../../helpers/tus.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { eventually } from '../../helpers/eventually.ts';

const MiB = 1024 * 1024;

let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s), { startWorker: false });

/** The offset HEAD reports once it stops moving (a PATCH cut off is still recording what it received). */
function settledOffset(client: TestClient, location: string): Promise<number> {
  let last = -1;
  return eventually(async () => {
    const offset = Number((await headUpload(client, location)).headers.get('upload-offset'));
    const settled = offset === last;
    last = offset;
    return settled && offset;
  });
}

/**
 * A reverse proxy on loopback that refuses request bodies over `limit` bytes with 413, as nginx's
 * client_max_body_size or a tunnel's body cap does, and passes everything else on.
 */
function bodyCappedProxy(target: string, limit: number) {
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    maxRequestBodySize: 64 * MiB,
    async fetch(req) {
      const body = req.body ? Buffer.from(await req.arrayBuffer()) : null;
      if (body && body.length > limit) return new Response('413 Request Entity Too Large', { status: 413 });
      const url = new URL(req.url);
      const headers = new Headers(req.headers);
      headers.delete('host');
      return fetch(target + url.pathname + url.search, { method: req.method, headers, body, redirect: 'manual' });
    },
  });
}

describe('resumable uploads through trouble', () => {
  test('a proxy that caps bodies: multipart and one-request tus fail, tus in chunks under the cap arrives byte-exact', async () => {
    const proxy = bodyCappedProxy(t.url, MiB);
    const via = `http://127.0.0.1:${proxy.port}`;
    try {
      const client = new TestClient(via);
      for (const [k, v] of admin.client.cookies) client.cookies.set(k, v);
      const data = randomBytes(4 * MiB + 12_345);
      expect((await uploadRaw(client, 'big.bin', data)).status).toBe(413);
      const whole = tusUpload(via, client, data, { metadata: { filename: 'whole.bin' } });
      await expect(whole.done).rejects.toThrow(/413/);
      const { itemId } = await tusUpload(via, client, data, { chunkSize: MiB, metadata: { filename: 'chunked.bin' } }).done;
      expect(await downloaded(admin.client, itemId!)).toEqual(data);
    } finally {
      await proxy.stop(true);
    }
  });

  test('a client cut off mid-chunk resumes from what the server received, and sends no byte twice past it', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(12 * MiB);
    let cut = false;
    const first = tusUpload(t.url, o.client, data, {
      chunkSize: 4 * MiB,
      metadata: { filename: 'cut.bin' },
      onProgress: (sent) => {
        if (sent < 6 * MiB || cut) return;
        cut = true;
        void first.upload.abort();
      },
    });
    first.done.catch(() => {});
    // Asked only after the cut: on a loaded machine two HEADs before the first chunk's answer agreed on 0.
    const location = await eventually(
      () => (cut && first.upload.url && stagedFiles(t.dataDir).length > 0 ? new URL(first.upload.url).pathname : false),
      { intervalMs: 20 },
    );
    const offset = await settledOffset(o.client, location);
    // The first chunk was acknowledged; what arrived of the second before the cut was kept too.
    expect(offset).toBeGreaterThan(4 * MiB);
    expect(offset).toBeLessThan(data.length);
    let resentFrom = -1;
    const resumed = tusUpload(t.url, o.client, data, {
      uploadUrl: `${t.url}${location}`,
      chunkSize: 4 * MiB,
      metadata: { filename: 'cut.bin' },
      onProgress: (sent) => {
        if (resentFrom < 0) resentFrom = sent;
      },
    });
    const { itemId } = await resumed.done;
    expect(resentFrom).toBeGreaterThanOrEqual(offset);
    expect(await downloaded(o.client, itemId!)).toEqual(data);
  });
});

describe('kill -9 of the server mid-upload (a separate process)', () => {
  test('acknowledged bytes survive, the client resumes from the offset, the file is byte-exact; no plaintext on disk at any point', async () => {
    const dataDir = tempDir('coffer-tus-kill-');
    const server = new ServerProcess(dataDir);
    try {
      await server.start();
      const signup = new TestClient(server.url);
      expect((await signup.post('/api/signup', { email: 'kill@example.test', password: 'correct horse battery' })).status).toBe(200);
      const marker = Buffer.from('KILL-NINE-PLAINTEXT-MARKER');
      const data = Buffer.alloc(16 * MiB + 777);
      for (let i = 0; i < data.length; i += marker.length) marker.copy(data, i);
      let acknowledged = 0;
      const first = tusUpload(server.url, signup, data, {
        chunkSize: MiB,
        metadata: { filename: 'survivor.txt' },
        onChunkComplete: (_size, accepted) => {
          acknowledged = accepted;
        },
      });
      first.done.catch(() => {});
      await eventually(() => acknowledged >= 6 * MiB, { timeoutMs: 30_000, intervalMs: 5 });
      // Part of the next chunk on its way, none of it acknowledged: the client reports no progress inside a chunk.
      await Bun.sleep(15);
      await server.kill();
      const killedAt = acknowledged;
      const location = new URL(first.upload.url!).pathname;
      expect(filesContaining(dataDir, marker)).toEqual([]);

      await server.start();
      const client = new TestClient(server.url);
      for (const [k, v] of signup.cookies) client.cookies.set(k, v);
      const head = await headUpload(client, location);
      expect(head.status).toBe(200);
      const offset = Number(head.headers.get('upload-offset'));
      expect(offset).toBeGreaterThanOrEqual(killedAt);
      let sentAgain = 0;
      const { itemId } = await tusUpload(server.url, client, data, {
        uploadUrl: server.url + location,
        chunkSize: MiB,
        metadata: { filename: 'survivor.txt' },
        onChunkComplete: (size) => {
          sentAgain += size;
        },
      }).done;
      // Only what the server had not acknowledged is sent again.
      expect(sentAgain).toBe(data.length - offset);
      expect(await downloaded(client, itemId!)).toEqual(data);
      expect(filesContaining(dataDir, marker)).toEqual([]);
      expect(stagedFiles(dataDir)).toEqual([]);
    } finally {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a power loss: the database kept the offset of a PATCH whose bytes the disk did not', () => {
  test('after the restart HEAD reports where the authenticated bytes end; the client resends from there; the file is byte-exact', async () => {
    const log = memoryLogger();
    const p = await startTestServer({ startWorker: false, logger: log });
    try {
      const o = await seed.owner(p);
      const data = randomBytes(3 * MiB);
      const location = (await createUpload(o.client, data.length, { filename: 'power.bin' })).headers.get('location')!;
      for (const [from, to] of [
        [0, MiB],
        [MiB, 2 * MiB + 1000],
      ] as const) {
        expect((await patchUpload(o.client, location, from, data.subarray(from, to))).status).toBe(204);
      }
      const row = p.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!;
      // Neither PATCH was synced: the disk is synced behind an upload once 64 MiB are not yet durable.
      expect([row.offset, row.durableOffset]).toEqual([2 * MiB + 1000, 0]);
      await p.restart({
        samePort: true,
        // The power loss: the disk kept 300 KB of the second PATCH's sealed bytes.
        whileDown: async () => fs.truncateSync(path.join(p.dataDir, 'blobs', '.staging', row.storageKey), 16 + MiB + 16 * 16 + 300_000),
      });
      const offset = Number((await headUpload(o.client, location)).headers.get('upload-offset'));
      expect(offset).toBe(MiB + 4 * 64 * 1024);
      expect(log.lines.some((l) => l.level === 'warn' && l.msg === 'resumable upload resumes from the bytes the disk kept')).toBe(true);
      // The client that was told 2 MiB + 1000 gets 409 and asks HEAD again, as tus clients do.
      expect((await patchUpload(o.client, location, 2 * MiB + 1000, data.subarray(2 * MiB + 1000))).status).toBe(409);
      const done = await patchUpload(o.client, location, offset, data.subarray(offset));
      expect(done.status).toBe(204);
      expect(await downloaded(o.client, done.headers.get('upload-item-id')!)).toEqual(data);
    } finally {
      await p.stop();
    }
  });

  test('PATCHes ending at a segment boundary are not each recorded; HEAD answers from memory, and after a restart from the staged segments', async () => {
    const p = await startTestServer({ startWorker: false });
    try {
      const o = await seed.owner(p);
      const data = randomBytes(5 * MiB + 123);
      const location = (await createUpload(o.client, data.length, { filename: 'unrecorded.bin' })).headers.get('location')!;
      const id = location.split('/').at(-1)!;
      for (const [from, to] of [
        [0, MiB],
        [MiB, 2 * MiB],
        [2 * MiB, 4 * MiB],
      ] as const) {
        expect((await patchUpload(o.client, location, from, data.subarray(from, to))).status).toBe(204);
      }
      // Only the first PATCH was committed (its bytes end the creation's short expiry); no sync has finished since.
      const row = p.server.ctx.repos.tusUploads.get(id)!;
      expect([row.offset, row.durableOffset]).toEqual([MiB, 0]);
      expect(Number((await headUpload(o.client, location)).headers.get('upload-offset'))).toBe(4 * MiB);
      // The restart (as a kill -9: nothing recorded on the way down) and a power loss that kept 3 MiB and 100 bytes of the staged segments.
      await p.restart({
        samePort: true,
        whileDown: async () => fs.truncateSync(path.join(p.dataDir, 'blobs', '.staging', row.storageKey), 16 + 48 * (64 * 1024 + 16) + 100),
      });
      const offset = Number((await headUpload(o.client, location)).headers.get('upload-offset'));
      expect(offset).toBe(3 * MiB);
      expect(p.server.ctx.repos.tusUploads.get(id)!.durableOffset).toBe(3 * MiB);
      const done = await patchUpload(o.client, location, offset, data.subarray(offset));
      expect(done.status).toBe(204);
      expect(await downloaded(o.client, done.headers.get('upload-item-id')!)).toEqual(data);
    } finally {
      await p.stop();
    }
  });

  test('after a restart with every byte there, HEAD keeps the acknowledged offset', async () => {
    const p = await startTestServer({ startWorker: false });
    try {
      const o = await seed.owner(p);
      const data = randomBytes(2 * MiB);
      const location = (await createUpload(o.client, data.length, { filename: 'kept.bin' })).headers.get('location')!;
      expect((await patchUpload(o.client, location, 0, data.subarray(0, MiB + 5))).status).toBe(204);
      await p.restart({ samePort: true });
      expect(Number((await headUpload(o.client, location)).headers.get('upload-offset'))).toBe(MiB + 5);
      const done = await patchUpload(o.client, location, MiB + 5, data.subarray(MiB + 5));
      expect(await downloaded(o.client, done.headers.get('upload-item-id')!)).toEqual(data);
    } finally {
      await p.stop();
    }
  });
});
