import { afterAll, describe, expect, spyOn, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { ManualClock } from '../../src/clock.ts';
import * as seed from '../helpers/seed.ts';
import { TestClient } from '../helpers/client.ts';
import { folder, seedRows, SseReader, upload, uploadRaw } from '../helpers/files.ts';
import { MAIN, parseJson, runCli, serveCli } from '../helpers/cli.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import { eventually } from '../helpers/eventually.ts';
import { DavClient, davLogin } from '../helpers/dav.ts';
import { memoryLogger, waitForLine } from '../helpers/logs.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function workDir(): { dir: string; pass: string; env: Record<string, string> } {
  const dir = tempDir('coffer-replication-');
  dirs.push(dir);
  const pass = path.join(dir, 'passphrase');
  fs.writeFileSync(pass, 'a long replica passphrase\n', { mode: 0o600 });
  return { dir, pass, env: { BACKUP_PASSPHRASE_FILE: pass } };
}

function query<T>(dataDir: string, sql: string): T[] {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    return db.query<T, []>(sql).all();
  } finally {
    db.close();
  }
}

const fileNames = (dataDir: string) =>
  query<{ name: string }>(dataDir, `SELECT name FROM items WHERE type = 'file' ORDER BY name`).map((r) => r.name);

/** Waits until the wall clock is past the second `at` falls in, so a later change is shipped in a later second. */
async function nextSecond(at: number): Promise<void> {
  const target = Math.floor(at / 1000) * 1000 + 1100;
  await Bun.sleep(Math.max(0, target - Date.now()));
}

/**
 * The first generation's snapshot is among the destination's objects: replication ships. Not a segment: a
 * generation that began after the first changes (its key derivation is slow on a loaded machine) holds them in its snapshot.
 */
const firstShipped = (objects: string[]) => objects.some((n) => n.endsWith('_snapshot'));

/**
 * The generation `client`'s server replicates under, once it has begun: what is committed from then on ships in its
 * segments, while what is committed before its snapshot (a promotion or a start on a loaded machine) is in that snapshot.
 */
const generationOf = (client: TestClient) =>
  eventually(async () => {
    const r = (await (await client.get('/api/user/backups')).json()) as { replication: { generation: string | null } };
    return r.replication.generation ?? false;
  });

/** `coffer serve --standby DEST` on `<dir>/standby`, following every 100 ms. */
function standbyOn(dest: string, dir: string, env: Record<string, string>, opts: { preload?: string } = {}) {
  return serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(dir, 'standby'), '--standby', dest], {
    env: { ...env, REPLICATE_INTERVAL_MS: '100' },
    ...opts,
  });
}

/** A replica under a prefix of its own in the test bucket: its REPLICATE_TO, and `env` with the BACKUP_S3_* that reach it. */
function bucketReplica(s3: TestS3, label: string, env: Record<string, string>) {
  const prefix = `${label}-${randomBytes(3).toString('hex')}/`;
  const s3Env = s3.env(prefix);
  const bucketEnv = {
    ...env,
    BACKUP_S3_ENDPOINT: s3Env.S3_ENDPOINT!,
    BACKUP_S3_ACCESS_KEY_ID: s3Env.S3_ACCESS_KEY_ID!,
    BACKUP_S3_SECRET_ACCESS_KEY: s3Env.S3_SECRET_ACCESS_KEY!,
  };
  return { prefix, dest: `s3://${s3.bucket}/${prefix}`, bucketEnv };
}

async function restore(dest: string, env: Record<string, string>, extra: string[] = []) {
  const out = path.join(tempDir('coffer-replica-restored-'));
  dirs.push(out);
  fs.rmSync(out, { recursive: true });
  const r = await runCli(['restore', '--from-replica', dest, '--data-dir', out, '--json', ...extra], { env });
  return { r, out };
}

