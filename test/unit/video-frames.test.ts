import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { VideoFrames } from '../../src/services/thumbnails/video.ts';
import { tempDir } from '../helpers/run-root.ts';

// Stand-ins for ffmpeg: one that hangs, one that floods its output.
const dir = tempDir('coffer-fake-ffmpeg-');
const script = (name: string, body: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
};
const hangs = script('hangs', 'exec sleep 600');
const floods = script('floods', 'exec cat /dev/zero');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const open = async () => new Blob([new Uint8Array(16)]).stream();

describe('VideoFrames bounds ffmpeg', () => {
  test('killed at its timeout', async () => {
    const frames = new VideoFrames(hangs, 1_000_000, { timeoutMs: 300, maxBytes: 1024 });
    const started = performance.now();
    expect(await frames.firstFrame(16, open)).toEqual({ ok: false, reason: 'reading the first frame took too long' });
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  test('killed past the output cap', async () => {
    const frames = new VideoFrames(floods, 1_000_000, { timeoutMs: 30_000, maxBytes: 1024 * 1024 });
    expect(await frames.firstFrame(16, open)).toEqual({ ok: false, reason: 'the first frame is too large' });
  });

  test('killed on stop, and nothing started after it', async () => {
    const frames = new VideoFrames(hangs, 1_000_000, { timeoutMs: 120_000, maxBytes: 1024 });
    const pending = frames.firstFrame(16, open);
    await Bun.sleep(200);
    frames.stop();
    expect(await pending).toEqual({ ok: false, reason: 'the server is stopping' });
    expect(await frames.firstFrame(16, open)).toEqual({ ok: false, reason: 'the server is stopping' });
  });
});
