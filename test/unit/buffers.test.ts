import { expect, spyOn, test } from 'bun:test';
import { createCipheriv, randomBytes } from 'node:crypto';
import {
  collectAfterTransfer,
  collectBeforeTransfer,
  handOver,
  releaseChunk,
  releaseHandedOver,
  releaseSoleView,
} from '../../src/lib/buffers.ts';

test('releaseChunk frees a chunk that is its whole buffer, and leaves views of shared buffers alone', () => {
  const whole = new Uint8Array(256 * 1024).fill(7);
  const alias = new Uint8Array(whole.buffer, 10, 5);
  releaseChunk(whole);
  expect(whole.byteLength).toBe(0);
  expect(alias.byteLength).toBe(0);
  releaseChunk(whole);

  const parent = new Uint8Array(1024).fill(1);
  const part = parent.subarray(0, 512);
  releaseChunk(part);
  releaseChunk(parent.subarray(512));
  expect(parent.byteLength).toBe(1024);
  expect(part[0]).toBe(1);
});

test("releaseSoleView frees a cipher's output, which views all of its buffer but a byte of slack", () => {
  const c = createCipheriv('aes-256-gcm', randomBytes(32), randomBytes(12));
  const sealed = c.update(randomBytes(64 * 1024));
  releaseSoleView(sealed);
  expect(sealed.byteLength).toBe(0);
  releaseSoleView(sealed);
});

test('releaseHandedOver frees only a chunk its producer handed over, and only once', () => {
  const given = handOver(new Uint8Array(64 * 1024).fill(3));
  const kept = new Uint8Array(64 * 1024).fill(4);
  releaseHandedOver(kept);
  expect(kept.byteLength).toBe(64 * 1024);
  expect(kept[0]).toBe(4);
  releaseHandedOver(given);
  expect(given.byteLength).toBe(0);
  releaseHandedOver(given);
  expect(given.byteLength).toBe(0);
});

test('collectAfterTransfer runs a full collection after a transfer of 256 MiB or more, never after a smaller one', () => {
  const gc = spyOn(Bun, 'gc');
  try {
    collectAfterTransfer(256 * 1024 * 1024 - 1);
    expect(gc).not.toHaveBeenCalled();
    collectAfterTransfer(256 * 1024 * 1024);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(gc).toHaveBeenLastCalledWith(true);
  } finally {
    gc.mockRestore();
  }
});

test('collectBeforeTransfer collects before a body declared 256 MiB or more once the heap has grown 8 MiB since the last collection around a transfer', () => {
  const MiB = 1024 * 1024;
  collectAfterTransfer(256 * MiB);
  const gc = spyOn(Bun, 'gc');
  try {
    collectBeforeTransfer(256 * MiB);
    expect(gc).not.toHaveBeenCalled();
    const held = Array.from({ length: 300_000 }, (_, i) => ({ i, name: `object ${i}` }));
    collectBeforeTransfer(undefined);
    collectBeforeTransfer(256 * MiB - 1);
    expect(gc).not.toHaveBeenCalled();
    collectBeforeTransfer(256 * MiB);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(gc).toHaveBeenLastCalledWith(true);
    collectBeforeTransfer(256 * MiB);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(held.length).toBe(300_000);
  } finally {
    gc.mockRestore();
  }
});