describe('replication to a directory', () => {
  test('kill -9 under mixed writes while another process checkpoints: the restore holds every change committed an interval and a second before the kill', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const dataDir = path.join(dir, 'data');
    const interval = 200;
    const server = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
      env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: String(interval) },
    });
    // Checkpoints from outside, as fast as SQLite allows: the known way WAL shipping loses frames. No busy
    // timeout: a RESTART that waits for readers holds the write lock meanwhile, and would starve the server.
    const checkpointer = Bun.spawn(
      [
        process.execPath,
        '-e',
        `const { Database } = require('bun:sqlite');
           const db = new Database(${JSON.stringify(path.join(dataDir, 'coffer.db'))});
           db.run('PRAGMA busy_timeout = 0');
           for (;;) { for (const mode of ['PASSIVE', 'RESTART', 'TRUNCATE']) { try { db.query('PRAGMA wal_checkpoint(' + mode + ')').get(); } catch {} } Bun.sleepSync(3); }`,
      ],
      { stdout: 'ignore', stderr: 'ignore' },
    );
    const client = new TestClient(server.url);
    const signup = await client.post('/api/signup', { email: seed.uniqueEmail('admin'), password: 'correct horse battery', name: 'A' });
    expect(signup.status).toBe(200);

    const acked = { files: new Map<string, number>(), renames: [] as Array<{ id: string; name: string; at: number }> };
    const shares: Array<{ id: string; at: number }> = [];
    const versions: Array<{ id: string; at: number }> = [];
    const ids: string[] = [];
    let running = true;
    const worker = async (w: number) => {
      for (let i = 0; running; i++) {
        try {
          const kind = ids.length < 4 ? 0 : i % 4;
          if (kind === 0) {
            const item = await upload(client, `w${w}-${i}-${randomBytes(3).toString('hex')}.bin`, randomBytes(4096));
            ids.push(item.id);
            acked.files.set(item.id, Date.now());
          } else {
            const id = ids[Math.floor(Math.random() * ids.length)]!;
            if (kind === 1) {
              const name = `renamed-${w}-${i}.bin`;
              if ((await client.post('/api/files/rename', { id, name })).status === 200) acked.renames.push({ id, name, at: Date.now() });
            } else if (kind === 2) {
              const res = await client.post('/api/files/share', { ids: [id], shared: true, expiry: 'never' });
              if (res.status === 200) shares.push({ id, at: Date.now() });
            } else {
              const form = new FormData();
              form.append('file', new File([randomBytes(4096)], 'v.bin'));
              const res = await client.request(`/api/files/${id}/replace`, { method: 'POST', body: form });
              if (res.status === 200) versions.push({ id, at: Date.now() });
            }
          }
        } catch {
          // The kill cuts requests off; only acknowledged changes count.
        }
      }
    };
    const load = [0, 1, 2, 3].map(worker);
    await Bun.sleep(4000);
    server.proc.kill('SIGKILL');
    const killedAt = Date.now();
    await server.proc.exited;
    running = false;
    await Promise.all(load);
    checkpointer.kill('SIGKILL');
    await checkpointer.exited;

    const { r, out } = await restore(dest, env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const cutoff = killedAt - interval - 1000;
    const files = new Map(
      query<{ id: string; name: string }>(out, `SELECT id, name FROM items WHERE type = 'file'`).map((f) => [f.id, f.name]),
    );
    const due = [...acked.files].filter(([, at]) => at < cutoff);
    expect(due.length).toBeGreaterThan(20);
    for (const [id] of due) expect(files.has(id)).toBe(true);
    for (const rn of acked.renames.filter((x) => x.at < cutoff)) {
      // A later rename of the same file may be there too.
      const later = acked.renames.filter((x) => x.id === rn.id && x.at >= rn.at).map((x) => x.name);
      expect(later).toContain(files.get(rn.id)!);
    }
    const linked = new Set(query<{ id: string }>(out, 'SELECT item_id AS id FROM share_links').map((s) => s.id));
    for (const s of shares.filter((x) => x.at < cutoff)) expect(linked.has(s.id)).toBe(true);
    const versionCount = new Map(
      query<{ id: string; n: number }>(out, 'SELECT item_id AS id, COUNT(*) AS n FROM file_versions GROUP BY item_id').map((v) => [
        v.id,
        v.n,
      ]),
    );
    for (const id of new Set(versions.map((v) => v.id))) {
      const due = versions.filter((v) => v.id === id && v.at < cutoff).length;
      expect(versionCount.get(id) ?? 0).toBeGreaterThanOrEqual(due);
    }
    // The blobs stayed on the dead box's disk: beside the restored database, nothing it names is missing.
    fs.cpSync(path.join(dataDir, 'blobs'), path.join(out, 'blobs'), { recursive: true });
    const doctor = parseJson(await runCli(['doctor', '--json', '--data-dir', out], { env }));
    expect(doctor.database.integrity).toBe('ok');
    expect(doctor.missingObjects.count).toBe(0);
  }, 60_000);

  test('point-in-time restores return exactly the rows of three moments; nothing readable reaches the destination', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const email = seed.uniqueEmail('pitr');
      const a = await seed.admin(t, email);
      const moments: Array<{ at: number; names: string[] }> = [];
      const names: string[] = [];
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 3; i++) {
          const name = `moment-${round}-${i}-confidential.txt`;
          await upload(a.client, name, `content ${round} ${i}`);
          names.push(name);
        }
        // Shipped within the interval: the moment is taken once it surely has been.
        await Bun.sleep(400);
        moments.push({ at: Date.now(), names: [...names].sort() });
        await nextSecond(Date.now());
      }
      await upload(a.client, 'after-every-moment.txt', 'later');
      await eventually(async () => {
        const listing = parseJson(await runCli(['replica', 'list', dest, '--json'], { env }));
        expect(Date.parse(listing.restorable.to)).toBeGreaterThan(moments[2]!.at);
      });
      for (const m of moments) {
        const { r, out } = await restore(dest, env, ['--at', new Date(m.at).toISOString()]);
        expect(r.code).toBe(0);
        expect(fileNames(out)).toEqual(m.names);
      }
      const { r, out } = await restore(dest, env);
      expect(r.code).toBe(0);
      expect(fileNames(out)).toContain('after-every-moment.txt');
      const early = await restore(dest, env, ['--at', '2001-01-01T00:00:00Z']);
      expect(early.r.code).toBe(1);
      expect(early.r.stderr).toContain('the replica reaches back only to');

      // Every object at the destination is sealed: no name, no email, no SQLite page in the clear.
      const objects = fs.readdirSync(dest);
      expect(objects.some((n) => n.includes('_wal_'))).toBe(true);
      for (const name of objects) {
        const bytes = fs.readFileSync(path.join(dest, name));
        for (const needle of ['confidential', email, 'SQLite format 3', 'CREATE TABLE']) expect(bytes.includes(needle)).toBe(false);
      }
    } finally {
      await t.stop();
    }
  }, 60_000);

  test('a client resuming past a point-in-time restore (a stream’s Last-Event-ID, a WebDAV sync token) is told to list again, though the restored server has numbered as many changes since', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const a = await seed.admin(t);
    const dav = await davLogin(t, a);
    const syncToken = async (client: DavClient, token: string) => {
      const body = `<?xml version="1.0" encoding="utf-8"?><D:sync-collection xmlns:D="DAV:"><D:sync-token>${token}</D:sync-token><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`;
      const res = await client.request('REPORT', '', { headers: { 'content-type': 'application/xml' }, body });
      return { status: res.status, token: /<D:sync-token>([^<]*)<\/D:sync-token>/.exec(await res.text())?.[1] ?? '' };
    };
    let moment: number;
    let lastEventId: number;
    let token: string;
    try {
      await upload(a.client, 'kept.txt', 'kept');
      await Bun.sleep(400);
      moment = Date.now();
      await nextSecond(moment);
      // The old server hands out seqs past the moment the restore goes back to; a client follows them.
      for (let i = 0; i < 3; i++) await upload(a.client, `lost-${i}.txt`, 'lost');
      lastEventId = t.server.ctx.services.changes.latestSeq();
      token = (await syncToken(dav, '')).token;
      expect(token).not.toBe('');
    } finally {
      await t.server.stop();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
    const { r, out } = await restore(dest, env, ['--at', new Date(moment).toISOString()]);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toEqual(['kept.txt']);
    const restored = await startTestServer({ dataDir: out, env });
    try {
      const client = new TestClient(restored.url);
      expect((await client.post('/api/login', { email: a.email, password: a.password })).status).toBe(200);
      // More changes than the old server made past the moment: their seqs would reach the client's.
      for (let i = 0; i < 5; i++) await folder(client, `after-the-restore-${i}`);
      const latest = restored.server.ctx.services.changes.latestSeq();
      expect(latest).toBeGreaterThan(lastEventId);
      const res = await client.get('/api/files/events', { 'Last-Event-ID': String(lastEventId) });
      expect(res.status).toBe(200);
      const reader = new SseReader(res);
      expect((await reader.nextEvent()).data).toEqual({ type: 'connected' });
      expect(await reader.nextEvent()).toEqual({ data: { type: 'reset' }, event: 'reset', id: String(latest) });
      await reader.close();
      const again = await syncToken(new DavClient(restored.url, dav.email, dav.password), token);
      expect(again.status).toBe(403);
    } finally {
      await restored.stop();
    }
  }, 60_000);

  test('a destination directory gone mid-generation (a share unmounted) is not made again: the changes wait on disk, and once it is back the restore holds them all', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const away = path.join(dir, 'replica-unmounted');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const outbox = path.join(t.dataDir, 'replication', 'outbox');
    try {
      const a = await seed.admin(t);
      await upload(a.client, 'before.txt', 'before');
      await eventually(() => {
        expect(fs.readdirSync(dest).some((n) => n.includes('_wal_'))).toBe(true);
        expect(fs.readdirSync(outbox)).toEqual([]);
      });
      fs.renameSync(dest, away);
      await upload(a.client, 'while-away-1.txt', 'one');
      await upload(a.client, 'while-away-2.txt', 'two');
      await eventually(async () => {
        const r = (await (await a.client.get('/api/user/backups')).json()) as { replication: { warning: string | null } };
        expect(r.replication.warning).toContain('is gone');
      });
      await Bun.sleep(500);
      expect(fs.existsSync(dest)).toBe(false);
      expect(fs.readdirSync(outbox).some((n) => n.includes('_wal_'))).toBe(true);
      fs.renameSync(away, dest);
      await eventually(() => expect(fs.readdirSync(outbox)).toEqual([]), { timeoutMs: 15_000 });
    } finally {
      await t.stop();
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toEqual(['before.txt', 'while-away-1.txt', 'while-away-2.txt']);
  }, 60_000);

  test('a data directory restored from the replica, started with the same REPLICATE_TO, ships there again: it takes the fence over, and the old primary back refuses and prunes nothing there', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const replicating = { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' };
    const t = await startTestServer({ env: replicating });
    const a = await seed.admin(t);
    await upload(a.client, 'before-the-loss.txt', 'one');
    await eventually(() => expect(fs.readdirSync(path.join(t.dataDir, 'replication', 'outbox'))).toEqual([]));
    await t.server.stop();
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    const restored = await startTestServer({ dataDir: out, env: replicating });
    try {
      const client = new TestClient(restored.url);
      expect((await client.post('/api/login', { email: a.email, password: a.password })).status).toBe(200);
      await upload(client, 'after-the-restore.txt', 'two');
      await eventually(async () => {
        const status = (await (await client.get('/api/user/backups')).json()) as {
          replication: { generation: string | null; warning: string | null };
        };
        expect(status.replication.warning).toBeNull();
        expect(status.replication.generation).not.toBeNull();
        expect(fs.readdirSync(path.join(out, 'replication', 'outbox'))).toEqual([]);
      });
    } finally {
      await restored.server.stop();
    }
    const again = await restore(dest, env);
    expect(again.r.code).toBe(0);
    expect(fileNames(again.out)).toEqual(['after-the-restore.txt', 'before-the-loss.txt']);
    // What a write the new primary's crash cut off would leave, an hour old: any prune removes it, only that server's may.
    const leftover = `.g20260101T000000000Z-0000aaaa_snapshot.${process.pid}.partial`;
    fs.writeFileSync(path.join(dest, leftover), 'cut off');
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    fs.utimesSync(path.join(dest, leftover), hoursAgo, hoursAgo);
    const before = fs.readdirSync(dest).sort();
    // The old primary back: its first sending finds the fence taken over, the moment its first prune would be due.
    const old = await startTestServer({ dataDir: t.dataDir, env: replicating });
    try {
      const oldAdmin = await seed.login(old, a.email);
      await eventually(async () => {
        const status = (await (await oldAdmin.get('/api/user/backups')).json()) as { replication: { warning: string | null } };
        expect(status.replication.warning).toContain('Another server took over');
      });
      // Fenced, it prunes nothing at the destination another server took over.
      await Bun.sleep(500);
      expect(fs.readdirSync(dest).sort()).toEqual(before);
    } finally {
      await old.stop();
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  test('a last segment cut short at the destination is named, with the moment before it, which a restore --at still reaches', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const a = await seed.admin(t);
      await upload(a.client, 'earlier.txt', 'earlier');
      await Bun.sleep(400);
      await nextSecond(Date.now());
      await upload(a.client, 'in-the-cut-segment.txt', 'later');
      await eventually(() => expect(fs.readdirSync(path.join(t.dataDir, 'replication', 'outbox'))).toEqual([]));
    } finally {
      await t.stop();
    }
    const last = fs
      .readdirSync(dest)
      .filter((n) => n.includes('_wal_'))
      .sort()
      .at(-1)!;
    fs.truncateSync(path.join(dest, last), Math.floor(fs.statSync(path.join(dest, last)).size / 2));
    const { r } = await restore(dest, env);
    expect(r.code).toBe(1);
    const said = /^coffer: the replica is not usable: (\S+) was cut short; the state before it is restorable with --at (\S+)$/;
    expect(r.stderr.trim()).toMatch(said);
    const hint = said.exec(r.stderr.trim());
    expect(hint?.[1]).toBe(last);
    const earlier = await restore(dest, env, ['--at', hint![2]!]);
    expect(earlier.r.code).toBe(0);
    expect(fileNames(earlier.out)).toEqual(['earlier.txt']);
  }, 60_000);

  test('a flipped byte, a removed segment and a reordered one are refused by verify and restore, naming the segment', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const a = await seed.admin(t);
      await eventually(() => expect(firstShipped(fs.readdirSync(dest))).toBe(true));
      const shipped = () => fs.readdirSync(dest).filter((n) => n.includes('_wal_')).length;
      for (let i = 0; i < 4; i++) {
        const before = shipped();
        await upload(a.client, `f-${i}.txt`, `content ${i}`);
        await eventually(() => expect(shipped()).toBeGreaterThan(before));
      }
    } finally {
      await t.stop();
    }
    const verify = await runCli(['replica', 'verify', dest], { env });
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain('sound: 1 generation(s)');
    const segments = fs
      .readdirSync(dest)
      .filter((n) => n.includes('_wal_'))
      .sort();
    expect(segments.length).toBeGreaterThanOrEqual(3);

    const tampered = (label: string, damage: (copy: string) => string) => {
      const copy = path.join(dir, label);
      fs.cpSync(dest, copy, { recursive: true });
      return { copy, named: damage(copy) };
    };
    const cases = [
      tampered('flipped', (copy) => {
        const file = path.join(copy, segments[1]!);
        const bytes = fs.readFileSync(file);
        bytes[bytes.length - 40]! ^= 0x01;
        fs.writeFileSync(file, bytes);
        return segments[1]!;
      }),
      tampered('removed', (copy) => {
        fs.rmSync(path.join(copy, segments[1]!));
        return segments[1]!.replace(/_\d{13}$/, '');
      }),
      tampered('reordered', (copy) => {
        // Segments 1 and 2 swap contents under each other's names.
        const [x, y] = [path.join(copy, segments[0]!), path.join(copy, segments[1]!)];
        const bx = fs.readFileSync(x);
        fs.writeFileSync(x, fs.readFileSync(y));
        fs.writeFileSync(y, bx);
        return segments[0]!;
      }),
    ];
    for (const { copy, named } of cases) {
      const v = await runCli(['replica', 'verify', copy], { env });
      expect(v.code).toBe(1);
      expect(v.stderr).toContain(named);
      const { r, out } = await restore(copy, env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(named);
      expect(fs.existsSync(out)).toBe(false);
    }
    const wrong = path.join(dir, 'wrong');
    fs.writeFileSync(wrong, 'not the passphrase\n');
    const v = await runCli(['replica', 'verify', dest], { env: { BACKUP_PASSPHRASE_FILE: wrong } });
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('the passphrase is wrong');
  }, 60_000);
});

