import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { rowWithoutObject, storeFile } from '../helpers/stored-files.ts';
import { createUpload, patchUpload } from '../helpers/tus.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const doctor = (...args: string[]) => runCli(['doctor', ...args, '--data-dir', t.dataDir]);

describe('coffer doctor, beside the running server', () => {
  test('healthy: exit 0', async () => {
    const o = await seed.admin(t);
    await storeFile(t.server.ctx, o.id);
    const r = await doctor();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('database integrity: ok');
    expect(r.stdout).toContain('no problems found');
  });

  test('names each configuration-file line the server would refuse, with the nearest setting, and still runs the diagnosis', async () => {
    const conf = path.join(tempDir(), 'coffer.env');
    fs.writeFileSync(conf, `# an older install's file\nPORT=3000\nCOFFER_DATADIR=/srv/coffer\nnot a setting line\nLOG_LEVEL=info\n`);
    const r = await runCli(['doctor', '--data-dir', t.dataDir], { env: { COFFER_CONFIG: conf } });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`configuration file ${conf}: 2 problem(s)`);
    expect(r.stdout).toContain(`configuration file ${conf}, line 3: unknown setting COFFER_DATADIR (did you mean COFFER_DATA_DIR?)`);
    expect(r.stdout).toContain(`configuration file ${conf}, line 4: "not a setting line" is not a VAR=value line`);
    expect(r.stdout).toContain('database integrity: ok');
    const json = parseJson(await runCli(['doctor', '--json', '--data-dir', t.dataDir], { env: { COFFER_CONFIG: conf } }));
    expect(json.ok).toBe(false);
    expect(json.configFile).toEqual({ path: conf, problems: [expect.stringContaining('line 3'), expect.stringContaining('line 4')] });
    expect(json.database.integrity).toBe('ok');
    // The other commands still refuse the file, naming its first such line.
    const list = await runCli(['users', 'list', '--data-dir', t.dataDir], { env: { COFFER_CONFIG: conf } });
    expect({ code: list.code, stderr: list.stderr.trim() }).toEqual({
      code: 1,
      stderr: `coffer: configuration file ${conf}, line 3: unknown setting COFFER_DATADIR (did you mean COFFER_DATA_DIR?)`,
    });
  });

  test('names a value the server refuses by its line, and runs the diagnosis without it', async () => {
    const conf = path.join(tempDir(), 'coffer.env');
    fs.writeFileSync(conf, `LOG_LEVEL=loud\nTRASH_RETENTION_DAYS=abc\nAUDIT_RETENTION_DAYS=30\n`);
    const r = await runCli(['doctor', '--data-dir', t.dataDir], { env: { COFFER_CONFIG: conf } });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`configuration file ${conf}: 2 problem(s)`);
    expect(r.stdout).toContain(`configuration file ${conf}, line 1: LOG_LEVEL must be one of debug, info, warn, error, silent, got "loud"`);
    expect(r.stdout).toContain(`configuration file ${conf}, line 2: TRASH_RETENTION_DAYS must be a whole number, got "abc"`);
    expect(r.stdout).toContain('database integrity: ok');
  });

  test('a bucket setting that backups read from the storage’s S3_* line is named by that line, and the checking goes on past it', async () => {
    const conf = path.join(tempDir(), 'coffer.env');
    fs.writeFileSync(
      conf,
      `BACKUP_S3_BUCKET=backups\nBACKUP_PASSPHRASE_FILE=/etc/coffer/passphrase\nS3_ENDPOINT=minio:9000\nLOG_LEVEL=loud\n`,
    );
    const r = await runCli(['doctor', '--data-dir', t.dataDir], { env: { COFFER_CONFIG: conf } });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `configuration file ${conf}, line 3: S3_ENDPOINT (read for BACKUP_S3_ENDPOINT) must be an http:// or https:// URL such as http://127.0.0.1:9000, got "minio:9000"`,
    );
    expect(r.stdout).toContain(`configuration file ${conf}, line 4: LOG_LEVEL must be one of debug, info, warn, error, silent, got "loud"`);
  });

  test("a stale data directory line: names it with its line beside the file's other problems and the missing directory", async () => {
    const gone = path.join(tempDir(), 'moved-away', 'data');
    const conf = path.join(tempDir(), 'coffer.env');
    fs.writeFileSync(conf, `PORT=3000\nCOFFER_DATA_DIR=${gone}\nCOFFER_DATADIR=/srv/coffer\nLOG_LEVEL=loud\n`);
    const r = await runCli(['doctor'], { env: { COFFER_CONFIG: conf } });
    // As every command on a missing directory: exit 1 and one line on stderr, after the file's problems on stdout.
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n')).toEqual([
      `configuration file ${conf}: 3 problem(s)`,
      `  configuration file ${conf}, line 2: COFFER_DATA_DIR names ${gone}, which does not exist (moved or removed?): the server would start a new, empty instance there; point it at the instance's data directory`,
      `  configuration file ${conf}, line 3: unknown setting COFFER_DATADIR (did you mean COFFER_DATA_DIR?)`,
      `  configuration file ${conf}, line 4: LOG_LEVEL must be one of debug, info, warn, error, silent, got "loud"`,
      '  correct or remove these lines (coffer serve --help lists the settings): the service does not start with a line or value it refuses',
    ]);
    expect(r.stderr.trim()).toStartWith(`coffer: data directory ${gone} does not exist`);
    const json = await runCli(['doctor', '--json'], { env: { COFFER_CONFIG: conf } });
    expect(json.code).toBe(1);
    expect(parseJson(json)).toEqual({
      ok: false,
      configFile: {
        path: conf,
        problems: [
          expect.stringContaining('line 2: COFFER_DATA_DIR'),
          expect.stringContaining('line 3'),
          expect.stringContaining('line 4'),
        ],
      },
    });
  });

  test('finds a wrong usage counter and a row without its object; --fix repairs only the counter', async () => {
    const o = await seed.owner(t);
    const ctx = t.server.ctx;
    const f = await storeFile(ctx, o.id, { size: 4000 });
    const lost = rowWithoutObject(ctx, o.id, { size: 500 });
    ctx.db.$client.query('UPDATE users SET storage_used = storage_used + 12345 WHERE id = ?').run(o.id);
    const actual = f.size + lost.size;

    const found = await doctor('--json');
    expect(found.code).toBe(3);
    const report = parseJson(found);
    expect(report.ok).toBe(false);
    expect(report.usage.mismatches).toEqual([{ accountId: o.id, email: o.email, recorded: actual + 12345, actual, fixed: false }]);
    expect(report.missingObjects).toMatchObject({ count: 1, items: [{ id: lost.id, storageKey: lost.storageKey }] });
    expect(ctx.services.quota.usage(o.id).used).toBe(actual + 12345);

    const human = await doctor();
    expect(human.stdout).toContain('repair with: coffer doctor --fix');
    expect(human.stdout).toContain(`${lost.id}`);

    const fixed = await doctor('--fix', '--json');
    expect(fixed.code).toBe(3);
    expect(parseJson(fixed).usage.mismatches[0].fixed).toBe(true);
    expect(ctx.services.quota.usage(o.id).used).toBe(actual);
    // The row without an object is left for the admin to review with `coffer orphans`.
    expect(ctx.db.$client.query('SELECT 1 FROM items WHERE id = ?').get(lost.id)).not.toBeNull();

    const after = parseJson(await doctor('--json'));
    expect(after.usage.mismatches).toEqual([]);
    expect(after.missingObjects.count).toBe(1);
    ctx.services.audit.flush();
    expect(ctx.services.audit.list({ action: 'doctor.fix' })[0]!.details).toEqual({
      accounts: [{ accountId: o.id, from: actual + 12345, to: actual }],
    });
  });

  test('lists resumable uploads past their expiry (the server deletes them; they are no problem)', async () => {
    const o = await seed.owner(t);
    const created = await createUpload(o.client, 5000, { filename: 'abandoned.mov' });
    const id = created.headers.get('location')!.split('/').at(-1)!;
    expect((await patchUpload(o.client, `/api/files/tus/${id}`, 0, Buffer.alloc(1200, 7))).status).toBe(204);
    t.server.ctx.db.$client.query('UPDATE tus_uploads SET expires_at = ? WHERE id = ?').run(Date.now() - 60_000, id);
    const human = await doctor();
    expect(human.stdout).toContain('resumable uploads: 1 unfinished, 1 past their expiry, 0 staged object(s) no upload owns');
    expect(human.stdout).toContain(`  ${id} abandoned.mov: 1200 of 5000 bytes, expired `);
    expect(parseJson(await doctor('--json')).uploads).toMatchObject({ unfinished: 1, expired: [{ id, name: 'abandoned.mov' }] });
  });

  test('a secret file other users may read (secrets.json copied back as 0644, a passphrase file as 0640) is a problem named with its chmod', async () => {
    const secrets = path.join(t.dataDir, 'secrets.json');
    const passphrase = path.join(tempDir(), 'backup passphrase');
    fs.writeFileSync(passphrase, 'a long household passphrase\n', { mode: 0o640 });
    fs.chmodSync(passphrase, 0o640);
    const env = { env: { BACKUP_PASSPHRASE_FILE: passphrase } };
    expect((await runCli(['doctor', '--data-dir', t.dataDir], env)).stdout).toContain('secret files: 1 open to other users');
    fs.chmodSync(secrets, 0o644);
    try {
      const human = await runCli(['doctor', '--data-dir', t.dataDir], env);
      expect(human.code).toBe(3);
      expect(human.stdout).toContain('secret files: 2 open to other users');
      expect(human.stdout).toContain(`  ${secrets} has mode 0644: its group or other users may read it; fix with: chmod 600 ${secrets}`);
      expect(human.stdout).toContain(
        `  ${passphrase} has mode 0640: its group or other users may read it; fix with: chmod 600 '${passphrase}'`,
      );
      const report = parseJson(await runCli(['doctor', '--json', '--data-dir', t.dataDir], env));
      expect({ ok: report.ok, exposed: report.exposedSecrets }).toEqual({
        ok: false,
        exposed: [
          { path: secrets, mode: '0644' },
          { path: passphrase, mode: '0640' },
        ],
      });
    } finally {
      fs.chmodSync(secrets, 0o600);
      fs.chmodSync(passphrase, 0o600);
    }
    const fixed = await runCli(['doctor', '--data-dir', t.dataDir], env);
    expect(fixed.stdout).toContain('secret files: ok');
    expect(parseJson(await runCli(['doctor', '--json', '--data-dir', t.dataDir], env)).exposedSecrets).toEqual([]);
  });
});
