import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { TestClient } from '../helpers/client.ts';
import { upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import { ensureBinary, startBinary, type RunningBinary } from '../helpers/binary.ts';
import { skipWithout } from '../helpers/prerequisites.ts';

// Debian: `apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross` (the emulator, and the arm64
// C and C++ libraries it loads: libvips, for thumbnails, needs the C++ one).
const QEMU = Bun.which('qemu-aarch64-static') ?? Bun.which('qemu-aarch64');
const ARM64_LIBC = '/usr/aarch64-linux-gnu';
const missing = !QEMU
  ? 'qemu-aarch64-static is not installed (apt-get install qemu-user-static)'
  : !fs.existsSync(`${ARM64_LIBC}/lib/ld-linux-aarch64.so.1`)
    ? `no arm64 C library in ${ARM64_LIBC} (apt-get install libc6-arm64-cross)`
    : !fs.existsSync(`${ARM64_LIBC}/lib/libstdc++.so.6`)
      ? `no arm64 C++ library in ${ARM64_LIBC} (apt-get install libstdc++6-arm64-cross)`
      : null;
const noQemu = skipWithout(missing, 'the arm64 executable test');

describe.skipIf(noQemu)('the linux-arm64 executable under qemu', () => {
  let running: RunningBinary | undefined;
  afterAll(async () => {
    if (running) expect(await running.stop()).toBe(0);
  });

  test('built from the npm runtime package, it is an aarch64 executable that serves /health', async () => {
    const exe = await ensureBinary('linux-arm64');
    const header = new Uint8Array(await Bun.file(exe).slice(0, 20).arrayBuffer());
    expect([...header.slice(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    // e_machine 183 = EM_AARCH64.
    expect(header[18]! | (header[19]! << 8)).toBe(183);

    running = await startBinary({ binary: exe, runner: [QEMU!, '-L', ARM64_LIBC], startTimeoutMs: 90_000 });
    const res = await fetch(`${running.url}/health`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('ok');
  }, 180_000);

  test('it makes a thumbnail there: the arm64 libvips is the one embedded and loaded', async () => {
    const exe = path.join(running!.dir, 'coffer');
    const create = Bun.spawnSync(
      [QEMU!, '-L', ARM64_LIBC, exe, 'users', 'create', 'arm@example.test', '--data-dir', path.join(running!.dir, 'data')],
      {
        stdin: Buffer.from('correct horse battery\n'),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'silent', COFFER_CONFIG: '/dev/null' },
      },
    );
    expect(create.exitCode).toBe(0);
    const client = new TestClient(running!.url);
    expect((await client.post('/api/login', { email: 'arm@example.test', password: 'correct horse battery' })).status).toBe(200);
    const file = await upload(client, 'photo.jpg', await img.rotatedJpegWithGps(600, 400), { type: 'image/jpeg' });
    const res = await client.get(`/api/files/${file.id}/thumbnail`);
    expect(res.status).toBe(200);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 171, 256]);
    // 3,400 px wide: decoded at half size through an in-memory file, the C library's memfd_create on arm64.
    const wide = await upload(client, 'wide.jpg', await img.jpeg(3400, 2000), { type: 'image/jpeg' });
    const large = await client.get(`/api/files/${wide.id}/thumbnail?size=large`);
    expect(large.status).toBe(200);
    const largeMeta = await sharp(Buffer.from(await large.arrayBuffer())).metadata();
    expect([largeMeta.format, largeMeta.width, largeMeta.height]).toEqual(['webp', 1600, 941]);
  }, 180_000);
});
