import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { startTestServer, tempDir } from '../../helpers/server.ts';
import { TestClient, json } from '../../helpers/client.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { parseJson, runCli } from '../../helpers/cli.ts';

const MAIN = path.resolve(import.meta.dir, '../../../src/main.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A server bound to every interface, as install.sh runs it; the test still speaks to it on loopback. */
async function lanServer() {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const logger = memoryLogger();
  const server: RunningServer = await startServer(
    loadConfig({ port: 0, host: '0.0.0.0', dataDir }, { LOG_LEVEL: 'silent', COFFER_MIN_FREE_BYTES: '16M' }),
    { logger },
  );
  return { server, dataDir, logger, client: () => new TestClient(`http://127.0.0.1:${server.port}`) };
}

const account = { email: 'first@example.test', password: 'correct horse battery', name: 'First' };

describe('the first sign-up on a server reachable beyond loopback', () => {
  test('needs the setup code logged at start and printed by coffer setup-code; without it or with a wrong one: 403, no account', async () => {
    const s = await lanServer();
    try {
      const announced = s.logger.lines.find((l) => l.msg.includes('needs the setup code'));
      expect(announced?.level).toBe('warn');
      const code = announced!.fields.setupCode as string;
      expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
      expect(parseJson(await runCli(['setup-code', '--json', '--data-dir', s.dataDir]))).toEqual({ setupCode: code });

      const c = s.client();
      expect(await json(await c.get('/api/signup-status'))).toMatchObject({
        signupEnabled: true,
        firstUser: true,
        setupCodeRequired: true,
      });
      let res = await c.post('/api/signup', account);
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('coffer setup-code');
      res = await c.post('/api/signup', { ...account, setupCode: 'AAAA-BBBB-CCCC' });
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('not right');
      expect(s.server.ctx.services.accounts.noLoginYet()).toBe(true);

      // Case, spaces and dashes do not matter.
      res = await c.post('/api/signup', { ...account, setupCode: ` ${code.replace(/-/g, '').toLowerCase()} ` });
      expect(res.status).toBe(200);
      expect((await c.get('/api/user/all')).status).toBe(200);
      expect(await json(await c.get('/api/signup-status'))).toMatchObject({
        signupEnabled: false,
        firstUser: false,
        setupCodeRequired: false,
      });
      const none = await runCli(['setup-code', '--data-dir', s.dataDir]);
      expect(none.code).toBe(0);
      expect(none.stdout).toContain('already has an account');
    } finally {
      await s.server.stop();
    }
  });

  test('serve prints the code and the addresses to open on the console', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--host', '0.0.0.0', '--data-dir', dataDir], {
      env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = proc.stderr.getReader();
    let err = '';
    while (!err.includes('prints it again')) err += new TextDecoder().decode((await reader.read()).value);
    proc.kill('SIGTERM');
    await proc.exited;
    const code = /\n {4}([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})\n/.exec(err)?.[1];
    expect(code).toBeDefined();
    expect(err).toMatch(/Open http:\/\/\S+:\d+\//);
    expect(parseJson(await runCli(['setup-code', '--json', '--data-dir', dataDir]))).toEqual({ setupCode: code });
  });
});

describe('on loopback', () => {
  test('nothing changes: no code is asked for or announced', async () => {
    const logger = memoryLogger();
    const t = await startTestServer({ logger });
    try {
      expect(logger.lines.some((l) => l.msg.includes('setup code'))).toBe(false);
      expect((await json(await t.client().get('/api/signup-status'))).setupCodeRequired).toBe(false);
      expect((await t.client().post('/api/signup', account)).status).toBe(200);
    } finally {
      await t.stop();
    }
  });

  test('a sign-up forwarded by a known proxy from another machine still needs the code', async () => {
    const t = await startTestServer();
    try {
      t.server.ctx.services.settings.update('knownProxies', ['127.0.0.1']);
      await t.restart();
      const lan = t.client();
      lan.headers['x-forwarded-for'] = '192.168.1.50';
      expect((await json(await lan.get('/api/signup-status'))).setupCodeRequired).toBe(true);
      expect((await lan.post('/api/signup', account)).status).toBe(403);
      const code = t.server.ctx.services.setupCode.current()!;
      expect((await lan.post('/api/signup', { ...account, setupCode: code })).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});
