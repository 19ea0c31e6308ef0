import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { tempDir } from '../helpers/server.ts';
import { LocalDriver } from '../../src/storage/local.ts';
import { SEGMENT_SIZE, SealedStore, sealedSize } from '../../src/storage/sealed.ts';
import { ResealMismatchError, type ResumableObject, ResumableStore } from '../../src/storage/resumable.ts';
import { generateMasterKey, Keyring, masterKeyFrom } from '../../src/storage/keyring.ts';
import { ObjectIntegrityError } from '../../src/storage/driver.ts';
import { newStorageKey } from '../../src/storage/keys.ts';
import { sealByHand } from '../helpers/sealed-format.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** The staging area's syncs as the tests see them: counted, awaited (`drained`), or held until released one by one. */
interface Syncs {
  started: number;
  hold: boolean;
  held: Array<{ release: () => void; fail: (err: Error) => void }>;
  drained(): Promise<void>;
}

function setup() {
  const dir = tempDir('coffer-resumable-');
  dirs.push(dir);
  const driver = new LocalDriver(dir);
  const store = new SealedStore(driver, new Keyring(masterKeyFrom(generateMasterKey())));
  const staging = driver.staging;
  const sync = staging.sync.bind(staging);
  const running = new Set<Promise<void>>();
  const syncs: Syncs = {
    started: 0,
    hold: false,
    held: [],
    drained: async () => {
      await Promise.allSettled([...running]);
      await Bun.sleep(0);
    },
  };
  staging.sync = (key) => {
    syncs.started++;
    const p = syncs.hold
      ? new Promise<void>((resolve, reject) => syncs.held.push({ release: () => void sync(key).then(resolve, reject), fail: reject }))
      : sync(key);
    running.add(p);
    p.catch(() => {}).finally(() => running.delete(p));
    return p;
  };
  return { dir, driver, store, syncs, resumable: new ResumableStore(store) };
}

async function* chunked(data: Uint8Array, size = 7919): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

const bytes = async (s: ReadableStream<Uint8Array>) => Buffer.from(await new Response(s).arrayBuffer());
const S = SEGMENT_SIZE;

function begin(r: ResumableStore, length: number): ResumableObject {
  const { wrappedKey, header } = r.begin();
  return { key: newStorageKey(), length, offset: 0, durableOffset: 0, wrappedKey, header, tail: null };
}

/**
 * Appends `data[obj.offset, end)` and records the result as a caller would; each append starts a sync behind it
 * unless told, and (`drain`, as the time between two requests does) the syncs running finish before it returns.
 */
async function appendTo(
  r: ResumableStore,
  obj: ResumableObject,
  data: Buffer,
  end: number,
  opts: { syncLagBytes?: number; drain?: Syncs } = {},
) {
  const result = await r.append(obj, chunked(data.subarray(obj.offset, end)), { syncLagBytes: opts.syncLagBytes ?? 1 });
  obj.offset = result.offset;
  obj.tail = result.tail;
  obj.durableOffset = result.durableOffset;
  await opts.drain?.drained();
  return result;
}

