import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { admin } from '../../helpers/seed.ts';
import { upload } from '../../helpers/files.ts';

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.stop())));

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('database files are private to the service user (issue 13, defect 9)', () => {
  test('coffer.db, -wal and -shm are 0600 inside the 0700 data dir, like secrets.json', async () => {
    const t = await startTestServer();
    servers.push(t);
    const a = await admin(t);
    await upload(a.client, 'a.txt', 'hello');
    const db = path.join(t.dataDir, 'coffer.db');
    expect(mode(t.dataDir)).toBe(0o700);
    expect(mode(path.join(t.dataDir, 'secrets.json'))).toBe(0o600);
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      expect(fs.existsSync(file)).toBe(true);
      expect(mode(file)).toBe(0o600);
    }
  });

  test('files an older version left 0644 are narrowed at the next start', async () => {
    const dir = tempDir();
    const first = await startTestServer({ dataDir: dir });
    await first.server.stop();
    const db = path.join(dir, 'coffer.db');
    fs.chmodSync(db, 0o644);
    const again = await startTestServer({ dataDir: dir });
    servers.push(again);
    expect(mode(db)).toBe(0o600);
    expect(mode(`${db}-wal`)).toBe(0o600);
    expect(mode(`${db}-shm`)).toBe(0o600);
  });
});
