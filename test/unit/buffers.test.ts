import { expect, test } from 'bun:test';
import { releaseChunk } from '../../src/lib/buffers.ts';

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
