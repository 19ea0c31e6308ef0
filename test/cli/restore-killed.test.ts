import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { MAIN, parseJson, runCli } from '../helpers/cli.ts';
import { storeFile } from '../helpers/stored-files.ts';
import { eventually } from '../helpers/eventually.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const MARKER = '.restore-unfinished';

function fileCount(dataDir: string): number {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    return db.query<{ n: number }, []>(`SELECT count(*) AS n FROM items WHERE type = 'file'`).get()!.n;
  } finally {
    db.close();
  }
}

describe('coffer restore killed part-way (kill -9)', () => {
  test('leaves a marker the server and commands refuse to start on; run again, it clears what the killed one wrote, says so and restores', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-restore-killed-');
    dirs.push(out);
    const archive = path.join(out, 'b.tar');
    try {
      const owner = await seed.owner(t);
      for (let i = 0; i < 3; i++) await storeFile(t.server.ctx, owner.id, { size: 32 * 1024 * 1024 });
      expect((await runCli(['backup', '--full', archive, '--data-dir', t.dataDir], { timeoutMs: 60_000 })).code).toBe(0);
    } finally {
      await t.stop();
    }

    const target = path.join(out, 'restored');
    const proc = Bun.spawn([process.execPath, MAIN, 'restore', archive, '--data-dir', target], {
      env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent' },
      stdout: 'ignore',
      stderr: 'ignore',
    });
    // The database comes first in the archive: once it is there, the objects are being restored.
    await eventually(() => fs.existsSync(path.join(target, 'coffer.db')), { intervalMs: 5 });
    proc.kill('SIGKILL');
    await proc.exited;
    const left = fs.readdirSync(target).sort();
    expect(left).toContain(MARKER);
    expect(left).toContain('coffer.db');

    // Half restored: nothing starts on it.
    for (const args of [
      ['doctor', '--data-dir', target],
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', target],
    ]) {
      const r = await runCli(args);
      expect({ args, code: r.code, stderr: r.stderr.trim() }).toEqual({
        args,
        code: 1,
        stderr: `coffer: ${target} holds a restore that did not finish (it was cut off part-way): run the same coffer restore again, which starts it over, or remove the directory`,
      });
    }

    const again = await runCli(['restore', archive, '--data-dir', target], { timeoutMs: 60_000 });
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    expect(again.stdout).toContain(
      `a restore into ${target} had been cut off part-way: what it wrote was removed, and the restore started over`,
    );
    expect(again.stdout).toContain('3 object(s), all checked');
    expect(fs.readdirSync(target)).not.toContain(MARKER);
    expect(fileCount(target)).toBe(3);
    const doctor = parseJson(await runCli(['doctor', '--json', '--data-dir', target], { env: { COFFER_MIN_FREE_BYTES: '16M' } }));
    expect(doctor.missingObjects.count).toBe(0);
    expect(doctor.database.integrity).toBe('ok');

    // A directory with a marker and anything a restore does not write is someone's: refused, nothing removed.
    const mixed = path.join(out, 'mixed');
    fs.mkdirSync(mixed);
    fs.writeFileSync(path.join(mixed, MARKER), '{}');
    fs.writeFileSync(path.join(mixed, 'secrets.json'), '{}');
    fs.writeFileSync(path.join(mixed, 'notes.txt'), 'keep me');
    const refused = await runCli(['restore', archive, '--data-dir', mixed]);
    expect({ code: refused.code, stderr: refused.stderr.trim() }).toEqual({
      code: 1,
      stderr: `coffer: ${mixed} holds a restore that did not finish, and other files (notes.txt): move them aside, or remove the directory`,
    });
    expect(fs.readdirSync(mixed).sort()).toEqual([MARKER, 'notes.txt', 'secrets.json']);
  }, 180_000);
});
