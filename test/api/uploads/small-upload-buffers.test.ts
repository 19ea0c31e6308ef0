import { describe, expect, spyOn, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { downloaded, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import type { TestServer } from '../../helpers/server.ts';

let t: TestServer;
serverWithAdmin((s) => ({ t } = s), { startWorker: false });

const GIF_SIGNATURE = Buffer.from('GIF89a');
/** A GIF's signature, then random bytes: detected as image/gif from its head whatever its size. */
const gif = (size: number) => Buffer.concat([GIF_SIGNATURE, randomBytes(size - GIF_SIGNATURE.length)]);

describe('the buffers of a small upload are sized to its bytes (docs/performance.md, the tenth pass)', () => {
  test('a 4 KiB upload takes no 64 KiB buffer for its type detection or its sealing, and is stored and typed as before', async () => {
    const o = await seed.owner(t);
    const content = gif(4096);
    const allocated = spyOn(Buffer, 'allocUnsafe');
    let file: { id: string; mimeType: string; size: number };
    try {
      file = await upload(o.client, 'small.gif', content);
      expect(allocated.mock.calls.map(([size]) => size).filter((size) => size >= 64 * 1024)).toEqual([]);
    } finally {
      allocated.mockRestore();
    }
    expect(file).toMatchObject({ mimeType: 'image/gif', size: 4096 });
    expect((await downloaded(o.client, file.id)).equals(content)).toBe(true);
  });

  test('larger uploads across several chunks and segments round trip and are typed from their head', async () => {
    const o = await seed.owner(t);
    for (const size of [64 * 1024 - 1, 64 * 1024 + 1, 300 * 1024 + 7]) {
      const content = gif(size);
      const file = await upload(o.client, `big-${size}.gif`, content);
      expect(file).toMatchObject({ mimeType: 'image/gif', size });
      expect((await downloaded(o.client, file.id)).equals(content)).toBe(true);
    }
    const empty = await upload(o.client, 'empty.bin', new Uint8Array(0));
    expect(empty.size).toBe(0);
    expect((await downloaded(o.client, empty.id)).byteLength).toBe(0);
  });
});