describe('a master key rotation beside the server', () => {
  test('the replica ships the new key with a new generation: the restored data directory starts and serves every file', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const generations = () =>
      new Set(
        fs
          .readdirSync(dest)
          .filter((n) => n.startsWith('g'))
          .map((n) => n.split('_')[0]!),
      ).size;
    const files: Array<{ id: string; content: string }> = [];
    try {
      const a = await seed.admin(t);
      files.push({ id: (await upload(a.client, 'before-the-rotation.txt', 'one')).id, content: 'one' });
      await eventually(() => expect(generations()).toBe(1));
      const before = generations();
      const rotated = await runCli(['keys', 'rotate', '--data-dir', t.dataDir], { env });
      expect(rotated.code).toBe(0);
      files.push({ id: (await upload(a.client, 'after-the-rotation.txt', 'two')).id, content: 'two' });
      await eventually(() => {
        expect(generations()).toBeGreaterThan(before);
        expect(fs.readdirSync(path.join(t.dataDir, 'replication', 'outbox'))).toEqual([]);
      });
    } finally {
      await t.server.stop();
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    // Local storage: the contents come from the old box's blobs/, the keys that open them from the replica.
    fs.cpSync(path.join(t.dataDir, 'blobs'), path.join(out, 'blobs'), { recursive: true });
    const restored = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', out], { env });
    try {
      const email = query<{ email: string }>(out, 'SELECT email FROM users')[0]!.email;
      const client = new TestClient(restored.url);
      expect((await client.post('/api/login', { email, password: 'correct horse battery' })).status).toBe(200);
      for (const f of files) expect(await (await client.get(`/api/files/${f.id}/download`)).text()).toBe(f.content);
    } finally {
      await restored.stop();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a long outage', () => {
  test('past REPLICATE_MAX_LAG_BYTES the waiting changes are dropped, the admin is told, and a new generation starts once the destination is back', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', REPLICATE_MAX_LAG_BYTES: '64K' } });
    try {
      const a = await seed.admin(t);
      await upload(a.client, 'before.txt', 'one');
      await eventually(() => expect(firstShipped(fs.readdirSync(dest))).toBe(true));
      const first = fs
        .readdirSync(dest)
        .find((n) => n.endsWith('_snapshot'))!
        .split('_')[0]!;
      fs.renameSync(dest, `${dest}.away`);
      fs.writeFileSync(dest, 'the destination is away');
      const status = async () =>
        ((await (await a.client.get('/api/user/backups')).json()) as { replication: { warning: string | null } }).replication;
      for (let i = 0; (await status()).warning?.includes('REPLICATE_MAX_LAG_BYTES') !== true; i++) {
        if (i > 400) throw new Error('the backlog was never dropped');
        await upload(a.client, `during-${i}.bin`, randomBytes(2048));
      }
      expect(fs.readdirSync(path.join(t.dataDir, 'replication', 'outbox')).filter((n) => n.includes('_wal_'))).toEqual([]);
      fs.rmSync(dest);
      fs.renameSync(`${dest}.away`, dest);
      await upload(a.client, 'after.txt', 'three');
      await eventually(async () => {
        expect(fs.readdirSync(dest).filter((n) => n.endsWith('_snapshot') && !n.startsWith(first))).toHaveLength(1);
        expect((await status()).warning).toBeNull();
      });
    } finally {
      await t.stop();
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toContain('after.txt');
    expect(fileNames(out)).toContain('during-0.bin');
  }, 120_000);
  test('each round costs the same however many segments wait: the outbox is not listed again every round (counted: names read and files stat’ed in it stay under one per segment)', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    fs.writeFileSync(dest, 'the destination is away');
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', REPLICATE_MAX_LAG_BYTES: '1G' } });
    const outbox = path.join(t.dataDir, 'replication', 'outbox');
    const inOutbox = (p: unknown) => String(p).startsWith(outbox);
    // The server runs in this process: these see its listings of the outbox (calls go through unchanged).
    const readdir = spyOn(fs, 'readdirSync');
    const stat = spyOn(fs, 'statSync');
    try {
      const a = await seed.admin(t);
      const waiting = async (kind: string) => (await fs.promises.readdir(outbox)).filter((n) => n.includes(kind)).length;
      await eventually(async () => expect(await waiting('_snapshot')).toBe(1));
      const written = 40;
      for (let i = 0; i < written; i++) {
        const before = await waiting('_wal_');
        await upload(a.client, `during-${i}.txt`, `x${i}`);
        // A segment a round: a listing each round would read again every segment waiting before it.
        await eventually(async () => expect(await waiting('_wal_')).toBeGreaterThan(before));
      }
      const namesRead = readdir.mock.calls
        .map(([p], i) => (inOutbox(p) ? (readdir.mock.results[i]!.value as unknown[]).length : 0))
        .reduce((sum, n) => sum + n, 0);
      expect(namesRead + stat.mock.calls.filter(([p]) => inOutbox(p)).length).toBeLessThan(written);
    } finally {
      readdir.mockRestore();
      stat.mockRestore();
      await t.stop();
    }
  }, 120_000);
});

describe('restarts while the destination is away', () => {
  test('each start begins a generation whose snapshot waits on disk: the waiting snapshots count towards REPLICATE_MAX_LAG_BYTES, so the outbox stays bounded', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const maxLag = 64 * 1024;
    const t = await startTestServer({ env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', REPLICATE_MAX_LAG_BYTES: '64K' } });
    const outbox = path.join(t.dataDir, 'replication', 'outbox');
    const waiting = () => fs.readdirSync(outbox).reduce((sum, n) => sum + fs.statSync(path.join(outbox, n)).size, 0);
    try {
      const a = await seed.admin(t);
      seedRows(t, a.id, null, 20, (i) => ({ name: `row-${i}-${randomBytes(100).toString('hex')}`, type: 'folder' }));
      fs.rmSync(dest, { recursive: true, force: true });
      fs.writeFileSync(dest, 'the destination is away');
      // The session outlives each restart: the same cookies on the server's new port.
      const status = async () => {
        const client = t.client();
        for (const [k, v] of a.client.cookies) client.cookies.set(k, v);
        const body = (await (await client.get('/api/user/backups')).json()) as {
          replication: { generation: string | null; warning: string | null };
        };
        return body.replication;
      };
      let largest = 0;
      let snapshot = 0;
      for (let restart = 0; restart < 8; restart++) {
        await t.restart();
        // Its first generation is written, or it was dropped with the backlog.
        await eventually(async () => {
          const { generation, warning } = await status();
          expect(generation !== null || warning?.includes('REPLICATE_MAX_LAG_BYTES')).toBe(true);
        });
        largest = Math.max(largest, waiting());
        for (const n of fs.readdirSync(outbox).filter((n) => n.endsWith('_snapshot')))
          snapshot = Math.max(snapshot, fs.statSync(path.join(outbox, n)).size);
      }
      await eventually(async () => expect((await status()).warning).toContain('REPLICATE_MAX_LAG_BYTES'));
      // At most the bound, the snapshot that took it over, and the next start's.
      expect(largest).toBeLessThan(maxLag + 2 * snapshot + 4096);
    } finally {
      await t.stop();
    }
  }, 60_000);
});

describe('generations', () => {
  test('a new generation a day; older ones go once no moment within REPLICATE_RETENTION needs them', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const clock = new ManualClock();
    const t = await startTestServer({
      clock,
      env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', REPLICATE_RETENTION: '1h' },
    });
    const generations = () => [...new Set(fs.readdirSync(dest).map((n) => n.split('_')[0]!))].filter((g) => g.startsWith('g')).sort();
    try {
      const a = await seed.admin(t);
      await upload(a.client, 'day-one.txt', 'one');
      await eventually(() => expect(generations()).toHaveLength(1));
      const [first] = generations();
      clock.advance(25 * 3_600_000);
      await upload(a.client, 'day-two.txt', 'two');
      // A day on: a new generation; the first stays, since the hour before the second began needs it.
      await eventually(() => expect(generations()).toHaveLength(2));
      await upload(a.client, 'day-two-later.txt', 'three');
      clock.advance(2 * 3_600_000);
      await eventually(() => expect(generations()).not.toContain(first));
      expect(generations()).toHaveLength(1);
    } finally {
      await t.stop();
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toEqual(['day-one.txt', 'day-two-later.txt', 'day-two.txt']);
  }, 60_000);
});

describe('a wall clock set ahead', () => {
  test('a year ahead by mistake, it deletes no generation: REPLICATE_RETENTION counts from the time before the jump, as every retention does', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const clock = new ManualClock();
    const logger = memoryLogger();
    const t = await startTestServer({
      clock,
      logger,
      env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', REPLICATE_RETENTION: '1h' },
    });
    const generations = () => [...new Set(fs.readdirSync(dest).map((n) => n.split('_')[0]!))].filter((g) => g.startsWith('g')).sort();
    const segments = () => fs.readdirSync(dest).filter((n) => n.includes('_wal_')).length;
    try {
      const a = await seed.admin(t);
      await upload(a.client, 'first.txt', 'one');
      await eventually(() => expect(generations()).toHaveLength(1));
      await t.restart();
      await eventually(() => expect(generations()).toHaveLength(2));
      const before = generations();
      clock.jump(365 * 86_400_000);
      await waitForLine(logger, (l) => l.msg.startsWith('the clock jumped forward'), 10_000);
      // A later segment goes out after the pruning that the jump made due (a sign-in is a change; the old session ended with the jump).
      const shipped = segments();
      await seed.login(t, a.email);
      await eventually(() => expect(segments()).toBeGreaterThan(shipped));
      // The jump also begins a generation (a day passed, as far as the wall clock says); none before it goes.
      expect(generations().slice(0, 2)).toEqual(before);
    } finally {
      await t.stop();
    }
  }, 60_000);
});

describe('replication to a bucket (s3rver)', () => {
  test('a bucket outage under load loses nothing: changes wait on disk, the lag shows, and it catches up', async () => {
    const s3 = await startTestS3();
    const { env } = workDir();
    const { prefix, dest, bucketEnv } = bucketReplica(s3, 'replica', env);
    const t = await startTestServer({ env: { ...bucketEnv, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const a = await seed.admin(t);
      await upload(a.client, 'before-the-outage.txt', 'one');
      await eventually(() => expect(firstShipped(s3.objectKeys(prefix))).toBe(true));
      const metric = async (name: string) => {
        const text = await (await t.client().get('/metrics')).text();
        return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
      };
      s3.failNext(1_000_000, 503, 'ServiceUnavailable', (method) => method === 'PUT');
      const during: string[] = [];
      for (let i = 0; i < 15; i++) {
        const name = `during-${i}.txt`;
        expect((await uploadRaw(a.client, name, `x${i}`)).status).toBe(200);
        during.push(name);
        await Bun.sleep(100);
      }
      await eventually(async () => expect(await metric('coffer_replication_lag_seconds')).toBeGreaterThan(0.5));
      expect(await metric('coffer_replication_failures_total')).toBeGreaterThan(0);
      s3.clearFailures();
      await eventually(async () => expect(await metric('coffer_replication_lag_seconds')).toBe(0));
      expect(await metric('coffer_replication_last_shipped_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 10);

      const listing = parseJson(await runCli(['replica', 'list', dest, '--json'], { env: bucketEnv }));
      expect(listing.generations).toHaveLength(1);
      const { r, out } = await restore(dest, bucketEnv);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(fileNames(out)).toEqual(['before-the-outage.txt', ...during].sort());
      const verify = await runCli(['replica', 'verify', dest], { env: bucketEnv });
      expect(verify.code).toBe(0);
      // The secrets shipped with the generation open the restored files: the master key came along.
      expect(fs.readFileSync(path.join(out, 'secrets.json'), 'utf8')).toBe(fs.readFileSync(path.join(t.dataDir, 'secrets.json'), 'utf8'));
    } finally {
      await t.stop();
      await s3.stop();
    }
  }, 60_000);
});

describe('a bucket that stalls', () => {
  test('segments go on being written to disk every interval while a call to the bucket hangs, the server stops within its grace, and the next start ships them all', async () => {
    const s3 = await startTestS3();
    const { env } = workDir();
    const { prefix, dest, bucketEnv } = bucketReplica(s3, 'stalled', env);
    const serverEnv = { ...bucketEnv, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' };
    let t = await startTestServer({ env: serverEnv });
    const outbox = path.join(t.dataDir, 'replication', 'outbox');
    const waiting = () => fs.readdirSync(outbox).filter((n) => n.includes('_wal_'));
    const names = ['before-the-stall.txt'];
    try {
      const a = await seed.admin(t);
      await upload(a.client, names[0]!, 'one');
      await eventually(() => expect(firstShipped(s3.objectKeys(prefix))).toBe(true));
      // A bucket that takes every upload and never answers within the client's timeout (a half-open connection, a hung NAS).
      s3.stall(12_000, (method) => method === 'PUT');
      for (let i = 0; waiting().length < 3; i++) {
        if (i > 20) throw new Error(`the outbox holds ${waiting().length} segments after ${i} uploads while the bucket stalls`);
        names.push(`during-the-stall-${i}.txt`);
        expect((await uploadRaw(a.client, names.at(-1)!, `x${i}`)).status).toBe(200);
        await Bun.sleep(150);
      }
      const stopping = performance.now();
      await t.server.stop({ graceMs: 1000 });
      expect(performance.now() - stopping).toBeLessThan(10_000);
      s3.clearFailures();
      t = await startTestServer({ dataDir: t.dataDir, env: serverEnv });
      await eventually(() => expect(fs.readdirSync(outbox)).toEqual([]), { timeoutMs: 20_000 });
      const { r, out } = await restore(dest, bucketEnv);
      expect(r.code).toBe(0);
      expect(fileNames(out)).toEqual([...names].sort());
    } finally {
      await t.stop();
      await s3.stop();
    }
  }, 60_000);
});

describe('a standby', () => {
  test('follows the replica, answers only /health, is promoted with one request and serves the files; the old primary then refuses to ship, and its lag metric and coffer doctor say so', async () => {
    const s3 = await startTestS3();
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const storageEnv = s3.env();
    const primaryEnv = { ...env, ...storageEnv, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' };
    const primaryDir = path.join(dir, 'primary');
    let primary = await startTestServer({ dataDir: primaryDir, env: primaryEnv });
    let standby: Awaited<ReturnType<typeof serveCli>> | null = null;
    try {
      const a = await seed.admin(primary);
      const dav = await davLogin(primary, a);
      await upload(a.client, 'before.txt', 'written before the standby started');
      standby = await standbyOn(dest, dir, { ...env, ...storageEnv });
      const health = async () => (await fetch(`${standby!.url}/health`)).json() as Promise<any>;
      expect((await health()).status).toBe('standby');
      const refused = await fetch(`${standby.url}/api/files`);
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: string }).error).toContain('standby');

      const after = await upload(a.client, 'after.txt', 'written while the standby follows');
      const shippedAt = Date.now();
      await eventually(async () => {
        const h = await health();
        expect(Date.parse(h.appliedAt)).toBeGreaterThanOrEqual(shippedAt - 1000);
        expect(h.lagSeconds).toBe(0);
      });
      const lastShippedSeq = String(primary.server.ctx.services.changes.latestSeq());
      await primary.server.stop();
      const fenceNow = () => JSON.parse(fs.readFileSync(path.join(dest, 'coffer-replica-fence'), 'utf8')).generation as string;
      const original = fenceNow();

      const promoted = await runCli(['promote', '--port', new URL(standby.url).port]);
      expect(promoted.stderr).toBe('');
      expect(promoted.stdout).toContain('promoted');
      await eventually(async () => expect((await fetch(`${standby!.url}/health`)).status).toBe(200));
      // How long promotion takes is a figure for the bench (`npm run bench -- replication`), not this test.
      await eventually(async () => expect((await login(standby!.url, a.email)).status).toBe(200));

      const client = new TestClient(standby.url);
      expect((await client.post('/api/login', { email: a.email, password: a.password })).status).toBe(200);
      const download = await client.get(`/api/files/${after.id}/download`);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe('written while the standby follows');
      // The dead primary may have numbered changes it never shipped: a stream resuming after the last one shipped starts with a reset.
      const resumed = new SseReader(await client.get('/api/files/events', { 'Last-Event-ID': lastShippedSeq }));
      expect((await resumed.nextEvent()).data).toEqual({ type: 'connected' });
      expect((await resumed.nextEvent()).event).toBe('reset');
      await resumed.close();
      const davGet = await new DavClient(standby.url, dav.email, dav.password).request('GET', 'before.txt');
      expect(davGet.status).toBe(200);
      expect(await davGet.text()).toBe('written before the standby started');
      // The promoted server replicates under a new generation and holds the fence.
      await generationOf(client);
      await upload(client, 'after-promotion.txt', 'on the new primary');
      // The fence moves from the old primary's generation to the new one's, which then ships its log.
      await eventually(() => {
        const fence = fenceNow();
        expect(fence).not.toBe(original);
        expect(fs.readdirSync(dest).some((n) => n.startsWith(fence) && n.includes('_wal_'))).toBe(true);
      });
      const fenced = fenceNow();

      // The old primary comes back: it keeps serving, but ships nothing and says why.
      // A segment being written is `.<name>.<pid>.partial` until it is renamed: the new primary's count as its own.
      const shipped = (n: string) => n.replace(/^\.(.*)\.\d+\.partial$/, '$1');
      const others = () =>
        fs
          .readdirSync(dest)
          .filter((n) => !shipped(n).startsWith(fenced))
          .sort();
      const before = others();
      primary = await startTestServer({ dataDir: primaryDir, env: primaryEnv });
      const oldAdmin = await seed.login(primary, a.email);
      await eventually(async () => {
        const status = (await (await oldAdmin.get('/api/user/backups')).json()) as { replication: { warning: string; generation: null } };
        expect(status.replication.warning).toContain('Another server took over the replica');
        expect(status.replication.generation).toBeNull();
      });
      // What an alert on coffer_replication_lag_seconds sees: behind since the start, not up to date.
      await eventually(async () => {
        const text = await (await primary.client().get('/metrics')).text();
        expect(Number(/^coffer_replication_lag_seconds (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0.5);
      });
      // And `coffer doctor` beside it.
      const doctor = await runCli(['doctor', '--json', '--data-dir', primaryDir], { env: primaryEnv });
      expect(doctor.code).toBe(3);
      expect(parseJson(doctor).replication.warning).toContain('Another server took over the replica');
      expect(others()).toEqual(before);
      expect(fenceNow()).toBe(fenced);
    } finally {
      await standby?.stop();
      await primary.stop();
      await s3.stop();
    }
  }, 60_000);
});

describe('a promoted standby restarted', () => {
  test('by the same command (its unit, after a reboot) is the primary again, replicating to the replica it followed', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const a = await seed.admin(primary);
    await upload(a.client, 'on-the-old-primary.txt', 'one');
    let standby = await standbyOn(dest, dir, env);
    try {
      await eventually(async () =>
        expect(((await (await fetch(`${standby.url}/health`)).json()) as { generation: string | null }).generation).not.toBeNull(),
      );
      await primary.stop();
      expect((await runCli(['promote', '--port', new URL(standby.url).port])).code).toBe(0);
      await eventually(async () => expect((await login(standby.url, a.email)).status).toBe(200));
      await standby.stop();
      standby = await standbyOn(dest, dir, env);
      const client = new TestClient(standby.url);
      expect((await client.post('/api/login', { email: a.email, password: a.password })).status).toBe(200);
      await generationOf(client);
      await upload(client, 'after-the-reboot.txt', 'two');
      const fence = () => JSON.parse(fs.readFileSync(path.join(dest, 'coffer-replica-fence'), 'utf8')).generation as string;
      const shippedBefore = fs.readdirSync(dest).length;
      await eventually(() => {
        expect(fs.readdirSync(dest).length).toBeGreaterThan(shippedBefore);
        expect(fs.readdirSync(path.join(dir, 'standby', 'replication', 'outbox'))).toEqual([]);
        expect(fs.readdirSync(dest).some((n) => n.startsWith(fence()) && n.includes('_wal_'))).toBe(true);
      });
    } finally {
      await standby.stop();
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toEqual(['after-the-reboot.txt', 'on-the-old-primary.txt']);
  }, 60_000);
});

describe('a standby that cannot listen', () => {
  test('on a port in use, or bound to an address this machine does not have: one line, exit 1; on every address it names localhost', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      await eventually(() => expect(fs.existsSync(path.join(dest, 'coffer-replica-fence'))).toBe(true));
      const port = String(primary.server.port);
      for (const [host, message] of [
        ['127.0.0.1', `coffer: port ${port} on 127.0.0.1 is already in use`],
        ['192.0.2.7', 'coffer: cannot listen on 192.0.2.7 (EADDRNOTAVAIL): '],
      ] as const) {
        const r = await runCli(['serve', '--port', port, '--host', host, '--data-dir', path.join(dir, 'standby'), '--standby', dest], {
          env,
        });
        expect({ host, code: r.code }).toEqual({ host, code: 1 });
        expect(r.stderr).toStartWith(message);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
      const everywhere = await serveCli(['--port', '0', '--host', '0.0.0.0', '--data-dir', path.join(dir, 'standby'), '--standby', dest], {
        env,
      });
      try {
        expect(everywhere.url).toMatch(/^http:\/\/localhost:\d+$/);
        expect((await fetch(`${everywhere.url}/health`)).status).toBe(200);
      } finally {
        await everywhere.stop();
      }
    } finally {
      await primary.stop();
    }
  }, 60_000);
});

describe('a standby on a replica that keeps days of segments', () => {
  test('each round lists only the names after its last applied segment, not the whole replica', async () => {
    const s3 = await startTestS3();
    const { dir, env } = workDir();
    const { prefix, dest, bucketEnv } = bucketReplica(s3, 'long', env);
    const primary = await startTestServer({
      env: { ...bucketEnv, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' },
    });
    // An older generation's segments, kept for REPLICATE_RETENTION: five pages of a listing (a day at one a second is 87).
    const older = 'g20261101T000000000Z-00000000';
    for (let i = 1; i <= 5000; i++) {
      const file = s3.objectFile(`${prefix}${older}_wal_${String(i).padStart(10, '0')}_${String(1_793_000_000_000 + i * 1000)}`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, 'x');
    }
    let standby: Awaited<ReturnType<typeof serveCli>> | null = null;
    try {
      const a = await seed.admin(primary);
      standby = await standbyOn(dest, dir, bucketEnv);
      const health = async () =>
        (await (await fetch(`${standby!.url}/health`)).json()) as { generation: string | null; appliedSegments: number };
      await eventually(async () => expect((await health()).generation).not.toBeNull());
      const applied = (await health()).appliedSegments;
      s3.requests.length = 0;
      await upload(a.client, 'followed.txt', 'one');
      await eventually(async () => expect((await health()).appliedSegments).toBeGreaterThan(applied));
      const lists = s3.requests.filter((r) => r.startsWith('GET ') && r.includes('list-type=2'));
      expect(lists.length).toBeGreaterThan(0);
      for (const list of lists) expect(list).toContain('start-after=');
    } finally {
      await standby?.stop();
      await primary.stop();
      await s3.stop();
    }
  }, 60_000);
});

describe('a standby with local storage', () => {
  test('promotion is refused from outside loopback; once promoted it serves the database and names the files whose contents stayed on the old box', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const a = await seed.admin(primary);
    const item = await upload(a.client, 'left-behind.txt', 'only on the old box');
    // Listening on every address, so a request can come from one that is not loopback.
    const standby = await serveCli(['--port', '0', '--host', '0.0.0.0', '--data-dir', path.join(dir, 'standby'), '--standby', dest], {
      env: { ...env, REPLICATE_INTERVAL_MS: '100' },
    });
    const logged = readAll(standby.proc.stdout);
    const port = new URL(standby.url).port;
    standby.url = `http://127.0.0.1:${port}`;
    try {
      await eventually(async () => {
        const h = (await (await fetch(`${standby.url}/health`)).json()) as { generation: string | null; lagSeconds: number };
        expect(h.generation).not.toBeNull();
        expect(h.lagSeconds).toBe(0);
      });
      await primary.stop();
      const outside = Object.values(os.networkInterfaces())
        .flat()
        .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
      if (outside) {
        const refused = await fetch(`http://${outside}:${port}/api/admin/promote`, { method: 'POST' });
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { error: string }).error).toContain('loopback only');
      }
      const promoted = await runCli(['promote', '--port', port]);
      expect(promoted.code).toBe(0);
      await eventually(async () => expect((await login(standby.url, a.email)).status).toBe(200));
      const client = new TestClient(standby.url);
      await client.post('/api/login', { email: a.email, password: a.password });
      const listed = (await (await client.get('/api/files')).json()) as Array<{ name: string }>;
      expect(listed.map((i) => i.name)).toContain('left-behind.txt');
      expect((await client.get(`/api/files/${item.id}/download`)).status).not.toBe(200);
    } finally {
      await standby.stop();
    }
    const log = await logged;
    expect(log).toContain('file contents missing on this box');
    expect(log).toContain('left-behind.txt');
  }, 60_000);
});

describe('what a restore and a standby leave behind', () => {
  test('a restore from the replica, and a standby killed while it builds and started again, leave nothing in the data directory but its own files', async () => {
    const s3 = await startTestS3();
    const { dir, env } = workDir();
    const { dest, bucketEnv } = bucketReplica(s3, 'leftovers', env);
    const primary = await startTestServer({
      env: { ...bucketEnv, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' },
    });
    const following = path.join(dir, 'standby');
    const startStandby = () =>
      Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', following, '--standby', dest], {
        env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', ...bucketEnv, REPLICATE_INTERVAL_MS: '100' },
        stdout: 'ignore',
        stderr: 'ignore',
      });
    const strays = () => (fs.existsSync(following) ? fs.readdirSync(following).filter((n) => n.startsWith('.')) : []);
    try {
      const a = await seed.admin(primary);
      // A snapshot of several records, so that its download can stop part-way.
      seedRows(primary, a.id, null, 4000, (i) => ({ name: `row-${i}-${randomBytes(100).toString('hex')}`, type: 'folder' }));
      await primary.restart();
      const outbox = path.join(primary.dataDir, 'replication', 'outbox');
      await eventually(() => expect(fs.readdirSync(outbox)).toEqual([]));
      const { r, out } = await restore(dest, bucketEnv);
      expect(r.code).toBe(0);
      expect(fs.readdirSync(out).sort()).toEqual(['blobs', 'coffer.db', 'replication', 'secrets.json']);

      s3.stopMidBody(1024 * 1024 + 4096, (method, url) => method === 'GET' && url.includes('_snapshot'));
      const killed = startStandby();
      await eventually(() => expect(strays().some((n) => /^\.standby-\d+\.db$/.test(n))).toBe(true), { timeoutMs: 20_000 });
      killed.kill('SIGKILL');
      await killed.exited;
      s3.clearFailures();
      const standby = startStandby();
      try {
        await eventually(() => expect(strays()).toEqual([]), { timeoutMs: 20_000 });
        await eventually(() => expect(fs.existsSync(path.join(following, 'coffer.db'))).toBe(true));
      } finally {
        standby.kill('SIGTERM');
        await standby.exited;
      }
    } finally {
      await primary.stop();
      await s3.stop();
    }
  }, 60_000);
});

describe('a refused promotion', () => {
  test('a promotion refused while the replica cannot be read leaves the standby following: it applies what the primary ships next', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const standby = await standbyOn(dest, dir, env).catch(async (err) => {
      await primary.stop();
      throw err;
    });
    const health = async () =>
      (await (await fetch(`${standby.url}/health`)).json()) as {
        generation: string | null;
        appliedSegments: number;
        lagSeconds: number;
        problem: string | null;
      };
    try {
      // Following the primary's generation before anything is written: every change then comes in a segment.
      await eventually(async () => expect((await health()).generation).not.toBeNull());
      const a = await seed.admin(primary);
      await upload(a.client, 'before.txt', 'one');
      await eventually(async () => expect((await health()).appliedSegments).toBeGreaterThan(0));
      // The destination is away (a NAS not mounted): the promotion cannot read the last segments.
      fs.renameSync(dest, `${dest}.away`);
      fs.writeFileSync(dest, 'the destination is away');
      const refused = await runCli(['promote', '--port', new URL(standby.url).port]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('cannot be read');
      expect((await health()).problem).toContain('cannot be read');
      fs.rmSync(dest);
      fs.renameSync(`${dest}.away`, dest);
      const applied = (await health()).appliedSegments;
      await upload(a.client, 'after-the-refusal.txt', 'two');
      await eventually(async () => {
        const h = await health();
        expect(h.appliedSegments).toBeGreaterThan(applied);
        expect(h.lagSeconds).toBe(0);
        expect(h.problem).toBeNull();
      });
    } finally {
      await standby.stop();
      await primary.stop();
    }
  }, 60_000);
});

describe('a wall clock set back', () => {
  test('a server restarted with its clock an hour back, then set back again while it runs: the restore brings every change, and segments never go back in time', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const dataDir = path.join(dir, 'data');
    const replicating = { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' };
    const segments = () => (fs.existsSync(dest) ? fs.readdirSync(dest) : []).filter((n) => n.includes('_wal_'));
    /** Uploads once the server's generation began, and waits until the upload is in one of its segments. */
    const shipped = async (client: TestClient, name: string) => {
      const generation = await generationOf(client);
      const before = segments().length;
      await upload(client, name, name);
      await eventually(() => expect(segments().filter((n) => n.startsWith(generation)).length).toBeGreaterThan(0));
      await eventually(() => expect(segments().length).toBeGreaterThan(before));
    };
    let t = await startTestServer({ dataDir, env: replicating });
    const a = await seed.admin(t);
    await shipped(a.client, 'before-the-restart.txt');
    await t.server.stop({ graceMs: 1000 });
    // A real-time clock without its battery: the box boots an hour behind.
    const clock = new ManualClock(Date.now() - 3_600_000);
    t = await startTestServer({ dataDir, clock, env: replicating });
    try {
      const client = await seed.login(t, a.email);
      await shipped(client, 'after-the-restart.txt');
      clock.jump(-60_000);
      await shipped(client, 'after-the-jump.txt');
    } finally {
      await t.stop();
    }
    const generations = [...new Set(fs.readdirSync(dest).map((n) => n.split('_')[0]!))].filter((g) => g.startsWith('g')).sort();
    expect(generations).toHaveLength(2);
    const stamps = generations.flatMap((g) =>
      segments()
        .filter((n) => n.startsWith(g))
        .sort()
        .map((n) => Number(n.split('_').at(-1))),
    );
    expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(parseJson(r).generation).toBe(generations.at(-1));
    expect(fileNames(out)).toEqual(['after-the-jump.txt', 'after-the-restart.txt', 'before-the-restart.txt']);
  }, 60_000);

  test("a standby whose clock is an hour behind the primary's, once promoted, ships a generation the restore takes as the newest", async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const a = await seed.admin(primary);
    await upload(a.client, 'on-the-old-primary.txt', 'one');
    const behind = path.join(dir, 'clock-behind.ts');
    fs.writeFileSync(behind, 'const wall = Date.now;\nDate.now = () => wall() - 3_600_000;\n');
    const standby = await standbyOn(dest, dir, env, { preload: behind });
    try {
      await eventually(async () => {
        const h = (await (await fetch(`${standby.url}/health`)).json()) as { generation: string | null; lagSeconds: number };
        expect(h.generation).not.toBeNull();
        expect(h.lagSeconds).toBe(0);
      });
      await primary.stop();
      expect((await runCli(['promote', '--port', new URL(standby.url).port])).code).toBe(0);
      await eventually(async () => expect((await login(standby.url, a.email)).status).toBe(200));
      const client = new TestClient(standby.url);
      await client.post('/api/login', { email: a.email, password: a.password });
      await generationOf(client);
      await upload(client, 'on-the-promoted-standby.txt', 'two');
      const fence = () => JSON.parse(fs.readFileSync(path.join(dest, 'coffer-replica-fence'), 'utf8')).generation as string;
      await eventually(() =>
        expect(fs.readdirSync(dest).filter((n) => n.startsWith(fence()) && n.includes('_wal_')).length).toBeGreaterThan(0),
      );
    } finally {
      await standby.stop();
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toEqual(['on-the-old-primary.txt', 'on-the-promoted-standby.txt']);
  }, 60_000);
});

/** The rest of a process's output, once it ends (serveCli has read up to its "listening" line). */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let out = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out += new TextDecoder().decode(value);
  }
}

function login(url: string, email: string): Promise<Response> {
  return new TestClient(url).post('/api/login', { email, password: 'correct horse battery' });
}

describe('a destination mistyped', () => {
  test('a bucket or URL that is not s3://bucket is refused in one line, exit 1, by the commands and by serve: nothing is replicated into a directory named like it', async () => {
    const { dir, env } = workDir();
    for (const dest of ['s3://', 's3:/coffer-replica/box1', 'ftp://nas.lan/replica']) {
      for (const args of [
        ['replica', 'list', dest],
        ['replica', 'verify', dest],
        ['restore', '--from-replica', dest, '--data-dir', path.join(dir, 'out')],
      ]) {
        const r = await runCli(args, { env, cwd: dir });
        expect(r.code).toBe(1);
        expect(r.stderr.trim()).toBe(`coffer: DEST must be a directory or s3://bucket/prefix, got "${dest}"`);
      }
    }
    // A bucket without its keys names what named the bucket: the command's DEST, not REPLICATE_TO.
    const keyless = await runCli(['replica', 'list', 's3://coffer-replica/box1/'], { env, cwd: dir });
    expect(keyless.code).toBe(1);
    expect(keyless.stderr.trim()).toMatch(/^coffer: BACKUP_S3_\w+ is required when DEST names a bucket$/);
    const served = await runCli(['serve', '--port', '0', '--data-dir', path.join(dir, 'data')], {
      env: { ...env, REPLICATE_TO: 's3:/coffer-replica/box1' },
      cwd: dir,
    });
    expect(served.code).toBe(1);
    expect(served.stderr).toContain('REPLICATE_TO must be a directory or s3://bucket/prefix, got "s3:/coffer-replica/box1"');
    expect(fs.readdirSync(dir).sort()).toEqual(['passphrase']);
  }, 30_000);
});

describe('a replica directory mistyped', () => {
  test('a DEST directory that does not exist is said in one line, exit 1, not listed as a replica with no generations', async () => {
    const { dir, env } = workDir();
    const missing = path.join(dir, 'replcia');
    for (const args of [
      ['replica', 'list', missing],
      ['replica', 'verify', missing],
      ['restore', '--from-replica', missing, '--data-dir', path.join(dir, 'out')],
    ]) {
      const r = await runCli(args, { env, cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        `coffer: no replica at ${missing}: that directory does not exist (check DEST; REPLICATE_TO makes it when it first ships)`,
      );
    }
    expect(fs.readdirSync(dir).sort()).toEqual(['passphrase']);
  }, 30_000);
});

describe('a standby on a data directory that is a file', () => {
  test('is refused in one line, exit 1, not an unexpected error', async () => {
    const { dir, env } = workDir();
    const file = path.join(dir, 'data');
    fs.writeFileSync(file, 'not a directory');
    const r = await runCli(['serve', '--port', '0', '--data-dir', file, '--standby', path.join(dir, 'replica')], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`coffer: ${file} is not a directory: a standby follows into an empty data directory`);
  }, 30_000);
});

describe('coffer promote against another program', () => {
  test('a port where something else answers (not JSON) is named in one line, exit 1, not an unexpected error', async () => {
    const other = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<html>another server</html>', { status: 404 }) });
    try {
      const r = await runCli(['promote', '--port', String(other.port)]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        `coffer: what answers at http://127.0.0.1:${other.port} is not a Coffer standby (HTTP 404): pass the standby's --port`,
      );
    } finally {
      other.stop(true);
    }
  }, 30_000);
});

describe('a write to the destination that a crash cut off', () => {
  test('a primary killed while it copies an object into a directory replica leaves a hidden partial file: a start removes it once it is an hour old, and keeps a recent one', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const dataDir = path.join(dir, 'data');
    const serve = () =>
      serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
        env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '50' },
      });
    const partials = () => (fs.existsSync(dest) ? fs.readdirSync(dest).filter((n) => n.endsWith('.partial')) : []);
    let server = await serve();
    const client = new TestClient(server.url);
    expect(
      (await client.post('/api/signup', { email: seed.uniqueEmail('admin'), password: 'correct horse battery', name: 'A' })).status,
    ).toBe(200);
    // Each start begins a generation (its descriptor, master key and snapshot go out): the kill lands while one is aside.
    let left: string[] = [];
    for (let attempt = 0; attempt < 30 && left.length === 0; attempt++) {
      const deadline = Date.now() + 10_000;
      while (partials().length === 0 && Date.now() < deadline) await Bun.sleep(1);
      server.proc.kill('SIGKILL');
      await server.proc.exited;
      left = partials();
      server = await serve();
      await eventually(() => expect(partials().filter((n) => !left.includes(n))).toEqual([]));
    }
    await server.stop();
    expect(left.length).toBeGreaterThan(0);
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const name of left) fs.utimesSync(path.join(dest, name), hoursAgo, hoursAgo);
    // Another writer's copy in progress (its mtime is now) is not the start's to remove.
    const recent = `.g20260101T000000000Z-0000aaaa_snapshot.${process.pid}.partial`;
    fs.writeFileSync(path.join(dest, recent), 'in progress');

    server = await serve();
    try {
      await eventually(() => expect(partials()).toEqual([recent]), { timeoutMs: 20_000 });
      const other = new TestClient(server.url);
      for (const [k, v] of client.cookies) other.cookies.set(k, v);
      await upload(other, 'after.txt', 'shipped after the crash');
      await eventually(() => expect(fs.readdirSync(path.join(dataDir, 'replication', 'outbox'))).toEqual([]));
    } finally {
      await server.stop();
    }
    fs.rmSync(path.join(dest, recent));
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    expect(fileNames(out)).toEqual(['after.txt']);
  }, 120_000);

  test('a primary killed while it uploads a snapshot to a bucket replica in parts leaves an incomplete multipart upload: a start aborts it once it is an hour old', async () => {
    const s3 = await startTestS3();
    const { env } = workDir();
    const { prefix, dest, bucketEnv } = bucketReplica(s3, 'cut-off', env);
    // A database larger than two 5 MiB parts, so its snapshot goes up as a multipart upload.
    const t = await startTestServer();
    try {
      const a = await seed.admin(t);
      seedRows(t, a.id, null, 60_000, (i) => ({ name: `row-${i}-${randomBytes(40).toString('hex')}`, type: 'folder' }));
      await t.restart({
        whileDown: async () => {
          const serve = () =>
            serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', t.dataDir], {
              env: { ...bucketEnv, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', BACKUP_S3_PART_SIZE: '5M' },
            });
          const snapshotParts = () =>
            s3.requests.filter((r) => r.startsWith('PUT') && r.includes('_snapshot') && r.includes('partNumber='));
          let server = await serve();
          await eventually(() => expect(snapshotParts().length).toBeGreaterThan(0), { timeoutMs: 30_000, intervalMs: 5 });
          server.proc.kill('SIGKILL');
          await server.proc.exited;
          const cut = s3.incompleteUploads(prefix);
          expect(cut.length).toBe(1);
          // The part the kill cut off is dropped by the store (its directory changes) before the upload is aged.
          const upload = path.join(s3.dir, s3.bucket, '._S3rver_uploads', cut[0]!.uploadId);
          await eventually(() => expect(fs.readdirSync(upload).filter((n) => n.endsWith('.writing'))).toEqual([]));
          await Bun.sleep(200);
          const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
          fs.utimesSync(upload, hoursAgo, hoursAgo);
          server = await serve();
          try {
            await eventually(() => expect(s3.incompleteUploads(prefix)).toEqual([]), { timeoutMs: 30_000 });
            await eventually(() => expect(fs.readdirSync(path.join(t.dataDir, 'replication', 'outbox'))).toEqual([]), {
              timeoutMs: 30_000,
            });
          } finally {
            await server.stop();
          }
        },
      });
    } finally {
      await t.stop();
      await s3.stop();
    }
  }, 120_000);
});

