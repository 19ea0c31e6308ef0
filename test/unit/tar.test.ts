import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { TAR_END, TarFormatError, TarReader, tarHeader, tarPadding } from '../../src/lib/tar.ts';
import { tempDir } from '../helpers/server.ts';

async function* chunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

function archive(entries: Array<{ name: string; body: Uint8Array }>): Uint8Array {
  return Buffer.concat([
    ...entries.flatMap((e) => [tarHeader({ name: e.name, size: e.body.length, mtime: 1_700_000_000 }), e.body, tarPadding(e.body.length)]),
    TAR_END,
  ]);
}

describe('lib/tar', () => {
  const longName = `objects/${'k'.repeat(150)}`;
  const entries = [
    { name: 'a.json', body: new TextEncoder().encode('{"a":1}\n') },
    { name: longName, body: new Uint8Array(1300).map((_, i) => i & 0xff) },
    { name: 'empty', body: new Uint8Array(0) },
  ];

  test('what it writes, GNU tar lists and extracts (long names through a pax header)', () => {
    const dir = tempDir('coffer-tar-');
    try {
      fs.writeFileSync(path.join(dir, 'x.tar'), archive(entries));
      const list = Bun.spawnSync(['tar', '-tf', 'x.tar'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
      expect(list.stderr.toString()).toBe('');
      expect(list.stdout.toString().trim().split('\n')).toEqual(entries.map((e) => e.name));
      expect(Bun.spawnSync(['tar', '-xf', 'x.tar'], { cwd: dir }).exitCode).toBe(0);
      expect(new Uint8Array(fs.readFileSync(path.join(dir, longName)))).toEqual(entries[1]!.body);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('reads it back whatever the chunk size, skipping bodies it is not asked for', async () => {
    for (const size of [1, 7, 512, 100_000]) {
      const reader = new TarReader(chunks(archive(entries), size));
      const a = await reader.next();
      expect(a).toEqual({ name: 'a.json', size: 8, mtime: 1_700_000_000 });
      expect(new TextDecoder().decode(await reader.readAll())).toBe('{"a":1}\n');
      expect((await reader.next())!.name).toBe(longName);
      const e = await reader.next();
      expect(e!.name).toBe('empty');
      expect(await reader.next()).toBeNull();
    }
  });

  test('a size of 8 GiB or more goes through a pax header', async () => {
    const size = 9 * 1024 ** 3;
    const reader = new TarReader(chunks(tarHeader({ name: 'big', size, mtime: 0 }), 512));
    expect(await reader.next()).toEqual({ name: 'big', size, mtime: 0 });
  });

  test('a damaged header or a cut archive is a TarFormatError', async () => {
    const bytes = archive(entries);
    const damaged = Uint8Array.from(bytes);
    damaged[10] = damaged[10]! ^ 1;
    await expect(new TarReader(chunks(damaged, 4096)).next()).rejects.toBeInstanceOf(TarFormatError);
    const cut = new TarReader(chunks(bytes.subarray(0, 700), 4096));
    await cut.next();
    await expect(cut.next()).rejects.toBeInstanceOf(TarFormatError);
  });
});
