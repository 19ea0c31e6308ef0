import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { MAIN, parseJson, runCli } from '../../helpers/cli.ts';
import { eventually } from '../../helpers/eventually.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, tempDir } from '../../helpers/server.ts';

const states = (dataDir: string) => {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    const docs = db
      .query<{ name: string; state: string }, []>(
        'SELECT i.name, d.state FROM content_docs d JOIN items i ON i.seq = d.seq ORDER BY i.name',
      )
      .all();
    const pending = db.query<{ n: number }, []>('SELECT count(*) AS n FROM content_pending').get()!.n;
    return { docs, pending };
  } finally {
    db.close();
  }
};

describe('a document whose extraction kills the process', () => {
  test('is tried 3 times, then given up on: the server settles and indexes the others; reindex tries it again', async () => {
    const dir = tempDir('coffer-content-crash-');
    const t = await startTestServer({ dataDir: dir });
    const a = await seed.admin(t);
    // The poison document is the oldest in the queue: it is read first at every start.
    await upload(a.client, 'poison.txt', 'the words that crash the decoder');
    await upload(a.client, 'good.txt', 'the boiler invoice');
    await upload(a.client, 'also-good.txt', 'the wifi password');
    await t.server.stop({ graceMs: 1000 });
    expect(parseJson(await runCli(['settings', 'set', 'contentSearch', 'true', '--json', '--data-dir', dir]))).toEqual({
      contentSearch: true,
    });

    // The fault point: the process dies (SIGKILL, as a native crash in a decoder or an out-of-memory abort would) as
    // poison.txt is handed to an extraction worker.
    const dies = path.join(dir, '..', `${path.basename(dir)}-dies-in-extraction.ts`);
    fs.writeFileSync(
      dies,
      `const post = Worker.prototype.postMessage;
       Worker.prototype.postMessage = function (message, ...rest) {
         if (message && message.name === 'poison.txt') process.kill(process.pid, 'SIGKILL');
         return post.call(this, message, ...rest);
       };\n`,
    );
    let crashes = 0;
    let settled = false;
    try {
      for (let start = 0; start < 6 && !settled; start++) {
        const proc = Bun.spawn(
          [process.execPath, '--preload', dies, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir],
          {
            env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', COFFER_MIN_FREE_BYTES: '16M' },
            stdout: 'ignore',
            stderr: 'ignore',
          },
        );
        const outcome = await Promise.race([
          proc.exited.then(() => 'exited' as const),
          eventually(() => expect(states(dir)).toMatchObject({ pending: 0, docs: { length: 3 } }), { timeoutMs: 30_000 }).then(
            () => 'settled' as const,
            () => 'never settled' as const,
          ),
        ]);
        if (outcome === 'exited') {
          expect(proc.signalCode).toBe('SIGKILL');
          crashes++;
        } else {
          settled = outcome === 'settled';
          proc.kill('SIGTERM');
          await proc.exited;
        }
      }
      expect({ crashes, settled }).toEqual({ crashes: 3, settled: true });
      expect(states(dir).docs).toEqual([
        { name: 'also-good.txt', state: 'indexed' },
        { name: 'good.txt', state: 'indexed' },
        { name: 'poison.txt', state: 'gave-up' },
      ]);

      // Shown to the admin, and searchable for the others; the rebuild reads it again (this time it does not crash).
      await t.restart();
      const admin = await seed.login(t, a.email);
      expect(await json(await admin.get('/api/user/content-search-config'))).toMatchObject({ enabled: true, pending: 0, gaveUp: 1 });
      const hits = await json<any[]>(await admin.get('/api/files/search?q=boiler&content=true'));
      expect(hits.map((h) => h.name)).toEqual(['good.txt']);
      await t.server.stop({ graceMs: 1000 });
      expect(parseJson(await runCli(['search', 'reindex', '--json', '--data-dir', dir]))).toEqual({ queued: 3 });
      await t.restart();
      await eventually(
        () => expect(states(dir)).toMatchObject({ pending: 0, docs: [{ state: 'indexed' }, { state: 'indexed' }, { state: 'indexed' }] }),
        {
          timeoutMs: 30_000,
        },
      );
    } finally {
      fs.rmSync(dies, { force: true });
      await t.stop();
    }
  }, 180_000);
});