describe('objects deleted while the replica waits for the change', () => {
  test('a primary killed right after a permanent delete: the restored replica names no object the bucket no longer holds (coffer doctor is clean)', async () => {
    const s3 = await startTestS3();
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const dataDir = path.join(dir, 'data');
    const prefix = `files-${randomBytes(3).toString('hex')}/`;
    const storageEnv = { ...env, ...s3.env(prefix) };
    // A long interval: the deletion's commit waits up to 2 s for its segment, the object's deletion is queued at once.
    const server = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
      env: { ...storageEnv, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '2000' },
    });
    try {
      const client = new TestClient(server.url);
      expect(
        (await client.post('/api/signup', { email: seed.uniqueEmail('admin'), password: 'correct horse battery', name: 'A' })).status,
      ).toBe(200);
      const file = await upload(client, 'kept.bin', randomBytes(5000));
      expect((await client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
      const objects = () => s3.objectKeys(prefix).filter((k) => !k.includes('_thumb_'));
      expect(objects().length).toBe(1);
      await eventually(() => expect(fs.readdirSync(path.join(dataDir, 'replication', 'outbox'))).toEqual([]), { timeoutMs: 20_000 });
      expect((await client.post('/api/files/trash/delete', { ids: [file.id] })).status).toBe(202);
      // Killed as soon as the object is gone (or after 3 s): by then the replica must have the deletion.
      await eventually(() => objects().length === 0, { timeoutMs: 3000, intervalMs: 2 }).catch(() => {});
    } finally {
      server.proc.kill('SIGKILL');
      await server.proc.exited;
    }
    const { r, out } = await restore(dest, env);
    expect(r.code).toBe(0);
    const doctor = await runCli(['doctor', '--json', '--data-dir', out], { env: { ...storageEnv, COFFER_MIN_FREE_BYTES: '16M' } });
    const report = parseJson(doctor);
    expect({ missing: report.missingObjects.items, names: fileNames(out), objects: s3.objectKeys(prefix).length }).toEqual(
      fileNames(out).length ? { missing: [], names: ['kept.bin'], objects: 1 } : { missing: [], names: [], objects: 0 },
    );
    await s3.stop();
  }, 60_000);
});

