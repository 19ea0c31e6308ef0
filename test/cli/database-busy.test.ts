import { describe, expect, test } from 'bun:test';
import { runCli } from '../helpers/cli.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer } from '../helpers/server.ts';
import { holdWriteLock } from '../helpers/write-lock.ts';

describe('commands while another connection holds the write lock past their 5-second wait (docs/reliability.md, a busy database)', () => {
  test('one that writes fails with one line saying so and exit 1, and succeeds when run again; one that reads runs', async () => {
    const t = await startTestServer({ startWorker: false });
    try {
      const o = await seed.owner(t);
      // The first command of a build records it as the one that last ran (a write); the test's server may be another build.
      expect((await runCli(['users', 'list', '--data-dir', t.dataDir])).code).toBe(0);
      const release = holdWriteLock(t);
      let r: Awaited<ReturnType<typeof runCli>>;
      let listed: Awaited<ReturnType<typeof runCli>>;
      try {
        r = await runCli(['users', 'set-limit', o.email, '10G', '--data-dir', t.dataDir]);
        // A command that only reads needs no write lock (opening wrote the running version every time).
        listed = await runCli(['users', 'list', '--json', '--data-dir', t.dataDir]);
      } finally {
        release();
      }
      expect(r.stderr).toBe(
        'coffer: the database is busy: another process (the server, a backup, another command) held its write lock for more than 5 seconds; nothing of this step was written. Run the command again.\n',
      );
      expect(r.code).toBe(1);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(o.email);
      expect((await runCli(['users', 'set-limit', o.email, '10G', '--data-dir', t.dataDir])).code).toBe(0);
    } finally {
      await t.stop();
    }
  });
});
