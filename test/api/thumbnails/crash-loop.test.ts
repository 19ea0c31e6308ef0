import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { startsUntilSettled } from '../../helpers/server-process.ts';
import { upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, tempDir } from '../../helpers/server.ts';

const made = (dataDir: string) => {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    return db
      .query<{ name: string; status: string }, []>(
        `SELECT i.name, t.status FROM items i JOIN thumbnails t ON t.storage_key = i.storage_key WHERE i.type = 'file' ORDER BY i.name`,
      )
      .all();
  } finally {
    db.close();
  }
};

describe('a photo whose decoding kills the process', () => {
  test('is tried 3 times, then gets no thumbnail: the server settles and makes the others; a rebuild tries it again', async () => {
    const dir = tempDir('coffer-thumbnail-crash-');
    // No worker: the sweeps the uploads queue wait for the starts below.
    const t = await startTestServer({ dataDir: dir, startWorker: false });
    const a = await seed.admin(t);
    const poison = await img.jpeg(321, 123);
    await upload(a.client, 'poison.jpg', poison, { type: 'image/jpeg' });
    await upload(a.client, 'good.jpg', await img.jpeg(400, 300), { type: 'image/jpeg' });
    await t.server.stop({ graceMs: 1000 });

    // The fault point: the process dies (SIGKILL, as a native crash in a decoder would) as poison.jpg's bytes reach a thumbnail worker.
    const dies = path.join(dir, '..', `${path.basename(dir)}-dies-in-decoding.ts`);
    fs.writeFileSync(
      dies,
      `const post = Worker.prototype.postMessage;
       Worker.prototype.postMessage = function (message, ...rest) {
         if (message && message.kind && message.bytes && message.bytes.byteLength === ${poison.byteLength}) process.kill(process.pid, 'SIGKILL');
         return post.call(this, message, ...rest);
       };\n`,
    );
    try {
      const starts = await startsUntilSettled(dir, dies, () => expect(made(dir)).toHaveLength(2), 7);
      expect(starts).toEqual({ crashes: 3, settled: true });
      expect(made(dir)).toEqual([
        { name: 'good.jpg', status: 'ready' },
        { name: 'poison.jpg', status: 'none' },
      ]);
      // The rebuild tries it again (this time nothing kills the process).
      expect(parseJson(await runCli(['thumbnails', 'rebuild', '--json', '--data-dir', dir]))).toEqual({ made: 2, none: 0 });
      expect(made(dir)).toEqual([
        { name: 'good.jpg', status: 'ready' },
        { name: 'poison.jpg', status: 'ready' },
      ]);
    } finally {
      fs.rmSync(dies, { force: true });
      await t.stop();
    }
  }, 240_000);
});