describe('a standby killed between writing the master key and moving it into place', () => {
  test('starts again: it follows the replica, and nothing it was writing is left in the data directory', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    const following = path.join(dir, 'standby');
    // The fault point: the process dies (SIGKILL) just before the master key it wrote would be moved into place.
    const dies = path.join(dir, 'dies-before-secrets.ts');
    fs.writeFileSync(
      dies,
      `const fs = require('node:fs');
       const rename = fs.renameSync;
       fs.renameSync = (from, to) => { if (String(to).endsWith('secrets.json')) process.kill(process.pid, 'SIGKILL'); return rename(from, to); };\n`,
    );
    const startStandby = (preload: string[]) =>
      Bun.spawn(
        [process.execPath, ...preload, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', following, '--standby', dest],
        {
          env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', ...env, REPLICATE_INTERVAL_MS: '100' },
          stdout: 'ignore',
          stderr: 'ignore',
        },
      );
    try {
      const a = await seed.admin(primary);
      await upload(a.client, 'on-the-primary.txt', 'one');
      await eventually(() => expect(fs.readdirSync(path.join(primary.dataDir, 'replication', 'outbox'))).toEqual([]));
      const killed = startStandby(['--preload', dies]);
      expect(await killed.exited).not.toBe(0);
      expect(killed.signalCode).toBe('SIGKILL');
      const standby = await standbyOn(dest, dir, env);
      try {
        await eventually(async () => {
          const h = (await (await fetch(`${standby.url}/health`)).json()) as { generation: string | null; lagSeconds: number };
          expect(h.generation).not.toBeNull();
          expect(h.lagSeconds).toBe(0);
        });
        expect(fs.readdirSync(following).sort()).toEqual(['blobs', 'coffer.db', 'replication', 'secrets.json']);
      } finally {
        await standby.stop();
      }
      expect(fileNames(following)).toEqual(['on-the-primary.txt']);
    } finally {
      await primary.stop();
    }
  }, 60_000);
});

