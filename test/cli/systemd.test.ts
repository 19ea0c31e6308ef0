import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.ts';
import { listenNotifySocket } from '../helpers/notify-socket.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { json, TestClient } from '../helpers/client.ts';
import { skipHere } from '../helpers/prerequisites.ts';
import { freePort, upOrExited } from '../helpers/server-process.ts';

const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');
const MDWE = path.resolve(import.meta.dir, '../helpers/mdwe-launch.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** `coffer serve` from source as its own process, optionally through a launcher, until /health answers. */
async function serve(opts: { env?: Record<string, string>; launcher?: string[] } = {}) {
  const dir = tempDir('coffer-systemd-');
  dirs.push(dir);
  const port = freePort();
  const proc = Bun.spawn(
    [
      ...(opts.launcher ?? []),
      process.execPath,
      MAIN,
      'serve',
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--data-dir',
      path.join(dir, 'data'),
    ],
    { env: { PATH: process.env.PATH!, LOG_LEVEL: 'warn', COFFER_MIN_FREE_BYTES: '16M', ...opts.env }, stdout: 'pipe', stderr: 'pipe' },
  );
  const url = `http://127.0.0.1:${port}`;
  if ((await upOrExited(url, proc, 20_000)) === 'up') return { proc, url, dir, exited: null, stderr: '' };
  return { proc, url, dir, exited: proc.exitCode, stderr: await new Response(proc.stderr).text() };
}

describe('running under systemd', () => {
  test('Type=notify: READY=1 reaches NOTIFY_SOCKET once it listens, STOPPING=1 on SIGTERM', async () => {
    const socketDir = tempDir('coffer-notify-');
    dirs.push(socketDir);
    const socketPath = path.join(socketDir, 'notify.sock');
    const socket = listenNotifySocket(socketPath);
    try {
      const s = await serve({ env: { NOTIFY_SOCKET: socketPath } });
      expect(s.exited).toBeNull();
      const ready = await socket.next();
      expect(ready).toContain('READY=1');
      expect(ready).toContain(`STATUS=listening on ${s.url}`);
      s.proc.kill('SIGTERM');
      expect(await socket.next()).toBe('STOPPING=1');
      expect(await s.proc.exited).toBe(0);
    } finally {
      socket.close();
    }
  });

  test('an abstract NOTIFY_SOCKET (@name) is addressed too', async () => {
    const name = `@coffer-test-${process.pid}-${Date.now()}`;
    const socket = listenNotifySocket(name);
    try {
      const s = await serve({ env: { NOTIFY_SOCKET: name } });
      expect(await socket.next()).toContain('READY=1');
      s.proc.kill('SIGTERM');
      expect(await s.proc.exited).toBe(0);
    } finally {
      socket.close();
    }
  });

  test('MemoryDenyWriteExecute (why the unit leaves it off): the server still serves, and says why it cannot tell systemd it is ready', async () => {
    const socketDir = tempDir('coffer-notify-');
    dirs.push(socketDir);
    const socketPath = path.join(socketDir, 'notify.sock');
    const socket = listenNotifySocket(socketPath);
    const s = await serve({ launcher: [process.execPath, MDWE], env: { NOTIFY_SOCKET: socketPath } });
    if (s.exited === 77) {
      socket.close();
      skipHere('the MemoryDenyWriteExecute check', 'this kernel has no PR_SET_MDWE (Linux 6.3 or later)');
      return;
    }
    expect(s.stderr).toBe('');
    expect(s.exited).toBeNull();
    try {
      const client = new TestClient(s.url);
      const signup = await client.post('/api/signup', { email: seed.uniqueEmail(), password: 'correct horse battery', name: 'W^X' });
      expect(signup.status).toBe(200);
      // Without a C library the WAL index is read, not mapped: the kept list page still moves with each upload.
      expect(await json(await client.get('/api/files'))).toHaveLength(0);
      const content = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7) & 0xff);
      for (let i = 0; i < 5; i++) {
        const item = await upload(client, `f${i}.bin`, content);
        const back = new Uint8Array(await (await client.get(`/api/files/${item.id}/download`)).arrayBuffer());
        expect(Buffer.from(back).equals(Buffer.from(content))).toBe(true);
        expect(await json(await client.get('/api/files'))).toHaveLength(i + 1);
      }
      const heard = await Promise.race([socket.next(), Bun.sleep(500).then(() => null)]);
      expect(heard).toBeNull();
    } finally {
      socket.close();
      s.proc.kill('SIGTERM');
      expect(await s.proc.exited).toBe(0);
    }
    const stderr = await new Response(s.proc.stderr).text();
    expect(stderr).toContain('could not notify systemd');
    expect(stderr).toContain('MemoryDenyWriteExecute=true forbids it: remove that line');
  }, 90_000);
});
