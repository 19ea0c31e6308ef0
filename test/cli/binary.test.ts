import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ensureBinary, startBinary, type RunningBinary } from '../helpers/binary.ts';
import { BACKEND_VERSION } from '../../src/services/admin/version.ts';
import { listenNotifySocket } from '../helpers/notify-socket.ts';
import { tempDir } from '../helpers/server.ts';
import { TestClient } from '../helpers/client.ts';
import { upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import { skipWithout } from '../helpers/prerequisites.ts';
import sharp from 'sharp';

describe('the built executable', () => {
  let binary: string;
  let running: RunningBinary;
  const socketDir = tempDir('coffer-bin-notify-');
  const notify = listenNotifySocket(path.join(socketDir, 'notify.sock'));
  beforeAll(async () => {
    binary = await ensureBinary();
    running = await startBinary({ binary, env: { NOTIFY_SOCKET: path.join(socketDir, 'notify.sock') } });
  }, 120_000);
  afterAll(async () => {
    notify.close();
    fs.rmSync(socketDir, { recursive: true, force: true });
    if (running) expect(await running.stop()).toBe(0);
  });

  test('tells systemd it is ready (Type=notify) through the C library, from inside the executable', async () => {
    expect(await notify.next()).toStartWith('READY=1');
  });

  test('copied alone into an empty directory, it serves /health with zero configuration', async () => {
    const res = await fetch(`${running.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; uptime: number };
    expect(body.status).toBe('ok');
    expect(typeof body.uptime).toBe('number');
  });

  test('it serves the embedded web app: the page for app paths, its hashed assets precompressed', async () => {
    const page = await fetch(`${running.url}/files/anything`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const body = await page.text();
    const script = /src="(\/assets\/main-[a-z0-9]+\.js)"/.exec(body)![1]!;
    const js = await fetch(`${running.url}${script}`, { headers: { 'accept-encoding': 'br' }, decompress: false });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-encoding')).toBe('br');
    expect(js.headers.get('cache-control')).toContain('immutable');
    const br = new Uint8Array(await js.arrayBuffer());
    expect(br.byteLength).toBeGreaterThan(1000);
    // Each form is its own slice of the embedded bundle: the three decode to the same script.
    const gzip = await fetch(`${running.url}${script}`, { headers: { 'accept-encoding': 'gzip' }, decompress: false });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    const plain = await fetch(`${running.url}${script}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    const source = new Uint8Array(await plain.arrayBuffer());
    expect(Bun.gunzipSync(new Uint8Array(await gzip.arrayBuffer()))).toEqual(source);
    expect(new Uint8Array(zlib.brotliDecompressSync(br))).toEqual(source);
    expect(new TextDecoder().decode(source)).toContain('function');
  });

  test('--version: version, the commit it was built from, the build date and the runtime, on one line', () => {
    const r = Bun.spawnSync([binary, '--version']);
    expect(r.exitCode).toBe(0);
    const commit = Bun.spawnSync(['git', 'rev-parse', '--short=12', 'HEAD']).stdout.toString().trim();
    const m = /^(\d+\.\d+\.\d+) \(commit ([0-9a-f]{12})(-dirty)?, built (\S+), Bun (\d+\.\d+\.\d+) linux-(x64|arm64)\)\n$/.exec(
      r.stdout.toString(),
    );
    expect(m).not.toBeNull();
    expect(m![1]).toBe(BACKEND_VERSION);
    expect(m![2]).toBe(commit);
    expect(Math.abs(Date.parse(m![4]!) - Date.now())).toBeLessThan(3600_000);
  });

  const heicMissing = img.heifEncMissing();
  const ffmpegMissing = img.ffmpegMissing();
  test('it makes JPEG, HEIC and PDF thumbnails with nothing installed on the host (libvips and the wasm decoders are inside), and video ones with ffmpeg', async () => {
    const exe = path.join(running.dir, 'coffer');
    const create = Bun.spawnSync([exe, 'users', 'create', 'thumbs@example.test', '--data-dir', path.join(running.dir, 'data')], {
      stdin: Buffer.from('correct horse battery\n'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'silent', COFFER_CONFIG: '/dev/null' },
    });
    expect(create.exitCode).toBe(0);
    const client = new TestClient(running.url);
    expect((await client.post('/api/login', { email: 'thumbs@example.test', password: 'correct horse battery' })).status).toBe(200);
    const samples: Array<[string, string, Uint8Array, [number, number]]> = [
      ['photo.jpg', 'image/jpeg', await img.rotatedJpegWithGps(2000, 1500), [192, 256]],
      ['doc.pdf', 'application/pdf', img.pdf(20, 300, 400), [192, 256]],
    ];
    if (!heicMissing) {
      samples.push(['phone.heic', 'image/heic', await img.heic(640, 480), [256, 192]]);
      // A phone's 24 MP photo: a grid decoded tile by tile, turned by its irot.
      samples.push(['phone24.heic', 'image/heic', await img.heicGrid(6000, 4000, 512, { rotateCcw: 90 }), [171, 256]]);
    }
    // ffmpeg is the host's (found on PATH): the executable serves it the video over loopback.
    if (!ffmpegMissing) samples.push(['camera.mp4', 'video/mp4', img.video('mp4', 640, 360), [256, 144]]);
    for (const [name, type, bytes, size] of samples) {
      const file = await upload(client, name, bytes, { type });
      const res = await client.get(`/api/files/${file.id}/thumbnail`);
      expect({ name, status: res.status, type: res.headers.get('content-type') }).toEqual({ name, status: 200, type: 'image/webp' });
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect({ name, size: [meta.width, meta.height] }).toEqual({ name, size });
    }
  });
  skipWithout(heicMissing, 'HEIC thumbnails from the built executable');
  skipWithout(ffmpegMissing, 'video thumbnails from the built executable');

  test('--help lists the commands', () => {
    const r = Bun.spawnSync([binary, '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toMatch(/serve/);
    expect(r.stdout.toString()).toMatch(/migrate/);
  });
});