describe('a restore from the replica cut off part-way', () => {
  test('run again into the same directory, it restores: the hidden database the killed one was building is removed, not taken for data', async () => {
    const { dir, env } = workDir();
    const dest = path.join(dir, 'replica');
    const primary = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const a = await seed.admin(primary);
      await upload(a.client, 'replicated.txt', 'one');
      await eventually(() => expect(fs.readdirSync(path.join(primary.dataDir, 'replication', 'outbox'))).toEqual([]));
    } finally {
      await primary.stop();
    }
    const out = path.join(dir, 'restored');
    fs.mkdirSync(out);
    // The fault point: the restore dies (SIGKILL, as Ctrl-C or a reboot would stop it) once its database is built and checked.
    const dies = path.join(dir, 'dies-after-build.ts');
    fs.writeFileSync(
      dies,
      `const fs = require('node:fs');
       const mkdir = fs.mkdirSync;
       fs.mkdirSync = (p, ...rest) => { if (String(p).endsWith('blobs')) process.kill(process.pid, 'SIGKILL'); return mkdir(p, ...rest); };\n`,
    );
    const killed = Bun.spawn([process.execPath, '--preload', dies, MAIN, 'restore', '--from-replica', dest, '--data-dir', out, '--json'], {
      env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', ...env },
      stdout: 'ignore',
      stderr: 'ignore',
    });
    await killed.exited;
    expect(killed.signalCode).toBe('SIGKILL');
    expect(fs.readdirSync(out).filter((n) => n.startsWith('.replica-restore-')).length).toBe(1);
    const r = await runCli(['restore', '--from-replica', dest, '--data-dir', out, '--json'], { env });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(fs.readdirSync(out).sort()).toEqual(['blobs', 'coffer.db', 'replication', 'secrets.json']);
    expect(fileNames(out)).toEqual(['replicated.txt']);
  }, 60_000);
});
