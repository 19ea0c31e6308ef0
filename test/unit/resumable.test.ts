import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { tempDir } from '../helpers/server.ts';
import { LocalDriver } from '../../src/storage/local.ts';
import { SEGMENT_SIZE, SealedStore, sealedSize } from '../../src/storage/sealed.ts';
import { ResealMismatchError, type ResumableObject, ResumableStore } from '../../src/storage/resumable.ts';
import { generateMasterKey, Keyring, masterKeyFrom } from '../../src/storage/keyring.ts';
import { ObjectIntegrityError } from '../../src/storage/driver.ts';
import { newStorageKey } from '../../src/storage/keys.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function setup() {
  const dir = tempDir('coffer-resumable-');
  dirs.push(dir);
  const driver = new LocalDriver(dir);
  const store = new SealedStore(driver, new Keyring(masterKeyFrom(generateMasterKey())));
  return { dir, driver, store, resumable: new ResumableStore(store) };
}

async function* chunked(data: Uint8Array, size = 7919): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

const bytes = async (s: ReadableStream<Uint8Array>) => Buffer.from(await new Response(s).arrayBuffer());
const S = SEGMENT_SIZE;

function begin(r: ResumableStore, length: number): ResumableObject {
  const { wrappedKey, header } = r.begin();
  return { key: newStorageKey(), length, offset: 0, wrappedKey, header, tail: null };
}

/** Appends `data[obj.offset, end)` and records the result as a caller would. */
async function appendTo(r: ResumableStore, obj: ResumableObject, data: Buffer, end: number, opts: { checkpointBytes?: number } = {}) {
  const result = await r.append(obj, chunked(data.subarray(obj.offset, end)), opts);
  obj.offset = result.offset;
  obj.tail = result.tail;
  return result;
}

describe('resumable sealed objects', () => {
  const { dir, driver, store, resumable } = setup();

  test.each([0, 1, S - 1, S, S + 1, 3 * S + 77])(
    '%d bytes in appends cut anywhere read back equal, in the normal sealed format',
    async (size) => {
      const data = randomBytes(size);
      const obj = begin(resumable, size);
      const cuts = [...new Set([0, Math.floor(size / 3), S + 5, 2 * S, size - 1, size].filter((c) => c >= 0 && c <= size))].sort(
        (a, b) => a - b,
      );
      let result: Awaited<ReturnType<typeof appendTo>> | null = null;
      for (const cut of cuts) if (cut > obj.offset || (size === 0 && !result)) result = await appendTo(resumable, obj, data, cut);
      expect(result!.complete).toBe(true);
      expect(obj.offset).toBe(size);
      await resumable.publish(obj);
      expect((await driver.head(obj.key))!.size).toBe(sealedSize(size));
      expect(await bytes(await store.get(obj.key, { size, wrappedKey: obj.wrappedKey }))).toEqual(data);
      // Publishing again (a retried completion) is a no-op.
      await resumable.publish(obj);
    },
  );

  test('a partial segment is kept sealed by the caller; nothing staged or kept holds the plaintext', async () => {
    const marker = Buffer.from('RESUMABLE-PLAINTEXT-MARKER!'.repeat(10_000));
    const obj = begin(resumable, marker.length);
    await appendTo(resumable, obj, marker, S + 1000);
    expect(obj.tail).not.toBeNull();
    expect(Buffer.from(obj.tail!).includes(Buffer.from('RESUMABLE-PLAINTEXT'))).toBe(false);
    const staged = fs.readFileSync(path.join(dir, '.staging', obj.key));
    expect(staged.length).toBe(sealedSize(S));
    expect(staged.includes(Buffer.from('RESUMABLE-PLAINTEXT'))).toBe(false);
    await appendTo(resumable, obj, marker, marker.length);
    await resumable.publish(obj);
    expect(fs.readFileSync(driver.pathOf(obj.key)).includes(Buffer.from('RESUMABLE-PLAINTEXT'))).toBe(false);
    expect(await bytes(await store.get(obj.key, { size: marker.length, wrappedKey: obj.wrappedKey }))).toEqual(marker);
  });

  test('a tail moved to another object or segment fails authentication', async () => {
    const data = randomBytes(3 * S);
    const a = begin(resumable, data.length);
    await appendTo(resumable, a, data, 100);
    const b = begin(resumable, data.length);
    b.wrappedKey = a.wrappedKey;
    b.offset = 100;
    b.tail = a.tail;
    await expect(resumable.append(b, chunked(data.subarray(100, 200)))).rejects.toBeInstanceOf(ObjectIntegrityError);
  });

  test('checkpoints record durable progress at segment boundaries during a long append', async () => {
    const data = randomBytes(5 * S + 10);
    const obj = begin(resumable, data.length);
    const seen: number[] = [];
    const result = await resumable.append(obj, chunked(data), { checkpointBytes: 2 * S, onCheckpoint: (p) => seen.push(p.offset) });
    expect(seen).toEqual([2 * S, 4 * S]);
    expect(result.complete).toBe(true);
  });

  test('a body that fails mid-way keeps what arrived before, and the append resumes from there', async () => {
    const data = randomBytes(4 * S);
    const obj = begin(resumable, data.length);
    async function* dies() {
      yield data.subarray(0, S + 500);
      throw new Error('client hung up');
    }
    const result = await resumable.append(obj, dies());
    expect((result.interrupted as Error).message).toBe('client hung up');
    expect(result.offset).toBe(S + 500);
    obj.offset = result.offset;
    obj.tail = result.tail;
    await appendTo(resumable, obj, data, data.length);
    await resumable.publish(obj);
    expect(await bytes(await store.get(obj.key, { size: data.length, wrappedKey: obj.wrappedKey }))).toEqual(data);
  });

  test('after a crash, the same bytes resume over what was staged unacknowledged; different bytes are refused', async () => {
    const data = randomBytes(6 * S);
    const obj = begin(resumable, data.length);
    await appendTo(resumable, obj, data, S + 10);
    const acknowledged = { offset: obj.offset, tail: obj.tail };
    // An append whose result was never recorded (the server died before its answer).
    await resumable.append({ ...obj }, chunked(data.subarray(obj.offset, 4 * S + 3)));
    const other = Buffer.from(data);
    other[3 * S] = other[3 * S]! ^ 0xff;
    await expect(resumable.append({ ...obj, ...acknowledged }, chunked(other.subarray(acknowledged.offset)))).rejects.toBeInstanceOf(
      ResealMismatchError,
    );
    Object.assign(obj, acknowledged);
    await appendTo(resumable, obj, data, data.length);
    await resumable.publish(obj);
    expect(await bytes(await store.get(obj.key, { size: data.length, wrappedKey: obj.wrappedKey }))).toEqual(data);
  });

  test('staged objects are not objects: neither listed nor readable until published; discard removes them', async () => {
    const data = randomBytes(2 * S);
    const obj = begin(resumable, data.length);
    await appendTo(resumable, obj, data, S);
    const listed: string[] = [];
    for await (const o of driver.list()) listed.push(o.key);
    expect(listed).not.toContain(obj.key);
    expect(await driver.head(obj.key)).toBeNull();
    const staged: string[] = [];
    for await (const o of driver.staging.list()) staged.push(o.key);
    expect(staged).toContain(obj.key);
    expect(await resumable.discard(obj.key)).toBe(true);
    expect(await resumable.discard(obj.key)).toBe(false);
    expect(await driver.staging.size(obj.key)).toBe(0);
  });
});
