import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ServerProcess } from '../helpers/server-process.ts';
import { tempDir } from '../helpers/server.ts';

// test/helpers/server-process.ts: benches and tests start servers through it, and a server logs errors on stderr.
function fakeServer(dir: string, body: string): string {
  const file = path.join(dir, 'fake-server');
  fs.writeFileSync(file, `#!${process.execPath}\n${body}`, { mode: 0o755 });
  return file;
}

test('a server that exits at start is reported with the end of what it wrote to stderr', async () => {
  const dir = tempDir('coffer-server-process-');
  const binary = fakeServer(dir, `process.stderr.write('x'.repeat(100000) + 'the data dir is not writable'); process.exit(1);`);
  const error = await new ServerProcess(dir, binary).start().then(
    () => null,
    (err: Error) => err.message,
  );
  expect(error).toEndWith('the data dir is not writable');
  expect(error!.length).toBeLessThan(70_000);
  fs.rmSync(dir, { recursive: true, force: true });
});