describe('resumable sealed objects', () => {
  const { dir, driver, store, syncs, resumable } = setup();
  const drain = syncs;

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

  test('checkpoints record progress at segment boundaries during a long append, each one synced behind the next', async () => {
    const data = randomBytes(5 * S + 10);
    const obj = begin(resumable, data.length);
    const seen: Array<[number, number]> = [];
    const before = syncs.started;
    const result = await resumable.append(obj, chunked(data), {
      checkpointBytes: 2 * S,
      onCheckpoint: (p) => seen.push([p.offset, p.durableOffset]),
    });
    expect(seen.map(([offset]) => offset)).toEqual([2 * S, 4 * S]);
    expect(seen[0]![1]).toBe(0);
    // The first checkpoint's sync has finished by the second, or is running still (then none more starts).
    expect([0, 2 * S]).toContain(seen[1]![1]);
    expect(syncs.started - before).toBe(seen[1]![1] === 0 ? 2 : 3);
    expect(result.complete).toBe(true);
    expect(result.durableOffset).toBe(data.length);
  });

  test('an append is synced behind its answer: durableOffset trails by one append, the completing one is whole', async () => {
    const data = randomBytes(6 * S + 99);
    const obj = begin(resumable, data.length);
    const steps = [];
    for (const end of [2 * S + 5, 4 * S, data.length]) {
      const r = await appendTo(resumable, obj, data, end, { drain });
      steps.push([r.offset, r.durableOffset]);
    }
    expect(steps).toEqual([
      [2 * S + 5, 0],
      [4 * S, 2 * S + 5],
      [data.length, data.length],
    ]);
  });

  test('short appends are synced once what is not yet durable reaches the lag, not one by one', async () => {
    const data = randomBytes(8 * S + 99);
    const obj = begin(resumable, data.length);
    const steps = [];
    const before = syncs.started;
    for (const end of [S, 2 * S, 3 * S, 4 * S, 5 * S, 6 * S, data.length]) {
      const r = await appendTo(resumable, obj, data, end, { syncLagBytes: 3 * S, drain });
      steps.push([r.offset, r.durableOffset]);
    }
    expect(steps).toEqual([
      [S, 0],
      [2 * S, 0],
      [3 * S, 0],
      [4 * S, 3 * S],
      [5 * S, 3 * S],
      [6 * S, 3 * S],
      [data.length, data.length],
    ]);
    // At 3 S and 6 S, then the completing append's own.
    expect(syncs.started - before).toBe(3);
  });

  describe('a sync runs behind the answers', () => {
    const settledWithin = async (p: Promise<unknown>, ms = 200) =>
      Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

    test('no append waits for a sync, one runs at a time, and only the completing append waits for the disk', async () => {
      const { resumable, syncs } = setup();
      syncs.hold = true;
      const data = randomBytes(6 * S + 99);
      const obj = begin(resumable, data.length);
      expect((await appendTo(resumable, obj, data, 2 * S)).durableOffset).toBe(0);
      expect(syncs.held.length).toBe(1);
      // Answered with the first sync held, and none more started beside it.
      expect((await appendTo(resumable, obj, data, 4 * S)).durableOffset).toBe(0);
      expect(syncs.held.length).toBe(1);
      syncs.held[0]!.release();
      await syncs.drained();
      expect((await appendTo(resumable, obj, data, 5 * S)).durableOffset).toBe(2 * S);
      expect(syncs.held.length).toBe(2);
      const last = appendTo(resumable, obj, data, data.length);
      expect(await settledWithin(last)).toBe(false);
      syncs.held[1]!.release();
      while (syncs.held.length < 3) await Bun.sleep(1);
      expect(await settledWithin(last)).toBe(false);
      syncs.held[2]!.release();
      expect((await last).durableOffset).toBe(data.length);
    });

    test('a sync that failed behind an answer fails the append that finds it so; the one after resumes', async () => {
      const { resumable, syncs } = setup();
      syncs.hold = true;
      const data = randomBytes(4 * S);
      const obj = begin(resumable, data.length);
      await appendTo(resumable, obj, data, S);
      syncs.held[0]!.fail(new Error('EIO: the disk failed'));
      await syncs.drained();
      await expect(appendTo(resumable, obj, data, 2 * S)).rejects.toThrow('EIO');
      expect(obj.offset).toBe(S);
      expect((await appendTo(resumable, obj, data, 2 * S)).durableOffset).toBe(0);
      expect(obj.offset).toBe(2 * S);
      expect(syncs.held.length).toBe(2);
      syncs.held[1]!.release();
    });
  });

  describe('recover: after a restart, the acknowledged segments that are not known durable are authenticated', () => {
    const staged = (obj: ResumableObject) => path.join(dir, '.staging', obj.key);
    /** An object written in three appends whose last one (segments 3 to 5, and a tail) only reached the page cache. */
    async function threeAppends() {
      const data = randomBytes(8 * S);
      const obj = begin(resumable, data.length);
      for (const end of [S + 7, 3 * S, 6 * S + 300]) await appendTo(resumable, obj, data, end, { drain });
      expect(obj.durableOffset).toBe(3 * S);
      return { data, obj };
    }
    async function finish(obj: ResumableObject, data: Buffer<ArrayBuffer>) {
      await appendTo(resumable, obj, data, data.length);
      await resumable.publish(obj);
      expect(await bytes(await store.get(obj.key, { size: data.length, wrappedKey: obj.wrappedKey }))).toEqual(data);
    }

    test('all there (a kill -9: the page cache kept them): the upload stands where it was acknowledged', async () => {
      const { data, obj } = await threeAppends();
      const tail = obj.tail;
      expect(await resumable.recover(obj)).toEqual({ offset: 6 * S + 300, tail });
      await finish(obj, data);
    });

    test('appends the caller never recorded: the upload stands after the last staged segment that authenticates, never the last one', async () => {
      const data = randomBytes(8 * S + 10);
      const obj = begin(resumable, data.length);
      await appendTo(resumable, obj, data, S + 7, { drain });
      const recorded = { ...obj };
      // Two more appends whose progress the caller kept in memory only, then one whose bytes a power loss cut in segment 7.
      for (const end of [4 * S, 6 * S]) await appendTo(resumable, obj, data, end, { drain });
      // The completing append wrote the last segment, but only its record makes the upload complete.
      await appendTo(resumable, obj, data, 8 * S + 10);
      expect(await resumable.recover(recorded, { pastOffset: true })).toEqual({ offset: 8 * S, tail: null });
      // Without pastOffset (chunked uploads, which record every append) the record stands.
      expect(await resumable.recover(recorded)).toEqual({ offset: S + 7, tail: recorded.tail });
      fs.truncateSync(staged(obj), 16 + 7 * (S + 16) + 100);
      const kept = await resumable.recover(recorded, { pastOffset: true });
      expect(kept).toEqual({ offset: 7 * S, tail: null });
      Object.assign(obj, kept, { durableOffset: kept.offset });
      await finish(obj, data);
    });

    test('a power loss zeroed segment 4: the upload stands at its start, and the bytes after it are cut off', async () => {
      const { data, obj } = await threeAppends();
      const file = staged(obj);
      const bytesOnDisk = fs.readFileSync(file);
      const at = 16 + 4 * (S + 16);
      bytesOnDisk.fill(0, at + 100, at + 200);
      fs.writeFileSync(file, bytesOnDisk);
      const kept = await resumable.recover(obj);
      expect(kept).toEqual({ offset: 4 * S, tail: null });
      expect(fs.statSync(file).size).toBe(at);
      Object.assign(obj, kept, { durableOffset: kept.offset });
      await finish(obj, data);
    });

    test('a power loss kept only part of the file: the upload stands at the last whole segment', async () => {
      const { data, obj } = await threeAppends();
      fs.truncateSync(staged(obj), 16 + 3 * (S + 16) + 5000);
      const kept = await resumable.recover(obj);
      expect(kept).toEqual({ offset: 3 * S, tail: null });
      Object.assign(obj, kept, { durableOffset: kept.offset });
      await finish(obj, data);
    });

    test('nothing durable and the header lost: the upload starts again from 0', async () => {
      const data = randomBytes(3 * S);
      const obj = begin(resumable, data.length);
      await appendTo(resumable, obj, data, 2 * S);
      expect(obj.durableOffset).toBe(0);
      const file = staged(obj);
      const bytesOnDisk = fs.readFileSync(file);
      bytesOnDisk.fill(0, 0, 16);
      fs.writeFileSync(file, bytesOnDisk);
      const kept = await resumable.recover(obj);
      expect(kept).toEqual({ offset: 0, tail: null });
      expect(fs.statSync(file).size).toBe(0);
      Object.assign(obj, kept, { durableOffset: 0 });
      await finish(obj, data);
    });

    test('bytes missing below the durable offset are a damaged object, not a rollback', async () => {
      const { obj } = await threeAppends();
      fs.truncateSync(staged(obj), 100);
      await expect(resumable.recover(obj)).rejects.toBeInstanceOf(ObjectIntegrityError);
    });
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

  test('the staged file is not asked its size by the appends after the first: this process wrote it last', async () => {
    const data = randomBytes(4 * S);
    const obj = begin(resumable, data.length);
    const probe = await fsp.open(path.join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { stat: (...args: unknown[]) => Promise<fs.Stats> };
    await probe.close();
    const stat = proto.stat;
    let stats = 0;
    proto.stat = function (this: unknown, ...args: unknown[]) {
      stats++;
      return stat.apply(this, args);
    };
    try {
      for (const end of [S, 2 * S + 1, 3 * S, data.length]) await appendTo(resumable, obj, data, end, { drain });
    } finally {
      proto.stat = stat;
    }
    expect(stats).toBe(1);
    await resumable.publish(obj);
    expect(await bytes(await store.get(obj.key, { size: data.length, wrappedKey: obj.wrappedKey }))).toEqual(data);
  });

  test('an append writes its sealed segments in whole batches: no write of a lone tag at the end of each append', async () => {
    const data = randomBytes(32 * S);
    const obj = begin(resumable, data.length);
    const probe = await fsp.open(path.join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { writev: (...args: unknown[]) => Promise<{ bytesWritten: number }> };
    await probe.close();
    const writev = proto.writev;
    const sizes: number[] = [];
    proto.writev = function (this: unknown, ...args: unknown[]) {
      sizes.push((args[0] as Uint8Array[]).reduce((n, c) => n + c.byteLength, 0));
      return writev.apply(this, args);
    };
    try {
      const result = await resumable.append(obj, chunked(data, 8 * S));
      expect(result.complete).toBe(true);
    } finally {
      proto.writev = writev;
    }
    // The header and 16 segments, then 16 segments (a piece at a time: three writes, the last a lone 16-byte tag).
    expect(sizes).toEqual([16 + 16 * (S + 16), 16 * (S + 16)]);
    await resumable.publish(obj);
    expect(await bytes(await store.get(obj.key, { size: data.length, wrappedKey: obj.wrappedKey }))).toEqual(data);
  });

  test('appends cut mid-segment, checkpoints inside them and a resume after a cut-off body store exactly the hand-built v1 object', async () => {
    const data = randomBytes(9 * S + 4321);
    const obj = begin(resumable, data.length);
    const checkpoints: number[] = [];
    const appendUpTo = async (end: number, chunk: number) => {
      const result = await resumable.append(obj, chunked(data.subarray(obj.offset, end), chunk), {
        checkpointBytes: 2 * S,
        onCheckpoint: (p) => checkpoints.push(p.offset),
      });
      Object.assign(obj, { offset: result.offset, tail: result.tail, durableOffset: result.durableOffset });
      return result;
    };
    await appendUpTo(S + 333, 7919);
    await appendUpTo(5 * S + 1, 3 * S);
    async function* dies() {
      yield data.subarray(obj.offset, 6 * S + 10);
      throw new Error('client hung up');
    }
    const cut = await resumable.append(obj, dies());
    expect(cut.offset).toBe(6 * S + 10);
    Object.assign(obj, { offset: cut.offset, tail: cut.tail });
    expect((await appendUpTo(data.length, 100_003)).complete).toBe(true);
    expect(checkpoints).toEqual([3 * S, 5 * S, 8 * S]);
    await resumable.publish(obj);
    const raw = fs.readFileSync(driver.pathOf(obj.key));
    expect(raw.equals(sealByHand(store.unwrapKey(obj.wrappedKey), Buffer.from(obj.header), data))).toBe(true);
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
